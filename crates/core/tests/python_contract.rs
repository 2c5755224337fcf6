//! What the Python module (python/swapsight) shares with the recorder,
//! written from the Rust side itself and checked in, as the web UI's
//! contract is (crates/cli/src/serve/contract.rs):
//!
//! - `python/swapsight/_generated.py`: the constants of the mark file —
//!   its variable, line prefixes, caps, the characters of a unit, the name
//!   cleaning's tables — read from the constants and functions of
//!   `swapsight::marks` and `swapsight::text`; the module imports them
//!   instead of stating them again;
//! - `python/tests/generated_cases.json`: inputs and what the Rust functions
//!   make of them (names, units, values, figures, sizes), which
//!   python/tests checks the Python functions against.
//!
//! A test fails when a checked-in file is stale;
//! `SWAPSIGHT_WRITE_CONTRACT=1 cargo test -p swapsight --test python_contract`
//! writes them anew.

use std::fmt::Write as _;

use serde_json::{json, Value};
use swapsight::marks::{self, MarkLine};
use swapsight::{counters, text, units};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../");
const CONSTANTS: &str = "python/swapsight/_generated.py";
const CASES: &str = "python/tests/generated_cases.json";
const HOW: &str = "SWAPSIGHT_WRITE_CONTRACT=1 cargo test -p swapsight --test python_contract";

/// The checked-in file `name` (from the repository's root) is `want`;
/// with SWAPSIGHT_WRITE_CONTRACT=1 it is written first.
fn checked_in(name: &str, want: &str) {
    let path = format!("{ROOT}{name}");
    if std::env::var("SWAPSIGHT_WRITE_CONTRACT").as_deref() == Ok("1") {
        std::fs::write(&path, want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{name} is not what crates/core says: run {HOW}\n--- want\n{want}"
    );
}

#[test]
fn the_python_constants_are_the_cores() {
    checked_in(CONSTANTS, &constants());
}

#[test]
fn the_python_cases_are_what_the_core_functions_give() {
    checked_in(CASES, &cases());
}

/// What starts a line that ends the phase (`/` or `/NAME`), as
/// [`marks::parse_line`] reads it: a phase name cannot start with it.
fn end_prefix() -> &'static str {
    let prefix = "/";
    assert_eq!(
        marks::parse_line(prefix.as_bytes()),
        Some(MarkLine::End(None))
    );
    assert_eq!(
        marks::parse_line(b" /decode"),
        Some(MarkLine::End(Some("decode".into())))
    );
    assert_eq!(
        marks::parse_line(b"decode/x"),
        Some(MarkLine::Start("decode/x".into()))
    );
    prefix
}

/// Every `char` for which `pred` holds, as (first, last) ranges.
fn ranges(pred: impl Fn(char) -> bool) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for c in (0..=char::MAX as u32).filter_map(char::from_u32) {
        if !pred(c) {
            continue;
        }
        let n = c as u32;
        match out.last_mut() {
            Some((_, last)) if *last + 1 == n => *last = n,
            _ => out.push((n, n)),
        }
    }
    out
}

/// Every `char` for which `pred` holds, in order.
fn chars(pred: impl Fn(char) -> bool) -> String {
    (0..=char::MAX as u32)
        .filter_map(char::from_u32)
        .filter(|&c| pred(c))
        .collect()
}

/// `s` as a Python string literal, in ASCII.
fn py(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        let n = c as u32;
        let _ = match c {
            '\\' | '"' => write!(out, "\\{c}"),
            ' '..='~' => write!(out, "{c}"),
            _ if n < 0x100 => write!(out, "\\x{n:02x}"),
            _ if n < 0x1_0000 => write!(out, "\\u{n:04x}"),
            _ => write!(out, "\\U{n:08x}"),
        };
    }
    out.push('"');
    out
}

/// The largest counter value, checked against `is_counter_value`.
fn max_counter_value() -> u64 {
    let max = units::MAX_BYTES;
    let above = f64::from_bits((max as f64).to_bits() + 1);
    for sign in [1.0, -1.0] {
        assert!(marks::is_counter_value(sign * max as f64));
        assert!(!marks::is_counter_value(sign * above));
    }
    max
}

/// `python/swapsight/_generated.py`, byte for byte.
fn constants() -> String {
    let units = chars(|c| marks::is_unit(&c.to_string()));
    assert!(
        units.is_ascii(),
        "a unit is counted in bytes and characters alike"
    );
    let unsafe_ranges: String = ranges(text::is_unsafe)
        .iter()
        .map(|(a, b)| format!("    (0x{a:04X}, 0x{b:04X}),\n"))
        .collect();
    let mut out = format!(
        "# Generated from crates/core/tests/python_contract.rs: do not edit by hand\n\
         # ({HOW}).\n\
         \"\"\"What the module shares with the recorder (crates/core), read from the\n\
         Rust side itself: the mark file's variable and lines, its caps, and the\n\
         tables of the name cleaning.\"\"\"\n\n"
    );
    let mut constant = |doc: &str, name: &str, value: String| {
        let _ = writeln!(out, "#: {doc}\n{name} = {value}");
    };
    constant(
        "The environment variable that holds the mark path (marks::ENV_VAR).",
        "ENV_VAR",
        py(marks::ENV_VAR),
    );
    constant(
        "Longest phase or counter name kept, in characters (marks::MAX_NAME_CHARS).",
        "MAX_NAME_CHARS",
        marks::MAX_NAME_CHARS.to_string(),
    );
    constant(
        "What starts a counter line, ``#counter VALUE UNIT NAME`` (marks::COUNTER_PREFIX).",
        "COUNTER_PREFIX",
        py(marks::COUNTER_PREFIX),
    );
    constant(
        "What starts a line that ends the phase (``/`` or ``/NAME``, marks::parse_line):\n\
         #: a phase name cannot start with it.",
        "END_PREFIX",
        py(end_prefix()),
    );
    constant(
        "Longest counter unit, in characters (marks::MAX_UNIT_CHARS).",
        "MAX_UNIT_CHARS",
        marks::MAX_UNIT_CHARS.to_string(),
    );
    constant(
        "The characters of a counter unit (marks::is_unit).",
        "UNIT_CHARS",
        py(&units),
    );
    constant(
        "The largest magnitude of a counter value, 2^53 (marks::is_counter_value,\n\
         #: units::MAX_BYTES).",
        "MAX_COUNTER_VALUE",
        max_counter_value().to_string(),
    );
    constant(
        "Marks a second the recorder keeps (marks::MAX_PER_SECOND).",
        "MAX_MARKS_PER_SECOND",
        marks::MAX_PER_SECOND.to_string(),
    );
    constant(
        "Counter values a second the recorder keeps, apart from the marks\n\
         #: (marks::MAX_COUNTERS_PER_SECOND).",
        "MAX_COUNTERS_PER_SECOND",
        marks::MAX_COUNTERS_PER_SECOND.to_string(),
    );
    constant(
        "What an unsafe character of a name becomes (text::REPLACEMENT).",
        "REPLACEMENT",
        py(&text::REPLACEMENT.to_string()),
    );
    constant(
        "The unsafe characters, as (first, last) code points (text::is_unsafe).",
        "UNSAFE_RANGES",
        format!("(\n{unsafe_ranges})"),
    );
    constant(
        "The blanks trimmed around a name: char::is_whitespace (Unicode\n\
         #: White_Space), what str::trim trims in marks::clean_name.",
        "WHITE_SPACE",
        py(&chars(char::is_whitespace)),
    );
    out
}

/// A name's case: the input, [`marks::clean_name`]'s answer, what the
/// recorder reads when that clean name is written alone as a mark line
/// (`start`: the phase of that very name; `end`, `counter`, or `nothing`
/// for a malformed counter line), and the counter line of value 1 in
/// `items` under that name (`null` for bytes that are not UTF-8).
fn name_case(raw: &[u8]) -> String {
    let clean = marks::clean_name(raw);
    let as_line = clean.as_deref().map(|name| {
        let read = marks::parse_line(name.as_bytes());
        let word = match &read {
            Some(MarkLine::Start(phase)) if phase == name => "start",
            Some(MarkLine::End(_)) => "end",
            Some(MarkLine::Counter { .. }) => "counter",
            None => "nothing",
            Some(MarkLine::Start(_)) => panic!("{name:?} reads as {read:?}"),
        };
        // The rule as the Python module states it: a clean name is read as
        // its own phase unless it starts as an end or a counter line does.
        let prefixed = [end_prefix(), marks::COUNTER_PREFIX]
            .iter()
            .any(|p| name.starts_with(p));
        assert_eq!(word == "start", !prefixed, "{name:?} reads as {read:?}");
        word
    });
    let input = match std::str::from_utf8(raw) {
        Ok(text) => ("text", json!(text)),
        Err(_) => ("bytes", json!(raw)),
    };
    let counter_line = std::str::from_utf8(raw)
        .ok()
        .and_then(|text| marks::counter_line(text, 1.0, "items"));
    // Rendered here, key by key: a JSON object's key order is serde_json's
    // build features' (a workspace build turns on preserve_order).
    let fields = [
        input,
        ("clean", json!(clean)),
        ("as_line", json!(as_line)),
        ("counter_line", json!(counter_line)),
    ];
    let fields: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("\"{k}\": {}", ascii_json(v)))
        .collect();
    format!("{{{}}}", fields.join(", "))
}

/// The names of the `names` group: blanks, bad bytes, control and bidi
/// characters, the cut, and names that start as another line does.
fn names() -> Vec<Vec<u8>> {
    let texts = [
        "decode",
        "  decode \r",
        "a\x1bb\x00c",
        "   ",
        "",
        &"é".repeat(70),
        &format!("{} tail", "x".repeat(63)),
        "two\nlines",
        "cr\r\nlf",
        "tab\there",
        "\x1b[31mred",
        "\u{202e}evil\u{202c}",
        "a\u{2028}b\u{2029}c",
        "\u{061c}\u{200e}\u{200f}\u{2066}\u{2069}",
        "\u{85}next\u{85}",
        "\u{3000}wide\u{a0}",
        "\x1cfs\x1f",
        "\u{e0041}tag",
        "zw\u{200b}\u{feff}j\u{200d}",
        "👩\u{200d}💻",
        "load/unet",
        "/",
        "/etc",
        "  /etc",
        "\t/etc ",
        "\u{a0}/etc",
        "\u{2028}/x",
        "//x",
        "/ ",
        "?etc",
        "\x00/etc",
        "#counter 1 items x",
        "#counter bad",
        "#counterx",
        "  #counter 2 items y",
    ];
    let not_utf8: [&[u8]; 2] = [b"\xff\xfeok", b"raw\xff\xfe\xe2\x82end"];
    let texts = texts.iter().map(|t| t.as_bytes().to_vec());
    texts.chain(not_utf8.map(<[u8]>::to_vec)).collect()
}

/// The counter groups: units and values, [input, whether the core takes it].
fn counter_groups() -> [(&'static str, &'static str, Vec<Value>); 2] {
    let (sixteen, seventeen) = ("u".repeat(16), "u".repeat(17));
    let units = [
        "bytes", "items", "%", "MiB", "a/b", "s", "_-.", "", "a b", "é", "unit\n", &sixteen,
        &seventeen,
    ];
    let max = units::MAX_BYTES;
    let values = [
        json!(0),
        json!(1),
        json!(-1),
        json!(0.25),
        json!(max),
        json!(-(max as i64)),
        json!(max + 2),
        json!(1e300),
        json!("inf"),
        json!("-inf"),
        json!("nan"),
    ];
    let value_of = |v: &Value| match v {
        Value::String(s) => s.parse::<f64>().unwrap(),
        v => v.as_f64().unwrap(),
    };
    [
        (
            "units",
            "marks::is_unit",
            units.map(|u| json!([u, marks::is_unit(u)])).to_vec(),
        ),
        (
            "values",
            "marks::is_counter_value (non-finite values as strings)",
            values
                .iter()
                .map(|v| json!([v, marks::is_counter_value(value_of(v))]))
                .collect(),
        ),
    ]
}

/// The figure groups: bytes and counter values written, sizes read.
fn figure_groups() -> [(&'static str, &'static str, Vec<Value>); 3] {
    let max = units::MAX_BYTES as i64;
    let bytes = [
        0,
        1,
        1023,
        1024,
        1536,
        (1 << 20) - 1,
        5 << 19,
        -(512 << 20),
        5 << 28,
        19_864_223_744,
        max,
        -max,
    ];
    let figures = [
        (12.0, "items"),
        (0.25, "s"),
        (2.5, "x"),
        (2.125, "x"),
        (-3.0, "items"),
        (1e15, "items"),
        ((5u64 << 28) as f64, "bytes"),
        (1536.7, "bytes"),
    ];
    let sizes = [
        "8G",
        "8GiB",
        "8gb",
        "512M",
        "1.5G",
        "4096",
        " 64 k ",
        "1 KB",
        ".5K",
        "5.",
        "0.5",
        "1.5",
        "2.5",
        "0",
        "1t",
        "1P",
        "",
        "G",
        "-1G",
        "1.2.3G",
        "8X",
        "1e3",
        "99999999999T",
        "16383P",
        "1\u{212a}",
        "\u{663}G",
        "\x1c1G",
    ];
    [
        (
            "format_bytes",
            "units::format_bytes",
            bytes.map(|b| json!([b, units::format_bytes(b)])).to_vec(),
        ),
        (
            "figure",
            "counters::figure",
            figures
                .map(|(v, u)| json!([v, u, counters::figure(v, u)]))
                .to_vec(),
        ),
        (
            "parse_size",
            "units::parse_size (null: an error)",
            sizes
                .map(|s| json!([s, units::parse_size(s).ok()]))
                .to_vec(),
        ),
    ]
}

/// `python/tests/generated_cases.json`, byte for byte: ASCII, one case a line.
fn cases() -> String {
    let mut groups = vec![(
        "names",
        "marks::clean_name, marks::parse_line of the clean name, marks::counter_line",
        names().iter().map(|raw| name_case(raw)).collect::<Vec<_>>(),
    )];
    for (name, rust, cases) in counter_groups().into_iter().chain(figure_groups()) {
        groups.push((name, rust, cases.iter().map(ascii_json).collect()));
    }
    let mut out = format!(
        "{{\n  \"//\": {},\n",
        ascii_json(&json!(format!(
            "Generated from crates/core/tests/python_contract.rs: do not edit by hand \
             ({HOW}). Each group: the Rust function it is, and cases with what that \
             function gives; python/tests/test_generated.py checks the Python side \
             gives the same."
        )))
    );
    for (i, (name, rust, cases)) in groups.iter().enumerate() {
        let _ = write!(
            out,
            "  {}: {{\n    \"rust\": {},\n    \"cases\": [\n",
            ascii_json(&json!(name)),
            ascii_json(&json!(rust))
        );
        for (j, case) in cases.iter().enumerate() {
            let comma = if j + 1 < cases.len() { "," } else { "" };
            let _ = writeln!(out, "      {case}{comma}");
        }
        let comma = if i + 1 < groups.len() { "," } else { "" };
        let _ = writeln!(out, "    ]\n  }}{comma}");
    }
    out.push_str("}\n");
    out
}

/// `v` as one line of JSON in ASCII: every other character as `\uXXXX`
/// (JSON puts them only inside strings, where the escape means the same).
fn ascii_json(v: &Value) -> String {
    let mut out = String::new();
    for c in v.to_string().chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            for unit in c.encode_utf16(&mut [0; 2]) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
    }
    out
}
