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
    // 16 GB: the step is 0.25 % of memory, 41 MB. Used memory is read from
    // free %: a tenth of a GB (107 MB) is past it.
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
        assert_eq!(full.due(tick, &system), due, "{why}");
    }
    let still = sys(41, 64 << 20, Some(1.5));
    for _ in 1..FULL_EVERY {
        tick += 1;
        assert!(!full.due(tick, &still));
    }
    tick += 1;
    assert!(full.due(tick, &still), "due by time");
    assert_eq!(full.last().map(|a| a.tick), Some(tick));
}

/// Moves that stay under the step add up against the last full tick, not
/// the last tick: creeping growth makes a tick full once it passed the step.
#[test]
fn small_moves_add_up_from_the_last_full_tick() {
    let mut full = FullTicks::default();
    assert!(full.due(0, &sys(40, 0, None)));
    // 16 MiB a tick: under the 41 MB step, past it on the third.
    assert!(!full.due(1, &sys(40, 16 << 20, None)));
    assert!(!full.due(2, &sys(40, 32 << 20, None)));
    assert!(full.due(3, &sys(40, 48 << 20, None)), "48 MiB since");
    assert!(
        !full.due(4, &sys(40, 48 << 20, None)),
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
    assert!(full.due(0, &sys(40, 0, None)));
    assert!(full.due(1, &sys(40, 0, Some(0.0))), "PSI appeared");
    assert!(!full.due(2, &sys(40, 0, Some(0.9))));
    assert!(full.due(3, &sys(40, 0, None)), "PSI vanished");
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
    assert!(full.due(0, &mac(Some(Level::Normal))));
    assert!(!full.due(1, &mac(Some(Level::Normal))), "same level");
    assert!(full.due(2, &mac(Some(Level::Warning))), "warning");
    assert!(!full.due(3, &mac(Some(Level::Warning))));
    assert!(full.due(4, &mac(Some(Level::Normal))), "back to normal");
    assert!(full.due(5, &mac(None)), "the kernel stopped answering");
    assert!(!full.due(6, &mac(None)));
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
