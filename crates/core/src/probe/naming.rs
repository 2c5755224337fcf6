//! The name a person knows a process by, from its executable and its
//! arguments: the executable's full base name (not Linux's 15-character
//! `comm`), and for an interpreter or a `run` wrapper the script or module it
//! runs — `generate.py (python3.12)`, `diffusers (python3)` (`python -m diffusers`),
//! `train.py (uv run)`, `bash -c`. Platform-free: the probes hand it what they read
//! (`/proc/PID/exe` and `/proc/PID/cmdline`, or `KERN_PROCARGS2`).
//!
//! The rule is a best effort over the argument syntax of each interpreter
//! (options that take a value are skipped with it); when it cannot tell, the
//! executable's name stands alone. Names and command lines never carry
//! control or bidi characters (a process chooses its own arguments: a script
//! named with terminal escapes must not rewrite the report; the rule is
//! [`crate::util::text`]) and are capped.

mod cache;
mod grammar;
pub use cache::{NameCache, ARGS_RETRIES};
use std::sync::Arc;

use grammar::{Grammar, Target};

/// Longest display name, in characters; longer ones end in `…`. Keeps
/// `/metrics` labels and table cells bounded.
pub const NAME_MAX_CHARS: usize = 96;

/// Longest command line kept, in bytes (UTF-8); a longer one is cut at a
/// character boundary and ends in `…`.
pub const CMDLINE_MAX_BYTES: usize = 4096;

/// How much of a process's argument area the probes read: enough to find
/// the script behind any plausible run of options, and to fill
/// [`CMDLINE_MAX_BYTES`].
pub const ARGS_READ_MAX: usize = 16 * 1024;

/// What a probe learns once per process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Naming {
    pub(crate) name: Arc<str>,
    /// The command line, arguments separated by spaces, shell-quoted where
    /// needed; `None` when the arguments could not be read.
    pub cmdline: Option<Arc<str>>,
}

impl Naming {
    /// Names a process from its executable's path (when readable), its
    /// arguments (empty when unreadable) and its kernel short name.
    pub fn of(exe_path: Option<&[u8]>, argv: &[&[u8]], comm: &str) -> Naming {
        let program = program_name(exe_path, argv.first().copied(), comm);
        Naming {
            name: display_name(&program, argv).into(),
            cmdline: (!argv.is_empty()).then(|| command_line(argv).into()),
        }
    }
}

/// The executable's full base name: from its path when the OS gave it
/// (Linux `readlink /proc/PID/exe`, which answers only for the same user;
/// `" (deleted)"` dropped), else from `argv[0]` when that agrees with
/// `comm` (a process may rewrite its `argv[0]`, e.g. `sshd: user@pts/0`),
/// else `comm`.
pub fn program_name(exe_path: Option<&[u8]>, argv0: Option<&[u8]>, comm: &str) -> String {
    if let Some(path) = exe_path {
        let path = path.strip_suffix(b" (deleted)").unwrap_or(path);
        if let Some(python) = framework_python(path) {
            return python;
        }
        let base = base_name(path);
        if !base.is_empty() {
            return clean(&String::from_utf8_lossy(base), NAME_MAX_CHARS);
        }
    }
    if let Some(arg0) = argv0 {
        let base = String::from_utf8_lossy(base_name(arg0));
        // Login shells are `-bash`; comm is argv[0]'s base name cut to 15
        // bytes (Linux) or 16 (macOS).
        let base = base.strip_prefix('-').unwrap_or(&base);
        if !comm.is_empty() && (base == comm || (comm.len() >= 15 && base.starts_with(comm))) {
            return clean(base, NAME_MAX_CHARS);
        }
    }
    clean(comm, NAME_MAX_CHARS)
}

/// `python3.12` for a macOS framework build of Python, whose executable is
/// `…/Python.framework/Versions/3.12/Resources/Python.app/Contents/MacOS/Python`
/// (python.org and Homebrew; Xcode's is `Python3.framework`): named by its
/// base name it would be "Python", and no script would be found behind it.
pub fn framework_python(path: &[u8]) -> Option<String> {
    if base_name(path) != b"Python" {
        return None;
    }
    let text = std::str::from_utf8(path).ok()?;
    let (_, after) = text
        .rsplit_once("/Python.framework/Versions/")
        .or_else(|| text.rsplit_once("/Python3.framework/Versions/"))?;
    let version = after.split('/').next()?;
    let numeric = !version.is_empty() && version.chars().all(|c| c.is_ascii_digit() || c == '.');
    Some(if numeric {
        format!("python{version}")
    } else {
        "python3".to_string()
    })
}

/// The display name of a process whose executable is `program` (a base
/// name) and whose arguments are `argv` (`argv[0]` first).
pub fn display_name(program: &str, argv: &[&[u8]]) -> String {
    let args = argv.get(1..).unwrap_or(&[]);
    let name = match what_it_runs(program, args) {
        Some((target, Some(via))) => format!("{target} ({via})"),
        Some((whole, None)) => whole,
        None => program.to_owned(),
    };
    clean(&name, NAME_MAX_CHARS)
}

/// The command line as `ps` shows it, with arguments that hold spaces,
/// quotes or nothing shell-quoted, control characters as `?`, capped at
/// [`CMDLINE_MAX_BYTES`]. A lone argument is shown as it is: a process that
/// rewrote its arguments as one line (`postgres: checkpointer`, Chrome's
/// helpers) reads as it wrote them.
pub fn command_line(argv: &[&[u8]]) -> String {
    let mut out = String::new();
    for (i, arg) in argv.iter().enumerate() {
        if out.len() > CMDLINE_MAX_BYTES {
            break;
        }
        if i > 0 {
            out.push(' ');
        }
        let arg = String::from_utf8_lossy(&arg[..arg.len().min(CMDLINE_MAX_BYTES + 1)]);
        if argv.len() == 1 {
            out.push_str(&arg);
        } else if arg.is_empty()
            || arg
                .chars()
                .any(|c| c.is_whitespace() || "'\"\\$`;&|<>()*?[]{}!#~".contains(c))
        {
            out.push('\'');
            out.push_str(&arg.replace('\'', r"'\''"));
            out.push('\'');
        } else {
            out.push_str(&arg);
        }
    }
    cap_bytes(&clean(&out, usize::MAX), CMDLINE_MAX_BYTES)
}

/// Splits Linux's `/proc/PID/cmdline` (arguments each ended by a NUL; the
/// last NUL may be missing when a process rewrote its arguments).
pub fn split_nul(buf: &[u8]) -> Vec<&[u8]> {
    let buf = buf.strip_suffix(&[0]).unwrap_or(buf);
    if buf.is_empty() {
        return Vec::new();
    }
    buf.split(|&b| b == 0).collect()
}

/// The part of a path after its last `/`.
pub fn base_name(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

fn base_str(arg: &[u8]) -> String {
    String::from_utf8_lossy(base_name(arg)).into_owned()
}

/// The argument syntax of `program` when it is an interpreter whose first
/// operand is a script (by executable name).
fn grammar_of(program: &str) -> Option<&'static Grammar> {
    let p = program.to_ascii_lowercase();
    // python, python3, python3.12, pythonw, pypy3; ruby3.2; perl5.36.
    let versioned = |stem: &str| {
        p.strip_prefix(stem).is_some_and(|rest| {
            rest.chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == 'w')
        })
    };
    if versioned("python") || versioned("pypy") {
        Some(&grammar::PYTHON)
    } else if p == "node" || p == "nodejs" {
        Some(&grammar::NODE)
    } else if versioned("ruby") {
        Some(&grammar::RUBY)
    } else if versioned("perl") {
        Some(&grammar::PERL)
    } else if p == "java" {
        Some(&grammar::JAVA)
    } else if ["sh", "bash", "dash", "zsh", "ksh", "mksh", "fish"].contains(&p.as_str()) {
        Some(&grammar::SHELL)
    } else {
        None
    }
}

/// `run` wrappers: `uv run train.py`, `poetry run python x.py`,
/// `conda run -n env python x.py`.
const WRAPPERS: &[&str] = &[
    "uv",
    "poetry",
    "conda",
    "mamba",
    "micromamba",
    "pipenv",
    "pdm",
    "hatch",
    "pixi",
];

/// Options of the wrappers (before and after `run`) that take a value as
/// the next argument.
const WRAPPER_VALUE_OPTIONS: &[&str] = &[
    "-n",
    "--name",
    "-p",
    "--prefix",
    "--cwd",
    "-C",
    "--directory",
    "-P",
    "--project",
    "--python",
    "--with",
    "--with-requirements",
    "--with-editable",
    "--package",
    "--extra",
    "--group",
    "--only-group",
    "--no-group",
    "--index",
    "--default-index",
    "--index-url",
    "--extra-index-url",
    "--env-file",
    "--config-file",
    "--cache-dir",
    "--manifest-path",
    "-e",
    "--environment",
];

/// What a process runs and through what, when its program is an
/// interpreter or a wrapper: (`generate.py`, `python3.12`), (`diffusers`,
/// `python3`), (`train.py`, `uv run`); code given inline has no name of its
/// own, so the interpreter and the option say it all: (`bash -c`, none).
fn what_it_runs(program: &str, args: &[&[u8]]) -> Option<(String, Option<String>)> {
    if WRAPPERS.contains(&program) {
        return Some((wrapped(args)?, Some(format!("{program} run"))));
    }
    let target = grammar::walk(args, grammar_of(program)?)?;
    match target {
        Target::Script(i) => {
            let script = base_str(args[i]);
            if script.is_empty() {
                return None;
            }
            // A wrapper that is itself a script: `python /usr/bin/poetry run x.py`.
            if WRAPPERS.contains(&script.as_str()) {
                if let Some(inner) = wrapped(&args[i + 1..]) {
                    return Some((inner, Some(format!("{script} run"))));
                }
            }
            Some((script, Some(program.to_owned())))
        }
        Target::Label(label) => Some((label, Some(program.to_owned()))),
        Target::Inline(opt) => Some((format!("{program} {opt}"), None)),
    }
}

/// `wrapper [opts] run [opts] command [args]`: the command, named by its own
/// rule when it is an interpreter (`train.py`), else by its base name.
fn wrapped(args: &[&[u8]]) -> Option<String> {
    let mut i = 0;
    // Global options, then `run` (another subcommand, `uv pip …`, is not one).
    while let Some(arg) = args.get(i) {
        if *arg == b"run" {
            break;
        }
        if !arg.starts_with(b"-") {
            return None;
        }
        i += if is_wrapper_value_option(arg) { 2 } else { 1 };
    }
    i += 1;
    while let Some(arg) = args.get(i) {
        match *arg {
            b"--" => {
                i += 1;
                break;
            }
            b"-m" | b"--module" => {
                return args
                    .get(i + 1)
                    .map(|m| String::from_utf8_lossy(m).into_owned())
            }
            a if a.starts_with(b"-") && a.len() > 1 => {
                i += if is_wrapper_value_option(a) { 2 } else { 1 }
            }
            _ => break,
        }
    }
    let command = args.get(i)?;
    let program = base_str(command);
    Some(match what_it_runs(&program, &args[i + 1..]) {
        Some((target, _)) => target,
        None => program,
    })
}

fn is_wrapper_value_option(arg: &[u8]) -> bool {
    WRAPPER_VALUE_OPTIONS.iter().any(|o| o.as_bytes() == arg)
}

/// Control and bidi characters as `?` (as `ps` shows control characters;
/// the rule is [`crate::util::text::is_unsafe`]), at most `max` characters (the
/// last one `…` when cut).
fn clean(s: &str, max: usize) -> String {
    let cut = max != usize::MAX && s.chars().nth(max).is_some();
    let keep = if cut { max - 1 } else { usize::MAX };
    let mut out: String = s
        .chars()
        .take(keep)
        .map(crate::util::text::safe_char)
        .collect();
    if cut {
        out.push('…');
    }
    out
}

/// At most `max` bytes, cut at a character boundary, ending in `…` when cut.
fn cap_bytes(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
#[path = "naming_tests.rs"]
mod tests;
