//! Whose command lines a session shows. The menu-bar app serves its own
//! user only and shows every command line the OS shows that user; `swapsight
//! serve` answers anyone who reaches its port, so it keeps to the command
//! lines of its own user's processes ([`LiveConfig::commands_of`]): another
//! user's arguments may hold what only they should read (`--password=…`),
//! and a `/proc` mounted `hidepid=2` hides those processes from `ps` too.
//!
//! The rule is applied where command lines come in — each sample, before
//! rows, events or a recording see it, and each trace read from the
//! recordings folder — so no answer built from them can hold one.
//!
//! [`LiveConfig::commands_of`]: super::LiveConfig::commands_of

use crate::probe::{HostInfo, Probe, ProbeError, ProcessSample, SystemSample};

/// A probe whose samples keep only `uid`'s processes' command lines.
pub(crate) struct OwnCommands {
    pub probe: Box<dyn Probe + Send>,
    pub uid: u32,
}

impl Probe for OwnCommands {
    fn system(&mut self) -> Result<SystemSample, ProbeError> {
        self.probe.system()
    }

    fn sample(&mut self) -> Result<(SystemSample, Vec<ProcessSample>), ProbeError> {
        let (system, mut processes) = self.probe.sample()?;
        for p in &mut processes {
            p.keep_command_of(self.uid);
        }
        Ok((system, processes))
    }

    fn host(&mut self) -> Result<HostInfo, ProbeError> {
        self.probe.host()
    }

    fn pressure_absent(&self) -> Option<String> {
        self.probe.pressure_absent()
    }

    fn scope(&mut self, pid: u32) -> Result<Option<crate::probe::Scope>, ProbeError> {
        self.probe.scope(pid)
    }

    fn watch_closely(&mut self, pids: &[u32]) {
        self.probe.watch_closely(pids);
    }

    fn name_largest(&mut self, k: usize) {
        self.probe.name_largest(k);
    }
}

/// A trace file's bytes (an export "as it is") with only `uid`'s
/// processes' command lines. Only lines that may hold a command line are
/// read: a sample holding another's is written anew without it; one that
/// cannot be read is left out, as a reader skips it; every other line stays
/// byte for byte.
pub fn keep_commands_in_jsonl(text: &[u8], uid: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for line in text.split_inclusive(|&b| b == b'\n') {
        // `\u` too: a key may be written escaped (`"cmdl\u0069ne"`).
        let may_hold = |needle: &[u8]| line.windows(needle.len()).any(|w| w == needle);
        if !may_hold(b"cmdline") && !may_hold(b"\\u") {
            out.extend_from_slice(line);
            continue;
        }
        let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        let mut dropped = false;
        if let Some(procs) = v.get_mut("procs").and_then(|p| p.as_array_mut()) {
            for p in procs.iter_mut().filter_map(|p| p.as_object_mut()) {
                if p.get("uid").and_then(|u| u.as_u64()) != Some(u64::from(uid)) {
                    dropped |= p.remove("cmdline").is_some();
                }
            }
        }
        if !dropped {
            out.extend_from_slice(line);
        } else if let Ok(anew) = serde_json::to_vec(&v) {
            out.extend_from_slice(&anew);
            out.push(b'\n');
        }
    }
    out
}

#[cfg(test)]
#[path = "own_commands_tests.rs"]
mod tests;
