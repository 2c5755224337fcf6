// @ts-check
// Generated from crates/cli/src/serve/contract.rs: do not edit by hand
// (SWAPSIGHT_WRITE_CONTRACT=1 cargo test -p swapsight-cli contract).
// What the web view shares with the Rust side: the detector's states,
// the export formats the UI offers, the free-memory share that reads
// as low and the routes of the HTTP API.

/** The detector's states, least severe first. */
export const STATES = [
  { name: "fits", label: "fits" },
  { name: "hidden-memory", label: "hidden memory" },
  { name: "overflow", label: "overflow" },
  { name: "false-fit", label: "false fit" },
];

/** The export formats a recording offers in the UI, in menu order. */
export const EXPORT_FORMATS = [
  { name: "jsonl", extension: "jsonl", label: "swapsight trace (JSON Lines)" },
  { name: "csv", extension: "csv", label: "CSV" },
  { name: "perfetto", extension: "json", label: "Perfetto / Chrome trace" },
  { name: "png", extension: "png", label: "PNG chart" },
];

/** Free memory below this share (%) of memory, or of a cgroup's limit, reads as low. */
export const LOW_FREE_PCT = 15;

/** Where the API is mounted. */
export const API = "/api";

/** The API's routes by command; `{pid}` and `{name}` are path parameters. */
export const ROUTES = {
  snapshot: { method: "GET", path: "/snapshot", query: [], body: [] },
  history: { method: "GET", path: "/history", query: ["seconds"], body: [] },
  process: { method: "GET", path: "/process/{pid}", query: [], body: [] },
  pin: { method: "POST", path: "/pin", query: [], body: ["pid"] },
  reset_baseline: { method: "POST", path: "/reset-baseline", query: [], body: [] },
  start_recording: { method: "POST", path: "/recording/start", query: [], body: ["pid"] },
  stop_recording: { method: "POST", path: "/recording/stop", query: [], body: [] },
  recordings: { method: "GET", path: "/recordings", query: [], body: [] },
  replay: { method: "GET", path: "/recordings/{name}/replay", query: [], body: [] },
  report: { method: "GET", path: "/recordings/{name}/report", query: [], body: [] },
  export: { method: "GET", path: "/recordings/{name}/export", query: ["format"], body: [] },
  events: { method: "GET", path: "/events", query: ["token"], body: [] },
};
