//! A probe that plays a script instead of reading the machine: for tests of
//! the sampler, the live session and the shells (app, serve), and for demos.

use super::{HostInfo, Probe, ProbeError, ProcessSample, Scope, SystemSample};

type Script = Box<dyn FnMut(u64) -> (SystemSample, Vec<ProcessSample>) + Send>;
type ScopeScript = Box<dyn FnMut(u32, u64) -> Result<Option<Scope>, ProbeError> + Send>;

/// A [`Probe`] whose samples come from a closure, on a host of the size
/// given (named `scripted`).
pub struct ScriptedProbe {
    tick: u64,
    script: Script,
    host: HostInfo,
    scope: Option<ScopeScript>,
}

impl ScriptedProbe {
    /// `script(n)` gives the figures of the n-th sample (from 1).
    pub fn new(
        phys_bytes: u64,
        script: impl FnMut(u64) -> (SystemSample, Vec<ProcessSample>) + Send + 'static,
    ) -> Self {
        ScriptedProbe {
            tick: 0,
            script: Box::new(script),
            host: HostInfo {
                os: "scripted".into(),
                phys_bytes,
                page_size: 4096,
                hostname: "scripted".into(),
            },
            scope: None,
        }
    }

    /// `scope(pid, n)` answers [`Probe::scope`] at the n-th sample
    /// (without it, the host is the scope).
    pub fn with_scope(
        mut self,
        scope: impl FnMut(u32, u64) -> Result<Option<Scope>, ProbeError> + Send + 'static,
    ) -> Self {
        self.scope = Some(Box::new(scope));
        self
    }

    /// A 16 GiB machine with 50 processes (pid N has N MiB of footprint);
    /// swap climbs 40 MiB a sample while pid 7 ("p7") pages in 1,000 pages a
    /// sample: a false fit for pid 7, and nobody else.
    pub fn false_fit() -> Self {
        ScriptedProbe::new(16 << 30, |n| {
            let sys = SystemSample {
                phys_bytes: 16 << 30,
                free_pct: 60.0,
                swap_used_bytes: n * (40 << 20),
                swap_total_bytes: 8 << 30,
                compressed_bytes: 0,
                page_size: 4096,
                ..SystemSample::default()
            };
            let procs = (1..=50)
                .map(|pid| ProcessSample {
                    pid,
                    ppid: 1,
                    name: format!("p{pid}").into(),
                    footprint_bytes: u64::from(pid) << 20,
                    pageins: if pid == 7 { n * 1000 } else { 0 },
                    start_time: 1,
                    ..Default::default()
                })
                .collect();
            (sys, procs)
        })
    }
}

impl ScriptedProbe {
    /// Two users' processes, for the rule on whose command lines a server
    /// shows: pid 1 is user 1000's (`own --token=mine`), pid 2 user 1001's
    /// (`db --password=hunter2`), pid 3 a setuid program's, nobody's own
    /// (`sudo run --password=hunter3`); pid N has N GiB of footprint.
    pub fn two_users() -> Self {
        ScriptedProbe::new(16 << 30, |_| {
            let sys = SystemSample {
                phys_bytes: 16 << 30,
                free_pct: 60.0,
                page_size: 4096,
                ..SystemSample::default()
            };
            let p = |pid: u32, uid: Option<u32>, cmd: &str| ProcessSample {
                pid,
                ppid: 1,
                name: format!("p{pid}").into(),
                cmdline: Some(cmd.into()),
                uid,
                footprint_bytes: u64::from(pid) << 30,
                start_time: 1,
                ..ProcessSample::default()
            };
            let procs = vec![
                p(1, Some(1000), "own --token=mine"),
                p(2, Some(1001), "db --password=hunter2"),
                p(3, None, "sudo run --password=hunter3"),
            ];
            (sys, procs)
        })
    }
}

impl Probe for ScriptedProbe {
    fn system(&mut self) -> Result<SystemSample, ProbeError> {
        Ok((self.script)(self.tick.max(1)).0)
    }

    fn sample(&mut self) -> Result<(SystemSample, Vec<ProcessSample>), ProbeError> {
        self.tick += 1;
        Ok((self.script)(self.tick))
    }

    fn host(&mut self) -> Result<HostInfo, ProbeError> {
        Ok(self.host.clone())
    }

    fn scope(&mut self, pid: u32) -> Result<Option<Scope>, ProbeError> {
        match &mut self.scope {
            Some(scope) => scope(pid, self.tick),
            None => Ok(None),
        }
    }
}
