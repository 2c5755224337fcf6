//! `--push URL` (serve, record): the series `/metrics` serves, sent to a
//! Prometheus remote-write receiver (Prometheus, Mimir, Thanos, Cortex,
//! VictoriaMetrics, Grafana Cloud) every `--push-interval`, from machines
//! nothing can scrape.
//!
//! Two threads of its own, so the sampler's tick never waits on the
//! network: one takes a snapshot of the exposition each interval into a
//! bounded in-memory queue ([`outbox`]), the other sends the queue's oldest
//! moments ([`send`]), backing off while the receiver is away. The
//! credentials come from a file or the environment only ([`auth`]).

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::exit;

mod auth;
mod outbox;
mod send;
mod worker;

pub use worker::{Metrics, Pusher};

/// The queue's bound unless `--push-queue` says otherwise: at about 150
/// series a snapshot, over 2.5 hours of 15 s snapshots, about 8 MB of
/// exposition text.
pub const DEFAULT_QUEUE_SAMPLES: usize = 100_000;

/// The flags of a push, declared once for `serve` and `record`.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Push to Prometheus (remote write)")]
pub struct PushArgs {
    /// Send the series /metrics serves to this Prometheus remote-write URL
    /// (Prometheus: http://HOST:9090/api/v1/write with
    /// --web.enable-remote-write-receiver; Mimir: https://HOST/api/v1/push),
    /// as remote write 1.0 (protobuf + snappy), on a thread of its own
    #[arg(long, value_name = "URL", value_parser = url)]
    pub push: Option<String>,
    /// Time between two snapshots pushed (1s to 1h)
    #[arg(long, value_name = "DUR", default_value = "15s", requires = "push",
          value_parser = interval, allow_hyphen_values = true)]
    pub push_interval: Duration,
    /// File holding the credentials, one line: `bearer TOKEN` or
    /// `basic USER:PASSWORD` (never on the command line, where `ps` shows
    /// them) [default: a bearer token in $SWAPSIGHT_PUSH_TOKEN]
    #[arg(long, value_name = "FILE", requires = "push")]
    pub push_auth_file: Option<PathBuf>,
    /// Trust the CA certificates of this PEM file for https://, instead of
    /// the system's (the keychain on macOS, the CA bundle on Linux)
    #[arg(long, value_name = "FILE", requires = "push")]
    pub push_ca: Option<PathBuf>,
    /// Samples the in-memory queue holds while the receiver is away
    /// (1000 to 10000000; 100000 is over 2.5 h of snapshots at 15 s, about
    /// 8 MB); when full, the oldest are dropped and counted in
    /// swapsight_push_dropped_samples_total
    #[arg(long, value_name = "N", default_value_t = DEFAULT_QUEUE_SAMPLES, requires = "push",
          value_parser = queue_samples)]
    pub push_queue: usize,
    /// A label added to every series pushed, NAME=VALUE (repeat it for more);
    /// `instance` [default: this host's name] and `job` [default: swapsight]
    /// are set this way too
    #[arg(long = "label", value_name = "NAME=VALUE", requires = "push", value_parser = label)]
    pub labels: Vec<(String, String)>,
}

/// A push ready to start: the flags checked, the credentials read.
pub struct Config {
    url: String,
    interval: Duration,
    queue: usize,
    labels: Vec<(String, String)>,
    sender: send::Sender,
}

impl PushArgs {
    /// The push these flags ask for, `None` without `--push`; a bad auth
    /// file, CA file or credentials over plain HTTP is one line and exit 2.
    pub fn config(&self) -> anyhow::Result<Option<Config>> {
        let Some(url) = &self.push else {
            return Ok(None);
        };
        let usage = |why: String| exit::fail(exit::USAGE, why);
        let auth = auth::credentials(
            self.push_auth_file.as_deref(),
            std::env::var(auth::TOKEN_ENV).ok(),
        )
        .map_err(usage)?;
        if auth.is_some() && !url.starts_with("https://") && !host_is_loopback(url) {
            return Err(usage(format!(
                "refusing to send credentials over plain HTTP to {url}: use https:// (or a \
                 loopback address)"
            )));
        }
        let sender = send::Sender::new(url, auth, self.push_ca.as_deref()).map_err(usage)?;
        Ok(Some(Config {
            url: url.clone(),
            interval: self.push_interval,
            queue: self.push_queue,
            labels: labels_with_defaults(&self.labels, &hostname()),
            sender,
        }))
    }
}

/// `instance` (the host's name) and `job` (`swapsight`), then the
/// `--label`s; a `--label` of the same name replaces a default.
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
fn url(s: &str) -> Result<String, String> {
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

fn interval(s: &str) -> Result<Duration, String> {
    let d = crate::args::duration(s)?;
    if !(Duration::from_secs(1)..=Duration::from_secs(3600)).contains(&d) {
        return Err("must be between 1s and 1h".into());
    }
    Ok(d)
}

fn queue_samples(s: &str) -> Result<usize, String> {
    let n = crate::args::count(s)?;
    if !(1000..=10_000_000).contains(&n) {
        return Err("must be between 1000 and 10000000 samples".into());
    }
    Ok(n)
}

/// `NAME=VALUE`: a Prometheus label name (not one of the reserved `__`
/// ones) and a value that is not empty.
fn label(s: &str) -> Result<(String, String), String> {
    let Some((name, value)) = s.split_once('=') else {
        return Err("expected NAME=VALUE, like site=lab".into());
    };
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
#[path = "push_tests.rs"]
mod tests;
