//! The watched process tree: a root pid and every descendant seen so far.
//!
//! Descendants are tracked across ticks by parent pid, and remembered by
//! (pid, start time): a child that called `setsid` or was re-parented to init
//! after its parent died stays in the tree, and a pid reused by an unrelated
//! process does not join it.

use std::collections::{HashMap, HashSet};

use crate::probe::ProcessSample;

#[derive(Debug, Clone, Default)]
pub struct WatchTree {
    root: Option<u32>,
    /// pid → start time of members seen alive at the last update.
    members: HashMap<u32, u64>,
}

impl WatchTree {
    pub fn new(root: Option<u32>) -> Self {
        WatchTree {
            root,
            members: HashMap::new(),
        }
    }

    pub fn root(&self) -> Option<u32> {
        self.root
    }

    /// Watch another root (or none); forgets the old tree.
    pub fn set_root(&mut self, root: Option<u32>) {
        self.root = root;
        self.members.clear();
    }

    /// Adds a pid known to belong to the tree before any sample showed it
    /// (e.g. a child the guard saw in the kernel's task list).
    pub fn adopt(&mut self, pid: u32, start_time: u64) {
        self.members.insert(pid, start_time);
    }

    /// Brings the tree up to date with one tick's processes. Members that
    /// are gone are dropped; new children of members join.
    pub fn update(&mut self, processes: &[ProcessSample]) {
        let Some(root) = self.root else { return };
        let mut alive: HashMap<u32, u64> = HashMap::with_capacity(self.members.len() + 1);
        for p in processes {
            let known = self
                .members
                .get(&p.pid)
                .is_some_and(|&st| st == p.start_time || st == 0);
            if p.pid == root || known {
                alive.insert(p.pid, p.start_time);
            }
        }
        // Children may be listed before their parents: repeat until stable
        // (depth of the tree, in practice two or three passes).
        loop {
            let before = alive.len();
            for p in processes {
                if !alive.contains_key(&p.pid) && alive.contains_key(&p.ppid) && p.ppid != 0 {
                    alive.insert(p.pid, p.start_time);
                }
            }
            if alive.len() == before {
                break;
            }
        }
        self.members = alive;
    }

    /// Pids of the tree at the last update.
    pub fn pids(&self) -> HashSet<u32> {
        self.members.keys().copied().collect()
    }

    pub fn contains(&self, pid: u32) -> bool {
        self.members.contains_key(&pid)
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: u32, ppid: u32, start: u64) -> ProcessSample {
        ProcessSample {
            pid,
            ppid,
            start_time: start,
            name: format!("p{pid}"),
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
}
