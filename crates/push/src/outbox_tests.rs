use super::*;

/// An exposition of `n` samples.
fn text(n: usize) -> String {
    let mut t = String::from("# TYPE swapsight_x gauge\n");
    for i in 0..n {
        t.push_str(&format!("swapsight_x{{i=\"{i}\"}} 1\n"));
    }
    t
}

#[test]
fn samples_are_the_lines_that_are_not_comments() {
    assert_eq!(samples_in(&text(3)), 3);
    assert_eq!(samples_in("# HELP a b\n\n"), 0);
}

#[test]
fn statuses_sort_into_sent_rejected_unauthorized_and_retry() {
    assert_eq!(verdict(200), Verdict::Sent);
    assert_eq!(verdict(204), Verdict::Sent);
    assert_eq!(verdict(400), Verdict::Rejected);
    assert_eq!(verdict(413), Verdict::Rejected);
    assert_eq!(verdict(401), Verdict::Unauthorized);
    assert_eq!(verdict(403), Verdict::Unauthorized);
    assert_eq!(verdict(408), Verdict::Retry);
    assert_eq!(verdict(429), Verdict::Retry);
    assert_eq!(verdict(500), Verdict::Retry);
    assert_eq!(verdict(503), Verdict::Retry);
    assert_eq!(verdict(302), Verdict::Retry);
}

#[test]
fn backoff_doubles_up_to_its_cap_and_jitter_takes_off_up_to_half() {
    assert_eq!(backoff(1, 0.0), BACKOFF_FIRST);
    assert_eq!(backoff(2, 0.0), BACKOFF_FIRST * 2);
    assert_eq!(backoff(4, 0.0), BACKOFF_FIRST * 8);
    assert_eq!(backoff(7, 0.0), BACKOFF_MAX);
    assert_eq!(backoff(u32::MAX, 0.0), BACKOFF_MAX);
    assert_eq!(backoff(1, 1.0), BACKOFF_FIRST / 2);
    assert_eq!(backoff(20, 1.0), BACKOFF_MAX / 2);
    let mid = backoff(3, 0.5);
    assert!(
        mid > BACKOFF_FIRST * 2 && mid < BACKOFF_FIRST * 4,
        "{mid:?}"
    );
    // A unit out of range is taken at its bound, never a longer wait.
    assert_eq!(backoff(1, -3.0), BACKOFF_FIRST);
    assert_eq!(backoff(1, 9.0), BACKOFF_FIRST / 2);
}

#[test]
fn a_full_queue_drops_its_oldest_moments_and_counts_their_samples() {
    let mut q = Outbox::new(25);
    assert_eq!(q.add(1, text(10)), 0);
    assert_eq!(q.add(2, text(10)), 0);
    assert_eq!(q.held(), 20);
    // 30 > 25: the oldest moment goes.
    assert_eq!(q.add(3, text(10)), 10);
    assert_eq!(q.held(), 20);
    assert_eq!(q.counts().dropped_overflow, 10);
    let batch = q.next_batch();
    assert_eq!(
        batch.iter().map(|m| m.at_ms).collect::<Vec<_>>(),
        [2, 3],
        "oldest first, the dropped one gone"
    );
    // One moment larger than the bound is kept alone (the rest dropped).
    assert_eq!(q.add(4, text(40)), 20);
    assert_eq!(q.held(), 40);
    assert_eq!(q.counts().dropped_overflow, 30);
}

#[test]
fn a_batch_holds_the_oldest_moments_up_to_the_request_size() {
    let mut q = Outbox::new(1_000_000);
    let per = MAX_SAMPLES_PER_REQUEST / 2 - 1;
    for t in 0..5 {
        q.add(t, text(per));
    }
    assert_eq!(q.next_batch().len(), 2);
    let mut big = Outbox::new(1_000_000);
    big.add(0, text(MAX_SAMPLES_PER_REQUEST + 5));
    big.add(1, text(1));
    assert_eq!(big.next_batch().len(), 1, "a big moment goes alone");
}

#[test]
fn an_outage_keeps_the_moments_in_order_with_growing_waits_until_it_ends() {
    let t0 = Instant::now();
    let mut q = Outbox::new(1000);
    q.add(100, text(2));
    assert!(q.due(t0));
    let last = q.next_batch().last().unwrap().seq;
    // The receiver is down: three failures, each waiting longer.
    let s = q.settle(last, Verdict::Retry, t0, 0.0);
    assert_eq!((s.moments, s.failures), (0, 1));
    assert_eq!(q.retry_at(), Some(t0 + BACKOFF_FIRST));
    assert!(!q.due(t0 + BACKOFF_FIRST / 2));
    let t1 = t0 + BACKOFF_FIRST;
    assert!(q.due(t1));
    q.add(200, text(2));
    let last = q.next_batch().last().unwrap().seq;
    q.settle(last, Verdict::Retry, t1, 0.0);
    assert_eq!(q.retry_at(), Some(t1 + BACKOFF_FIRST * 2));
    let t2 = t1 + BACKOFF_FIRST * 2;
    q.add(300, text(2));
    let batch = q.next_batch();
    assert_eq!(
        batch.iter().map(|m| m.at_ms).collect::<Vec<_>>(),
        [100, 200, 300]
    );
    // Back: all three go in one request, in order, and the wait is reset.
    let s = q.settle(batch.last().unwrap().seq, Verdict::Sent, t2, 0.0);
    assert_eq!((s.moments, s.samples, s.failures), (3, 6, 0));
    assert_eq!(q.held(), 0);
    assert_eq!(q.retry_at(), None);
    assert!(!q.due(t2), "nothing queued");
    let c = q.counts();
    assert_eq!((c.sent, c.retried, c.dropped_overflow), (6, 2, 0));
}

#[test]
fn a_rejected_batch_is_dropped_and_counted_and_the_queue_moves_on() {
    let now = Instant::now();
    let mut q = Outbox::new(1000);
    q.add(1, text(3));
    let first = q.next_batch().last().unwrap().seq;
    q.add(2, text(4));
    let s = q.settle(first, Verdict::Rejected, now, 0.3);
    assert_eq!((s.moments, s.samples), (1, 3));
    assert!(q.due(now), "no backoff after a rejection");
    assert_eq!(q.counts().dropped_rejected, 3);
    assert_eq!(q.next_batch()[0].at_ms, 2);
}

#[test]
fn unauthorized_keeps_the_batch_and_backs_off() {
    let now = Instant::now();
    let mut q = Outbox::new(1000);
    q.add(1, text(3));
    let seq = q.next_batch()[0].seq;
    let s = q.settle(seq, Verdict::Unauthorized, now, 1.0);
    assert_eq!((s.moments, s.failures), (0, 1));
    assert_eq!(q.held(), 3);
    assert_eq!(q.retry_at(), Some(now + BACKOFF_FIRST / 2));
}

#[test]
fn moments_the_bound_dropped_during_a_send_are_not_settled_twice() {
    let now = Instant::now();
    let mut q = Outbox::new(10);
    q.add(1, text(5));
    q.add(2, text(5));
    let batch = q.next_batch();
    let last = batch.last().unwrap().seq;
    // While the request is out, a new moment pushes the oldest out.
    assert_eq!(q.add(3, text(5)), 5);
    let s = q.settle(last, Verdict::Sent, now, 0.0);
    assert_eq!((s.moments, s.samples), (1, 5));
    assert_eq!(q.held(), 5);
    assert_eq!(q.next_batch()[0].at_ms, 3);
}
