//! The walker's ignore rules (`workspace::tree::walker`) for one path at a time: hidden
//! components and `.git` are ignored, and so is whatever a `.gitignore` or `.ignore`
//! of the path's directory or an ancestor (up to the root), or git's global excludes,
//! ignore — the deepest file that has an opinion decides, so `!pattern` re-includes.

use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;

/// The names of the files whose patterns apply below their directory.
pub use crate::workspace::tree::IGNORE_FILES;

/// Compiled ignore files of the workspace.
#[derive(Debug, Clone)]
pub struct Rules {
    root: PathBuf,
    /// One matcher per directory that has ignore files, deepest last.
    dirs: Vec<(PathBuf, Gitignore)>,
    global: Gitignore,
}

impl Rules {
    /// Rules for `root` from the ignore files in `dirs` (directories the walker visits,
    /// the root included).
    pub fn new(root: &Path, dirs: &[PathBuf]) -> Self {
        let mut compiled: Vec<(PathBuf, Gitignore)> = dirs
            .iter()
            .filter_map(|dir| {
                let mut builder = GitignoreBuilder::new(dir);
                let mut any = false;
                for name in IGNORE_FILES {
                    let file = dir.join(name);
                    if file.is_file() {
                        any = true;
                        if let Some(e) = builder.add(&file) {
                            tracing::debug!(file = %file.display(), error = %e, "ignore file partly unreadable");
                        }
                    }
                }
                let matcher = builder.build().ok()?;
                any.then(|| (dir.clone(), matcher))
            })
            .collect();
        compiled.sort_by_key(|(dir, _)| dir.components().count());
        let (global, _) = Gitignore::global();
        Self {
            root: root.to_path_buf(),
            dirs: compiled,
            global,
        }
    }

    /// Whether the walker would skip `path` (absolute, below the root).
    pub fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        let Ok(rel) = path.strip_prefix(&self.root) else {
            return true;
        };
        if rel
            .components()
            .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
        {
            return true;
        }
        for (dir, matcher) in self.dirs.iter().rev() {
            if !path.starts_with(dir) {
                continue;
            }
            match matcher.matched_path_or_any_parents(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        self.global
            .matched_path_or_any_parents(rel, is_dir)
            .is_ignore()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_ignore_files_hidden_paths_and_reinclusion() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("sub/deep")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        std::fs::write(root.join("sub/.gitignore"), "gen.rs\n!keep.log\n").unwrap();
        let rules = Rules::new(root, &[root.to_path_buf(), root.join("sub")]);
        let ignored = |p: &str, d: bool| rules.is_ignored(&root.join(p), d);
        assert!(ignored("target", true));
        assert!(ignored("target/debug/x.o", false));
        assert!(ignored("a.log", false));
        assert!(ignored("sub/deep/gen.rs", false));
        assert!(!ignored("sub/keep.log", false), "re-included below");
        assert!(ignored("x.log", false));
        assert!(ignored(".hidden/x.rs", false));
        assert!(ignored(".git/HEAD", false));
        assert!(!ignored("src/main.rs", false));
        assert!(rules.is_ignored(Path::new("/elsewhere/x"), false));
    }
}
