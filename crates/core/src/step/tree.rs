//! The watched process tree: a root pid and every descendant seen so far.
//!
//! Descendants are tracked across ticks by parent pid, and remembered by
//! (pid, start time): a child that called `setsid` or was re-parented to init
//! after its parent died stays in the tree, and a pid reused by an unrelated
//! process does not join it.

use std::collections::{HashMap, HashSet};

use crate::probe::ProcessSample;

/// The tree of one root pid: its members at the last update, each with its
/// start time.
#[derive(Debug, Clone, Default)]
pub struct WatchTree {
    root: Option<u32>,
    /// pid → start time of members seen alive at the last update.
    members: HashMap<u32, u64>,
}

impl WatchTree {
    /// A tree of `root` with no member seen yet; `None`: no tree.
    pub fn new(root: Option<u32>) -> Self {
        WatchTree {
            root,
            members: HashMap::new(),
        }
    }

    pub(crate) fn root(&self) -> Option<u32> {
        self.root
    }

    /// Watch another root (or none); forgets the old tree.
    pub fn set_root(&mut self, root: Option<u32>) {
        self.root = root;
        self.members.clear();
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

    /// Whether `pid` was in the tree at the last update.
    pub fn contains(&self, pid: u32) -> bool {
        self.members.contains_key(&pid)
    }

    /// Whether the last update found no member: no root, the root gone, or
    /// not seen yet.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

#[cfg(test)]
#[path = "tree_tests.rs"]
mod tests;
