use super::*;
use std::time::Instant;

#[test]
fn a_ring_before_the_wait_is_kept_and_many_rings_are_one_wake() {
    let (ringer, bell) = bell();
    for _ in 0..5 {
        ringer.ring();
    }
    assert!(bell.wait(Duration::from_secs(5)));
    // The five rings were one: the next wait times out.
    assert!(!bell.wait(Duration::from_millis(20)));
}

#[test]
fn a_ring_from_another_thread_wakes_the_waiter_before_the_timeout() {
    let (ringer, bell) = bell();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        ringer.ring();
    });
    let start = Instant::now();
    assert!(bell.wait(Duration::from_secs(30)));
    assert!(start.elapsed() < Duration::from_secs(20));
    t.join().unwrap();
}

#[test]
fn with_every_ringer_gone_the_wait_still_waits() {
    let (ringer, bell) = bell();
    drop(ringer);
    let start = Instant::now();
    assert!(!bell.wait(Duration::from_millis(50)));
    assert!(start.elapsed() >= Duration::from_millis(50));
}
