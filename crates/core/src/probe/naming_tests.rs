use super::*;

fn args(s: &[&str]) -> Vec<Vec<u8>> {
    s.iter().map(|a| a.as_bytes().to_vec()).collect()
}

fn name(program: &str, argv: &[&str]) -> String {
    let v = args(argv);
    let refs: Vec<&[u8]> = v.iter().map(Vec::as_slice).collect();
    display_name(program, &refs)
}

#[test]
fn interpreters_are_named_by_what_they_run() {
    let table: &[(&str, &[&str], &str)] = &[
        (
            "python3.12",
            &["python3", "generate.py"],
            "generate.py (python3.12)",
        ),
        (
            "python3.12",
            &[
                "/usr/bin/python3",
                "/home/me/pipe/generate.py",
                "--steps",
                "30",
            ],
            "generate.py (python3.12)",
        ),
        (
            "python3",
            &["python3", "-u", "-X", "dev", "x.py"],
            "x.py (python3)",
        ),
        (
            "python3",
            &["python3", "-uX", "dev", "x.py"],
            "x.py (python3)",
        ),
        (
            "python3",
            &["python3", "-Wignore", "-OO", "x.py"],
            "x.py (python3)",
        ),
        (
            "python3",
            &["python3", "-W", "ignore", "x.py"],
            "x.py (python3)",
        ),
        (
            "python3",
            &["python3", "--check-hash-based-pycs", "always", "x.py"],
            "x.py (python3)",
        ),
        (
            "python3",
            &["python3", "-m", "diffusers", "--model", "m.py"],
            "diffusers (python3)",
        ),
        (
            "python3",
            &["python3", "-mdiffusers"],
            "diffusers (python3)",
        ),
        (
            "python3",
            &["python3", "-um", "http.server"],
            "http.server (python3)",
        ),
        (
            "python3.11",
            &[
                "/usr/bin/python3.11",
                "-m",
                "ipykernel_launcher",
                "-f",
                "/root/.local/share/jupyter/runtime/kernel-1.json",
            ],
            "ipykernel_launcher (python3.11)",
        ),
        (
            "python3",
            &[
                "python",
                "-m",
                "torch.distributed.run",
                "--nproc-per-node",
                "2",
                "t.py",
            ],
            "torch.distributed.run (python3)",
        ),
        (
            "python3",
            &["python", "-X", "dev", "-m", "pkg"],
            "pkg (python3)",
        ),
        (
            "python3",
            &["python", "-Xdev", "-m", "pkg"],
            "pkg (python3)",
        ),
        (
            "python3",
            &["python3", "-c", "import x; x.run()"],
            "python3 -c",
        ),
        ("python3", &["python3", "-Sc", "print(1)"], "python3 -c"),
        ("python3", &["python3"], "python3"),
        ("python3", &["python3", "-"], "python3"),
        ("python3", &["python3", "-i"], "python3"),
        ("python3", &["python3", "-m"], "python3"),
        ("pypy3", &["pypy3", "bench.py"], "bench.py (pypy3)"),
        ("node", &["node", "--inspect", "app.js"], "app.js (node)"),
        (
            "node",
            &[
                "node",
                "--inspect=9229",
                "-r",
                "ts-node/register",
                "src/server.ts",
                "--port",
                "1",
            ],
            "server.ts (node)",
        ),
        (
            "node",
            &["node", "--max-old-space-size=4096", "build.mjs"],
            "build.mjs (node)",
        ),
        ("node", &["node", "-e", "1+1"], "node -e"),
        ("node", &["node"], "node"),
        (
            "ruby",
            &["ruby", "-I", "lib", "-rjson", "tool.rb"],
            "tool.rb (ruby)",
        ),
        ("ruby3.2", &["ruby", "-e", "puts 1"], "ruby3.2 -e"),
        (
            "perl",
            &["perl", "-w", "-Mstrict", "-I", "lib", "x.pl"],
            "x.pl (perl)",
        ),
        ("perl", &["perl", "-lane", "print"], "perl -e"),
        (
            "java",
            &[
                "java",
                "-Xmx4g",
                "-Dk=v",
                "-jar",
                "/opt/app/server.jar",
                "--port",
                "1",
            ],
            "server.jar (java)",
        ),
        (
            "java",
            &[
                "java",
                "-cp",
                "a.jar:b.jar",
                "org.gradle.launcher.daemon.bootstrap.GradleDaemon",
                "8.5",
            ],
            "GradleDaemon (java)",
        ),
        (
            "java",
            &["java", "-m", "app/com.x.Main"],
            "app/com.x.Main (java)",
        ),
        ("java", &["java", "-version"], "java"),
        ("bash", &["bash", "run.sh", "a"], "run.sh (bash)"),
        (
            "bash",
            &["bash", "-e", "-o", "pipefail", "./ci/run.sh"],
            "run.sh (bash)",
        ),
        ("bash", &["bash", "--rcfile", "rc", "x.sh"], "x.sh (bash)"),
        ("bash", &["bash", "-c", "python x.py | tee log"], "bash -c"),
        ("dash", &["sh", "-ec", "exec python3 x.py"], "dash -c"),
        ("zsh", &["-zsh"], "zsh"),
        ("bash", &["bash", "-s", "x.sh"], "bash"),
        ("bash", &["bash", "-i"], "bash"),
        // Not an interpreter: the program alone, whatever the arguments.
        ("sleep", &["sleep", "600"], "sleep"),
        (
            "WebKitWebProcess",
            &["/usr/lib/WebKitWebProcess", "7", "40"],
            "WebKitWebProcess",
        ),
        ("pythonista", &["pythonista", "x.py"], "pythonista"),
    ];
    for (program, argv, want) in table {
        assert_eq!(&name(program, argv), want, "{program} {argv:?}");
    }
}

#[test]
fn run_wrappers_are_named_by_the_command_they_run() {
    let table: &[(&str, &[&str], &str)] = &[
        ("uv", &["uv", "run", "train.py"], "train.py (uv run)"),
        (
            "uv",
            &["uv", "run", "--with", "torch", "python", "-u", "train.py"],
            "train.py (uv run)",
        ),
        (
            "uv",
            &["uv", "--directory", "proj", "run", "-m", "diffusers"],
            "diffusers (uv run)",
        ),
        ("uv", &["uv", "run", "jupyter", "lab"], "jupyter (uv run)"),
        (
            "uv",
            &["uv", "run", "python", "-c", "print(1)"],
            "python -c (uv run)",
        ),
        ("uv", &["uv", "pip", "install", "run"], "uv"),
        ("uv", &["uv", "run"], "uv"),
        (
            "conda",
            &["conda", "run", "-n", "ml", "python", "gen.py"],
            "gen.py (conda run)",
        ),
        // poetry and conda are Python scripts themselves.
        (
            "python3.11",
            &[
                "/usr/bin/python3.11",
                "/home/me/.local/bin/poetry",
                "run",
                "python",
                "serve.py",
            ],
            "serve.py (poetry run)",
        ),
        (
            "python3",
            &[
                "python3",
                "/opt/conda/bin/conda",
                "run",
                "--no-capture-output",
                "-p",
                "/envs/x",
                "python",
                "-m",
                "vllm.entrypoints",
            ],
            "vllm.entrypoints (conda run)",
        ),
        (
            "python3",
            &["python3", "/usr/bin/poetry", "install"],
            "poetry (python3)",
        ),
    ];
    for (program, argv, want) in table {
        assert_eq!(&name(program, argv), want, "{program} {argv:?}");
    }
}

#[test]
fn the_program_is_the_executables_full_name() {
    let exe = b"/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/WebKitWebProcess".as_slice();
    assert_eq!(
        program_name(Some(exe), None, "WebKitWebProces"),
        "WebKitWebProcess"
    );
    // A replaced binary still names its process.
    assert_eq!(
        program_name(Some(b"/opt/x/server (deleted)"), None, "server"),
        "server"
    );
    // exe unreadable (another user's process): argv[0], when it agrees
    // with comm, else comm.
    assert_eq!(
        program_name(
            None,
            Some(b"/usr/libexec/a-very-long-helper-name"),
            "a-very-long-hel"
        ),
        "a-very-long-helper-name"
    );
    assert_eq!(program_name(None, Some(b"-bash"), "bash"), "bash");
    assert_eq!(program_name(None, Some(b"sshd: me@pts/0"), "sshd"), "sshd");
    assert_eq!(
        program_name(None, Some(b"postgres: checkpointer"), "postgres"),
        "postgres"
    );
    assert_eq!(program_name(None, None, "kworker"), "kworker");
    assert_eq!(program_name(Some(b""), Some(b""), "x"), "x");
    assert_eq!(program_name(None, None, ""), "");
}

#[test]
fn odd_arguments_never_break_the_name() {
    // Spaces in paths; non-UTF-8 bytes; control characters.
    let v: Vec<&[u8]> = vec![b"python3", b"/tmp/my runs/gen erate.py"];
    assert_eq!(display_name("python3", &v), "gen erate.py (python3)");
    let v: Vec<&[u8]> = vec![b"python3", b"/tmp/caf\xe9.py"];
    assert_eq!(display_name("python3", &v), "caf\u{fffd}.py (python3)");
    let v: Vec<&[u8]> = vec![b"python3", b"evil\x1b[2Jx.py"];
    assert_eq!(display_name("python3", &v), "evil?[2Jx.py (python3)");
    assert_eq!(display_name("python3", &[]), "python3");
    let v: Vec<&[u8]> = vec![b"python3", b""];
    assert_eq!(display_name("python3", &v), "python3");
    let v: Vec<&[u8]> = vec![b"python3", b"dir/"];
    assert_eq!(display_name("python3", &v), "python3");
    // A huge name is capped; a huge argv costs nothing more.
    let long = format!("{}.py", "x".repeat(10_000));
    let many: Vec<Vec<u8>> = std::iter::once(b"python3".to_vec())
        .chain(std::iter::repeat_n(b"-u".to_vec(), 100_000))
        .chain([long.into_bytes()])
        .collect();
    let refs: Vec<&[u8]> = many.iter().map(Vec::as_slice).collect();
    let n = display_name("python3", &refs);
    assert_eq!(n.chars().count(), NAME_MAX_CHARS);
    assert!(n.starts_with("xxx") && n.ends_with('…'), "{n}");
}

#[test]
fn the_command_line_reads_as_ps_shows_it_quoted_and_capped() {
    let v: Vec<&[u8]> = vec![
        b"python3",
        b"-u",
        b"/tmp/my runs/x.py",
        b"",
        b"it's",
        b"a\nb",
    ];
    assert_eq!(
        command_line(&v),
        r"python3 -u '/tmp/my runs/x.py' '' 'it'\''s' 'a?b'"
    );
    let huge = vec![b"y".repeat(1 << 20); 8];
    let refs: Vec<&[u8]> = huge.iter().map(Vec::as_slice).collect();
    let c = command_line(&refs);
    assert!(
        c.len() <= CMDLINE_MAX_BYTES && c.ends_with('…'),
        "{}",
        c.len()
    );
    // Cut at a character boundary.
    let wide = "é".repeat(CMDLINE_MAX_BYTES);
    let c = command_line(&[wide.as_bytes()]);
    assert!(c.len() <= CMDLINE_MAX_BYTES && c.ends_with('…'));
    // One rewritten line is not quoted.
    let v: Vec<&[u8]> = vec![b"postgres: checkpointer"];
    assert_eq!(command_line(&v), "postgres: checkpointer");
}

#[test]
fn proc_cmdline_splits_on_nul() {
    assert_eq!(
        split_nul(b"python3\0x.py\0"),
        [b"python3".as_slice(), b"x.py"]
    );
    assert_eq!(
        split_nul(b"python3\0\0x.py\0"),
        [b"python3".as_slice(), b"", b"x.py"]
    );
    // A process that rewrote its arguments (no final NUL).
    assert_eq!(
        split_nul(b"postgres: checkpointer"),
        [b"postgres: checkpointer".as_slice()]
    );
    assert!(split_nul(b"").is_empty());
    assert!(split_nul(b"\0").is_empty());
}

#[test]
fn naming_of_a_process_puts_it_together() {
    let argv: Vec<&[u8]> = vec![b"python3", b"generate.py", b"--steps", b"30"];
    let n = Naming::of(Some(b"/usr/bin/python3.12"), &argv, "python3");
    assert_eq!(&*n.name, "generate.py (python3.12)");
    assert_eq!(n.cmdline.as_deref(), Some("python3 generate.py --steps 30"));
    // Arguments unreadable: the program only, no command line.
    let n = Naming::of(None, &[], "launchd");
    assert_eq!((&*n.name, n.cmdline.as_deref()), ("launchd", None));
}

#[test]
fn the_cache_reads_once_per_process_and_again_for_a_reused_pid_or_exec() {
    let mut cache = NameCache::default();
    let named = |name: &str| Naming {
        name: name.into(),
        cmdline: Some(name.into()),
    };
    for _ in 0..100 {
        cache.begin_tick();
        let n = cache.get(42, 1_000, b"python3", || named("generate.py (python3)"));
        assert_eq!(&*n.name, "generate.py (python3)");
        cache.get(7, 50, b"sleep", || named("sleep"));
        cache.end_tick();
    }
    assert_eq!(cache.reads(), 2, "one read per process over 100 ticks");

    // pid 42 exited and was reused by a different program.
    cache.begin_tick();
    let n = cache.get(42, 9_000, b"node", || named("server.js (node)"));
    assert_eq!(&*n.name, "server.js (node)");
    // exec: same pid and start time, new program.
    let n = cache.get(7, 50, b"bash", || named("run.sh (bash)"));
    assert_eq!(&*n.name, "run.sh (bash)");
    cache.end_tick();
    assert_eq!(cache.reads(), 4);

    // Arguments not readable (caught inside execve, a zombie, another
    // user's process on macOS): read again, a few ticks only.
    for _ in 0..10 {
        cache.begin_tick();
        cache.get(42, 9_000, b"node", || unreachable!("cached"));
        cache.get(9, 1, b"zombie", || Naming {
            name: "zombie".into(),
            cmdline: None,
        });
        cache.end_tick();
    }
    assert_eq!(cache.reads(), 4 + 1 + u64::from(ARGS_RETRIES));

    // Processes not seen in a scan are forgotten.
    cache.begin_tick();
    cache.get(42, 9_000, b"node", || unreachable!("cached"));
    cache.end_tick();
    assert_eq!(cache.len(), 1);
}

#[test]
fn a_new_image_under_the_same_comm_is_named_again_an_unknown_one_never() {
    let mut cache = NameCache::default();
    let named = |name: &str| Naming {
        name: name.into(),
        cmdline: Some(name.into()),
    };
    cache.begin_tick();
    let (n, _) = cache.get_image(42, 1_000, b"python3", 0x7ffd_0000, || {
        named("a.py (python3)")
    });
    assert_eq!(&*n.name, "a.py (python3)");
    cache.end_tick();
    // A zombie, or the middle of an execve, shows no image: no read.
    for image in [0x7ffd_0000, 0] {
        cache.begin_tick();
        let (n, _) = cache.get_image(42, 1_000, b"python3", image, || unreachable!("cached"));
        assert_eq!(&*n.name, "a.py (python3)");
        cache.end_tick();
    }
    // python3 exec'd python3 with another script: same pid, start, comm.
    cache.begin_tick();
    let (n, _) = cache.get_image(42, 1_000, b"python3", 0x7ffe_1000, || {
        named("b.py (python3)")
    });
    assert_eq!(&*n.name, "b.py (python3)");
    cache.end_tick();
    assert_eq!(cache.reads(), 2);
    // Known first without an image, then with one: that is not an exec.
    cache.begin_tick();
    cache.get_image(7, 50, b"sleep", 0, || named("sleep"));
    cache.end_tick();
    cache.begin_tick();
    cache.get_image(7, 50, b"sleep", 0x7ff0_0000, || unreachable!("cached"));
    cache.end_tick();
    assert_eq!(cache.reads(), 3);
}

#[test]
fn framework_python_on_macos_is_named_by_its_version_not_python() {
    // Regression: python.org, Homebrew and Xcode builds run a binary named
    // "Python" inside Python.app, so a script showed as "(Python)".
    let org = b"/Library/Frameworks/Python.framework/Versions/3.12/Resources/Python.app/Contents/MacOS/Python";
    let brew = b"/opt/homebrew/Cellar/python@3.13/3.13.1/Frameworks/Python.framework/Versions/3.13/Resources/Python.app/Contents/MacOS/Python";
    let xcode = b"/Applications/Xcode.app/Contents/Developer/Library/Frameworks/Python3.framework/Versions/3.9/Resources/Python.app/Contents/MacOS/Python";
    assert_eq!(framework_python(org).as_deref(), Some("python3.12"));
    assert_eq!(framework_python(brew).as_deref(), Some("python3.13"));
    assert_eq!(framework_python(xcode).as_deref(), Some("python3.9"));
    let current = b"/Library/Frameworks/Python.framework/Versions/Current/Resources/Python.app/Contents/MacOS/Python";
    assert_eq!(framework_python(current).as_deref(), Some("python3"));
    assert_eq!(framework_python(b"/usr/bin/python3"), None);
    assert_eq!(
        framework_python(b"/Applications/Foo.app/Contents/MacOS/Python"),
        None
    );
    let n = Naming::of(
        Some(org),
        &[
            &b"/Library/Frameworks/Python.framework/Versions/3.12/bin/python3"[..],
            b"generate.py",
        ],
        "Python",
    );
    assert_eq!(&*n.name, "generate.py (python3.12)");
}

/// Issue 20: U+202E is not a control character, so it passed into names and
/// command lines, and showed `exe.py` for `yp.exe`.
#[test]
fn a_bidi_override_in_a_live_name_is_replaced() {
    let n = Naming::of(
        None,
        &[
            b"python3",
            "evil\u{202e}yp.exe".as_bytes(),
            b"\xe2\x81\xa6x",
        ],
        "python3",
    );
    assert_eq!(&*n.name, "evil?yp.exe (python3)");
    assert_eq!(n.cmdline.as_deref(), Some("python3 evil?yp.exe ?x"));
}

/// A naming that waits is made from `comm` alone, with no read, stays so
/// while asked to wait, and is read once when asked without waiting (or by
/// `name_now`); the count of waiting ones follows, through `end_tick` too.
#[test]
fn a_waiting_naming_is_read_once_when_it_may_wait_no_more() {
    let mut cache = NameCache::default();
    let read = |name: &str| {
        let name = name.to_owned();
        move || {
            Naming::of(
                Some(format!("/usr/bin/{name}").as_bytes()),
                &[b"x", b"run.py"],
                &name,
            )
        }
    };
    cache.begin_tick();
    let (n, new) = cache.get_waiting(1, 10, b"python3", 0, true, || panic!("read while waiting"));
    assert!(new);
    assert_eq!((&*n.name, n.cmdline.clone()), ("python3", None));
    let _ = cache.get_waiting(2, 20, b"sleep", 0, true, || panic!("read while waiting"));
    assert_eq!((cache.reads(), cache.waiting()), (0, 2));
    // A comm-only naming is no missed argument read: not retried.
    cache.begin_tick();
    let _ = cache.get_waiting(1, 10, b"python3", 0, true, || panic!("read while waiting"));
    let (n, new) = cache.get_waiting(2, 20, b"sleep", 0, false, read("sleep"));
    assert!(!new);
    assert_eq!(n.cmdline.as_deref(), Some("x run.py"));
    assert_eq!((cache.reads(), cache.waiting()), (1, 1));
    let n = cache.name_now(1, |comm| read(std::str::from_utf8(comm).unwrap())());
    assert_eq!(n.map(|n| n.cmdline.clone()), Some(Some("x run.py".into())));
    assert!(cache.name_now(1, |_| panic!("named twice")).is_none());
    assert_eq!((cache.reads(), cache.waiting()), (2, 0));
    // A new process (another start time) under a waiting pid, and one gone.
    let _ = cache.get_waiting(3, 30, b"sleep", 0, true, || panic!("read while waiting"));
    let _ = cache.get_waiting(1, 11, b"bash", 0, true, || panic!("read while waiting"));
    assert_eq!(cache.waiting(), 2);
    cache.begin_tick();
    let _ = cache.get_waiting(1, 11, b"bash", 0, true, || panic!("read while waiting"));
    cache.end_tick();
    assert_eq!(
        (cache.waiting(), cache.len()),
        (1, 1),
        "the gone waiting one still counts"
    );
}
