//! One remote-write request over HTTP(S): ureq with rustls, the system's
//! verifier and roots (rustls-platform-verifier: the keychain on macOS,
//! the distribution's CA bundle on Linux) or the CAs of `--push-ca` only.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig};

use crate::auth::Secret;

/// A request's whole time, connection and TLS included: a receiver that
/// went silent costs the push thread this much, never the sampler.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Connecting alone.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The most of an error answer read, for the log.
const MAX_ANSWER: u64 = 4096;
/// The longest CA file read.
const MAX_CA_FILE: u64 = 4 << 20;

/// What came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// An HTTP status, with the start of the body when it is not 2xx
    /// (the receiver's reason: "out of order sample").
    Status(u16, String),
    /// No answer: the connection, TLS or a timeout failed.
    Failed(String),
}

/// Where and how to send.
pub struct Sender {
    agent: ureq::Agent,
    url: String,
    auth: Option<Secret>,
}

impl Sender {
    /// A sender to `url` with `auth`, trusting the CAs of `ca` (a PEM file)
    /// or the system's.
    pub fn new(url: &str, auth: Option<Secret>, ca: Option<&Path>) -> Result<Sender, String> {
        let roots = match ca {
            Some(path) => RootCerts::Specific(Arc::new(read_ca(path)?)),
            None => RootCerts::PlatformVerifier,
        };
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // A redirect would carry the credentials elsewhere; a receiver
            // that moved is reported (3xx), not followed.
            .max_redirects(0)
            .timeout_global(Some(REQUEST_TIMEOUT))
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .user_agent(concat!("swapsight/", env!("CARGO_PKG_VERSION")))
            .tls_config(TlsConfig::builder().root_certs(roots).build())
            .build();
        Ok(Sender {
            agent: config.new_agent(),
            url: url.to_string(),
            auth,
        })
    }

    /// Whether it sends credentials.
    pub fn has_auth(&self) -> bool {
        self.auth.is_some()
    }

    /// POSTs one snappy-compressed `WriteRequest`.
    pub fn send(&self, body: &[u8]) -> Answer {
        let mut req = self
            .agent
            .post(&self.url)
            .header("Content-Encoding", "snappy")
            .header("Content-Type", "application/x-protobuf")
            .header("X-Prometheus-Remote-Write-Version", "0.1.0");
        if let Some(auth) = &self.auth {
            req = req.header("Authorization", auth.header());
        }
        match req.send(body) {
            Ok(mut res) => {
                let status = res.status().as_u16();
                let mut text = String::new();
                if !(200..300).contains(&status) {
                    let mut bytes = Vec::new();
                    let _ = res
                        .body_mut()
                        .as_reader()
                        .take(MAX_ANSWER)
                        .read_to_end(&mut bytes);
                    text = String::from_utf8_lossy(&bytes).trim().to_string();
                }
                Answer::Status(status, text)
            }
            Err(e) => Answer::Failed(e.to_string()),
        }
    }
}

/// The certificates of a PEM file; an error when it holds none.
fn read_ca(path: &Path) -> Result<Vec<Certificate<'static>>, String> {
    let shown = path.display();
    let mut pem = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_CA_FILE).read_to_end(&mut pem))
        .map_err(|e| format!("cannot read --push-ca {shown}: {e}"))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(e) => return Err(format!("--push-ca {shown}: not PEM: {e}")),
        }
    }
    if certs.is_empty() {
        return Err(format!(
            "--push-ca {shown} holds no certificate (expected PEM: -----BEGIN CERTIFICATE-----)"
        ));
    }
    Ok(certs)
}
