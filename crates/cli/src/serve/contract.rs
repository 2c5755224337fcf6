//! What the web view and the server must agree on, written once: the
//! detector's states (names, words and severity order), the export formats
//! the UI offers (names, extensions, labels), the free-memory share that
//! reads as low and the HTTP routes of the API. The router takes its paths
//! from here, and the UI reads the same facts from `ui/js/contract.js`,
//! which [`render`] writes. The UI's number formats (`ui/js/format.js`) are
//! checked against the Rust functions they copy on one table of cases,
//! `tests/ui/format-cases.json`, which [`format_cases`] writes with the
//! Rust side's answers. A test fails when either file and this module part
//! (`SWAPSIGHT_WRITE_CONTRACT=1 cargo test -p swapsight-cli contract`
//! writes both again).

#[cfg(test)]
use std::fmt::Write as _;

#[cfg(test)]
use swapsight::detect::State;
#[cfg(test)]
use swapsight::export::ExportFormat;
#[cfg(test)]
use swapsight::live::LOW_FREE_PCT;

/// Where the API is mounted.
pub const API: &str = "/api";

/// One endpoint of the API, as the UI calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The command name: the same as the app's Tauri command where there is one.
    pub command: &'static str,
    pub method: &'static str,
    /// Under [`API`], as the router spells it (`{pid}` is a path parameter).
    pub path: &'static str,
    /// Query parameters the endpoint reads.
    pub query: &'static [&'static str],
    /// Fields of the JSON body (`null` when the caller leaves one out).
    pub body: &'static [&'static str],
}

const fn route(command: &'static str, method: &'static str, path: &'static str) -> Route {
    Route {
        command,
        method,
        path,
        query: &[],
        body: &[],
    }
}

pub const SNAPSHOT: Route = route("snapshot", "GET", "/snapshot");
pub const HISTORY: Route = Route {
    query: &["seconds"],
    ..route("history", "GET", "/history")
};
pub const PROCESS: Route = route("process", "GET", "/process/{pid}");
pub const PIN: Route = Route {
    body: &["pid"],
    ..route("pin", "POST", "/pin")
};
pub const RESET_BASELINE: Route = route("reset_baseline", "POST", "/reset-baseline");
pub const START_RECORDING: Route = Route {
    body: &["pid"],
    ..route("start_recording", "POST", "/recording/start")
};
pub const STOP_RECORDING: Route = route("stop_recording", "POST", "/recording/stop");
pub const RECORDINGS: Route = route("recordings", "GET", "/recordings");
pub const REPLAY: Route = route("replay", "GET", "/recordings/{name}/replay");
pub const REPORT: Route = route("report", "GET", "/recordings/{name}/report");
pub const EXPORT: Route = Route {
    query: &["format"],
    ..route("export", "GET", "/recordings/{name}/export")
};
pub const EVENTS: Route = Route {
    query: &["token"],
    ..route("events", "GET", "/events")
};

/// Every route of the API (what the tests and the generated file walk).
#[cfg(test)]
pub const ROUTES: [Route; 12] = [
    SNAPSHOT,
    HISTORY,
    PROCESS,
    PIN,
    RESET_BASELINE,
    START_RECORDING,
    STOP_RECORDING,
    RECORDINGS,
    REPLAY,
    REPORT,
    EXPORT,
    EVENTS,
];

/// `ui/js/contract.js`, byte for byte.
#[cfg(test)]
pub fn render() -> String {
    let mut out = String::from(
        "// @ts-check\n\
         // Generated from crates/cli/src/serve/contract.rs: do not edit by hand\n\
         // (SWAPSIGHT_WRITE_CONTRACT=1 cargo test -p swapsight-cli contract).\n\
         // What the web view shares with the Rust side: the detector's states,\n\
         // the export formats the UI offers, the free-memory share that reads\n\
         // as low and the routes of the HTTP API.\n\n",
    );
    out.push_str("/** The detector's states, least severe first. */\nexport const STATES = [\n");
    for s in State::ALL {
        let _ = writeln!(
            out,
            "  {{ name: {}, label: {} }},",
            js(s.as_str()),
            js(s.label())
        );
    }
    out.push_str("];\n\n/** The export formats a recording offers in the UI, in menu order. */\nexport const EXPORT_FORMATS = [\n");
    for f in ExportFormat::UI {
        let _ = writeln!(
            out,
            "  {{ name: {}, extension: {}, label: {} }},",
            js(f.name()),
            js(f.extension()),
            js(f.label())
        );
    }
    let _ = write!(
        out,
        "];\n\n/** Free memory below this share (%) of memory, or of a cgroup's limit, reads as low. */\n\
         export const LOW_FREE_PCT = {LOW_FREE_PCT};\n\n\
         /** Where the API is mounted. */\nexport const API = {};\n\n\
         /** The API's routes by command; `{{pid}}` and `{{name}}` are path parameters. */\n\
         export const ROUTES = {{\n",
        js(API)
    );
    for r in ROUTES {
        let list = |xs: &[&str]| xs.iter().map(|x| js(x)).collect::<Vec<_>>().join(", ");
        let _ = writeln!(
            out,
            "  {}: {{ method: {}, path: {}, query: [{}], body: [{}] }},",
            r.command,
            js(r.method),
            js(r.path),
            list(r.query),
            list(r.body)
        );
    }
    out.push_str("};\n");
    out
}

/// One group of [`format_cases`]: the Rust function, the `ui/js/format.js`
/// function that copies it, what the input is, and the cases with the Rust
/// function's answers.
#[cfg(test)]
struct Cases {
    rust: &'static str,
    js: &'static str,
    input: &'static str,
    cases: Vec<(serde_json::Value, String)>,
}

/// `tests/ui/format-cases.json`, byte for byte: every number format the web
/// view shares with the Rust side, on the same inputs, with what the Rust
/// function writes. The inputs sit on the edges of each unit and on exact
/// ties (`1.25 GiB`, `2.5 s`), where `toFixed` and `Math.round` round up and
/// Rust's `{:.N}` rounds to the even digit.
#[cfg(test)]
pub fn format_cases() -> String {
    use std::time::Duration;
    use swapsight::forecast::short_eta;
    use swapsight::units::{format_bytes, format_duration, format_growth, format_limit};

    const KIB: i64 = 1 << 10;
    const MIB: i64 = 1 << 20;
    const GIB: i64 = 1 << 30;
    let bytes: Vec<i64> = vec![
        0,
        1,
        511,
        512,
        1023,
        KIB,
        KIB * 3 / 2,
        KIB * 5 / 2,
        MIB - 1,
        MIB,
        MIB * 5 / 2,
        MIB * 7 / 2,
        340 * MIB,
        1023 * MIB + MIB / 2,
        GIB - 1,
        GIB,
        GIB * 5 / 4,
        GIB * 7 / 4,
        1_288_490_188,
        19_864_223_744,
        10 << 40,
        1 << 53,
        -5 * MIB,
        -(KIB * 5 / 2),
        -(GIB * 5 / 4),
    ];
    let limits: Vec<u64> = vec![
        0,
        2560,
        MIB as u64,
        256 << 20,
        (256 << 20) + 4096,
        3 << 29,
        GIB as u64,
        16 << 30,
        (16 << 30) + 1,
    ];
    let millis: Vec<u64> = vec![
        0,
        49,
        50,
        250,
        350,
        12_250,
        12_500,
        59_949,
        59_950,
        59_999,
        60_000,
        192_400,
        3_599_999,
        3_600_000,
        11_100_000,
        172_800_000,
    ];
    let secs: Vec<f64> = vec![
        f64::NEG_INFINITY,
        -5.0,
        0.0,
        0.3,
        0.999,
        1.0,
        1.5,
        2.5,
        40.2,
        40.5,
        89.4,
        89.5,
        90.0,
        150.0,
        185.0,
        5399.0,
        5400.0,
        9000.0,
        359_999.0,
        360_000.0,
        f64::INFINITY,
        f64::NAN,
    ];
    let pcts: Vec<f64> = vec![0.0, 0.4, 0.5, 1.5, 14.5, 42.4, 42.5, 43.5, 99.5, 100.0];
    let groups = [
        Cases {
            rust: "swapsight::units::format_bytes",
            js: "bytes",
            input: "bytes",
            cases: bytes.iter().map(|&b| (b.into(), format_bytes(b))).collect(),
        },
        Cases {
            rust: "swapsight::units::format_growth",
            js: "delta",
            input: "bytes; not 0, which the table writes as a bare 0",
            cases: bytes
                .iter()
                .filter(|&&b| b != 0)
                .map(|&b| (b.into(), format_growth(b)))
                .collect(),
        },
        Cases {
            rust: "swapsight::units::format_limit",
            js: "limit",
            input: "bytes",
            cases: limits
                .iter()
                .map(|&b| (b.into(), format_limit(b)))
                .collect(),
        },
        Cases {
            rust: "swapsight::units::format_duration",
            js: "duration",
            input: "milliseconds",
            cases: millis
                .iter()
                .map(|&ms| (ms.into(), format_duration(Duration::from_millis(ms))))
                .collect(),
        },
        Cases {
            rust: "swapsight::forecast::short_eta",
            js: "eta",
            input: "seconds",
            cases: secs.iter().map(|&s| (number(s), short_eta(s))).collect(),
        },
        Cases {
            rust: "format!(\"{:.0} %\", pct) (a percentage in the report, plot and notices)",
            js: "pct",
            input: "percent",
            cases: pcts
                .iter()
                .map(|&p| (number(p), format!("{p:.0} %")))
                .collect(),
        },
    ];
    let mut out = String::from(
        "{\n  \"//\": \"Generated from crates/cli/src/serve/contract.rs: do not edit by hand \
         (SWAPSIGHT_WRITE_CONTRACT=1 cargo test -p swapsight-cli contract). Each group: a Rust \
         function, the ui/js/format.js function that copies it, its input, and cases \
         [input, what the Rust function writes]; tests/ui/format-cases.test.mjs checks the \
         JS function writes the same.\",\n  \"groups\": [\n",
    );
    for (i, g) in groups.iter().enumerate() {
        let _ = write!(
            out,
            "    {{\n      \"rust\": {},\n      \"js\": {},\n      \"input\": {},\n      \"cases\": [\n",
            js(g.rust),
            js(g.js),
            js(g.input)
        );
        for (j, (input, want)) in g.cases.iter().enumerate() {
            let comma = if j + 1 < g.cases.len() { "," } else { "" };
            let _ = writeln!(out, "        [{input}, {}]{comma}", js(want));
        }
        let comma = if i + 1 < groups.len() { "," } else { "" };
        let _ = writeln!(out, "      ]\n    }}{comma}");
    }
    out.push_str("  ]\n}\n");
    out
}

/// A number as JSON, or JavaScript's name for it where JSON has none
/// (`"Infinity"`, `"NaN"`: the test reads them with `Number`).
#[cfg(test)]
fn number(x: f64) -> serde_json::Value {
    if x.is_finite() {
        x.into()
    } else if x.is_nan() {
        "NaN".into()
    } else if x > 0.0 {
        "Infinity".into()
    } else {
        "-Infinity".into()
    }
}

/// A JS string literal: JSON's is one.
#[cfg(test)]
fn js(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

#[cfg(test)]
#[path = "contract_tests.rs"]
mod tests;
