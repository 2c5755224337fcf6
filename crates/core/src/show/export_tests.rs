use super::*;
use crate::synth;

#[test]
fn offload_has_a_false_fit_interval_and_eager_an_overflow() {
    let ff = state_intervals(&synth::seed_offload());
    assert!(
        ff.iter()
            .any(|i| i.state == State::FalseFit && i.to_ms > i.from_ms),
        "{ff:?}"
    );
    let of = state_intervals(&synth::seed_eager());
    assert!(of.iter().any(|i| i.state == State::Overflow), "{of:?}");
    assert!(state_intervals(&synth::seed_staged()).is_empty());
}

#[test]
fn intervals_of_one_state_are_merged_and_sorted() {
    let v = state_intervals(&synth::seed_offload());
    for w in v.windows(2) {
        if w[0].state == w[1].state {
            assert!(w[0].to_ms < w[1].from_ms, "{v:?}");
        }
    }
}

#[test]
fn timeline_state_at_follows_flags() {
    let t = synth::seed_offload();
    let tl = StateTimeline::new(&t);
    let first = t.flags.iter().find(|f| f.pid == 4243).expect("a flag");
    assert_eq!(tl.state_at(4243, 0), State::Fits);
    assert_eq!(tl.state_at(4243, first.t_ms), first.state);
    assert_eq!(tl.state_at(999_999, first.t_ms), State::Fits);
}

#[test]
fn watched_process_comes_first() {
    let t = synth::seed_offload();
    let top = top_processes(&t, 2);
    assert_eq!(top.len(), 2);
    assert_eq!(top[0].pid, 4243);
    assert!(top[0].watched);
    assert_eq!(top[1].name, "Xcode");
}
