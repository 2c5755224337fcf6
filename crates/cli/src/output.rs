//! Writing an output file (`export -o`, `plot -o`) so that it is whole or
//! absent: the bytes go to a temporary file beside the target, which is
//! synced and renamed over it only once complete. A full disk, a failed
//! render or a kill leaves no partial file (and any old one untouched).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

pub fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let cannot = || format!("cannot write {}", path.display());
    // A device or a pipe (`-o /dev/stdout`) is written in place: renaming
    // over it would replace the device node.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        let mut out = File::create(path).with_context(cannot)?;
        return write(&mut out)
            .and_then(|()| out.flush().map_err(Into::into))
            .with_context(cannot);
    }
    // A symlink keeps pointing at the file it names: write beside the target.
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let tmp = temp_beside(&target).with_context(cannot)?;
    let result = (|| -> anyhow::Result<()> {
        let file = File::options().write(true).create_new(true).open(&tmp)?;
        let mut out = BufWriter::with_capacity(256 * 1024, file);
        write(&mut out)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, &target)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(cannot)
}

/// `DIR/.NAME.swapsight-PID.tmp`: same directory, so the rename stays on one
/// file system; hidden, and named after its writer.
fn temp_beside(target: &Path) -> anyhow::Result<PathBuf> {
    let name = target
        .file_name()
        .context("not a file name")?
        .to_string_lossy();
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok(dir.join(format!(".{name}.swapsight-{}.tmp", std::process::id())))
}
