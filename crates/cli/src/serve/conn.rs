//! The connection layer under the router: how many connections are served,
//! how long one may stay silent, how long a write may stall.
//!
//! hyper's HTTP/1 server speaks the protocol; this accept loop adds what
//! `axum::serve` leaves out:
//!
//! - **Header-read and idle timeout** — hyper's own `header_read_timeout`,
//!   run on tokio's timer: a connection that has not sent a whole request
//!   head within `header_timeout` of opening, or of its previous response
//!   (an idle keep-alive connection), is closed. Silent and slowloris
//!   connections end there.
//! - **Write timeout** — a write that cannot go out for `write_timeout` (the
//!   peer stopped reading and every buffer on the way is full) fails the
//!   connection. A stalled event-stream client never falls behind the
//!   broadcast channel (its stream is not even polled while the socket is
//!   full), so this is what drops it; the request's [`ConnInfo`] says so.
//!   The socket's send buffer is set to [`SEND_BUFFER`]: left to the
//!   kernel's autotuning it grows to 4 MiB, minutes of updates, before a
//!   write blocks at all (and that much kernel memory per connection).
//! - **A connection cap** — a semaphore taken at accept, kept below the
//!   open-file limit so that the probe and the recordings always have
//!   descriptors. At the cap the oldest connection is made to close: at
//!   once when it has not sent a whole request head yet (hyper's graceful
//!   shutdown would wait for that head) or is idle between requests, after
//!   its answer otherwise. A flood of half-open connections therefore
//!   cannot lock `/metrics` out.

use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch, OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;

/// The connection limits; [`super::Options`] holds the server's.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Time to send a request head, from opening or from the last response.
    pub header_timeout: Duration,
    /// Time a write may stay blocked before the connection is dropped.
    pub write_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
}

/// The send buffer of every connection (the kernel doubles it for its own
/// bookkeeping): a few seconds of event-stream updates, plenty for
/// loopback and LAN speeds.
pub const SEND_BUFFER: usize = 64 * 1024;

/// Sets `SO_SNDBUF`, which also turns the kernel's autotuning off for it.
fn limit_send_buffer(stream: &TcpStream, bytes: usize) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let value = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    // SAFETY: setsockopt reads one c_int from `value` for the duration of
    // the call; the descriptor is the stream's own, open while it lives.
    let rc = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            std::ptr::addr_of!(value).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl Limits {
    /// `max_connections`, lowered to half the process's open-file limit:
    /// the other half is for the probe (on Linux it keeps `/proc/PID/stat`
    /// open for at most a quarter of the limit), recordings, exports and
    /// the runtime.
    pub fn fitted(mut self) -> Limits {
        if let Some(fds) = open_file_limit() {
            let room = usize::try_from(fds / 2).unwrap_or(usize::MAX);
            self.max_connections = self.max_connections.min(room);
        }
        self.max_connections = self.max_connections.max(1);
        self
    }
}

/// The soft `RLIMIT_NOFILE`, when there is one.
fn open_file_limit() -> Option<libc::rlim_t> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into `lim`, which we own.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    (rc == 0 && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur)
}

/// What a request knows of its connection: an extension on every request
/// that came through [`serve`].
#[derive(Debug, Default)]
pub struct ConnInfo {
    write_timed_out: AtomicBool,
    /// Whether a whole request head has come in (hyper called the router).
    requested: AtomicBool,
}

impl ConnInfo {
    /// Whether the connection is being dropped because its peer stopped
    /// reading.
    pub fn write_timed_out(&self) -> bool {
        self.write_timed_out.load(Ordering::SeqCst)
    }
}

/// Connections that may be asked to close, oldest first.
type Open = Arc<Mutex<BTreeMap<u64, oneshot::Sender<()>>>>;

/// Serves `router` on `listener` until `shutdown` resolves; then stops
/// accepting, lets each connection finish its request, and returns once
/// all are closed (the caller bounds that wait).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let cap = limits.max_connections.max(1);
    let permits = Arc::new(Semaphore::new(cap));
    let open: Open = Arc::default();
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut next_id = 0u64;
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    accept_failed(&e, &open).await;
                    continue;
                }
            },
        };
        let permit = tokio::select! {
            () = &mut shutdown => break,
            p = permit(&permits, &open) => p,
        };
        next_id += 1;
        let (evict_tx, evict_rx) = oneshot::channel();
        lock(&open).insert(next_id, evict_tx);
        let registration = Registration {
            id: next_id,
            open: Arc::clone(&open),
            _permit: permit,
        };
        tokio::spawn(connection(
            stream,
            router.clone(),
            limits,
            registration,
            evict_rx,
            stop_rx.clone(),
        ));
    }
    let _ = stop_tx.send(true);
    // Every permit back: every connection closed.
    let _ = permits
        .acquire_many(u32::try_from(cap).unwrap_or(u32::MAX))
        .await;
}

fn lock(open: &Open) -> std::sync::MutexGuard<'_, BTreeMap<u64, oneshot::Sender<()>>> {
    open.lock().unwrap_or_else(|e| e.into_inner())
}

/// A connection's place: its permit and its entry among the open ones,
/// both given back when the connection ends.
struct Registration {
    id: u64,
    open: Open,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Registration {
    fn drop(&mut self) {
        lock(&self.open).remove(&self.id);
    }
}

/// A permit for one more connection; at the cap, the oldest connection is
/// asked to close (one at a time, until a permit comes back).
async fn permit(permits: &Arc<Semaphore>, open: &Open) -> OwnedSemaphorePermit {
    loop {
        if let Ok(p) = Arc::clone(permits).try_acquire_owned() {
            return p;
        }
        let oldest = lock(open).pop_first();
        let wait = match oldest {
            Some((_, close)) => {
                let _ = close.send(());
                // Between requests it closes at once; if it was busy (an
                // event stream), the next oldest is asked after this.
                Duration::from_millis(50)
            }
            None => Duration::from_secs(1),
        };
        if let Ok(Ok(p)) = tokio::time::timeout(wait, Arc::clone(permits).acquire_owned()).await {
            return p;
        }
    }
}

/// A failed accept: the peer gave up (go on), or the process is out of
/// descriptors (recordings and exports opened meanwhile): the oldest
/// connection makes room, and the loop waits a moment rather than spin.
async fn accept_failed(e: &io::Error, open: &Open) {
    let peer_gone = matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
    );
    if peer_gone {
        return;
    }
    if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
        if let Some((_, close)) = lock(open).pop_first() {
            let _ = close.send(());
        }
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
}

async fn connection(
    stream: TcpStream,
    router: Router,
    limits: Limits,
    _registration: Registration,
    evict: oneshot::Receiver<()>,
    mut stop: watch::Receiver<bool>,
) {
    // Without it a stalled client is noticed minutes late; with it failing,
    // it is served all the same.
    let _ = limit_send_buffer(&stream, SEND_BUFFER);
    let info = Arc::new(ConnInfo::default());
    let io = TokioIo::new(WriteTimeout {
        io: stream,
        limit: limits.write_timeout,
        stalled: None,
        info: Arc::clone(&info),
    });
    let seen = Arc::clone(&info);
    let service = router.map_request(move |mut req: axum::http::Request<Incoming>| {
        seen.requested.store(true, Ordering::SeqCst);
        req.extensions_mut().insert(Arc::clone(&seen));
        req
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        // What hyper queues for a slow reader (and the largest request head):
        // 64 KiB rather than its 400 KiB, times every stalled connection.
        .max_buf_size(SEND_BUFFER)
        .serve_connection(io, TowerToHyperService::new(service));
    tokio::pin!(conn);
    let close = async {
        tokio::select! {
            _ = evict => {}
            _ = stop.wait_for(|&s| s) => {}
        }
    };
    tokio::select! {
        _ = conn.as_mut() => return,
        () = close => {}
    }
    // Graceful: a request being answered is finished first. But a
    // connection that never sent a whole head would be waited for until its
    // header timeout: that one is dropped (closed) here and now.
    conn.as_mut().graceful_shutdown();
    if info.requested.load(Ordering::SeqCst) {
        let _ = conn.await;
    }
}

/// A socket whose writes fail with `TimedOut` once one has been blocked
/// for `limit`.
struct WriteTimeout {
    io: TcpStream,
    limit: Duration,
    /// Since when the pending write has been blocked.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    info: Arc<ConnInfo>,
}

impl WriteTimeout {
    fn check<T>(&mut self, cx: &mut Context<'_>, r: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if r.is_ready() {
            self.stalled = None;
            return r;
        }
        let limit = self.limit;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        if stalled.as_mut().poll(cx).is_ready() {
            self.info.write_timed_out.store(true, Ordering::SeqCst);
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client stopped reading",
            )));
        }
        Poll::Pending
    }
}

impl AsyncRead for WriteTimeout {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl AsyncWrite for WriteTimeout {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_write(cx, buf);
        this.check(cx, r)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.check(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_flush(cx);
        this.check(cx, r)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}
