//! Files read from a path someone else may have laid out (a model's folder,
//! a cache): opened without waiting on a FIFO or a device by that name.

use std::fs;
use std::path::Path;

/// A regular file, opened non-blocking so that a FIFO or a device by the
/// name is refused rather than waited on; with its length.
pub fn open_regular(path: &Path) -> std::io::Result<(fs::File, u64)> {
    let mut opts = fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let file = opts.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            if meta.is_dir() {
                "a folder, not a file".to_string()
            } else {
                format!("{}, not a file", not_a_file(&meta.file_type()))
            },
        ));
    }
    Ok((file, meta.len()))
}

/// What a path that is neither a file nor a folder is, for a note.
pub fn not_a_file(t: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    let _ = t;
    "neither a file nor a folder"
}
