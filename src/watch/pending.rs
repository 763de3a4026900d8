//! The changes of one debounce window, one per path: later events refine earlier ones
//! (created then modified is created; created then removed is nothing), bounded so a
//! storm costs at most `max` entries and a count.

use std::collections::HashMap;

use crate::actors::messages::watch::{ChangeKind, FileChange};

/// What one raw event says happened to a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Raw {
    /// It appeared.
    Created,
    /// Its content or metadata changed.
    Modified,
    /// It went away.
    Removed,
    /// It was moved here from this workspace path.
    MovedFrom(String),
}

/// The window's changes so far.
#[derive(Debug)]
pub struct Pending {
    max: usize,
    changes: HashMap<String, ChangeKind>,
    overflowed: usize,
    git_refs: bool,
}

impl Pending {
    /// A window listing at most `max` paths.
    pub fn new(max: usize) -> Self {
        Self {
            max,
            changes: HashMap::new(),
            overflowed: 0,
            git_refs: false,
        }
    }

    /// Nothing happened yet.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.overflowed == 0 && !self.git_refs
    }

    /// Git's refs moved.
    pub fn git_refs_changed(&mut self) {
        self.git_refs = true;
    }

    /// Records `raw` for `path`.
    pub fn add(&mut self, path: String, raw: Raw) {
        let before = self.changes.get(&path).cloned();
        let now = match (before, raw) {
            (None, Raw::Created) => Some(ChangeKind::Created),
            (None, Raw::Modified) => Some(ChangeKind::Modified),
            (None, Raw::Removed) => Some(ChangeKind::Removed),
            (None, Raw::MovedFrom(from)) => Some(ChangeKind::Renamed { from }),
            (Some(ChangeKind::Created), Raw::Removed) => None,
            (Some(ChangeKind::Created), _) => Some(ChangeKind::Created),
            (Some(ChangeKind::Removed), Raw::Removed) => Some(ChangeKind::Removed),
            // Gone and back (an editor's save by replace): its content changed.
            (Some(ChangeKind::Removed), _) => Some(ChangeKind::Modified),
            (Some(_), Raw::Removed) => Some(ChangeKind::Removed),
            (Some(ChangeKind::Renamed { from }), _) => Some(ChangeKind::Renamed { from }),
            (Some(ChangeKind::Modified), Raw::MovedFrom(_)) => Some(ChangeKind::Modified),
            (Some(ChangeKind::Modified), _) => Some(ChangeKind::Modified),
        };
        match now {
            None => {
                self.changes.remove(&path);
            }
            Some(kind) if self.changes.contains_key(&path) || self.changes.len() < self.max => {
                self.changes.insert(path, kind);
            }
            Some(_) => self.overflowed += 1,
        }
    }

    /// Drops what the window says about `path` (a rename replaces it).
    pub fn forget(&mut self, path: &str) {
        self.changes.remove(path);
    }

    /// The window's changes sorted by path, the count of those not listed, and whether
    /// git's refs moved; the window starts afresh.
    pub fn take(&mut self) -> (Vec<FileChange>, usize, bool) {
        let mut changes: Vec<FileChange> = self
            .changes
            .drain()
            .map(|(path, kind)| FileChange { path, kind })
            .collect();
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        let overflowed = std::mem::take(&mut self.overflowed);
        (changes, overflowed, std::mem::take(&mut self.git_refs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(p: &mut Pending) -> Vec<(String, ChangeKind)> {
        p.take().0.into_iter().map(|c| (c.path, c.kind)).collect()
    }

    #[test]
    fn later_events_refine_earlier_ones() {
        let mut p = Pending::new(100);
        p.add("a".into(), Raw::Created);
        p.add("a".into(), Raw::Modified);
        p.add("b".into(), Raw::Created);
        p.add("b".into(), Raw::Removed);
        p.add("c".into(), Raw::Modified);
        p.add("c".into(), Raw::Removed);
        p.add("d".into(), Raw::Removed);
        p.add("d".into(), Raw::Created);
        p.add("e".into(), Raw::MovedFrom("old".into()));
        p.add("e".into(), Raw::Modified);
        assert_eq!(
            kinds(&mut p),
            vec![
                ("a".into(), ChangeKind::Created),
                ("c".into(), ChangeKind::Removed),
                ("d".into(), ChangeKind::Modified),
                ("e".into(), ChangeKind::Renamed { from: "old".into() }),
            ]
        );
        assert!(p.is_empty());
    }

    #[test]
    fn the_window_lists_at_most_max_paths_and_counts_the_rest() {
        let mut p = Pending::new(3);
        for i in 0..3 {
            p.add(format!("f{i}"), Raw::Created);
        }
        // At the bound: a known path still updates, a new one is counted.
        p.add("f0".into(), Raw::Modified);
        assert_eq!(p.take(), {
            let (c, o, g) = (
                vec!["f0", "f1", "f2"]
                    .into_iter()
                    .map(|f| FileChange {
                        path: f.into(),
                        kind: ChangeKind::Created,
                    })
                    .collect::<Vec<_>>(),
                0,
                false,
            );
            (c, o, g)
        });
        for i in 0..5 {
            p.add(format!("g{i}"), Raw::Created);
        }
        p.git_refs_changed();
        let (listed, overflowed, git) = p.take();
        assert_eq!((listed.len(), overflowed, git), (3, 2, true));
    }
}
