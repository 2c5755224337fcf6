//! `swapsight serve`: the live UI, a JSON + SSE API that mirrors the menu-bar
//! app's commands, and Prometheus `/metrics`, over HTTP.
//!
//! The shell is thin: a [`Live`] session does the work (sampling, detection,
//! recording, replay); this module only translates its methods into routes,
//! the same way the Tauri shell translates them into commands, so `ui/` sees
//! the same JSON either way. `ui/` is embedded in the binary ([`assets`]).
//!
//! Security, in short (docs/serve.md has it all): loopback by default; any
//! other address needs `--token`, and with a token every request but
//! `/healthz` carries it ([`auth`]); no endpoint touches a path outside the
//! recordings folder (`swapsight::recordings`); memory stays bounded with
//! any number of event-stream clients ([`sse`]); connections are capped and
//! timed out, idle or stalled ones dropped ([`conn`]).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;
use swapsight::live::{Live, LiveConfig};
use tokio::sync::{watch, Semaphore};

use crate::exit;

mod api;
mod assets;
mod auth;
mod conn;
pub mod contract;
mod error;
mod signal;
mod sse;
#[cfg(test)]
#[path = "serve_tests.rs"]
mod tests;
mod unique_keys;

/// The environment variable read when `--token` is not given.
pub const TOKEN_ENV: &str = "SWAPSIGHT_TOKEN";

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Open the printed URL in a browser: the same window as the menu-bar app. The API, the \
event stream and the metrics are described in docs/serve.md.

Security: without --token only loopback addresses are allowed (and requests must name a loopback \
host); any other address needs --token (or SWAPSIGHT_TOKEN), and then every request but /healthz \
needs `Authorization: Bearer TOKEN`. Recordings are read and written only inside --recordings.
Command lines are shown for the processes of the user serve runs as only: anyone who reaches the \
port would read the others' (--show-all-commands shows them all, passwords in arguments too).

Examples:
  swapsight serve                                    http://127.0.0.1:7878/
  swapsight serve --addr 127.0.0.1:9100 --recordings ./runs
  SWAPSIGHT_TOKEN=$(openssl rand -hex 16) swapsight serve --addr 0.0.0.0:7878
  swapsight serve --push https://mimir.example/api/v1/push --push-auth-file ~/.config/swapsight/push-auth

--push sends what /metrics serves to a remote-write receiver (docs/serve.md, \"Push\"): from a \
laptop nothing can scrape. While the receiver is away, up to --push-queue samples wait in memory \
and are retried with backoff; past that the oldest are dropped and counted \
(swapsight_push_dropped_samples_total)."
)]
pub struct Args {
    /// Address to listen on (port 0 picks a free one); a non-loopback
    /// address needs --token
    #[arg(long, default_value = "127.0.0.1:7878", value_name = "ADDR", value_parser = addr)]
    pub addr: SocketAddr,
    /// Require `Authorization: Bearer TOKEN` on every request but /healthz
    /// (8 to 256 of A-Z a-z 0-9 . _ ~ -) [default: $SWAPSIGHT_TOKEN]
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Folder of recordings started from the UI, and the only one the API
    /// reads traces from [default: DATA_DIR/swapsight-recordings, where
    /// DATA_DIR is $XDG_DATA_HOME or ~/.local/share on Linux, ~/Library/
    /// Application Support on macOS; ./swapsight-recordings without a home]
    #[arg(long, value_name = "DIR")]
    pub recordings: Option<PathBuf>,
    /// Show every user's command lines, not only those of the processes of
    /// the user serve runs as. Risky: whoever reaches the port reads them,
    /// with any password or token in their arguments, even where /proc
    /// hides other users' processes (hidepid)
    #[arg(long)]
    pub show_all_commands: bool,
    #[command(flatten)]
    pub push: crate::push::PushArgs,
}

/// Whose command lines the session shows ([`LiveConfig::commands_of`]):
/// serve's own user's, unless every user's are asked for.
pub(crate) fn commands_of(show_all: bool) -> Option<u32> {
    // SAFETY: geteuid takes nothing and cannot fail.
    (!show_all).then(|| unsafe { libc::geteuid() })
}

/// `127.0.0.1:7878`, `[::1]:7878`, or `localhost:7878` (taken as 127.0.0.1).
fn addr(s: &str) -> Result<SocketAddr, String> {
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    match s.rsplit_once(':') {
        Some((host, port)) if host.eq_ignore_ascii_case("localhost") => port
            .parse::<u16>()
            .map(|p| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), p))
            .map_err(|_| "expected HOST:PORT, like 127.0.0.1:7878".to_string()),
        _ => Err("expected IP:PORT, like 127.0.0.1:7878 or 0.0.0.0:7878".to_string()),
    }
}

/// A token goes into headers, query strings and URL fragments as it is:
/// unreserved URL characters only, so it never needs escaping.
pub fn check_token(token: &str) -> Result<(), String> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | '-');
    if !(8..=256).contains(&token.len()) {
        return Err(format!("must be 8 to 256 characters, not {}", token.len()));
    }
    if let Some(c) = token.chars().find(|&c| !ok_char(c)) {
        return Err(format!("may hold only A-Z a-z 0-9 . _ ~ - (found {c:?})"));
    }
    Ok(())
}

/// How the server behaves; [`Options::default`] is what `serve` runs with.
#[derive(Debug, Clone)]
pub struct Options {
    /// Bearer token every request but `/healthz` must carry.
    pub token: Option<String>,
    /// Concurrent event-stream clients; more are answered 503.
    pub max_event_clients: usize,
    /// Updates an event-stream client may fall behind before it is dropped.
    pub event_backlog: usize,
    /// Per-process series in `/metrics`.
    pub metrics_processes: usize,
    /// How long `/api/snapshot` and `/metrics` wait for the first tick.
    pub first_tick_wait: Duration,
    /// Exports, reports and replays rendered at once (CPU and memory bound).
    pub heavy_jobs: usize,
    /// Time a connection gets to send a request head, from opening or from
    /// its previous response (the idle keep-alive timeout too).
    pub header_timeout: Duration,
    /// Time a write may stay blocked (the client stopped reading) before
    /// the connection is dropped; an event stream's too.
    pub write_timeout: Duration,
    /// Connections served at once (lowered to fit the open-file limit);
    /// at the cap the oldest one is closed when idle.
    pub max_connections: usize,
    /// The push's own series, added to `/metrics` when `--push` is on.
    pub push: Option<crate::push::Metrics>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            token: None,
            max_event_clients: 256,
            event_backlog: 16,
            metrics_processes: swapsight::export::prometheus::DEFAULT_MAX_PROCESSES,
            first_tick_wait: Duration::from_secs(2),
            heavy_jobs: 2,
            header_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(10),
            max_connections: 512,
            push: None,
        }
    }
}

/// What every handler shares.
pub(crate) struct Shared {
    pub live: Arc<Live>,
    pub opts: Options,
    pub hub: sse::Hub,
    pub shutdown: watch::Receiver<bool>,
    pub heavy: Semaphore,
}

pub(crate) type State = Arc<Shared>;

/// The router, and the switch that ends its event streams.
pub struct App {
    pub router: Router,
    shutdown: watch::Sender<bool>,
    limits: conn::Limits,
    state: State,
}

impl App {
    /// A switch that ends every event stream (and refuses new ones): flip
    /// it on shutdown, so a graceful shutdown does not wait on streams
    /// that never end.
    pub fn shutdown_handle(&self) -> impl Fn() + Send + Sync + 'static {
        let tx = self.shutdown.clone();
        move || {
            let _ = tx.send(true);
        }
    }

    /// The exposition `/metrics` serves, but for the push's own series
    /// (the push adds them itself): what `--push` sends. `None` before
    /// the first tick.
    pub fn exposition(&self) -> impl FnMut() -> Option<String> + Send + 'static {
        let state = Arc::clone(&self.state);
        move || {
            let mut text = state.live.prometheus(state.opts.metrics_processes)?;
            state.hub.write_metrics(&mut text);
            Some(text)
        }
    }
}

/// Builds the whole app around a running session. Recordings are read from
/// and written to the session's recordings folder.
pub fn app(live: Arc<Live>, opts: Options) -> anyhow::Result<App> {
    let dir = live.recordings_dir();
    dir.canonicalize()
        .with_context(|| format!("cannot open the recordings folder {}", dir.display()))?;
    let (tx, rx) = watch::channel(false);
    let limits = conn::Limits {
        header_timeout: opts.header_timeout,
        write_timeout: opts.write_timeout,
        max_connections: opts.max_connections,
    }
    .fitted();
    let hub = sse::Hub::start(&live, opts.event_backlog, opts.max_event_clients);
    let state: State = Arc::new(Shared {
        heavy: Semaphore::new(opts.heavy_jobs.max(1)),
        live,
        opts,
        hub,
        shutdown: rx,
    });
    let api = Router::new()
        .route(contract::SNAPSHOT.path, get(api::snapshot))
        .route(contract::HISTORY.path, get(api::history))
        .route(contract::PROCESS.path, get(api::process))
        .route(contract::PIN.path, post(api::pin))
        .route(contract::RESET_BASELINE.path, post(api::reset_baseline))
        .route(contract::START_RECORDING.path, post(api::recording_start))
        .route(contract::STOP_RECORDING.path, post(api::recording_stop))
        .route(contract::RECORDINGS.path, get(api::recordings))
        .route(contract::REPLAY.path, get(api::replay))
        .route(contract::REPORT.path, get(api::report))
        .route(contract::EXPORT.path, get(api::export))
        .route(contract::EVENTS.path, get(sse::events))
        .fallback(api::not_found)
        .method_not_allowed_fallback(api::method_not_allowed)
        .layer(DefaultBodyLimit::max(api::BODY_LIMIT))
        .layer(axum::middleware::from_fn(api::body_deadline));
    let router = Router::new()
        .nest(contract::API, api)
        .route("/metrics", get(api::metrics))
        .route("/healthz", get(api::healthz))
        .fallback(assets::asset)
        .method_not_allowed_fallback(api::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            auth::guard,
        ))
        .layer(axum::middleware::from_fn(assets::common_headers))
        .with_state(Arc::clone(&state));
    Ok(App {
        router,
        shutdown: tx,
        limits,
        state,
    })
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (token, from) = match args.token {
        Some(t) => (Some(t), "--token"),
        None => (
            std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty()),
            TOKEN_ENV,
        ),
    };
    if let Some(t) = &token {
        check_token(t).map_err(|why| exit::fail(exit::USAGE, format!("bad {from}: {why}")))?;
    }
    if !args.addr.ip().is_loopback() && token.is_none() {
        return Err(exit::fail(
            exit::USAGE,
            format!(
                "refusing to serve on {} without a token: a non-loopback address needs --token \
                 (or {TOKEN_ENV}); or serve on 127.0.0.1",
                args.addr
            ),
        ));
    }
    let mut pusher = args.push.config()?.map(crate::push::Pusher::new);
    let dir = args
        .recordings
        .unwrap_or_else(swapsight::recordings::default_recordings_dir);
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the recordings folder {}", dir.display()))?;
    let dir = dir
        .canonicalize()
        .with_context(|| format!("cannot open the recordings folder {}", dir.display()))?;
    let config = LiveConfig {
        recordings_dir: dir,
        commands_of: commands_of(args.show_all_commands),
        ..LiveConfig::default()
    };
    let probe = swapsight::probe::native().context("cannot start the memory probe")?;
    let live = Arc::new(Live::start(probe, config).context("cannot start the memory probe")?);
    let app = app(
        Arc::clone(&live),
        Options {
            token: token.clone(),
            push: pusher.as_ref().map(crate::push::Pusher::metrics),
            ..Options::default()
        },
    )?;
    if let Some(p) = pusher.as_mut() {
        p.start(app.exposition());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("swapsight-serve")
        .build()
        .context("cannot start the server's runtime")?;
    runtime.block_on(serve(app, args.addr, token.is_some().then_some(from)))?;
    // Handlers still rendering an export are not waited for.
    runtime.shutdown_timeout(Duration::from_secs(1));
    if let Some(p) = pusher {
        p.finish();
    }
    eprintln!("{}", signal::finish(&live));
    Ok(ExitCode::SUCCESS)
}

/// Serves `app` on `addr`; `token_from` says where its token came from.
async fn serve(app: App, addr: SocketAddr, token_from: Option<&str>) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener
        .local_addr()
        .context("cannot read the bound address")?;
    eprintln!("{}", start_line(local, token_from));
    let stop = app.shutdown_handle();
    let mut stopped = app.shutdown.subscribe();
    let server = conn::serve(listener, app.router.clone(), app.limits, async move {
        signal::stop_signal().await;
        stop();
    });
    // Graceful, but bounded: a slow export does not hold the exit forever.
    tokio::select! {
        () = server => {}
        () = async {
            let _ = stopped.wait_for(|&s| s).await;
            tokio::time::sleep(Duration::from_secs(5)).await;
        } => eprintln!("swapsight: some requests did not finish in 5 s; stopping anyway"),
    }
    Ok(())
}

/// The line serve starts with: the URL to open. With a token the page is
/// opened as `/?token=TOKEN#token=TOKEN`: the query lets the browser load
/// the page (the server trades it for a cookie the page's files load with,
/// and redirects to `/`), the fragment hands it to the page's scripts for
/// the API (`ui/js/transport.js` reads it, keeps it for the session and
/// clears the address bar). The line shows the token's place, never the
/// token: serve was given it (`--token`, or `SWAPSIGHT_TOKEN` from a file
/// only root reads), and the line goes where others may read it, a service
/// manager's journal.
pub fn start_line(addr: SocketAddr, token_from: Option<&str>) -> String {
    match token_from {
        Some(from) => format!(
            "swapsight: serving on http://{addr}/?token=…#token=… (… is the token of {from}; \
             Ctrl-C to stop)"
        ),
        None => format!("swapsight: serving on http://{addr}/ (Ctrl-C to stop)"),
    }
}
