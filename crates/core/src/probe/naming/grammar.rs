//! How each interpreter's command line says what it runs, as data — which
//! options take a value, which mean code given inline, how short options
//! cluster — and one walker that reads any of them. A new interpreter is a
//! new table, not a new loop.

/// What an interpreter's arguments point at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target {
    /// The script is `args[i]`.
    Script(usize),
    /// A module (`-m module`, named without its `-m`), a jar's main class.
    Label(String),
    /// Code given inline, under this option (`-c`, `-e`).
    Inline(&'static str),
}

/// One interpreter's argument syntax.
pub(super) struct Grammar {
    /// Whole arguments that end the options: what follows is the script.
    ends: &'static [&'static [u8]],
    /// Whole arguments that take the next argument as their value.
    value: &'static [&'static [u8]],
    /// Whole arguments meaning code given inline, and how to say it.
    inline: &'static [(&'static [u8], &'static str)],
    /// Whole arguments naming a module in the next argument (`-m`).
    module: &'static [&'static [u8]],
    /// Whole arguments naming the script in the next argument (`-jar`).
    script: &'static [&'static [u8]],
    /// Whether `+x` is an option as well as `-x` (shells' `+o`).
    plus: bool,
    /// Clustered short options (`-lane`); `None`: each `-x` stands alone.
    short: Option<Short>,
    /// What the first argument past the options is.
    positional: Positional,
}

/// Letters of a cluster of short options (`-uX dev`, `-lane`, `-ec`).
struct Short {
    /// Code given on the command line (`-c`, `-e`, `-E`); only after `-`.
    code: &'static str,
    /// A module: the rest of the cluster or the next argument (`-mvenv`).
    module: &'static str,
    /// Takes a value: see [`Short::value_ends_cluster`].
    value: &'static str,
    /// The rest of the cluster is the value (`-Wignore`, `-I lib`), and the
    /// next argument is when nothing follows; `false`: the next argument
    /// is the value wherever the letter sits (`bash -eo pipefail`).
    value_ends_cluster: bool,
    /// May be followed by digits (`-0777`, `-W2`).
    digits: &'static str,
    /// Take the rest of the cluster, never the next argument (`-i.bak`).
    rest: &'static str,
    /// Commands come from standard input: no script to name (`sh -s`).
    stdin: &'static str,
}

const NO_SHORT: Short = Short {
    code: "",
    module: "",
    value: "",
    value_ends_cluster: true,
    digits: "",
    rest: "",
    stdin: "",
};

/// What the first argument past the options names.
#[derive(Clone, Copy)]
enum Positional {
    /// A script (not `-`, standard input).
    Script,
    /// A script, `-` included (a shell reads `-` as the end of options).
    AnyScript,
    /// A class, named by its last component (`GradleDaemon`).
    Class,
}

const fn grammar(positional: Positional) -> Grammar {
    Grammar {
        ends: &[b"--"],
        value: &[],
        inline: &[],
        module: &[],
        script: &[],
        plus: false,
        short: None,
        positional,
    }
}

/// Python: `python [opts] (-c cmd | -m mod | script | -) [args]`. Options
/// taking a value: `-W`, `-X`, `--check-hash-based-pycs`; short options may
/// be clustered (`-uX dev`, `-Wignore`).
pub(super) const PYTHON: Grammar = Grammar {
    value: &[b"--check-hash-based-pycs"],
    short: Some(Short {
        code: "c",
        module: "m",
        value: "WXQ",
        ..NO_SHORT
    }),
    ..grammar(Positional::Script)
};

/// Node: `node [opts] (-e code | -p code | script) [args]`.
pub(super) const NODE: Grammar = Grammar {
    inline: &[
        (b"-e", "-e"),
        (b"--eval", "-e"),
        (b"-p", "-p"),
        (b"--print", "-p"),
    ],
    value: &[
        b"-r",
        b"--require",
        b"--import",
        b"--loader",
        b"--experimental-loader",
        b"-C",
        b"--conditions",
        b"--input-type",
        b"--title",
        b"--env-file",
        b"--inspect-port",
        b"--redirect-warnings",
        b"--stack-size",
        b"--max-old-space-size",
    ],
    ..grammar(Positional::Script)
};

/// Ruby: clustered short options (`-rjson -ne`).
pub(super) const RUBY: Grammar = Grammar {
    short: Some(Short {
        code: "e",
        value: "IrCEFKTU",
        digits: "0lW",
        rest: "xi",
        ..NO_SHORT
    }),
    ..grammar(Positional::Script)
};

/// Perl: clustered short options (`-lane`, `-0777`, `-i.bak`).
pub(super) const PERL: Grammar = Grammar {
    short: Some(Short {
        code: "eE",
        value: "IMm",
        digits: "0l",
        rest: "ixCdDV",
        ..NO_SHORT
    }),
    ..grammar(Positional::Script)
};

/// Java: `java [opts] (-jar file.jar | -m module[/class] | class) [args]`.
pub(super) const JAVA: Grammar = Grammar {
    ends: &[],
    script: &[b"-jar"],
    module: &[b"-m", b"--module"],
    value: &[
        b"-cp",
        b"-classpath",
        b"--class-path",
        b"-p",
        b"--module-path",
        b"--upgrade-module-path",
        b"--add-modules",
        b"--add-opens",
        b"--add-exports",
        b"--add-reads",
        b"--patch-module",
        b"--limit-modules",
        b"--enable-native-access",
    ],
    ..grammar(Positional::Class)
};

/// Shells: `sh [opts] (-c cmd | script) [args]`; `-o`/`-O`/`+o`/`+O` and
/// `--rcfile`/`--init-file` take a value; `-c` may sit in a cluster
/// (`-lc`); `-s` reads commands from standard input.
pub(super) const SHELL: Grammar = Grammar {
    ends: &[b"--", b"-"],
    value: &[b"--rcfile", b"--init-file"],
    plus: true,
    short: Some(Short {
        code: "c",
        value: "oO",
        value_ends_cluster: false,
        stdin: "s",
        ..NO_SHORT
    }),
    ..grammar(Positional::AnyScript)
};

/// What `args` (the arguments after the interpreter) run, by `g`.
pub(super) fn walk(args: &[&[u8]], g: &Grammar) -> Option<Target> {
    let mut i = 0;
    while let Some(&arg) = args.get(i) {
        if g.ends.contains(&arg) {
            i += 1;
            break;
        }
        if let Some(&(_, opt)) = g.inline.iter().find(|(a, _)| *a == arg) {
            return Some(Target::Inline(opt));
        }
        if g.module.contains(&arg) {
            return args.get(i + 1).map(|m| module(m));
        }
        if g.script.contains(&arg) {
            return args.get(i + 1).map(|_| Target::Script(i + 1));
        }
        if g.value.contains(&arg) {
            i += 2;
            continue;
        }
        if arg.starts_with(b"--") {
            i += 1; // --help, --version, --flag=value: no script anyway
            continue;
        }
        let dash = arg.first() == Some(&b'-');
        let option = arg.len() >= 2 && (dash || (g.plus && arg[0] == b'+'));
        if !option {
            break;
        }
        match &g.short {
            None => i += 1,
            Some(short) => match cluster(arg, dash, short, args.get(i + 1)) {
                Cluster::Skip(n) => i += n,
                Cluster::Ends(target) => return target,
            },
        }
    }
    let arg = args.get(i).filter(|a| !a.is_empty())?;
    match g.positional {
        Positional::Script if *arg == b"-" => None,
        Positional::Script | Positional::AnyScript => Some(Target::Script(i)),
        Positional::Class => {
            let class = String::from_utf8_lossy(arg);
            let last = class.rsplit('.').next().unwrap_or(&class);
            Some(Target::Label(last.to_owned()))
        }
    }
}

/// What one cluster of short options does to the walk.
enum Cluster {
    /// Go on, this many arguments further.
    Skip(usize),
    /// The walk ends here, with this answer.
    Ends(Option<Target>),
}

fn cluster(arg: &[u8], dash: bool, s: &Short, next: Option<&&[u8]>) -> Cluster {
    let mut skip_next = false;
    let mut j = 1;
    while let Some(&c) = arg.get(j) {
        let c = char::from(c);
        let attached = j + 1 < arg.len();
        if dash && s.code.contains(c) {
            return Cluster::Ends(Some(Target::Inline(match c {
                'c' => "-c",
                'E' => "-E",
                _ => "-e",
            })));
        }
        if dash && s.stdin.contains(c) {
            return Cluster::Ends(None);
        }
        if s.module.contains(c) {
            return Cluster::Ends(if attached {
                Some(module(&arg[j + 1..]))
            } else {
                next.map(|m| module(m))
            });
        }
        if s.value.contains(c) {
            skip_next = !(s.value_ends_cluster && attached);
            if s.value_ends_cluster {
                break;
            }
        }
        if s.rest.contains(c) {
            break;
        }
        j += 1;
        if s.digits.contains(c) {
            while arg.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
        }
    }
    Cluster::Skip(if skip_next { 2 } else { 1 })
}

/// A module is named as a script would be: `python -m ipykernel_launcher`
/// runs `ipykernel_launcher`, and the `-m` tells a reader nothing more.
fn module(name: &[u8]) -> Target {
    Target::Label(String::from_utf8_lossy(name).into_owned())
}
