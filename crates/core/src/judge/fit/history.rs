//! What past runs taught: the ratio of the measured peak to the estimate,
//! per runtime and architecture, kept in the user's data folder as
//! readable JSON (`swapsight-fit-history.json` beside the recordings'
//! folder) and applied to later estimates with a note, unless
//! `--no-history`.
//!
//! Only `fit MODEL -- CMD` runs are learnt from: a trace given with
//! `--from` may be of another model, or learnt already.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::plan::Runtime;

/// The history file's version: a file of another is left alone.
pub const HISTORY_VERSION: u32 = 1;
/// Runs kept per runtime and architecture: the ratio is their mean.
const KEPT: usize = 20;
/// The most a history file may hold; a larger one is not read.
const MAX_BYTES: u64 = 4 << 20;

/// The history file: every group of runs, one per runtime and
/// architecture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// What the file is, for a person who opens it.
    pub about: String,
    /// The file's version: 1.
    pub version: u32,
    /// One per runtime and architecture.
    pub groups: Vec<Group>,
}

/// The runs of one runtime and architecture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// `mlx`, `llama.cpp`, `torch`.
    pub runtime: String,
    /// The model's architecture as its files say it (`llama`).
    pub architecture: String,
    /// The mean of `runs`' ratios: what later estimates are multiplied by.
    pub ratio: f64,
    /// The last runs, oldest first.
    pub runs: Vec<Run>,
}

/// One run learnt from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// When, ms since 1970.
    pub at_unix_ms: u64,
    /// The model as given.
    pub model: String,
    /// Tokens per sequence it was estimated at.
    pub context: Option<u64>,
    /// The estimate before any history was applied.
    pub estimated_bytes: u64,
    /// The peak measured.
    pub measured_bytes: u64,
    /// Which peak: `mlx.peak` (the framework's own) or `footprint`.
    pub measured: String,
    /// measured / estimated.
    pub ratio: f64,
}

/// What the history says of one estimate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Learnt {
    /// What the estimate is multiplied by.
    pub ratio: f64,
    /// Runs it comes from.
    pub runs: usize,
    /// The runtime's name.
    pub runtime: String,
    /// The architecture.
    pub architecture: String,
    /// `+6 % from 3 past mlx runs of llama models`.
    pub note: String,
}

impl Default for History {
    fn default() -> Self {
        History {
            about: "swapsight fit's history: the peak measured over the peak estimated, per \
                    runtime and architecture, of past `swapsight fit MODEL -- CMD` runs; later \
                    estimates are multiplied by each group's ratio (the mean of its last 20 \
                    runs) unless --no-history. Delete this file to forget. docs/fit.md"
                .into(),
            version: HISTORY_VERSION,
            groups: Vec::new(),
        }
    }
}

impl History {
    /// The history at `path`: empty where there is none; `Err` with why
    /// where a file is there but not one this version reads.
    pub fn load(path: &Path) -> Result<History, String> {
        if std::fs::symlink_metadata(path).is_err() {
            return Ok(History::default());
        }
        let bytes = super::model::read_capped(path, MAX_BYTES)?;
        let h: History = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{}: not a fit history: {e}", path.display()))?;
        if h.version != HISTORY_VERSION {
            return Err(format!(
                "{}: a fit history of version {}, this swapsight reads {HISTORY_VERSION}",
                path.display(),
                h.version
            ));
        }
        Ok(h)
    }

    /// Writes the history to `path` as swapsight writes every file
    /// ([`outpath`](crate::util::outpath): through no link another user
    /// planted), its folder made where missing.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)? + "\n";
        crate::util::outpath::locate(path)?
            .replace_with(|out: &mut dyn std::io::Write| out.write_all(text.as_bytes()))
    }

    /// Adds `run` to its group, keeping the last 20 and their mean.
    pub fn learn(&mut self, runtime: Runtime, architecture: &str, run: Run) {
        let at = self
            .groups
            .iter()
            .position(|g| g.runtime == runtime.name() && g.architecture == architecture);
        let g = match at {
            Some(i) => &mut self.groups[i],
            None => {
                self.groups.push(Group {
                    runtime: runtime.name().into(),
                    architecture: architecture.into(),
                    ratio: 1.0,
                    runs: Vec::new(),
                });
                self.groups.last_mut().expect("just pushed")
            }
        };
        g.runs.push(run);
        let drop = g.runs.len().saturating_sub(KEPT);
        g.runs.drain(..drop);
        g.ratio = g.runs.iter().map(|r| r.ratio).sum::<f64>() / g.runs.len() as f64;
    }

    /// Takes what a run under fit measured against its estimate: the last
    /// figure it measured (the framework's own peak where the run wrote
    /// one, else the footprint), for the runtime and the architecture its
    /// files name. `false` where there is nothing to learn: no comparison,
    /// no architecture, nothing measured or estimated.
    pub fn learn_from(
        &mut self,
        answer: &super::Answer,
        described: &super::Described,
        model: &str,
        at_unix_ms: u64,
    ) -> bool {
        let (Some(c), Some(context), Some(arch)) = (
            &answer.comparison,
            &answer.context,
            described
                .description
                .as_ref()
                .and_then(|d| d.architecture.as_ref()),
        ) else {
            return false;
        };
        let Some(m) = c.measured.iter().rev().find(|m| m.bytes > 0) else {
            return false;
        };
        let estimated = crate::util::units::saturating_sum(answer.need.iter().map(|l| l.bytes));
        if estimated == 0 {
            return false;
        }
        self.learn(
            context.runtime,
            &arch.value,
            Run {
                at_unix_ms,
                model: crate::util::text::clean(model).into_owned(),
                context: Some(context.tokens),
                estimated_bytes: estimated,
                measured_bytes: m.bytes,
                measured: m.id.clone(),
                ratio: m.bytes as f64 / estimated as f64,
            },
        );
        true
    }

    /// What the history says of an estimate under `runtime` for a model of
    /// `architecture`: `None` where no run of that pair was learnt.
    pub fn learnt(&self, runtime: Runtime, architecture: &str) -> Option<Learnt> {
        let g = self
            .groups
            .iter()
            .find(|g| g.runtime == runtime.name() && g.architecture == architecture)?;
        if g.runs.is_empty() || !g.ratio.is_finite() || g.ratio <= 0.0 {
            return None;
        }
        let n = g.runs.len();
        Some(Learnt {
            ratio: g.ratio,
            runs: n,
            runtime: g.runtime.clone(),
            architecture: g.architecture.clone(),
            note: format!(
                "{:+.0} % from {n} past {} run{} of {} models (--no-history to ignore)",
                (g.ratio - 1.0) * 100.0,
                g.runtime,
                if n == 1 { "" } else { "s" },
                crate::util::text::clean(&g.architecture)
            ),
        })
    }
}

/// The history file's name, in the data folder
/// ([`data_dir`](crate::record::recordings::data_dir)).
pub const HISTORY_FILE: &str = "swapsight-fit-history.json";

/// Where the history is kept: `swapsight-fit-history.json` in the data
/// folder the recordings' folder is in (`$XDG_DATA_HOME` or
/// `~/.local/share`; `~/Library/Application Support` on macOS).
pub fn default_history_path() -> PathBuf {
    crate::record::recordings::data_dir().join(HISTORY_FILE)
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
