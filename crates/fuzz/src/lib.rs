//! Fuzzing that runs on the stable toolchain: proptest generates and shrinks
//! the inputs, a time or case budget bounds each target, and a counting
//! allocator checks each input's peak heap use. `swapsight-fuzz` (the
//! binary) runs the targets; `scripts/test` runs each for seconds,
//! `scripts/fuzz` for as long as asked.

pub mod alloc;
pub mod models;
pub mod mutate;
pub mod targets;

/// The command line's own value parsers, compiled from the CLI's source so
/// that the very code `swapsight` runs is fuzzed.
#[path = "../../cli/src/args.rs"]
#[allow(dead_code)]
pub mod cli_args;

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

/// Strings for the argument parsers: numbers and units as typed, mistyped,
/// huge, negative, or anything at all.
pub fn argument() -> impl Strategy<Value = String> {
    let number = prop_oneof![
        any::<u32>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| f.to_string()),
        proptest::sample::select(&mutate::VALUES[..]).prop_map(str::to_string),
        Just("5000000000000000".to_string()),
        Just("0.001".to_string()),
        Just("1.2.3".to_string()),
        Just(".".to_string()),
    ];
    let unit = proptest::sample::select(
        &[
            "", "ms", "s", "m", "h", "min", "sec", "b", "k", "KiB", "M", "MB", "G", "GiB", "T",
            "TB", "x", "%", " G", "Ms", "ß",
        ][..],
    );
    prop_oneof![
        4 => (proptest::option::of(Just("-")), number, unit)
            .prop_map(|(sign, n, u)| format!("{}{n}{u}", sign.unwrap_or(""))),
        1 => any::<String>(),
    ]
}

/// Words of ordinary text the cleaning rule must keep as they are: names as
/// processes carry them, non-Latin scripts (with ZWNJ, combining marks and
/// Thai's U+200B between words) and emoji (ZWJ sequences, a variation
/// selector, a skin tone, a flag).
pub const ORDINARY: [&str; 24] = [
    "python3.12",
    "generate.py (uv run)",
    "-m diffusers",
    "=1+1",
    "it's \"quoted\", with commas",
    "Grüße",
    "naïve café",
    "e\u{301}",
    "日本語のプロセス",
    "中文",
    "한국어",
    "русский",
    "Ελληνικά",
    "ქართული",
    "עברית",
    "العربية",
    "हिन्दी",
    "می\u{200c}خواهم",
    "ภาษาไทย\u{200b}คำ",
    "👩\u{200d}💻",
    "🧑\u{200d}🤝\u{200d}🧑",
    "❤\u{fe0f}",
    "👍🏽",
    "🇩🇪",
];

/// Characters a crafted name plants: C0 and C1 controls (ESC, BEL, CSI),
/// DEL, bidi controls, separators, tags.
const PLANTED: [char; 16] = [
    '\u{0}',
    '\u{7}',
    '\t',
    '\n',
    '\r',
    '\u{1b}',
    '\u{7f}',
    '\u{85}',
    '\u{9b}',
    '\u{61c}',
    '\u{200f}',
    '\u{202e}',
    '\u{2067}',
    '\u{2028}',
    '\u{206f}',
    '\u{e0041}',
];

/// Text for the cleaning rule, and whether it is ordinary (made of
/// [`ORDINARY`] only, to be kept as it is): ordinary text, the same with
/// characters planted (control, bidi and tag characters, or any), or any
/// string.
pub fn text() -> impl Strategy<Value = (String, bool)> {
    let ordinary = proptest::collection::vec(proptest::sample::select(&ORDINARY[..]), 0..8)
        .prop_map(|words| words.join(" "));
    let planted = prop_oneof![proptest::sample::select(&PLANTED[..]), any::<char>()];
    let plants = proptest::collection::vec((any::<proptest::sample::Index>(), planted), 1..4);
    prop_oneof![
        3 => ordinary.clone().prop_map(|s| (s, true)),
        3 => (ordinary, plants).prop_map(|(s, plants)| {
            let mut chars: Vec<char> = s.chars().collect();
            for (at, c) in plants {
                chars.insert(at.index(chars.len() + 1), c);
            }
            (chars.into_iter().collect(), false)
        }),
        2 => any::<String>().prop_map(|s| (s, false)),
    ]
}

/// What one target's run did.
#[derive(Debug, Clone)]
pub struct Run {
    pub target: &'static str,
    pub inputs: u64,
    pub elapsed: Duration,
    /// Largest heap growth of one input, bytes (0 when not measured).
    pub peak_bytes: usize,
    pub failure: Option<String>,
}

/// When a target's run ends.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub time: Duration,
    pub cases: Option<u64>,
}

/// Heap the code under test may take for one input (the property checks are
/// not counted): the reader's line buffer and what it keeps grow with the
/// input, and each output with what was kept; nothing should grow faster.
fn memory_bound(input_len: usize) -> usize {
    (4 << 20) + 48 * input_len
}

/// Runs `target` until the budget is spent or an input fails; proptest
/// shrinks a failure to a small input before it is reported.
pub fn run(target: &'static str, budget: Budget, seed: [u8; 32]) -> Run {
    match target {
        "units" => fuzz(
            target,
            argument(),
            budget,
            seed,
            |s: &String| (targets::units_target(s), s.len()),
            |s: &String| s.as_bytes().to_vec(),
        ),
        "model" => fuzz(
            target,
            models::model_bytes(),
            budget,
            seed,
            |(kind, b): &(models::Kind, Vec<u8>)| (targets::model_target(*kind, b), b.len()),
            |(_, b): &(models::Kind, Vec<u8>)| b.clone(),
        ),
        "text" => fuzz(
            target,
            text(),
            budget,
            seed,
            |(s, ordinary): &(String, bool)| (targets::text_target(s, *ordinary), s.len()),
            |(s, _): &(String, bool)| s.as_bytes().to_vec(),
        ),
        _ => {
            let f = match target {
                "trace" => targets::trace_target,
                "report" => targets::report_target,
                "csv" => targets::csv_target,
                "perfetto" => targets::perfetto_target,
                "prometheus" => targets::prometheus_target,
                "plot" => targets::plot_target,
                other => panic!("no fuzz target {other}"),
            };
            fuzz(
                target,
                mutate::trace_bytes(),
                budget,
                seed,
                move |b: &Vec<u8>| (f(b), b.len()),
                Vec::clone,
            )
        }
    }
}

fn fuzz<S: Strategy>(
    target: &'static str,
    strategy: S,
    budget: Budget,
    seed: [u8; 32],
    test: impl Fn(&S::Value) -> (Result<(), String>, usize),
    bytes_of: impl Fn(&S::Value) -> Vec<u8>,
) -> Run
where
    S::Value: std::fmt::Debug,
{
    let batch = 16u32;
    let config = Config {
        cases: batch,
        failure_persistence: None,
        max_shrink_time: 60_000,
        ..Config::default()
    };
    // A runner counts its successes for good, so each batch gets a fresh one,
    // seeded from the seed and the batch's number: the same seed, the same inputs.
    let mut batch_no = 0u64;
    let measuring = alloc::counting();
    let peak = std::cell::Cell::new(0usize);
    let count = std::cell::Cell::new(0u64);
    let started = Instant::now();
    let mut failure = None;
    while started.elapsed() < budget.time && budget.cases.is_none_or(|c| count.get() < c) {
        let mut batch_seed = seed;
        for (b, n) in batch_seed[24..].iter_mut().zip(batch_no.to_le_bytes()) {
            *b ^= n;
        }
        batch_no += 1;
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &batch_seed);
        let mut runner = TestRunner::new_with_rng(config.clone(), rng);
        let result = runner.run(&strategy, |input| {
            count.set(count.get() + 1);
            alloc::take_case_peak();
            let (outcome, len) = test(&input);
            let used = alloc::take_case_peak();
            peak.set(peak.get().max(used));
            outcome.map_err(TestCaseError::fail)?;
            if measuring && used > memory_bound(len) {
                return Err(TestCaseError::fail(format!(
                    "{used} bytes of heap for a {len}-byte input (bound {})",
                    memory_bound(len)
                )));
            }
            Ok(())
        });
        if let Err(e) = result {
            failure = Some(match e {
                TestError::Fail(why, input) => {
                    let bytes = bytes_of(&input);
                    let file = std::env::temp_dir()
                        .join(format!("swapsight-fuzz-{target}-{}.bin", hex(&seed)));
                    let saved = match std::fs::write(&file, &bytes) {
                        Ok(()) => format!("saved in {}", file.display()),
                        Err(e) => format!("not saved: {e}"),
                    };
                    format!(
                        "{why}\nminimal input ({} bytes, {saved}): {}",
                        bytes.len(),
                        show(&bytes.escape_ascii().to_string())
                    )
                }
                TestError::Abort(why) => format!("aborted: {why}"),
            });
            break;
        }
    }
    Run {
        target,
        inputs: count.get(),
        elapsed: started.elapsed(),
        peak_bytes: peak.get(),
        failure,
    }
}

fn hex(seed: &[u8]) -> String {
    let digits: String = seed.iter().map(|b| format!("{b:02x}")).collect();
    digits.trim_start_matches('0').to_string()
}

/// An input, cut to a readable length.
fn show(s: &str) -> String {
    const MAX: usize = 4000;
    if s.len() <= MAX {
        return s.to_string();
    }
    let cut = (0..=MAX)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}… ({} bytes)", &s[..cut], s.len())
}
