//! What changed between two linter runs: the files whose diagnostics differ, with
//! their diagnostics now (an empty list when they cleared).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::Diagnostic;

/// Diagnostics by absolute path.
pub type ByFile = BTreeMap<PathBuf, Vec<Diagnostic>>;

/// Files whose diagnostics changed, with their diagnostics now.
pub type Changed = Vec<(PathBuf, Vec<Diagnostic>)>;

/// Files remembered between runs, at most (beyond, the rest are not compared).
pub const MAX_TRACKED_FILES: usize = 2_000;

/// Files whose diagnostics differ from `before` to `after`. A file missing from `after`
/// cleared, unless the run was not `complete` (a linter failed: its files are unknown,
/// not clean).
pub fn changed(before: &ByFile, after: &ByFile, complete: bool) -> Changed {
    let mut out: Changed = after
        .iter()
        .filter(|(path, now)| before.get(*path) != Some(now))
        .map(|(path, now)| (path.clone(), now.clone()))
        .collect();
    if complete {
        out.extend(
            before
                .keys()
                .filter(|path| !after.contains_key(*path))
                .map(|path| (path.clone(), Vec::new())),
        );
    }
    out
}

/// `files` bounded to [`MAX_TRACKED_FILES`] (the first by path).
pub fn bounded(files: &ByFile) -> ByFile {
    files
        .iter()
        .take(MAX_TRACKED_FILES)
        .map(|(p, d)| (p.clone(), d.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::{Range, Severity};

    fn d(message: &str) -> Diagnostic {
        Diagnostic {
            message: message.into(),
            severity: Severity::Error,
            range: Range::from_one_based(1, 1, 1, 2),
            source: None,
            code: None,
        }
    }

    fn files(list: &[(&str, &[&str])]) -> ByFile {
        list.iter()
            .map(|(p, ms)| (PathBuf::from(p), ms.iter().map(|m| d(m)).collect()))
            .collect()
    }

    #[test]
    fn new_changed_and_cleared_files_are_reported_once() {
        let before = files(&[
            ("/w/a.rs", &["x"]),
            ("/w/b.rs", &["y"]),
            ("/w/c.rs", &["z"]),
        ]);
        let after = files(&[
            ("/w/a.rs", &["x"]),
            ("/w/b.rs", &["y2"]),
            ("/w/d.rs", &["n"]),
        ]);
        let got = changed(&before, &after, true);
        let names: Vec<(&str, usize)> = got
            .iter()
            .map(|(p, d)| (p.to_str().unwrap(), d.len()))
            .collect();
        assert_eq!(names, vec![("/w/b.rs", 1), ("/w/d.rs", 1), ("/w/c.rs", 0)]);
        // The first run: everything with diagnostics is news; nothing can clear.
        assert_eq!(changed(&ByFile::new(), &after, true).len(), 3);
        // A linter failed: missing files are unknown, not cleared.
        assert_eq!(changed(&before, &after, false).len(), 2);
    }
}
