//! What the web view and the server must agree on, written once: the
//! detector's states (names, words and severity order), the export formats
//! the UI offers (names, extensions, labels) and the HTTP routes of the API.
//! The router takes its paths from here, and the UI reads the same facts
//! from `ui/js/contract.js`, which [`render`] writes: a test fails when the
//! file and this module part (`SWAPSIGHT_WRITE_CONTRACT=1 cargo test -p
//! swapsight-cli contract` writes it again).

#[cfg(test)]
use std::fmt::Write as _;

#[cfg(test)]
use swapsight::detect::State;
#[cfg(test)]
use swapsight::export::ExportFormat;

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
         // the export formats the UI offers and the routes of the HTTP API.\n\n",
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
        "];\n\n/** Where the API is mounted. */\nexport const API = {};\n\n\
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

/// A JS string literal: JSON's is one.
#[cfg(test)]
fn js(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

#[cfg(test)]
#[path = "contract_tests.rs"]
mod tests;
