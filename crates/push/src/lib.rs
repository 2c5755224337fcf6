//! The push: the series `/metrics` serves, sent to a Prometheus
//! remote-write receiver (Prometheus, Mimir, Thanos, Cortex,
//! VictoriaMetrics, Grafana Cloud) every interval, from machines nothing
//! can scrape. `swapsight serve --push` and `record --push` use it, and so
//! does the menu-bar app (its push setting): a crate of its own so that
//! the HTTP client (ureq, rustls) stays out of the core library.
//!
//! Two threads of its own, so the sampler's tick never waits on the
//! network: one takes a snapshot of the exposition each interval into a
//! bounded in-memory queue (`outbox`), the other sends the queue's oldest
//! moments (`send`), backing off while the receiver is away. The
//! credentials come from a file or the environment only ([`auth`]).

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

pub mod auth;
mod outbox;
mod send;
mod worker;

pub use worker::{Metrics, Pusher};

/// The queue's bound unless told otherwise: at about 150 series a
/// snapshot, over 2.5 hours of 15 s snapshots, about 8 MiB of exposition
/// text.
pub const DEFAULT_QUEUE_SAMPLES: usize = 100_000;
/// The time between two snapshots unless told otherwise.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(15);

/// What a push is asked to do, checked but not yet ready: the command
/// line's flags or the app's settings say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The receiver, as [`url`] accepts it.
    pub url: String,
    /// Time between two snapshots ([`interval`]'s bounds).
    pub interval: Duration,
    /// Samples the queue holds at most ([`queue_samples`]' bounds).
    pub queue: usize,
    /// Labels added to every series, as [`label`] accepts them; `instance`
    /// and `job` are set unless given here.
    pub labels: Vec<(String, String)>,
    /// The credentials' file (see [`auth`]).
    pub auth_file: Option<PathBuf>,
    /// A PEM file of the CAs to trust instead of the system's.
    pub ca: Option<PathBuf>,
}

impl Settings {
    /// A push to `url` with the defaults.
    pub fn new(url: impl Into<String>) -> Settings {
        Settings {
            url: url.into(),
            interval: DEFAULT_INTERVAL,
            queue: DEFAULT_QUEUE_SAMPLES,
            labels: Vec::new(),
            auth_file: None,
            ca: None,
        }
    }

    /// The push ready to start: the credentials read (from
    /// [`Settings::auth_file`] or `env_token`, the value of
    /// [`auth::TOKEN_ENV`]), the CA file read; one line saying what is
    /// wrong otherwise, credentials over plain HTTP to another host too.
    pub fn config(&self, env_token: Option<String>) -> Result<Config, String> {
        let url = &self.url;
        let auth = auth::credentials(self.auth_file.as_deref(), env_token)?;
        if auth.is_some() && !url.starts_with("https://") && !host_is_loopback(url) {
            return Err(format!(
                "refusing to send credentials over plain HTTP to {url}: use https:// (or a \
                 loopback address)"
            ));
        }
        let sender = send::Sender::new(url, auth, self.ca.as_deref())?;
        Ok(Config {
            url: url.clone(),
            interval: self.interval,
            queue: self.queue,
            labels: labels_with_defaults(&self.labels, &hostname()),
            sender,
        })
    }
}

/// A push ready to start: the settings checked, the credentials read.
pub struct Config {
    url: String,
    interval: Duration,
    queue: usize,
    labels: Vec<(String, String)>,
    sender: send::Sender,
}

/// `instance` (the host's name) and `job` (`swapsight`), then the given
/// labels; a given label of the same name replaces a default.
fn labels_with_defaults(given: &[(String, String)], host: &str) -> Vec<(String, String)> {
    let mut out = vec![
        ("instance".to_string(), host.to_string()),
        ("job".to_string(), "swapsight".to_string()),
    ];
    for (k, v) in given {
        match out.iter_mut().find(|(name, _)| name == k) {
            Some(slot) => slot.1 = v.clone(),
            None => out.push((k.clone(), v.clone())),
        }
    }
    out
}

/// The host's name, `unknown` when it cannot be read.
fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    match std::str::from_utf8(&buf[..end]) {
        Ok(name) if rc == 0 && !name.is_empty() => name.to_string(),
        _ => "unknown".to_string(),
    }
}

/// An http:// or https:// URL with a host, and no user or password in it.
pub fn url(s: &str) -> Result<String, String> {
    let s = s.trim();
    let uri: ureq::http::Uri = s
        .parse()
        .map_err(|_| "not a URL: expected http(s)://HOST[:PORT]/PATH".to_string())?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        _ => return Err("expected an http:// or https:// URL".into()),
    }
    let Some(authority) = uri.authority() else {
        return Err("the URL has no host".into());
    };
    if authority.as_str().contains('@') {
        return Err(
            "credentials do not go in the URL (ps shows it): put them in --push-auth-file or \
             SWAPSIGHT_PUSH_TOKEN"
                .into(),
        );
    }
    if authority.host().is_empty() {
        return Err("the URL has no host".into());
    }
    Ok(s.to_string())
}

/// The URL's host, for saying where a push goes without its path.
pub fn host_of(url: &str) -> Option<String> {
    let uri = url.parse::<ureq::http::Uri>().ok()?;
    uri.authority().map(|a| a.as_str().to_string())
}

/// Whether the URL's host is a loopback address or `localhost`.
fn host_is_loopback(url: &str) -> bool {
    let Ok(uri) = url.parse::<ureq::http::Uri>() else {
        return false;
    };
    let host = uri.host().unwrap_or("");
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The time between two snapshots: 1 s to 1 h.
pub fn interval(d: Duration) -> Result<Duration, String> {
    if !(Duration::from_secs(1)..=Duration::from_secs(3600)).contains(&d) {
        return Err("must be between 1s and 1h".into());
    }
    Ok(d)
}

/// The queue's size: 1000 to 10 000 000 samples.
pub fn queue_samples(n: usize) -> Result<usize, String> {
    if !(1000..=10_000_000).contains(&n) {
        return Err("must be between 1000 and 10000000 samples".into());
    }
    Ok(n)
}

/// `NAME=VALUE`: a Prometheus label name (not one of the reserved `__`
/// ones) and a value that is not empty.
pub fn label(s: &str) -> Result<(String, String), String> {
    let Some((name, value)) = s.split_once('=') else {
        return Err("expected NAME=VALUE, like site=lab".into());
    };
    label_pair(name, value)
}

/// A label's name and value, checked as [`label`] checks them.
pub fn label_pair(name: &str, value: &str) -> Result<(String, String), String> {
    let mut chars = name.chars();
    let name_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !name_ok || name.len() > 128 {
        return Err(format!(
            "{name:?} is not a label name: letters, digits and _, not starting with a digit"
        ));
    }
    if name.starts_with("__") {
        return Err(format!(
            "{name:?}: names starting with __ are Prometheus' own"
        ));
    }
    if value.is_empty() || value.len() > 1024 || value.chars().any(char::is_control) {
        return Err(format!(
            "the value of {name} must be 1 to 1024 characters without control characters"
        ));
    }
    Ok((name.to_string(), value.to_string()))
}

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;
