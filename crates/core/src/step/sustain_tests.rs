use super::*;

const MIB: i64 = 1 << 20;
const RATE: f64 = MIB as f64;

/// The last 3 s of `y(i)` on 250 ms ticks (13 points, 12 intervals).
fn last_3s(y: impl Fn(i64) -> i64) -> Vec<(i64, i64)> {
    (0..=12).map(|i| (10_000 + i * 250, y(i))).collect()
}

#[test]
fn a_smooth_climb_is_sustained() {
    assert!(sustained(last_3s(|i| i * 2 * MIB), RATE, 2));
    // Two thirds of the intervals at the rate, the rest flat.
    assert!(sustained(last_3s(|i| (i - i / 3) * 2 * MIB), RATE, 2));
}

#[test]
fn steps_at_the_rate_are_sustained() {
    // 40 MiB every 5 ticks: 2 or 3 steps in 3 s, 4 intervals in 5 flat.
    for phase in 0..5 {
        let pts = last_3s(|i| (i + phase) / 5 * 40 * MIB);
        assert!(sustained(pts, RATE, 2), "phase {phase}");
    }
    // Uneven steps, the larger holding up to two thirds of the growth.
    let pts = last_3s(|i| {
        if i < 2 {
            0
        } else if i < 9 {
            60 * MIB
        } else {
            90 * MIB
        }
    });
    assert!(sustained(pts, RATE, 2));
}

#[test]
fn one_burst_is_not_sustained_however_many_ticks_it_spans() {
    for ticks in 1..=4 {
        let pts = last_3s(|i| (i - 4).clamp(0, ticks) * 100 * MIB);
        assert!(!sustained(pts, RATE, 2), "over {ticks} ticks");
    }
    // A burst with a small step beside it: the burst is over two thirds.
    let pts = last_3s(|i| {
        if i < 3 {
            0
        } else if i < 8 {
            100 * MIB
        } else {
            110 * MIB
        }
    });
    assert!(!sustained(pts, RATE, 2));
}

#[test]
fn steps_too_small_for_the_rate_or_falling_are_not_sustained() {
    // Two steps of 1 MiB in 3 s: under 1 MiB/s over the span.
    assert!(!sustained(last_3s(|i| i / 6 * MIB), RATE, 2));
    // Noise that ends lower than it began.
    let noise = [0, 5, 0, 6, 1, 7, 2, 6, 0, 5, 1, 4, -2];
    assert!(!sustained(last_3s(|i| noise[i as usize] * MIB), RATE, 2));
    assert!(!sustained(last_3s(|i| -i * 10 * MIB), RATE, 2));
}

#[test]
fn too_few_intervals_or_a_stopped_clock_say_nothing() {
    assert!(!sustained([], RATE, 1));
    assert!(!sustained([(0, 0)], RATE, 1));
    assert!(sustained([(0, 0), (500, MIB)], RATE, 1));
    assert!(!sustained([(0, 0), (500, MIB)], RATE, 2));
    // A point at the same time adds no interval (and no division by zero).
    assert!(!sustained([(0, 0), (0, 9 * MIB)], RATE, 1));
    assert!(!sustained([(0, 0), (500, MIB), (500, 90 * MIB)], RATE, 2));
}

#[test]
fn extreme_values_neither_overflow_nor_panic() {
    let pts = [(0, i64::MIN), (250, 0), (500, i64::MAX), (750, i64::MAX)];
    assert!(sustained(pts, RATE, 2));
    let pts = [(0, i64::MAX), (250, i64::MIN), (500, 0)];
    assert!(!sustained(pts, RATE, 2));
}
