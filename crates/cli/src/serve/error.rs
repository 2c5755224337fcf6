//! The API's one error answer, `{"error": message}` with a fitting status,
//! and how each of the core's errors becomes one: the message is written
//! for a person and names the bad value, never the server's folders.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use swapsight::live::LiveError;
use swapsight::recordings::{file_name, RecordingError};
use swapsight::trace::TraceError;

/// An error answer: `{"error": message}` with `status`.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.message }))).into_response()
    }
}

impl From<LiveError> for ApiError {
    fn from(e: LiveError) -> ApiError {
        let status = match &e {
            // The folder is the server's business; the name is enough.
            LiveError::AlreadyRecording(path) => {
                return ApiError::new(
                    StatusCode::CONFLICT,
                    format!("already recording to {}", file_name(path)),
                )
            }
            LiveError::NotRecording => StatusCode::CONFLICT,
            LiveError::BadPid | LiveError::NoSuchPid(_) => StatusCode::BAD_REQUEST,
            LiveError::Trace(t) => return trace_error(t),
            LiveError::Recording(r) => return recording_error(r),
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.to_string())
    }
}

impl From<RecordingError> for ApiError {
    fn from(e: RecordingError) -> ApiError {
        recording_error(&e)
    }
}

/// 400 for a bad recording name, 404 for no such recording.
pub(super) fn recording_error(e: &RecordingError) -> ApiError {
    let status = match e {
        RecordingError::BadName(_) => StatusCode::BAD_REQUEST,
        RecordingError::NotFound(_) => StatusCode::NOT_FOUND,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    ApiError::new(status, e.to_string())
}

/// A trace that cannot be read: 422 when it is not a trace, 404 when it
/// vanished, 500 for other I/O. The message names the file, not its folder.
pub(super) fn trace_error(e: &TraceError) -> ApiError {
    let text = e.to_string();
    match e {
        TraceError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            ApiError::not_found(text)
        }
        TraceError::Io { .. } | TraceError::Write { .. } => {
            let why = std::error::Error::source(e)
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            ApiError::internal(format!("{text}{why}"))
        }
        _ => ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, text),
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// A recording with no sample left: 422, in the CLI's words (`swapsight
/// report` exits 1 with the same line), never an empty verdict. The first
/// malformed line, if any, says why.
pub(super) fn nothing_to(
    what: &str,
    name: &str,
    first_problem: Option<&dyn std::fmt::Display>,
    bad_lines: usize,
) -> ApiError {
    let text = match first_problem {
        None => format!("{name}: the trace has no samples: nothing to {what}"),
        Some(first) => {
            let more = match bad_lines {
                0 | 1 => String::new(),
                n => format!(" (and {} more malformed lines)", n - 1),
            };
            format!("{name}: {first}{more}; the trace has no samples left: nothing to {what}")
        }
    };
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, text)
}

/// [`nothing_to`] judge, for a report of no sample.
pub(super) fn judged(name: &str, report: &swapsight::report::Report) -> ApiResult<()> {
    if report.samples > 0 {
        return Ok(());
    }
    let first = report.problems.first().map(|p| p as &dyn std::fmt::Display);
    Err(nothing_to("judge", name, first, report.skipped_lines))
}
