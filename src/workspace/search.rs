//! Full-text and regex search across the workspace with ripgrep's libraries.

use std::path::Path;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::UTF8;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use serde::Serialize;

use super::tree::{glob, walker};

/// Lines longer than this are cut in results.
const MAX_LINE_CHARS: usize = 300;
/// Files larger than this are skipped.
const MAX_SEARCH_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// One matching line.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// Workspace-relative path.
    pub path: String,
    /// 1-based line.
    pub line: u64,
    /// The line (trimmed of its newline, cut at 300 characters).
    pub text: String,
}

/// Search results.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hits {
    /// Matches in path order.
    pub matches: Vec<Hit>,
    /// Files searched.
    pub files_searched: usize,
    /// True when `max_results` cut the results.
    pub truncated: bool,
}

/// What to search for.
pub struct Query<'a> {
    /// Text or regex.
    pub pattern: &'a str,
    /// Treat `pattern` as a regex.
    pub regex: bool,
    /// Case-sensitive matching.
    pub case_sensitive: bool,
    /// Only files matching this glob.
    pub glob: Option<&'a str>,
    /// At most this many matches.
    pub max_results: usize,
}

/// Searches every non-ignored text file below `start`.
pub fn search(root: &Path, start: &Path, q: &Query<'_>) -> Result<Hits, String> {
    let matcher = RegexMatcherBuilder::new()
        .fixed_strings(!q.regex)
        .case_insensitive(!q.case_sensitive)
        .line_terminator(Some(b'\n'))
        .build(q.pattern)
        .map_err(|e| format!("Invalid pattern: {e}"))?;
    let filter = match q.glob {
        Some(g) if g.contains('/') => Some(glob(g)?),
        Some(g) => Some(glob(&format!("**/{g}"))?),
        None => None,
    };
    let mut searcher = SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .build();
    let mut hits = Hits {
        matches: Vec::new(),
        files_searched: 0,
        truncated: false,
    };
    for entry in walker(start, None).flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if entry
            .metadata()
            .map(|m| m.len() > MAX_SEARCH_FILE_BYTES)
            .unwrap_or(true)
        {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .into_owned();
        if filter.as_ref().is_some_and(|f| !f.is_match(&rel)) {
            continue;
        }
        hits.files_searched += 1;
        let room = q.max_results.saturating_sub(hits.matches.len());
        let mut found = Vec::new();
        let _ = searcher.search_path(
            &matcher,
            entry.path(),
            UTF8(|line, text| {
                if found.len() > room {
                    return Ok(false);
                }
                let text = text.trim_end_matches(['\n', '\r']);
                let mut shown: String = text.chars().take(MAX_LINE_CHARS).collect();
                if shown.len() < text.len() {
                    shown.push('…');
                }
                found.push(Hit {
                    path: rel.clone(),
                    line,
                    text: shown,
                });
                Ok(true)
            }),
        );
        if found.len() > room {
            found.truncate(room);
            hits.matches.extend(found);
            hits.truncated = true;
            break;
        }
        hits.matches.extend(found);
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn q(pattern: &str) -> Query<'_> {
        Query {
            pattern,
            regex: false,
            case_sensitive: true,
            glob: None,
            max_results: 100,
        }
    }

    #[test]
    fn finds_literals_and_regexes_and_skips_ignored_and_binary() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::write(r.join(".gitignore"), "skip/\n").unwrap();
        fs::create_dir(r.join("skip")).unwrap();
        fs::write(r.join("skip/a.txt"), "needle\n").unwrap();
        fs::write(r.join("a.rs"), "let needle = 1;\nfn x() {}\nNEEDLE\n").unwrap();
        fs::write(r.join("b.bin"), b"needle\0\x01").unwrap();
        let hits = search(r, r, &q("needle")).unwrap();
        assert_eq!(hits.matches.len(), 1);
        assert_eq!(
            (hits.matches[0].path.as_str(), hits.matches[0].line),
            ("a.rs", 1)
        );
        let ci = search(
            r,
            r,
            &Query {
                case_sensitive: false,
                ..q("needle")
            },
        )
        .unwrap();
        assert_eq!(ci.matches.len(), 2);
        let re = search(
            r,
            r,
            &Query {
                regex: true,
                ..q(r"fn \w+\(")
            },
        )
        .unwrap();
        assert_eq!(re.matches[0].line, 2);
        let lit = search(r, r, &q("fn x(")).unwrap();
        assert_eq!(lit.matches.len(), 1, "literal mode escapes regex syntax");
        let capped = search(
            r,
            r,
            &Query {
                case_sensitive: false,
                max_results: 1,
                ..q("needle")
            },
        )
        .unwrap();
        assert!(capped.truncated && capped.matches.len() == 1);
        let globbed = search(
            r,
            r,
            &Query {
                glob: Some("*.txt"),
                ..q("needle")
            },
        )
        .unwrap();
        assert!(globbed.matches.is_empty());
        assert!(search(
            r,
            r,
            &Query {
                regex: true,
                ..q("(")
            }
        )
        .is_err());
    }
}
