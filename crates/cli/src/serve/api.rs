//! The JSON API: one handler per command of the menu-bar app, each a thin
//! translation of a [`Live`](swapsight::live::Live) method, plus the
//! recordings folder (list, replay, report, export), `/metrics` and
//! `/healthz`. Errors are `{"error": "..."}` with a fitting status; the
//! message is written for a person and names the bad value.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{OriginalUri, Path as UrlPath, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use swapsight::answers::{Done, Pinned, ProcessView, RecordingInfo};
use swapsight::export::{prometheus, ExportError, ExportFormat, ExportOptions};
use swapsight::live::{keep_commands_in_jsonl, Snapshot};
use swapsight::recordings::{file_name, Recording};
use swapsight::trace::{TraceError, TraceReader};

use super::error::{judged, nothing_to, trace_error, ApiError, ApiResult};
use super::unique_keys;
use super::State as AppState;

/// A request body within the limit (`DefaultBodyLimit`), or the API's JSON
/// error saying why not (413 for one too large) instead of axum's text.
fn body_of(body: Result<Bytes, BytesRejection>) -> ApiResult<Bytes> {
    body.map_err(|e| {
        let status = e.status();
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                status,
                format!("request body over {} KiB", BODY_LIMIT / 1024),
            )
        } else {
            ApiError::new(status, format!("cannot read the request body: {e}"))
        }
    })
}

/// Request bodies, at most.
pub const BODY_LIMIT: usize = 16 * 1024;

/// Time a request that has a body gets to send it (and be answered): a
/// body trickled in byte by byte does not hold its connection forever.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// Bounds requests with a body by [`BODY_TIMEOUT`] (408 after it).
pub async fn body_deadline(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let method = req.method();
    if method == axum::http::Method::GET || method == axum::http::Method::HEAD {
        return next.run(req).await;
    }
    match tokio::time::timeout(BODY_TIMEOUT, next.run(req)).await {
        Ok(res) => res,
        Err(_) => ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request body did not arrive within {} s",
                BODY_TIMEOUT.as_secs()
            ),
        )
        .into_response(),
    }
}

/// A snapshot as the API shows it: the recording by name, not by path.
pub fn without_paths(snapshot: &mut Snapshot) {
    if let Some(r) = snapshot.recording.as_mut() {
        r.path = PathBuf::from(file_name(&r.path));
    }
}

/// A JSON body, parsed here so that a bad one answers in our format. An
/// empty body is `{}` (every field optional).
fn json_body<T: DeserializeOwned>(body: &Bytes) -> ApiResult<T> {
    let bad = |e: serde_json::Error| ApiError::bad_request(format!("invalid JSON body: {e}"));
    if body.iter().all(u8::is_ascii_whitespace) {
        return serde_json::from_str("{}").map_err(bad);
    }
    match unique_keys::parse(body).map_err(bad)? {
        v @ serde_json::Value::Object(_) => serde_json::from_value(v).map_err(bad),
        _ => Err(ApiError::bad_request(
            "invalid JSON body: expected an object",
        )),
    }
}

fn query(
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> ApiResult<HashMap<String, String>> {
    q.map(|Query(q)| q)
        .map_err(|e| ApiError::bad_request(format!("invalid query string: {e}")))
}

/// The latest snapshot, waiting up to `first_tick_wait` for the first one.
async fn first<T>(s: &AppState, get: impl Fn() -> Option<T>) -> ApiResult<T> {
    let until = Instant::now() + s.opts.first_tick_wait;
    loop {
        if let Some(v) = get() {
            return Ok(v);
        }
        if Instant::now() >= until {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "no sample yet: the first one is still being taken",
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub async fn snapshot(State(s): State<AppState>) -> ApiResult<Json<Snapshot>> {
    let mut snapshot = first(&s, || s.live.snapshot()).await?;
    without_paths(&mut snapshot);
    Ok(Json(snapshot))
}

pub async fn history(
    State(s): State<AppState>,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> ApiResult<Response> {
    let q = query(q)?;
    let seconds = q.get("seconds").map(|v| seconds_of(v)).transpose()?;
    Ok(Json(s.live.history(seconds)).into_response())
}

/// The most `seconds` of history asked for: a year (far more than is kept).
pub const MAX_SECONDS: u64 = 365 * 86_400;

/// `?seconds=`: a whole number from 0 to [`MAX_SECONDS`]; a number past it
/// is told as out of range, not as no number.
fn seconds_of(raw: &str) -> ApiResult<u64> {
    let out_of_range = || {
        ApiError::bad_request(format!(
            "bad seconds '{raw}': out of range, expected 0 to {MAX_SECONDS} (a year)"
        ))
    };
    match raw.parse::<u64>() {
        Ok(n) if n <= MAX_SECONDS => Ok(n),
        Ok(_) => Err(out_of_range()),
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => Err(out_of_range()),
        Err(_) => Err(ApiError::bad_request(format!(
            "bad seconds '{raw}': expected a whole number of seconds"
        ))),
    }
}

/// A pid from the URL: a positive whole number.
fn pid_of(raw: &str) -> ApiResult<u32> {
    raw.parse::<u32>()
        .ok()
        .filter(|&p| p > 0)
        .ok_or_else(|| ApiError::bad_request(format!("bad pid '{raw}': expected a process id")))
}

pub async fn process(
    State(s): State<AppState>,
    UrlPath(raw): UrlPath<String>,
) -> ApiResult<Response> {
    let pid = pid_of(&raw)?;
    let (row, series) = s
        .live
        .process(pid)
        .ok_or_else(|| ApiError::not_found(format!("no process {pid} in the table")))?;
    Ok(Json(ProcessView { row, series }).into_response())
}

#[derive(Deserialize)]
struct PinBody {
    #[serde(default)]
    pid: Option<u32>,
}

pub async fn pin(
    State(s): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let PinBody { pid } = json_body(&body_of(body)?)?;
    s.live.pin(pid)?;
    Ok(Json(Pinned { pinned: pid }).into_response())
}

pub async fn reset_baseline(State(s): State<AppState>) -> Response {
    s.live.reset_baseline();
    Json(Done::OK).into_response()
}

#[derive(Deserialize)]
struct StartBody {
    #[serde(default)]
    pid: Option<u32>,
}

pub async fn recording_start(
    State(s): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let StartBody { pid } = json_body(&body_of(body)?)?;
    let live = Arc::clone(&s.live);
    // On the blocking pool, as the stop: a trace and a marks folder are
    // created on a disk that may be busy swapping, and the event streams
    // share these workers.
    let path = blocking(move || Ok(live.start_recording(pid)?)).await?;
    Ok(Json(RecordingInfo::started(&path)).into_response())
}

pub async fn recording_stop(State(s): State<AppState>) -> ApiResult<Response> {
    let live = Arc::clone(&s.live);
    // Waits for the marks reader's last look (up to a second).
    let (path, samples) = blocking(move || Ok(live.stop_recording()?)).await?;
    Ok(Json(RecordingInfo::stopped(&path, samples)).into_response())
}

pub async fn recordings(State(s): State<AppState>) -> ApiResult<Json<Vec<Recording>>> {
    let live = Arc::clone(&s.live);
    Ok(Json(blocking(move || Ok(live.recordings()?)).await?))
}

/// Runs `f` on the blocking pool (file work, off the workers that carry
/// the event streams).
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(format!("the job failed: {e}")))?
}

/// Runs `f` on the blocking pool, at most `heavy_jobs` at once.
async fn heavy<T: Send + 'static>(
    s: &AppState,
    f: impl FnOnce() -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    let _permit = s
        .heavy
        .acquire()
        .await
        .map_err(|_| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "shutting down"))?;
    blocking(f).await
}

pub async fn replay(
    State(s): State<AppState>,
    UrlPath(name): UrlPath<String>,
) -> ApiResult<Response> {
    let live = Arc::clone(&s.live);
    let replay = heavy(&s, move || {
        let replay = live.replay_recording(&name)?;
        judged(&name, &replay.report)?;
        Ok(replay)
    })
    .await?;
    Ok(Json(replay).into_response())
}

pub async fn report(
    State(s): State<AppState>,
    UrlPath(name): UrlPath<String>,
) -> ApiResult<Response> {
    let live = Arc::clone(&s.live);
    let report = heavy(&s, move || {
        let report = live.report_recording(&name)?;
        judged(&name, &report)?;
        Ok(report)
    })
    .await?;
    Ok(Json(report).into_response())
}

/// A recording as `format`, in memory (an HTTP body). A trace that cannot
/// be read is told as [`trace_error`] tells it, by its file name; one with
/// no sample is [`nothing_to`] export, in every format, JSONL too. The
/// JSONL, the file as it is, keeps to the session's rule on command lines
/// (`commands_of`) like every other answer.
fn export_bytes(path: &Path, format: ExportFormat, commands_of: Option<u32>) -> ApiResult<Vec<u8>> {
    let named = |e: TraceError| match e {
        TraceError::Io { path, source } => trace_error(&TraceError::Io {
            path: PathBuf::from(file_name(&path)),
            source,
        }),
        t => trace_error(&t),
    };
    let failed = |e: ExportError| match e {
        ExportError::Trace(t) => named(t),
        ExportError::NoSamples => ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()),
        e => ApiError::internal(e.to_string()),
    };
    // Streamed, as the CLI's export: a recording of any size is never held
    // whole, only what the export needs and the bytes it writes.
    let mut reader = TraceReader::open(path)
        .map_err(named)?
        .keep_commands_of(commands_of);
    let scanned = format.scan(&mut reader).map_err(failed)?;
    if scanned.samples() == 0 {
        let notes = reader.notes();
        let first = notes.problems.first().map(|p| p as &dyn std::fmt::Display);
        return Err(nothing_to(
            "export",
            &file_name(path),
            first,
            notes.bad_lines,
        ));
    }
    let mut out = Vec::with_capacity(64 * 1024);
    if format == ExportFormat::Jsonl {
        // The file as it is, not as read.
        format
            .write_file(path, &ExportOptions::default(), &mut out)
            .map_err(failed)?;
        if let Some(uid) = commands_of {
            out = keep_commands_in_jsonl(&out, uid);
        }
    } else {
        scanned
            .write(&mut reader, &ExportOptions::default(), &mut out)
            .map_err(failed)?;
    }
    Ok(out)
}

pub async fn export(
    State(s): State<AppState>,
    UrlPath(name): UrlPath<String>,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> ApiResult<Response> {
    let path = s.live.recording(&name)?;
    let q = query(q)?;
    let raw = q.get("format").map(String::as_str).unwrap_or("");
    let format = ExportFormat::parse(raw)
        .filter(|f| ExportFormat::UI.contains(f))
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "bad format '{raw}': expected {}",
                ExportFormat::names(&ExportFormat::UI)
            ))
        })?;
    let commands_of = s.live.commands_of();
    let bytes = heavy(&s, move || export_bytes(&path, format, commands_of)).await?;
    // The name was checked: [A-Za-z0-9._-] only, so it needs no quoting.
    let disposition = format!(
        "attachment; filename=\"{}\"",
        format.file_name_for(Path::new(&name))
    );
    let mut res = Body::from(bytes).into_response();
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.media_type()),
    );
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(res)
}

pub async fn metrics(State(s): State<AppState>) -> ApiResult<Response> {
    let n = s.opts.metrics_processes;
    let mut text = first(&s, || s.live.prometheus(n)).await?;
    s.hub.write_metrics(&mut text);
    if let Some(push) = &s.opts.push {
        push.write(&mut text);
    }
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(prometheus::CONTENT_TYPE),
        )],
        text,
    )
        .into_response())
}

pub async fn healthz() -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        "ok",
    )
        .into_response()
}

pub async fn not_found(OriginalUri(uri): OriginalUri) -> ApiError {
    ApiError::not_found(format!("no such endpoint: {}", uri.path()))
}

pub async fn method_not_allowed(
    method: axum::http::Method,
    OriginalUri(uri): OriginalUri,
) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("{method} is not allowed on {}", uri.path()),
    )
}
