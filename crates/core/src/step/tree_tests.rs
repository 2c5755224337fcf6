use super::*;

fn p(pid: u32, ppid: u32, start: u64) -> ProcessSample {
    ProcessSample {
        pid,
        ppid,
        start_time: start,
        name: format!("p{pid}").into(),
        ..Default::default()
    }
}

#[test]
fn children_join_and_stay_after_reparenting() {
    let mut t = WatchTree::new(Some(10));
    // Child listed before its parent, grandchild too.
    t.update(&[p(12, 11, 5), p(11, 10, 4), p(10, 1, 3), p(99, 1, 3)]);
    assert_eq!(t.pids(), HashSet::from([10, 11, 12]));
    // 11 exits; 12 is re-parented to init (or called setsid): still watched.
    t.update(&[p(12, 1, 5), p(10, 1, 3), p(99, 1, 3)]);
    assert_eq!(t.pids(), HashSet::from([10, 12]));
    // Root exits; the orphan remains watched.
    t.update(&[p(12, 1, 5), p(99, 1, 3)]);
    assert_eq!(t.pids(), HashSet::from([12]));
}

#[test]
fn reused_pid_does_not_join() {
    let mut t = WatchTree::new(Some(10));
    t.update(&[p(10, 1, 3), p(11, 10, 4)]);
    // 11 died and its pid was reused by an unrelated process.
    t.update(&[p(10, 1, 3), p(11, 1, 77)]);
    assert_eq!(t.pids(), HashSet::from([10]));
}

#[test]
fn no_root_no_members() {
    let mut t = WatchTree::new(None);
    t.update(&[p(10, 1, 3)]);
    assert!(t.is_empty());
}
