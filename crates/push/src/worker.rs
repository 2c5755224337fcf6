//! The push's two threads around the [`Outbox`]: the collector takes a
//! snapshot each interval, the sender sends the oldest moments and backs
//! off while the receiver is away. What goes wrong is said once, in one
//! line, and counted in the push's own series.

use std::fmt::Write;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use swapsight::export::remote_write;

use crate::outbox::{verdict, Moment, Outbox, Verdict};
use crate::send::Answer;
use crate::Config;

/// How long a stopping push keeps sending what it holds.
const FLUSH: Duration = Duration::from_secs(5);
/// How soon the collector looks again when the source has nothing yet
/// (serve before its first tick).
const NOT_YET: Duration = Duration::from_millis(250);

struct State {
    outbox: Outbox,
    /// Why the last request failed and is being tried again; `None` once
    /// one got through (a batch refused for its samples is no failure of
    /// the push: the queue goes on).
    trouble: Option<String>,
    /// Set when stopping: the sender gives up at this instant.
    flush_until: Option<Instant>,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    cap: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere leaves the queue consistent: each change to it
        // is one call.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The push's own series, for `/metrics` as well as the push.
#[derive(Clone)]
pub struct Metrics(Arc<Shared>);

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("push::Metrics")
    }
}

impl Metrics {
    /// Why requests fail now (no answer, a 5xx, credentials refused), in
    /// a few words; `None` while they get through or before the first.
    pub fn trouble(&self) -> Option<String> {
        self.0.lock().trouble.clone()
    }

    /// Appends the push's series to an exposition.
    pub fn write(&self, out: &mut String) {
        let (c, held) = {
            let st = self.0.lock();
            (st.outbox.counts(), st.outbox.held())
        };
        let _ = write!(
            out,
            "# HELP swapsight_push_sent_samples_total Samples the remote-write receiver took.\n\
             # TYPE swapsight_push_sent_samples_total counter\n\
             swapsight_push_sent_samples_total {}\n\
             # HELP swapsight_push_dropped_samples_total Samples never sent: the oldest in a full \
             queue (overflow), or a batch the receiver refused with a 4xx (rejected).\n\
             # TYPE swapsight_push_dropped_samples_total counter\n\
             swapsight_push_dropped_samples_total{{reason=\"overflow\"}} {}\n\
             swapsight_push_dropped_samples_total{{reason=\"rejected\"}} {}\n\
             # HELP swapsight_push_failed_requests_total Push requests that failed and were \
             tried again (no answer, 5xx, 429, 401, 403).\n\
             # TYPE swapsight_push_failed_requests_total counter\n\
             swapsight_push_failed_requests_total {}\n\
             # HELP swapsight_push_queue_samples Samples waiting to be pushed.\n\
             # TYPE swapsight_push_queue_samples gauge\n\
             swapsight_push_queue_samples {held}\n\
             # HELP swapsight_push_queue_capacity_samples Samples the push queue holds at most.\n\
             # TYPE swapsight_push_queue_capacity_samples gauge\n\
             swapsight_push_queue_capacity_samples {}\n",
            c.sent, c.dropped_overflow, c.dropped_rejected, c.retried, self.0.cap
        );
    }
}

/// A push: made first (so `/metrics` can show its series), started with
/// its source, finished on the way out.
pub struct Pusher {
    shared: Arc<Shared>,
    config: Option<Config>,
    stop: Option<mpsc::Sender<()>>,
    collector: Option<JoinHandle<()>>,
    sender: Option<JoinHandle<()>>,
}

impl Pusher {
    pub fn new(config: Config) -> Pusher {
        Pusher {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    outbox: Outbox::new(config.queue),
                    trouble: None,
                    flush_until: None,
                }),
                wake: Condvar::new(),
                cap: config.queue,
            }),
            config: Some(config),
            stop: None,
            collector: None,
            sender: None,
        }
    }

    pub fn metrics(&self) -> Metrics {
        Metrics(Arc::clone(&self.shared))
    }

    /// Starts both threads; `source` gives the exposition of now (`None`
    /// when there is none yet) and is called on the collector's thread.
    pub fn start(&mut self, source: impl FnMut() -> Option<String> + Send + 'static) {
        let Some(config) = self.config.take() else {
            return;
        };
        eprintln!(
            "swapsight: pushing to {} every {} (queue of {} samples)",
            config.url,
            swapsight::units::format_duration(config.interval),
            config.queue
        );
        let (tx, rx) = mpsc::channel();
        self.stop = Some(tx);
        let shared = Arc::clone(&self.shared);
        let interval = config.interval;
        let spawn = |name: &str, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name.into())
                .spawn(f)
                .map_err(|e| eprintln!("swapsight: push: cannot start a thread: {e}"))
                .ok()
        };
        self.collector = spawn(
            "swapsight-push-collect",
            Box::new(move || collect(&shared, interval, source, &rx)),
        );
        let shared = Arc::clone(&self.shared);
        self.sender = spawn(
            "swapsight-push-send",
            Box::new(move || deliver(&shared, &config)),
        );
    }

    /// Takes a last snapshot, sends what the queue holds for up to 5 s and
    /// says what was left unsent.
    pub fn finish(mut self) {
        self.stop_threads();
        let held = self.shared.lock().outbox.held();
        if held > 0 {
            eprintln!(
                "swapsight: push: {held} samples not sent (the receiver did not take them in time)"
            );
        }
    }

    fn stop_threads(&mut self) {
        // The collector takes its last snapshot before it returns, and the
        // sender's deadline starts after it.
        drop(self.stop.take());
        if let Some(c) = self.collector.take() {
            let _ = c.join();
        }
        self.shared.lock().flush_until = Some(Instant::now() + FLUSH);
        self.shared.wake.notify_all();
        if let Some(s) = self.sender.take() {
            let _ = s.join();
        }
    }
}

impl Drop for Pusher {
    fn drop(&mut self) {
        self.stop_threads();
    }
}

/// The collector: a snapshot now, then one each interval, one more when
/// told to stop.
fn collect(
    shared: &Arc<Shared>,
    interval: Duration,
    mut source: impl FnMut() -> Option<String>,
    stop: &mpsc::Receiver<()>,
) {
    let mut told_overflow = false;
    let mut next = Instant::now();
    loop {
        let wait = next.saturating_duration_since(Instant::now());
        let last = !matches!(stop.recv_timeout(wait), Err(RecvTimeoutError::Timeout));
        let Some(mut text) = source() else {
            if last {
                return;
            }
            next = Instant::now() + NOT_YET;
            continue;
        };
        Metrics(Arc::clone(shared)).write(&mut text);
        let dropped = shared.lock().outbox.add(
            i64::try_from(swapsight::units::unix_now_ms()).unwrap_or(i64::MAX),
            text,
        );
        shared.wake.notify_all();
        if dropped > 0 && !told_overflow {
            told_overflow = true;
            eprintln!(
                "swapsight: push: the queue is full ({} samples): dropping the oldest, counted in \
                 swapsight_push_dropped_samples_total{{reason=\"overflow\"}} (said once)",
                shared.cap
            );
        }
        if last {
            return;
        }
        next += interval;
        let now = Instant::now();
        if next < now {
            // Late (a suspended laptop): no burst of snapshots to catch up.
            next = now + interval;
        }
    }
}

/// The sender: waits until a request is due, sends the oldest moments,
/// applies the answer; returns once stopping and the queue is empty or
/// the flush's time is up.
fn deliver(shared: &Shared, config: &Config) {
    let mut log = Log::new(&config.url);
    let mut jitter = Jitter::seeded();
    loop {
        let batch = {
            let mut st = shared.lock();
            loop {
                let now = Instant::now();
                let flush = st.flush_until;
                if flush.is_some_and(|end| now >= end || st.outbox.held() == 0) {
                    return;
                }
                if st.outbox.due(now) {
                    break;
                }
                let until = [st.outbox.retry_at(), flush].into_iter().flatten().min();
                st = match until {
                    Some(t) => {
                        let wait = t.saturating_duration_since(now);
                        shared
                            .wake
                            .wait_timeout(st, wait)
                            .map_or_else(|e| e.into_inner().0, |r| r.0)
                    }
                    None => shared.wake.wait(st).unwrap_or_else(|e| e.into_inner()),
                };
            }
            st.outbox.next_batch()
        };
        let Some(last_seq) = batch.last().map(|m| m.seq) else {
            continue;
        };
        let answer = config.sender.send(&body(&batch, &config.labels));
        let v = match &answer {
            Answer::Status(code, _) => verdict(*code),
            Answer::Failed(_) => Verdict::Retry,
        };
        let settled = {
            let mut st = shared.lock();
            st.trouble = trouble(&answer, v);
            st.outbox.settle(last_seq, v, Instant::now(), jitter.unit())
        };
        log.say(&answer, v, settled.samples, config.sender.has_auth());
    }
}

/// Why a request failed, for a status line: the HTTP status, or the
/// client's own words (connection refused, a certificate not verified).
fn trouble(answer: &Answer, v: Verdict) -> Option<String> {
    match (v, answer) {
        (Verdict::Sent | Verdict::Rejected, _) => None,
        (_, Answer::Status(code, _)) => Some(format!("HTTP {code}")),
        (_, Answer::Failed(e)) => Some(clean(e).chars().take(80).collect()),
    }
}

/// The request body of `batch`: each moment's series with the push's
/// labels, at the moment's time.
fn body(batch: &[Moment], labels: &[(String, String)]) -> Vec<u8> {
    let parsed: Vec<(i64, Vec<remote_write::Series>)> = batch
        .iter()
        .map(|m| (m.at_ms, remote_write::parse(&m.text, labels)))
        .collect();
    let moments: Vec<(i64, &[remote_write::Series])> =
        parsed.iter().map(|(t, s)| (*t, s.as_slice())).collect();
    remote_write::body_of_moments(&moments)
}

/// What the sender has said, so that each trouble is said once (and its
/// end once).
struct Log<'a> {
    url: &'a str,
    unreachable: bool,
    unauthorized: bool,
    rejected: bool,
}

impl<'a> Log<'a> {
    fn new(url: &'a str) -> Self {
        Log {
            url,
            unreachable: false,
            unauthorized: false,
            rejected: false,
        }
    }

    /// After a trouble was said, that it is over.
    fn back(&mut self, samples: usize) {
        let was_down = std::mem::take(&mut self.unreachable);
        if std::mem::take(&mut self.unauthorized) || was_down {
            eprintln!(
                "swapsight: push: {} takes samples again ({samples} sent)",
                self.url
            );
        }
    }

    fn say(&mut self, answer: &Answer, v: Verdict, samples: usize, has_auth: bool) {
        let url = self.url;
        match (v, answer) {
            (Verdict::Sent, _) => self.back(samples),
            (Verdict::Rejected, Answer::Status(code, why)) if !self.rejected => {
                self.rejected = true;
                eprintln!(
                    "swapsight: push: {url} refused a batch ({code}: {}): its {samples} samples \
                     are dropped, counted in swapsight_push_dropped_samples_total\
                     {{reason=\"rejected\"}}, and the queue goes on (said once)",
                    clean(why)
                );
            }
            (Verdict::Unauthorized, Answer::Status(code, _)) if !self.unauthorized => {
                self.unauthorized = true;
                let fix = if has_auth {
                    "check the credentials of --push-auth-file or SWAPSIGHT_PUSH_TOKEN"
                } else {
                    "it wants credentials: give them in --push-auth-file or SWAPSIGHT_PUSH_TOKEN"
                };
                eprintln!(
                    "swapsight: push: {url} refused the credentials ({code} {}): {fix}; samples \
                     are kept and tried again with backoff",
                    if *code == 401 {
                        "Unauthorized"
                    } else {
                        "Forbidden"
                    }
                );
            }
            (Verdict::Retry, _) if !self.unreachable => {
                self.unreachable = true;
                let why = match answer {
                    Answer::Status(code, text) => format!("it answered {code}: {}", clean(text)),
                    // rustls' words for a chain it cannot verify.
                    Answer::Failed(e) if e.contains("certificate") => {
                        format!("{e}; a server behind a private CA needs it in --push-ca FILE")
                    }
                    Answer::Failed(e) => e.clone(),
                };
                eprintln!(
                    "swapsight: push: cannot push to {url} ({why}); samples are kept in the queue \
                     and tried again with backoff"
                );
            }
            _ => {}
        }
    }
}

/// A receiver's words for the log: one line, printable, at most 200
/// characters.
fn clean(text: &str) -> String {
    let line: String = text
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    if line.is_empty() {
        "no reason given".into()
    } else {
        line
    }
}

/// A small xorshift for the backoff's jitter: spreading retries needs no
/// more than a different sequence per process.
struct Jitter(u64);

impl Jitter {
    fn seeded() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        Jitter(u64::from(nanos) << 20 ^ u64::from(std::process::id()) | 1)
    }

    /// A number in [0, 1).
    fn unit(&mut self) -> f64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}
