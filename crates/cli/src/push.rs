//! `--push URL` (serve, record): the series `/metrics` serves, sent to a
//! Prometheus remote-write receiver (Prometheus, Mimir, Thanos, Cortex,
//! VictoriaMetrics, Grafana Cloud) every `--push-interval`, from machines
//! nothing can scrape.
//!
//! The push itself is `swapsight_push` (the app pushes too); here are its
//! flags, a thin shell that builds its `Settings`.

use std::path::PathBuf;
use std::time::Duration;

use swapsight_push::{auth, Config, Settings, DEFAULT_QUEUE_SAMPLES};

use crate::exit;

pub use swapsight_push::{Metrics, Pusher};

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
    /// 8 MiB); when full, the oldest are dropped and counted in
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

impl PushArgs {
    /// No push: for a recording made on the way (`fit -- CMD`).
    pub fn off() -> PushArgs {
        PushArgs {
            push: None,
            push_interval: Duration::from_secs(15),
            push_auth_file: None,
            push_ca: None,
            push_queue: DEFAULT_QUEUE_SAMPLES,
            labels: Vec::new(),
        }
    }

    /// The push these flags ask for, `None` without `--push`; a bad auth
    /// file, CA file or credentials over plain HTTP is one line and exit 2.
    pub fn config(&self) -> anyhow::Result<Option<Config>> {
        let Some(url) = &self.push else {
            return Ok(None);
        };
        let settings = Settings {
            url: url.clone(),
            interval: self.push_interval,
            queue: self.push_queue,
            labels: self.labels.clone(),
            auth_file: self.push_auth_file.clone(),
            ca: self.push_ca.clone(),
        };
        settings
            .config(std::env::var(auth::TOKEN_ENV).ok())
            .map(Some)
            .map_err(|why| exit::fail(exit::USAGE, why))
    }
}

fn url(s: &str) -> Result<String, String> {
    swapsight_push::url(s)
}

fn interval(s: &str) -> Result<Duration, String> {
    swapsight_push::interval(crate::args::duration(s)?)
}

fn queue_samples(s: &str) -> Result<usize, String> {
    swapsight_push::queue_samples(crate::args::count(s)?)
}

fn label(s: &str) -> Result<(String, String), String> {
    swapsight_push::label(s)
}

#[cfg(test)]
#[path = "push_tests.rs"]
mod tests;
