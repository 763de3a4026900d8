//! Polling: a snapshot of the files that matter (what the walker visits, at most a
//! bound, plus git's refs) and the changes between two snapshots.

use std::collections::HashMap;
use std::path::Path;
use std::time::SystemTime;

use super::pending::{Pending, Raw};

/// What a file looked like: modification time and size.
type Stamp = (Option<SystemTime>, u64);

/// The files of one scan by workspace-relative path.
#[derive(Debug, Default, Clone)]
pub struct Snapshot {
    files: HashMap<String, Stamp>,
    git: HashMap<String, Stamp>,
    /// The walk stopped at the bound.
    pub truncated: bool,
}

impl Snapshot {
    /// Files in it.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// No file in it.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

fn stamp(meta: &std::fs::Metadata) -> Stamp {
    (meta.modified().ok(), meta.len())
}

fn relative(root: &Path, path: &Path) -> Option<String> {
    Some(
        path.strip_prefix(root)
            .ok()?
            .to_string_lossy()
            .replace('\\', "/"),
    )
}

/// Scans `root` the walker's way, at most `max_files` files, and git's refs.
pub fn scan(root: &Path, max_files: usize) -> Snapshot {
    let mut snap = Snapshot::default();
    for entry in crate::workspace::tree::walker(root, None).flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if snap.files.len() >= max_files {
            snap.truncated = true;
            break;
        }
        if let (Ok(meta), Some(rel)) = (entry.metadata(), relative(root, entry.path())) {
            snap.files.insert(rel, stamp(&meta));
        }
    }
    let git = root.join(".git");
    let mut refs = vec![git.join("HEAD"), git.join("packed-refs")];
    let mut dirs = vec![git.join("refs/heads")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten().take(10_000) {
            match e.file_type() {
                Ok(t) if t.is_dir() => dirs.push(e.path()),
                Ok(_) => refs.push(e.path()),
                Err(_) => {}
            }
        }
    }
    for path in refs {
        if let (Ok(meta), Some(rel)) = (std::fs::metadata(&path), relative(root, &path)) {
            snap.git.insert(rel, stamp(&meta));
        }
    }
    snap
}

/// Records in `pending` what changed from `before` to `after`.
pub fn diff(before: &Snapshot, after: &Snapshot, pending: &mut Pending) {
    for (path, now) in &after.files {
        match before.files.get(path) {
            None => pending.add(path.clone(), Raw::Created),
            Some(was) if was != now => pending.add(path.clone(), Raw::Modified),
            Some(_) => {}
        }
    }
    for path in before.files.keys() {
        if !after.files.contains_key(path) {
            pending.add(path.clone(), Raw::Removed);
        }
    }
    if before.git != after.git {
        pending.git_refs_changed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actors::messages::watch::ChangeKind;

    #[test]
    fn two_scans_tell_created_modified_and_removed_and_ignore_what_the_walker_ignores() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        std::fs::write(root.join("b.txt"), "b").unwrap();
        let before = scan(root, 100);
        assert_eq!(before.len(), 2, "hidden files (.gitignore) are not polled");
        std::fs::write(root.join("a.txt"), "changed").unwrap();
        std::fs::remove_file(root.join("b.txt")).unwrap();
        std::fs::write(root.join("c.txt"), "c").unwrap();
        std::fs::write(root.join("x.log"), "ignored").unwrap();
        let after = scan(root, 100);
        let mut pending = Pending::new(100);
        diff(&before, &after, &mut pending);
        let (changes, overflowed, git) = pending.take();
        let got: Vec<(&str, &ChangeKind)> =
            changes.iter().map(|c| (c.path.as_str(), &c.kind)).collect();
        assert_eq!(
            got,
            vec![
                ("a.txt", &ChangeKind::Modified),
                ("b.txt", &ChangeKind::Removed),
                ("c.txt", &ChangeKind::Created)
            ]
        );
        assert_eq!((overflowed, git), (0, false));
        // The bound: at most max files, and the snapshot says it stopped.
        let small = scan(root, 1);
        assert_eq!((small.len(), small.truncated), (1, true));
    }
}
