//! The web UI: the files of `ui/` (the same ones the menu-bar app shows),
//! embedded in the binary at build time, so `swapsight serve` is one file
//! to copy. The whole folder is embedded: a new file needs no code change
//! (cargo rebuilds when an embedded file changes; a file added beside them
//! is picked up once a file that loads it changes, e.g. `index.html`).
//!
//! Every response gets `nosniff` and `no-referrer` (a URL may carry the
//! token); UI responses also get a strict Content Security Policy like the
//! app's: scripts, styles and connections to this origin only.

use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use include_dir::{include_dir, Dir};

use super::error::ApiError;

/// `ui/` at build time.
pub static UI: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../ui");

/// The policy for UI responses.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; \
base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Content type by file extension.
fn content_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    match ext.to_ascii_lowercase().as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "ttf" => "font/ttf",
        "txt" | "md" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// The embedded file a URL path names: `/` and folders give their
/// `index.html`. Lookups go to the embedded tree only, never to the disk.
pub fn lookup(path: &str) -> Option<(&'static str, &'static [u8])> {
    let rel = path.trim_start_matches('/');
    if rel.split('/').any(|seg| seg == ".." || seg == ".") {
        return None;
    }
    let rel = if rel.is_empty() || rel.ends_with('/') {
        format!("{rel}index.html")
    } else {
        rel.to_string()
    };
    if let Some(f) = UI.get_file(&rel) {
        return Some((f.path().to_str()?, f.contents()));
    }
    // A folder named without its slash.
    let f = UI.get_file(format!("{rel}/index.html"))?;
    Some((f.path().to_str()?, f.contents()))
}

pub async fn asset(method: Method, uri: Uri) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("{method} is not allowed on {}", uri.path()),
        )
        .into_response();
    }
    let Some((path, bytes)) = lookup(uri.path()) else {
        return ApiError::not_found(format!("no such page: {}", uri.path())).into_response();
    };
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static(content_type(path)),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        bytes,
    )
        .into_response()
}

/// Headers every response carries; the CSP and frame rules on UI ones.
pub async fn common_headers(req: Request, next: Next) -> Response {
    let ui = !matches!(req.uri().path(), p if p.starts_with("/api/") || p == "/metrics" || p == "/healthz");
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    if ui {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
        h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    res
}

/// Every embedded file.
#[cfg(test)]
pub fn all_files() -> Vec<&'static include_dir::File<'static>> {
    let mut out = Vec::new();
    let mut dirs = vec![&UI];
    while let Some(d) = dirs.pop() {
        out.extend(d.files());
        dirs.extend(d.dirs());
    }
    out
}

#[cfg(test)]
#[path = "assets_tests.rs"]
mod tests;
