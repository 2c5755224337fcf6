//! Who may talk to the server.
//!
//! With a token (`--token`), every request but `/healthz` must carry it:
//! `Authorization: Bearer TOKEN`, compared in constant time; else 401. A
//! browser cannot set that header everywhere, so two more ways are taken
//! where it cannot: `?token=TOKEN` on the event stream (`EventSource` sets
//! no headers), and on the UI's pages, where it is traded for a cookie
//! (`HttpOnly; SameSite=Strict`) and a redirect to the same page without it,
//! so the page's scripts and styles load and the token leaves the address
//! bar. The API itself never takes the cookie, so a cross-site request
//! cannot ride on it.
//!
//! Without a token the server listens on loopback only, which other users of
//! the machine can still reach but no other machine can. Two browser attacks
//! remain and are closed here: DNS rebinding (a site whose name resolves to
//! 127.0.0.1 reading the API as same-origin) — requests must name a loopback
//! host; and cross-site requests that change state (a form posting to
//! `/api/recording/start`) — a request whose `Origin` is not the server's own
//! is refused.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::State as AppState;

/// The cookie a UI page loaded with `?token=` sets for its own assets.
pub const COOKIE: &str = "swapsight_token";

/// Whether `guess` equals `token`, in time that depends on `token`'s length
/// only (not on where the first difference is, nor on `guess`'s length).
pub fn same_token(token: &[u8], guess: &[u8]) -> bool {
    let mut diff = u8::from(token.len() != guess.len());
    for (i, &t) in token.iter().enumerate() {
        diff |= t ^ guess.get(i).copied().unwrap_or(!t);
    }
    std::hint::black_box(diff) == 0
}

fn bearer(headers: &HeaderMap) -> Option<&[u8]> {
    let v = headers.get(header::AUTHORIZATION)?.as_bytes();
    let scheme = v.get(..7)?;
    scheme
        .eq_ignore_ascii_case(b"bearer ")
        .then(|| v[7..].trim_ascii())
}

fn query_token(query: Option<&str>) -> Option<&str> {
    query?.split('&').find_map(|kv| kv.strip_prefix("token="))
}

fn cookie_token(headers: &HeaderMap) -> Option<&[u8]> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .flat_map(|v| v.as_bytes().split(|&b| b == b';'))
        .find_map(|c| {
            c.trim_ascii()
                .strip_prefix(COOKIE.as_bytes())?
                .strip_prefix(b"=")
        })
}

/// A page or asset of the UI (everything that is not the API or a probe).
fn is_ui(path: &str) -> bool {
    !(path == "/api" || path.starts_with("/api/") || path == "/metrics" || path == "/healthz")
}

/// The host part of a `Host` header or an origin's authority: `[::1]:80`
/// → `::1`, `localhost:7878` → `localhost`.
fn host_name(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match authority.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => authority,
    }
}

/// `localhost`, `*.localhost` or a loopback IP.
pub fn is_loopback_name(host: &str) -> bool {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    h == "localhost"
        || h.ends_with(".localhost")
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn refuse(status: StatusCode, message: String) -> Response {
    let mut res = ApiError::new(status, message).into_response();
    if status == StatusCode::UNAUTHORIZED {
        res.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"swapsight\""),
        );
    }
    res
}

pub async fn guard(State(s): State<AppState>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    if path == "/healthz" {
        return next.run(req).await;
    }
    let Some(token) = s.opts.token.as_deref() else {
        return match local_only(&req) {
            Ok(()) => next.run(req).await,
            Err(res) => res,
        };
    };
    let token = token.as_bytes();
    let headers = req.headers();
    let ui = is_ui(path);
    let by_query = (ui || path == "/api/events")
        && query_token(req.uri().query()).is_some_and(|q| same_token(token, q.as_bytes()));
    let ok = bearer(headers).is_some_and(|b| same_token(token, b))
        || by_query
        || (ui && cookie_token(headers).is_some_and(|c| same_token(token, c)));
    if !ok {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "this server needs its token: Authorization: Bearer TOKEN".into(),
        );
    }
    if ui && by_query {
        // The page opened from the printed URL: trade the token in the
        // query for a cookie and send the browser to the same page without
        // it (the `#token=` fragment survives the redirect for the scripts),
        // so the token does not stay in the address bar or the history.
        let cookie = format!(
            "{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict",
            String::from_utf8_lossy(token)
        );
        let location = local_target(path, req.uri().query());
        let mut res = StatusCode::SEE_OTHER.into_response();
        let h = res.headers_mut();
        if let (Ok(c), Ok(l)) = (
            HeaderValue::from_str(&cookie),
            HeaderValue::from_str(&location),
        ) {
            h.insert(header::SET_COOKIE, c);
            h.insert(header::LOCATION, l);
        }
        return res;
    }
    next.run(req).await
}

/// Where a page opened with `?token=` is sent once the token is traded: the
/// same page and query without the token, and always on this server. A
/// browser reads a location that starts `//` (or `/\`, taken as `//`) as
/// another host's (`//evil.example/` is scheme-relative), so the path's
/// leading slashes and backslashes fold into one `/`.
fn local_target(path: &str, query: Option<&str>) -> String {
    let path = format!("/{}", path.trim_start_matches(['/', '\\']));
    let rest: Vec<&str> = query
        .unwrap_or("")
        .split('&')
        .filter(|kv| !kv.is_empty() && !kv.starts_with("token="))
        .collect();
    if rest.is_empty() {
        path
    } else {
        format!("{path}?{}", rest.join("&"))
    }
}

/// The host a request names: the authority of an absolute-form target
/// (`GET http://host/ HTTP/1.1`), which RFC 9112 §3.2.2 says a server must
/// use in place of `Host`, else the one `Host` header. Two `Host` headers are
/// refused (a server must answer them 400, RFC 9112 §3.2): they would let
/// one check read one and a proxy the other.
#[allow(clippy::result_large_err)]
fn named_host(req: &Request) -> Result<Option<&str>, Response> {
    let mut hosts = req.headers().get_all(header::HOST).iter();
    let header = hosts.next().map(|h| h.to_str().unwrap_or("?"));
    if hosts.next().is_some() {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "more than one Host header".into(),
        ));
    }
    Ok(req.uri().authority().map(|a| a.as_str()).or(header))
}

/// Without a token: the request names a loopback host, and a request that
/// may change state comes from the server's own pages (or from no page).
#[allow(clippy::result_large_err)]
fn local_only(req: &Request) -> Result<(), Response> {
    let host = named_host(req)?;
    if let Some(host) = host {
        if !is_loopback_name(host_name(host)) {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                format!(
                    "host '{}' refused: without --token only loopback names (127.0.0.1, localhost) are served",
                    host.escape_default()
                ),
            ));
        }
    }
    let safe = matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if !safe {
        if let Some(origin) = req.headers().get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("?");
            let authority = origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://"));
            if authority.is_none() || authority != host {
                return Err(refuse(
                    StatusCode::FORBIDDEN,
                    format!(
                        "cross-origin request from '{}' refused",
                        origin.escape_default()
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "auth_tests.rs"]
mod tests;
