//! Walking the workspace the way git sees it: `.gitignore`, `.ignore` and global git
//! excludes are honoured (the `ignore` crate), hidden files are skipped unless asked for
//! (as ripgrep does), `.git` never appears. Results are bounded.

use std::path::{Path, PathBuf};

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
    // The `ignore` crate opens ignore files plainly: one that is a FIFO would hold the
    // walk's thread for good (and the watcher's first walk with it), a device could be
    // read without end. Where the start directory or one above it has such a file, that
    // kind of ignore file is not read at all; a directory below with one is not walked.
    let above = start.ancestors();
    let bad_above = |name: &str| {
        above
            .clone()
            .find_map(|dir| not_regular(dir.join(name)))
            .inspect(|file| {
                tracing::warn!(file = %file.display(), "ignore file is not a regular file: ignore files of its name are not read in this walk");
            })
            .is_some()
    };
    WalkBuilder::new(start)
        .max_depth(max_depth)
        .hidden(!hidden)
        .parents(true)
        .require_git(false)
        .git_ignore(!bad_above(".gitignore"))
        .ignore(!bad_above(".ignore"))
        .git_exclude(!bad_above(".git/info/exclude"))
        .follow_links(false)
        .filter_entry(|e| {
            if e.file_name() == ".git" {
                return false;
            }
            if !e.file_type().is_some_and(|t| t.is_dir()) {
                return true;
            }
            // A nested repository's excludes are read too.
            let bad = IGNORE_FILES
                .iter()
                .chain(&[".git/info/exclude"])
                .find_map(|name| not_regular(e.path().join(name)));
            match bad {
                Some(file) => {
                    tracing::warn!(file = %file.display(), "ignore file is not a regular file: its directory is not walked");
                    false
                }
                None => true,
            }
        })
        .sort_by_file_path(|a, b| a.cmp(b))
        .build()
}

/// The names of the ignore files read in every directory walked.
pub const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];

/// `path` when it exists and is neither a regular file (through links) nor a directory:
/// a FIFO, a device or a socket, which reading would block on or never finish.
fn not_regular(path: PathBuf) -> Option<PathBuf> {
    std::fs::metadata(&path)
        .is_ok_and(|m| !m.is_file() && !m.is_dir())
        .then_some(path)
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

/// Longest glob compiled. globset parses nested `{…}` alternations recursively: about
/// 8 000 levels (a 17 KB pattern) overflowed the thread's stack and aborted the process.
pub const MAX_GLOB_BYTES: usize = 1024;

/// A glob pattern refused.
#[derive(Debug, thiserror::Error)]
pub enum GlobError {
    /// It does not parse.
    #[error("Invalid glob {pattern:?}: {source}")]
    Invalid {
        /// The pattern as given.
        pattern: String,
        /// What globset found wrong with it.
        source: globset::Error,
    },
    /// Longer than [`MAX_GLOB_BYTES`] (not parsed).
    #[error("Glob of {0} bytes; the limit is {MAX_GLOB_BYTES} bytes")]
    TooLong(usize),
}

/// Compiles a glob; `**` crosses directories, `*` does not.
pub fn glob(pattern: &str) -> Result<GlobMatcher, GlobError> {
    glob_in(pattern, false)
}

/// [`glob`], matching at any depth (`**/` before it) when `anywhere`; the limit is on
/// the pattern as given.
pub fn glob_in(pattern: &str, anywhere: bool) -> Result<GlobMatcher, GlobError> {
    if pattern.len() > MAX_GLOB_BYTES {
        return Err(GlobError::TooLong(pattern.len()));
    }
    let pattern = if anywhere {
        std::borrow::Cow::Owned(format!("**/{pattern}"))
    } else {
        std::borrow::Cow::Borrowed(pattern)
    };
    GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|source| GlobError::Invalid {
            pattern: pattern.to_string(),
            source,
        })
}

/// Why [`find_files`] refused a pattern.
#[derive(Debug, thiserror::Error)]
pub enum FindError {
    /// The pattern does not parse.
    #[error(transparent)]
    Glob(#[from] GlobError),
    /// An absolute pattern that names no place inside the workspace.
    #[error(
        "The pattern {0:?} is an absolute path outside the workspace; give a glob relative \
         to the workspace root (such as \"src/**/*.rs\") or a file name (\"*.rs\")"
    )]
    Outside(String),
}

/// The pattern as [`find_files`] matches it: without a leading `./`, and an absolute
/// pattern inside the workspace made relative to its root; true when it was either
/// (it is anchored, like a pattern with `/`, even when none is left).
fn workspace_pattern<'p>(root: &Path, pattern: &'p str) -> Result<(&'p str, bool), FindError> {
    let mut rest = pattern;
    if Path::new(rest).is_absolute() {
        let inside = root
            .to_str()
            .and_then(|r| rest.strip_prefix(r.trim_end_matches('/')))
            .filter(|tail| tail.is_empty() || tail.starts_with('/'))
            .ok_or_else(|| FindError::Outside(pattern.to_string()))?;
        rest = inside.trim_start_matches('/');
    }
    while let Some(tail) = rest.strip_prefix("./") {
        rest = tail.trim_start_matches('/');
    }
    Ok((rest, rest.len() != pattern.len()))
}

/// Files below `start` matching `pattern`: a pattern without `/` matches file names
/// anywhere; one with `/` matches the path relative to the workspace root or to `start`
/// (`./` in front and an absolute path inside the workspace are taken as that). Hidden
/// ones too when `hidden`.
pub fn find_files(
    root: &Path,
    start: &Path,
    pattern: &str,
    max_results: usize,
    hidden: bool,
) -> Result<Listing, FindError> {
    let (pattern, anchored) = workspace_pattern(root, pattern)?;
    let anchored = anchored || pattern.contains('/');
    let matcher = glob_in(pattern, !anchored)?;
    let below_start = start != root && anchored;
    let mut entries = Vec::new();
    let mut truncated = false;
    for entry in walker_showing(start, None, hidden).flatten() {
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        let rel = relative(root, entry.path());
        let matched = matcher.is_match(&rel)
            || (below_start
                && matcher.is_match(entry.path().strip_prefix(start).unwrap_or(entry.path())));
        if !matched {
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

    #[test]
    fn a_glob_of_the_limit_compiles_and_one_byte_more_is_refused_as_given() {
        let at = "a".repeat(MAX_GLOB_BYTES - 3) + ".rs";
        assert!(
            glob_in(&at, true).is_ok(),
            "the prefix added does not count"
        );
        let over = at.clone() + "x";
        match glob_in(&over, true) {
            Err(GlobError::TooLong(n)) => assert_eq!(n, MAX_GLOB_BYTES + 1),
            other => panic!("{other:?}"),
        }
        // The deepest nesting the limit allows parses without overflowing the stack.
        let nested = format!("{}{}", "{".repeat(512), "}".repeat(512));
        assert!(matches!(
            glob(&nested),
            Err(GlobError::Invalid { .. }) | Ok(_)
        ));
    }
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

    fn found(root: &Path, start: &Path, pattern: &str) -> Vec<String> {
        let listing = find_files(root, start, pattern, 100, false).unwrap();
        listing.entries.into_iter().map(|e| e.path).collect()
    }

    #[test]
    fn a_pattern_may_start_with_dot_slash_or_the_root_or_be_relative_to_the_start() {
        let t = fixture();
        let root = t.path();
        let abs = format!("{}/src/**/*.rs", root.display());
        for pattern in ["./src/*.rs", ".//src/*.rs", "././src/*.rs"] {
            assert_eq!(found(root, root, pattern), vec!["src/a.rs"], "{pattern}");
        }
        assert_eq!(found(root, root, &abs), vec!["src/a.rs", "src/deep/b.rs"]);
        assert_eq!(found(root, root, "./*.rs"), Vec::<String>::new());
        // Below a start, a path pattern may be the workspace's or the start's.
        let src = root.join("src");
        assert_eq!(found(root, &src, "deep/*.rs"), vec!["src/deep/b.rs"]);
        assert_eq!(found(root, &src, "src/deep/*.rs"), vec!["src/deep/b.rs"]);
        // From the root, a pattern is the workspace's alone.
        assert_eq!(found(root, root, "deep/*.rs"), Vec::<String>::new());
        let outside = find_files(root, root, "/etc/*.conf", 10, false).unwrap_err();
        assert!(matches!(outside, FindError::Outside(_)), "{outside}");
        assert!(
            outside.to_string().contains("outside the workspace"),
            "{outside}"
        );
        // A sibling whose name starts with the root's is outside too.
        let sibling = format!("{}-other/*.rs", root.display());
        assert!(matches!(
            find_files(root, root, &sibling, 10, false),
            Err(FindError::Outside(_))
        ));
    }
}
