//! Walking the workspace the way git sees it: `.gitignore`, `.ignore` and global git
//! excludes are honoured (the `ignore` crate), hidden files are skipped unless asked for
//! (as ripgrep does), `.git` never appears. Results are bounded.

use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use serde::Serialize;

/// One entry of a file tree.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TreeEntry {
    /// Path relative to the workspace root, `/`-separated.
    pub path: String,
    /// `file`, `dir` or `symlink`.
    pub kind: &'static str,
}

/// A bounded listing.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// The entries, sorted by path.
    pub entries: Vec<TreeEntry>,
    /// True when `maxEntries` cut the listing.
    pub truncated: bool,
}

/// A gitignore-aware walker below `start`, sorted by path, never following links,
/// skipping hidden files. Ignore files of parent directories apply too, as they do for
/// git.
pub fn walker(start: &Path, max_depth: Option<usize>) -> ignore::Walk {
    walker_showing(start, max_depth, false)
}

/// [`walker`], with hidden files and directories (names starting with a dot) too when
/// `hidden` (`.git` never).
pub fn walker_showing(start: &Path, max_depth: Option<usize>, hidden: bool) -> ignore::Walk {
    WalkBuilder::new(start)
        .max_depth(max_depth)
        .hidden(!hidden)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git")
        .sort_by_file_path(|a, b| a.cmp(b))
        .build()
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

fn kind(ft: Option<std::fs::FileType>) -> &'static str {
    match ft {
        Some(t) if t.is_dir() => "dir",
        Some(t) if t.is_symlink() => "symlink",
        _ => "file",
    }
}

/// The tree below `start`, at most `max_entries` entries; hidden ones too when `hidden`.
pub fn file_tree(
    root: &Path,
    start: &Path,
    max_depth: usize,
    max_entries: usize,
    hidden: bool,
) -> Listing {
    let mut entries = Vec::new();
    let mut truncated = false;
    for entry in walker_showing(start, Some(max_depth), hidden).flatten() {
        if entry.depth() == 0 {
            continue;
        }
        if entries.len() >= max_entries {
            truncated = true;
            break;
        }
        entries.push(TreeEntry {
            path: relative(root, entry.path()),
            kind: kind(entry.file_type()),
        });
    }
    Listing { entries, truncated }
}

/// A glob pattern that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("Invalid glob {pattern:?}: {source}")]
pub struct GlobError {
    /// The pattern as given.
    pattern: String,
    /// What globset found wrong with it.
    source: globset::Error,
}

/// Compiles a glob; `**` crosses directories, `*` does not.
pub fn glob(pattern: &str) -> Result<GlobMatcher, GlobError> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|source| GlobError {
            pattern: pattern.to_string(),
            source,
        })
}

/// Files below `start` whose workspace-relative path matches `pattern` (a pattern
/// without `/` matches file names anywhere); hidden ones too when `hidden`.
pub fn find_files(
    root: &Path,
    start: &Path,
    pattern: &str,
    max_results: usize,
    hidden: bool,
) -> Result<Listing, GlobError> {
    let full = if pattern.contains('/') {
        pattern.to_string()
    } else {
        format!("**/{pattern}")
    };
    let matcher = glob(&full)?;
    let mut entries = Vec::new();
    let mut truncated = false;
    for entry in walker_showing(start, None, hidden).flatten() {
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        let rel = relative(root, entry.path());
        if !matcher.is_match(&rel) {
            continue;
        }
        if entries.len() >= max_results {
            truncated = true;
            break;
        }
        entries.push(TreeEntry {
            path: rel,
            kind: kind(entry.file_type()),
        });
    }
    Ok(Listing { entries, truncated })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn fixture() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::create_dir_all(r.join("src/deep")).unwrap();
        fs::create_dir_all(r.join("target/debug")).unwrap();
        fs::create_dir_all(r.join(".git")).unwrap();
        fs::write(r.join(".gitignore"), "target/\n*.log\n").unwrap();
        fs::write(r.join("src/a.rs"), "").unwrap();
        fs::write(r.join("src/deep/b.rs"), "").unwrap();
        fs::write(r.join("target/debug/x.rs"), "").unwrap();
        fs::write(r.join("run.log"), "").unwrap();
        fs::write(r.join(".git/config"), "").unwrap();
        t
    }

    #[test]
    fn trees_honour_gitignore_and_depth() {
        let t = fixture();
        let root = t.path();
        let all = file_tree(root, root, 10, 100, false);
        let paths: Vec<&str> = all.entries.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, vec!["src", "src/a.rs", "src/deep", "src/deep/b.rs"]);
        let shallow = file_tree(root, root, 1, 100, false);
        assert_eq!(shallow.entries.len(), 1);
        let capped = file_tree(root, root, 10, 2, false);
        assert!(capped.truncated && capped.entries.len() == 2);
    }

    #[test]
    fn find_matches_names_anywhere_or_paths() {
        let t = fixture();
        let root = t.path();
        let rs = find_files(root, root, "*.rs", 100, false).unwrap();
        assert_eq!(
            rs.entries
                .iter()
                .map(|e| e.path.as_str())
                .collect::<Vec<_>>(),
            vec!["src/a.rs", "src/deep/b.rs"]
        );
        let top = find_files(root, root, "src/*.rs", 100, false).unwrap();
        assert_eq!(top.entries.len(), 1);
        assert!(find_files(root, root, "a[", 10, false).is_err());
    }
}
