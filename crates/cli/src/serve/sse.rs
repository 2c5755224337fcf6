//! Live updates as Server-Sent Events (`GET /api/events`): one
//! `event: update` per tick, its data the [`Update`](swapsight::live::Update)
//! JSON.
//!
//! Memory stays bounded whatever the clients do. One bridging thread takes
//! the session's updates, serializes each once into its whole SSE frame
//! (`Bytes`) and sends that into a tokio `broadcast` channel of fixed
//! capacity; every client reads it through its own `BroadcastStream`. The
//! frame goes to hyper as it is, a reference-counted view rather than a copy
//! (axum's `Event` would copy the data into each client's own buffer), so
//! what a stalled client holds is its socket buffer and references to frames
//! every other client shares. A client that falls more than the capacity
//! behind (`Lagged`) is dropped, not buffered for; its browser reconnects.
//! A client that stops reading altogether is not seen to lag — once the
//! socket's buffers are full its stream is no longer polled — so the
//! connection's write timeout ([`super::conn`]) drops it; both count as
//! lagged, and either way its seat is freed. At most `max_clients` streams
//! run at once; more are answered 503. On shutdown every stream ends, so a
//! graceful shutdown does not wait on them.

use std::convert::Infallible;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use axum::Extension;
use futures_util::{future, stream, StreamExt};
use swapsight::live::Live;
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;

use super::conn::ConnInfo;
use super::error::ApiError;
use super::State as AppState;

/// A comment line every this often keeps proxies from closing a quiet
/// stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The whole `event: update` frame for one update's JSON, built once for
/// every client. `serde_json::to_string` writes no newline, so the JSON is
/// one `data:` line.
fn frame(json: &str) -> Bytes {
    let mut f = String::with_capacity(json.len() + 24);
    f.push_str("event: update\ndata: ");
    f.push_str(json);
    f.push_str("\n\n");
    Bytes::from(f)
}

/// The fan-out from the session to the event-stream clients.
pub struct Hub {
    tx: broadcast::Sender<Bytes>,
    counts: Arc<Counts>,
    max_clients: usize,
}

#[derive(Default)]
struct Counts {
    clients: AtomicUsize,
    lagged: AtomicU64,
    served: AtomicU64,
}

/// Holds one client's place; gives it back when the stream is dropped.
struct Seat {
    counts: Arc<Counts>,
    /// The connection, when served through [`super::conn`].
    conn: Option<Arc<ConnInfo>>,
    lagged: AtomicBool,
}

impl Seat {
    /// Counts this client as dropped for lagging, once.
    fn lagged(&self) {
        if !self.lagged.swap(true, Ordering::SeqCst) {
            self.counts.lagged.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        if self.conn.as_ref().is_some_and(|c| c.write_timed_out()) {
            self.lagged();
        }
        self.counts.clients.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Hub {
    /// Subscribes to `live` and starts the bridging thread; it ends when
    /// the session does.
    pub fn start(live: &Live, backlog: usize, max_clients: usize) -> Hub {
        let updates = live.subscribe(4);
        let (tx, _) = broadcast::channel(backlog.max(1));
        let out = tx.clone();
        std::thread::Builder::new()
            .name("swapsight-sse".into())
            .spawn(move || {
                for update in updates {
                    if out.receiver_count() == 0 {
                        continue;
                    }
                    let json = if update.snapshot.recording.is_some() {
                        let mut update = (*update).clone();
                        super::api::without_paths(&mut update.snapshot);
                        serde_json::to_string(&update)
                    } else {
                        serde_json::to_string(&*update)
                    };
                    if let Ok(json) = json {
                        let _ = out.send(frame(&json));
                    }
                }
            })
            .expect("spawning the event bridge thread");
        Hub {
            tx,
            counts: Arc::default(),
            max_clients,
        }
    }

    /// Event-stream clients connected now.
    pub fn clients(&self) -> usize {
        self.counts.clients.load(Ordering::SeqCst)
    }

    fn seat(&self, conn: Option<Arc<ConnInfo>>) -> Option<Seat> {
        let c = &self.counts.clients;
        let mut now = c.load(Ordering::SeqCst);
        loop {
            if now >= self.max_clients {
                return None;
            }
            match c.compare_exchange(now, now + 1, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => {
                    return Some(Seat {
                        counts: Arc::clone(&self.counts),
                        conn,
                        lagged: AtomicBool::new(false),
                    })
                }
                Err(v) => now = v,
            }
        }
    }

    /// The server's own series, appended to `/metrics`.
    pub fn write_metrics(&self, out: &mut String) {
        let series = [
            (
                "swapsight_serve_event_clients",
                "gauge",
                "Event-stream (SSE) clients connected now.",
                self.clients() as u64,
            ),
            (
                "swapsight_serve_event_clients_total",
                "counter",
                "Event-stream clients served since the server started.",
                self.counts.served.load(Ordering::SeqCst),
            ),
            (
                "swapsight_serve_event_clients_lagged_total",
                "counter",
                "Event-stream clients dropped for falling too far behind.",
                self.counts.lagged.load(Ordering::SeqCst),
            ),
        ];
        for (name, kind, help, v) in series {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}"
            );
        }
    }
}

pub async fn events(
    State(s): State<AppState>,
    conn: Option<Extension<Arc<ConnInfo>>>,
) -> Result<Response, ApiError> {
    if *s.shutdown.borrow() {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting down",
        ));
    }
    let seat = s.hub.seat(conn.map(|Extension(c)| c)).ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "too many event streams (at most {}); try again later",
                s.hub.max_clients
            ),
        )
    })?;
    s.hub.counts.served.fetch_add(1, Ordering::SeqCst);
    let seat = Arc::new(seat);
    let lagging = Arc::clone(&seat);
    let mut shutdown = s.shutdown.clone();
    let stopped = async move {
        let _ = shutdown.wait_for(|&stop| stop).await;
    };
    let updates = BroadcastStream::new(s.hub.tx.subscribe())
        .take_while(move |r| {
            if r.is_err() {
                lagging.lagged();
            }
            future::ready(r.is_ok())
        })
        .filter_map(|r| future::ready(r.ok()))
        .map(move |frame| {
            let _seat = &seat;
            Some(frame)
        })
        // The end of the updates (a lagging client) ends the stream, not
        // only the keep-alive beside it.
        .chain(stream::once(future::ready(None)));
    let keep_alive = stream::unfold((), |()| async {
        tokio::time::sleep(KEEP_ALIVE).await;
        Some((Some(Bytes::from_static(b":\n\n")), ()))
    });
    let body = stream::select(updates, keep_alive)
        .take_while(|f| future::ready(f.is_some()))
        .filter_map(future::ready)
        .map(Ok::<_, Infallible>)
        .take_until(stopped);
    let mut res = Response::new(Body::from_stream(body));
    let headers = res.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // Proxies (nginx) would otherwise buffer the stream.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(res)
}
