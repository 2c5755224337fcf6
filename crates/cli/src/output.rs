//! Writing an output file (`export -o`, `plot -o`, `compare --plot`) so that
//! it is whole or absent, and never through a link another user planted:
//! `swapsight::outpath` finds the folder by descriptor and renames a synced
//! temp file over the name. A full disk, a failed render or a kill leaves no
//! partial file (and any old one untouched).

use std::io::Write;
use std::path::Path;

use anyhow::Context;

pub fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let cannot = || format!("cannot write {}", path.display());
    let place = swapsight::outpath::locate(path).with_context(cannot)?;
    place.replace_with(write).with_context(cannot)
}
