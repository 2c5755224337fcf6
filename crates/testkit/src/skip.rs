//! Whether a test runs here: as root, in CI, and the rule that a test which
//! cannot run skips with a note outside CI and fails in it.

pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// `None` after a note when `why_not` is set outside CI; a panic in CI.
pub fn skip_unless_ci(test: &str, why_not: Option<String>) -> Option<()> {
    match why_not {
        None => Some(()),
        Some(why) => {
            assert!(!in_ci(), "{test} must run in CI, but: {why}");
            eprintln!("note: {test} skipped outside CI: {why}");
            None
        }
    }
}
