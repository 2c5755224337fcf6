use super::*;
use crate::probe::pressure::{Pressure, PsiLine};

const GIB: u64 = 1 << 30;

/// A 16 GiB machine with `used_gib_tenths` tenths of a GiB in use (read
/// from free %), `swap` bytes of swap and PSI `some` avg10 `psi`.
fn sys(used_gib_tenths: u64, swap: u64, psi: Option<f64>) -> SystemSample {
    SystemSample {
        phys_bytes: 16 * GIB,
        free_pct: 100.0 - used_gib_tenths as f64 / 1.6,
        swap_used_bytes: swap,
        pressure: psi.map(|avg10| Pressure {
            some: Some(PsiLine {
                avg10,
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..SystemSample::default()
    }
}

/// The tiered tick's decision: a tick reads every process when one is due
/// by time or the machine's figures moved past the step since the last full
/// tick; otherwise idle processes are skipped (new ones are always read).
#[test]
fn a_tick_is_full_when_due_a_new_pid_came_or_the_machine_moved() {
    // 16 GiB: the step is 0.25 % of memory, 41 MiB. Used memory is read from
    // free %: a tenth of a GB (107 MiB) is past it.
    let steps = [
        (sys(40, 0, Some(0.0)), true, "the first tick"),
        (sys(40, 0, Some(0.0)), false, "nothing moved"),
        (sys(41, 0, Some(0.0)), true, "used memory moved"),
        (
            sys(41, 16 << 20, Some(0.0)),
            false,
            "swap moved less than the step",
        ),
        (sys(41, 64 << 20, Some(0.0)), true, "swap moved past it"),
        (sys(41, 64 << 20, Some(0.5)), false, "PSI half a point"),
        (sys(41, 64 << 20, Some(1.5)), true, "PSI a point and a half"),
    ];
    let mut full = FullTicks::default();
    let mut tick = 100;
    for (system, due, why) in steps {
        tick += 1;
        assert_eq!(full.due(tick, 0, &system, Movers::NONE), due, "{why}");
    }
    let still = sys(41, 64 << 20, Some(1.5));
    for _ in 1..FULL_EVERY {
        tick += 1;
        assert!(!full.due(tick, 0, &still, Movers::NONE));
    }
    tick += 1;
    assert!(full.due(tick, 0, &still, Movers::NONE), "due by count");
    assert_eq!(full.last().map(|a| a.tick), Some(tick));
}

/// Moves that stay under the step add up against the last full tick, not
/// the last tick: creeping growth makes a tick full once it passed the step.
#[test]
fn small_moves_add_up_from_the_last_full_tick() {
    let mut full = FullTicks::default();
    assert!(full.due(0, 0, &sys(40, 0, None), Movers::NONE));
    // 16 MiB a tick: under the 41 MiB step, past it on the third.
    assert!(!full.due(1, 0, &sys(40, 16 << 20, None), Movers::NONE));
    assert!(!full.due(2, 0, &sys(40, 32 << 20, None), Movers::NONE));
    assert!(
        full.due(3, 0, &sys(40, 48 << 20, None), Movers::NONE),
        "48 MiB since"
    );
    assert!(
        !full.due(4, 0, &sys(40, 48 << 20, None), Movers::NONE),
        "measured from there"
    );
}

/// The step is the larger of 16 MiB and 0.25 % of memory.
#[test]
fn the_step_is_16_mib_or_a_quarter_percent_of_memory() {
    assert_eq!(full_step_bytes(0), FULL_STEP_BYTES);
    assert_eq!(full_step_bytes(4 * GIB), 16 << 20, "0.25 % is 10 MiB");
    assert_eq!(full_step_bytes(16 * GIB), 42_949_672);
    assert_eq!(full_step_bytes(48 * GIB), 128_849_018);
}

/// PSI appearing or vanishing is a move too (Linux).
#[test]
fn psi_appearing_or_vanishing_makes_a_tick_full() {
    let mut full = FullTicks::default();
    assert!(full.due(0, 0, &sys(40, 0, None), Movers::NONE));
    assert!(
        full.due(1, 0, &sys(40, 0, Some(0.0)), Movers::NONE),
        "PSI appeared"
    );
    assert!(!full.due(2, 0, &sys(40, 0, Some(0.9)), Movers::NONE));
    assert!(
        full.due(3, 0, &sys(40, 0, None), Movers::NONE),
        "PSI vanished"
    );
}

/// macOS has no PSI: the kernel's level changing is the pressure trigger.
#[test]
fn the_macos_kernel_level_changing_makes_a_tick_full() {
    let mac = |level: Option<Level>| SystemSample {
        pressure: level.map(|l| Pressure {
            kernel_level: Some(l),
            ..Pressure::default()
        }),
        ..sys(40, 0, None)
    };
    let mut full = FullTicks::default();
    assert!(full.due(0, 0, &mac(Some(Level::Normal)), Movers::NONE));
    assert!(
        !full.due(1, 0, &mac(Some(Level::Normal)), Movers::NONE),
        "same level"
    );
    assert!(
        full.due(2, 0, &mac(Some(Level::Warning)), Movers::NONE),
        "warning"
    );
    assert!(!full.due(3, 0, &mac(Some(Level::Warning)), Movers::NONE));
    assert!(
        full.due(4, 0, &mac(Some(Level::Normal)), Movers::NONE),
        "back to normal"
    );
    assert!(
        full.due(5, 0, &mac(None), Movers::NONE),
        "the kernel stopped answering"
    );
    assert!(!full.due(6, 0, &mac(None), Movers::NONE));
}

#[test]
fn a_process_is_idle_after_its_unmoved_reads_and_busy_at_one_move() {
    let mut u = Unmoved::default();
    for _ in 0..IDLE_AFTER {
        assert!(!u.idle());
        u = u.after_read(false);
    }
    assert!(u.idle(), "{IDLE_AFTER} unmoved reads");
    assert!(u.after_read(false).idle(), "stays idle");
    assert!(!u.after_read(true).idle(), "one move: busy again");
    assert!(Unmoved::IDLE.idle());
    assert!(Unmoved::first_read(true).idle(), "found at the first tick");
    assert!(!Unmoved::first_read(false).idle(), "started during the run");
    assert!(Unmoved::first_read(true).after_read(false).idle());
    assert!(!Unmoved::first_read(true).after_read(true).idle());
    assert!(Unmoved(u32::MAX).after_read(false).idle(), "saturates");
}

/// At a long interval the count rule alone let an idle process lag 8
/// ticks (8 h at `--interval 1h`): a full tick is due by the clock too.
#[test]
fn a_full_tick_is_due_by_the_clock_at_most_every_few_seconds() {
    let still = sys(40, 0, None);
    let mut full = FullTicks::default();
    assert!(full.due(1, 0, &still, Movers::NONE), "the first tick");
    // Ticks 1 s apart: the clock's bound comes before the count's.
    let mut ms = 0;
    let mut tick = 1;
    let mut fulls = Vec::new();
    for _ in 0..12 {
        tick += 1;
        ms += 1000;
        if full.due(tick, ms, &still, Movers::NONE) {
            fulls.push(ms);
        }
    }
    assert_eq!(fulls, [4000, 8000, 12_000], "every {FULL_AT_MOST_MS} ms");
    // An hour apart: every tick is full.
    for _ in 0..3 {
        tick += 1;
        ms += 3_600_000;
        assert!(full.due(tick, ms, &still, Movers::NONE));
    }
    // Fast ticks: the count comes first.
    let mut full = FullTicks::default();
    assert!(full.due(0, 0, &still, Movers::NONE));
    for t in 1..FULL_EVERY {
        assert!(!full.due(t, t * 100, &still, Movers::NONE), "tick {t}");
    }
    assert!(full.due(FULL_EVERY, FULL_EVERY * 100, &still, Movers::NONE));
}

/// Growth that leaves used memory and swap flat — a process mapping a
/// tmpfs file already in RAM (Linux `Mapped` moves, `MemAvailable` not) —
/// makes the next tick full through the probe's movers; a mover under the
/// step, or one that is not known at both ticks, does not.
#[test]
fn a_mover_past_the_step_makes_the_tick_full_with_used_memory_flat() {
    let flat = sys(40, 0, None);
    let m = |mapped: Option<u64>| Movers([Some(GIB), mapped, Some(2 * GIB), Some(0)]);
    let mut full = FullTicks::default();
    assert!(full.due(0, 0, &flat, m(Some(GIB))));
    assert!(
        !full.due(1, 1, &flat, m(Some(GIB + (16 << 20)))),
        "16 MiB: under the 41 MiB step"
    );
    assert!(
        full.due(2, 2, &flat, m(Some(GIB + (256 << 20)))),
        "256 MiB mapped"
    );
    assert!(!full.due(3, 3, &flat, m(Some(GIB + (256 << 20)))));
    assert!(!full.due(4, 4, &flat, m(None)), "no longer known");
    assert!(!full.due(5, 5, &flat, Movers::NONE));
    assert!(
        full.due(6, 6, &flat, m(Some(0))),
        "known again, 1.25 GiB away"
    );
    let mut full = FullTicks::default();
    assert!(full.due(0, 0, &flat, Movers::NONE));
    assert!(
        !full.due(1, 1, &flat, m(Some(GIB))),
        "unknown at the last full tick"
    );
}

/// On macOS app memory trading with cached (purgeable) memory leaves
/// Memory Used flat: the movers see each.
#[test]
fn macos_movers_are_app_cached_wired_and_compressed_memory() {
    let s = SystemSample {
        app_bytes: Some(1),
        cached_bytes: Some(2),
        wired_bytes: Some(3),
        compressed_bytes: 4,
        ..SystemSample::default()
    };
    assert_eq!(
        Movers::of_macos(&s),
        Movers([Some(1), Some(2), Some(3), Some(4)])
    );
}
