//! PSI, read: `pressure/memory` under a procfs root, kept open and re-read
//! with one `pread` at offset 0 each tick (procfs regenerates it, as it
//! does `stat`). Rooted at a path so tests run it on a made-up `/proc`.
//! Whether PSI is there is found once, when the source opens: a kernel
//! built without it has no `/proc/pressure`, one booted with `psi=0`
//! answers `EOPNOTSUPP` to the read, and a container may hide the file;
//! then every tick has no pressure figures and [`PsiSource::absent`] says
//! why, once.

use std::fs::File;
use std::path::Path;

use super::fd::read_whole;
use super::parse::parse_psi;
use crate::probe::pressure::Pressure;

/// The system's memory PSI, or why there is none.
#[derive(Debug)]
pub struct PsiSource {
    file: Option<File>,
    absent: Option<String>,
}

impl PsiSource {
    /// Opens `PROCFS/pressure/memory` and reads it once to see that it
    /// answers PSI (`buf` is only scratch).
    pub fn open(procfs: &Path, buf: &mut Vec<u8>) -> PsiSource {
        let path = procfs.join("pressure/memory");
        let shown = path.display();
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) => {
                return PsiSource::none(format!(
                    "{shown}: {e} (a kernel without PSI, or a container that hides it)"
                ))
            }
        };
        match read_whole(&file, buf, true) {
            Ok(n) if parse_psi(&buf[..n]).is_some() => PsiSource {
                file: Some(file),
                absent: None,
            },
            Ok(_) => PsiSource::none(format!("{shown}: not PSI as the kernel writes it")),
            Err(e) => PsiSource::none(format!("{shown}: {e} (PSI turned off: boot with psi=1)")),
        }
    }

    fn none(why: String) -> PsiSource {
        PsiSource {
            file: None,
            absent: Some(why),
        }
    }

    /// This tick's figures; `None` where PSI is absent or the read failed.
    pub fn read(&mut self, buf: &mut Vec<u8>) -> Option<Pressure> {
        let n = read_whole(self.file.as_ref()?, buf, true).ok()?;
        parse_psi(&buf[..n])
    }

    /// Why there are no PSI figures (`None` when there are).
    pub fn absent(&self) -> Option<&str> {
        self.absent.as_deref()
    }
}

#[cfg(test)]
#[path = "psi_tests.rs"]
mod tests;
