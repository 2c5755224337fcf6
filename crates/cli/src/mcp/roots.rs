//! The folders the tools may read: a path argument is taken only when it
//! resolves (symlinks followed, `..` gone: `canonicalize`) inside one of
//! them, so no argument an assistant passes reaches a file the user did
//! not allow.

use std::path::{Path, PathBuf};

/// The allowed roots, each canonical where it exists.
#[derive(Debug, Clone)]
pub struct Roots {
    roots: Vec<PathBuf>,
}

impl Roots {
    /// `paths` made absolute (against the current folder) and canonical
    /// where they exist; a root that does not exist yet (a recordings folder
    /// no recording made) is kept as given: nothing resolves inside it.
    pub fn new(paths: Vec<PathBuf>) -> anyhow::Result<Roots> {
        let cwd = std::env::current_dir()?;
        let mut roots: Vec<PathBuf> = Vec::with_capacity(paths.len());
        for p in paths {
            let abs = cwd.join(p);
            let root = abs.canonicalize().unwrap_or(abs);
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
        Ok(Roots { roots })
    }

    /// The roots as one line: `/a, /b`.
    pub fn shown(&self) -> String {
        self.roots
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `raw` (relative to the current folder) resolved, when it is inside a
    /// root; else why not, in words that name the path and the roots.
    pub fn check(&self, raw: &str) -> Result<PathBuf, String> {
        let shown = swapsight::text::clean(raw);
        if raw.is_empty() {
            return Err("an empty path".into());
        }
        let path = match Path::new(raw).canonicalize() {
            Ok(p) => p,
            // Said only of a path that would be inside: whether a file
            // outside the roots exists is not told either.
            Err(e) if self.inside_as_written(raw) => {
                return Err(format!("cannot open {shown}: {e}"))
            }
            Err(_) => PathBuf::new(),
        };
        if path.is_absolute() && self.roots.iter().any(|r| path.starts_with(r)) {
            Ok(path)
        } else {
            Err(format!(
                "{shown} is outside the allowed roots ({}): start swapsight mcp with \
                 --allow DIR to let its tools read there",
                self.shown()
            ))
        }
    }
}

impl Roots {
    /// Whether `raw`, made absolute as written (no `..`), is inside a root.
    fn inside_as_written(&self, raw: &str) -> bool {
        let Ok(cwd) = std::env::current_dir() else {
            return false;
        };
        let abs = cwd.join(raw);
        let plain = abs
            .components()
            .all(|c| !matches!(c, std::path::Component::ParentDir));
        plain && self.roots.iter().any(|r| abs.starts_with(r))
    }
}

#[cfg(test)]
#[path = "roots_tests.rs"]
mod tests;
