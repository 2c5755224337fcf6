//! What a UI draws of the live session, and how a tick becomes it: the
//! table's rows, the header figures ([`Snapshot`]), a chart point, the
//! menu-bar title and the notifications. (The answers to the session's
//! commands are `crate::show::answers`.)

use std::path::PathBuf;

use serde::Serialize;

use crate::probe::{HostInfo, Sample, SystemSample};
use crate::step::detect::{Flag, State, SystemView};
use crate::step::forecast::{describe, short_eta, Forecast, Limit};
use crate::step::pressure::Level;
use crate::step::tick::Tick;
use crate::util::units::format_bytes_short;

/// Free memory below this share (%) of physical memory, or of a memory
/// cgroup's limit, reads as low: the popover's free card is flagged. The web
/// view takes it from `ui/js/contract.js`, which the CLI's contract writes
/// from here.
pub const LOW_FREE_PCT: f64 = 15.0;

/// One process row of the table.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Row {
    pub(crate) pid: u32,
    pub(crate) name: String,
    /// The command line (capped), shown on hover; absent where the OS does
    /// not show it to this user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<String>,
    pub(crate) footprint_bytes: u64,
    /// Footprint change over the detector's window.
    pub footprint_delta_bytes: i64,
    pub(crate) pageins_per_s: f64,
    /// Measured swap (Linux `VmSwap`); absent where the OS does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swap_bytes: Option<u64>,
    /// GPU memory (macOS "graphics" ledger tag); absent where unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_bytes: Option<u64>,
    /// Memory owned outside the footprint (macOS `*_nofootprint` tags).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outside_footprint_bytes: Option<u64>,
    /// Swap-ins per second in pages (macOS), over the detector's window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swapins_per_s: Option<f64>,
    /// `false` when the OS denied the process's figures (shown as unknown,
    /// not as 0).
    pub readable: bool,
    pub(crate) state: State,
    pub(crate) worst: State,
    /// The evidence in words (for a tooltip); empty when it fits.
    pub evidence: String,
    pub(crate) watched: bool,
    pub(crate) pinned: bool,
}

/// The state of an ongoing recording.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RecordingStatus {
    /// The trace being written.
    pub path: PathBuf,
    pub(crate) samples: u64,
    pub(crate) elapsed_ms: u64,
    pub(crate) pid: Option<u32>,
}

/// Everything a UI shows at one tick.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[non_exhaustive]
pub struct Snapshot {
    /// The tick's time, ms since the session started.
    pub t_ms: u64,
    /// The machine's figures at this tick.
    pub system: SystemSample,
    /// The detector's view of the machine (swap growth since the
    /// baseline, the tolerance, what no footprint explains).
    pub view: SystemView,
    /// Worst current state of any process.
    pub state: State,
    /// Menu-bar title, e.g. `⇡2.1G ⚠ false fit`; empty when nothing to say.
    pub title: String,
    /// The rows of the per-process table.
    pub processes: Vec<Row>,
    /// How many processes the tick saw (the rows are a part of them).
    pub process_count: usize,
    /// The pid pinned, if any.
    pub pinned: Option<u32>,
    /// The recording under way, if any.
    pub recording: Option<RecordingStatus>,
    /// Whether rows carry measured swap (Linux) or not (macOS).
    pub measures_process_swap: bool,
    /// The phase under way in the recording (`swapsight mark`), if any.
    pub phase: Option<String>,
    /// Phases within the chart's history, in the points' clock.
    pub phases: Vec<crate::record::phases::Phase>,
    /// Time to trouble now (each limit absent when not at this rate).
    pub forecast: Forecast,
    /// The scope of the pinned (or watched) tree, or of swapsight itself,
    /// when a memory cgroup limits it: what the detector judges against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<crate::probe::Scope>,
    /// Allocator caches the recording's counters show growing while their
    /// tensors do not, as swap grew since the baseline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caches: Vec<crate::step::caches::CacheFinding>,
}

/// One point of the chart history.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[non_exhaustive]
pub struct Point {
    /// The tick's time, ms since the session started.
    pub t_ms: u64,
    /// Swap growth since the baseline.
    pub swap_growth_bytes: i64,
    /// Swap in use.
    pub swap_used_bytes: u64,
    /// Free memory, in %.
    pub free_pct: f64,
    /// (pid, footprint) of the largest and the flagged/pinned processes.
    pub footprints: Vec<(u32, u64)>,
}

/// A false fit (or overflow) that just started: one notification.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[non_exhaustive]
pub struct Notice {
    /// What it is about: `state` (a process's false fit or overflow, `pid`
    /// and `name` say which), `forecast` or `pressure` (the machine's).
    pub kind: &'static str,
    /// The process it is about (0 for the machine's).
    pub pid: u32,
    /// Its name (empty for the machine's).
    pub name: String,
    /// The state it entered.
    pub state: State,
    /// The notification's title.
    pub title: String,
    /// Its text.
    pub body: String,
}

/// What subscribers receive every tick.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Update {
    /// Everything a UI shows now.
    pub snapshot: Snapshot,
    /// The chart's new point.
    pub point: Point,
    /// What this tick has to notify: a false fit or overflow raised, a
    /// forecast under the horizon, memory pressure risen.
    pub notices: Vec<Notice>,
}

/// The table's rows at `tick`: the `limit` largest processes, and every
/// watched, pinned or flagged one beyond them.
pub(crate) fn rows_of(tick: &Tick, limit: usize, pinned: Option<u32>, host: &HostInfo) -> Vec<Row> {
    let mut procs: Vec<_> = tick.sample.processes.iter().collect();
    procs.sort_unstable_by(|a, b| {
        b.footprint_bytes
            .cmp(&a.footprint_bytes)
            .then(a.pid.cmp(&b.pid))
    });
    let activity = |pid: u32| {
        tick.activity
            .binary_search_by_key(&pid, |a| a.pid)
            .ok()
            .map(|i| &tick.activity[i])
    };
    let flagged = |pid: u32| tick.flagged.iter().find(|a| a.pid == pid);
    let mut rows = Vec::with_capacity(limit + tick.flagged.len());
    for (i, p) in procs.iter().enumerate() {
        let watched = tick.watched.binary_search(&p.pid).is_ok();
        let pinned = pinned == Some(p.pid);
        let f = flagged(p.pid);
        if i >= limit && !watched && !pinned && f.is_none() {
            continue;
        }
        let act = activity(p.pid);
        let (state, worst) = f.map_or((State::Fits, State::Fits), |a| (a.state, a.worst));
        rows.push(Row {
            pid: p.pid,
            name: p.name.to_string(),
            cmdline: p.cmdline.as_deref().map(str::to_owned),
            footprint_bytes: p.footprint_bytes,
            footprint_delta_bytes: act.map_or(0, |a| a.footprint_delta_bytes),
            pageins_per_s: act.map_or(0.0, |a| a.pageins_per_s),
            swap_bytes: p.swap_bytes,
            gpu_bytes: p.gpu_bytes,
            outside_footprint_bytes: p.outside_footprint_bytes,
            swapins_per_s: act.and_then(|a| a.swapins_per_s),
            readable: p.readable,
            state,
            worst,
            evidence: with_advice(
                f.map(|a| {
                    a.evidence.describe(if a.state == State::Fits {
                        a.worst
                    } else {
                        a.state
                    })
                })
                .unwrap_or_default(),
                &p.name,
                state,
                host,
            ),
            watched,
            pinned,
        });
    }
    rows
}

/// The evidence, and for a flagged Python process on a Mac the MPS advice
/// (`swapsight advise`), in the process's detail.
pub(crate) fn with_advice(evidence: String, name: &str, state: State, host: &HostInfo) -> String {
    match crate::judge::advise::for_flagged_process(name, state, host) {
        Some(advice) => format!("{evidence}\n\n{advice}"),
        None => evidence,
    }
}

/// The chart point of a live tick: the `n` largest rows, and the pinned,
/// watched or flagged ones beyond them.
pub(crate) fn point_of(tick: &Tick, snapshot: &Snapshot, n: usize) -> Point {
    let mut footprints: Vec<(u32, u64)> = snapshot
        .processes
        .iter()
        .take(n)
        .map(|r| (r.pid, r.footprint_bytes))
        .collect();
    for r in &snapshot.processes[n.min(snapshot.processes.len())..] {
        if r.pinned || r.watched || r.state != State::Fits {
            footprints.push((r.pid, r.footprint_bytes));
        }
    }
    Point::at(&tick.sample, tick.view.swap_growth_bytes, footprints)
}

impl Point {
    /// The point of one sample, live or replayed: swap growth is measured
    /// by the caller (the detector's baseline live, the first sample in a
    /// replay), as are the processes it follows.
    pub(crate) fn at(
        sample: &Sample,
        swap_growth_bytes: i64,
        footprints: Vec<(u32, u64)>,
    ) -> Point {
        Point {
            t_ms: sample.t_ms,
            swap_growth_bytes,
            swap_used_bytes: sample.system.swap_used_bytes,
            free_pct: sample.system.free_pct,
            footprints,
        }
    }
}

/// The menu-bar title: swap growth since the baseline and the worst state,
/// e.g. `⇡2.1G ⚠ false fit`; empty when swap did not grow and all fits (an
/// empty string, not `None`, clears the title on macOS).
pub fn title(view: &SystemView, worst: State) -> String {
    let growth = if view.swap_growth_bytes >= (64 << 20) {
        format!("⇡{}", format_bytes_short(view.swap_growth_bytes as u64))
    } else {
        String::new()
    };
    let state = match worst {
        State::Fits => "",
        State::HiddenMemory => "◌ hidden",
        State::Overflow => "⚠ overflow",
        State::FalseFit => "⚠ false fit",
    };
    match (growth.is_empty(), state.is_empty()) {
        (true, true) => String::new(),
        (false, true) => growth,
        (true, false) => state.to_string(),
        (false, false) => format!("{growth} {state}"),
    }
}

/// The title with the memory pressure and the time to trouble between the
/// swap growth and the state: `⇡2.1G ◐ ⏱40s ⚠ false fit`. The level is a
/// glyph (`◐` warning, `●` critical, nothing at normal or without pressure
/// figures); the time to the nearest limit shows only once it is `soon_s`
/// or less away.
pub fn full_title(
    view: &SystemView,
    worst: State,
    level: Option<Level>,
    nearest: Option<(Limit, f64)>,
    soon_s: f64,
) -> String {
    let base = title(view, worst);
    let glyph = match level {
        Some(Level::Warning) => "◐",
        Some(Level::Critical) => "●",
        _ => "",
    };
    let eta = nearest
        .filter(|(_, s)| *s <= soon_s)
        .map(|(_, s)| format!("⏱{}", short_eta(s).trim_start_matches('~').replace(' ', "")))
        .unwrap_or_default();
    let middle: Vec<&str> = [glyph, eta.as_str()]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect();
    if middle.is_empty() {
        return base;
    }
    let middle = middle.join(" ");
    let growth_end = base.find(' ').filter(|_| base.starts_with('⇡'));
    match (base.starts_with('⇡'), growth_end) {
        (true, Some(i)) => format!("{} {middle}{}", &base[..i], &base[i..]),
        (true, None) => format!("{base} {middle}"),
        (false, _) if base.is_empty() => middle,
        (false, _) => format!("{middle} {base}"),
    }
}

impl Snapshot {
    /// This snapshot as it reads with the pressure level `level`, taken
    /// from the kernel between two ticks (the app's macOS dispatch source):
    /// the level in the figures and the title redrawn with it.
    pub fn with_level(mut self, level: Level, soon_s: f64) -> Snapshot {
        let p = self.system.pressure.get_or_insert_with(Default::default);
        p.kernel_level = Some(level);
        p.level = Some(level);
        self.title = full_title(
            &self.view,
            self.state,
            Some(level),
            self.forecast.nearest(),
            soon_s,
        );
        self
    }
}

/// A notification when a forecast first comes under the horizon (once per
/// episode, [`Tick::forecast_fired`]): `Swap budget in ~40 s`.
pub fn forecast_notices(tick: &Tick) -> Vec<Notice> {
    let sys = &tick.sample.system;
    tick.forecast_fired
        .iter()
        .filter_map(|&limit| {
            let secs = tick.forecast.get(limit)?;
            let mut title = describe(limit, secs);
            title[..1].make_ascii_uppercase();
            Some(Notice {
                kind: "forecast",
                pid: 0,
                name: String::new(),
                state: tick.view.worst,
                title,
                body: format!(
                    "At the current rate. Swap in use {}, free memory {:.0} %.",
                    crate::util::units::format_bytes(sys.swap_used_bytes as i64),
                    sys.free_pct
                ),
            })
        })
        .collect()
}

/// A notification when memory pressure rises from `before` to a higher
/// level than normal.
pub fn pressure_notice(before: Option<Level>, now: Option<Level>) -> Option<Notice> {
    let now = now?;
    if now == Level::Normal || before.is_some_and(|b| b >= now) {
        return None;
    }
    Some(Notice {
        kind: "pressure",
        pid: 0,
        name: String::new(),
        state: State::Fits,
        title: format!("Memory pressure: {now}"),
        body: match now {
            Level::Critical => {
                "The machine is short of memory: expect stalls; the OS may soon end processes."
                    .into()
            }
            _ => "Memory is getting hard to come by: swap and stalls may follow.".into(),
        },
    })
}

/// Announces each rise of the pressure level once, when two sources tell
/// of it: on macOS the kernel's dispatch source (at once, but XNU notifies
/// one process at a time, 0.25 s apart, and a short warning can end before
/// swapsight's turn; `bsd/kern/kern_memorystatus_notify.c`) and each tick's
/// reading of `kern.memorystatus_vm_pressure_level`, which never misses a
/// level that lasts a tick. Whichever tells first notifies; the other then
/// finds the level already announced.
#[derive(Debug, Clone, Copy, Default)]
pub struct PressureAnnouncer {
    /// The level last taken, and when (ms on the caller's clock) an event
    /// told it.
    last: Option<Level>,
    event_ms: Option<u64>,
}

impl PressureAnnouncer {
    /// Nothing announced yet (a `const` for a `static`).
    pub const NEW: PressureAnnouncer = PressureAnnouncer {
        last: None,
        event_ms: None,
    };

    /// How long after an event a tick's lower level is taken for a reading
    /// made before that event, not a fall: a tick reads the level up to an
    /// interval before it is delivered (the app's slow pace is 1 s).
    pub const TICK_LAG_MS: u64 = 2_000;

    /// The dispatch source told of `level` at `now_ms`.
    pub fn on_event(&mut self, level: Level, now_ms: u64) -> Option<Notice> {
        self.event_ms = Some(now_ms);
        self.take(level)
    }

    /// A tick delivered at `now_ms` read `level`.
    pub fn on_tick(&mut self, level: Level, now_ms: u64) -> Option<Notice> {
        let just_told = self
            .event_ms
            .is_some_and(|e| now_ms.saturating_sub(e) < Self::TICK_LAG_MS);
        if just_told && self.last.is_some_and(|l| level < l) {
            return None;
        }
        self.take(level)
    }

    fn take(&mut self, level: Level) -> Option<Notice> {
        let notice = pressure_notice(self.last, Some(level));
        self.last = Some(level);
        notice
    }
}

/// A notification for a false fit or overflow that just started (the
/// detector raises a state once per episode, so this is once per episode).
pub fn notice_of(flag: &Flag) -> Option<Notice> {
    if !matches!(flag.state, State::FalseFit | State::Overflow) || flag.previous >= flag.state {
        return None;
    }
    let title = match flag.state {
        State::FalseFit => format!("False fit: {}", flag.name),
        _ => format!("Overflow: {}", flag.name),
    };
    Some(Notice {
        kind: "state",
        pid: flag.pid,
        name: flag.name.clone(),
        state: flag.state,
        title,
        body: flag.message.clone(),
    })
}
