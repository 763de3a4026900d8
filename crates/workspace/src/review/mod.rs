//! Reviews an agent presents (Dialectic's `present_review`): markdown whose `file:line`
//! and `file:line-line` references point into the workspace. A review keeps the text of
//! every file it references as it was when it was written (at its `baseRef`, or on
//! disk when presented), so that each reference can be followed through later edits
//! ([`anchor`]) or marked stale, and suggests a commit message ([`summary`]).

pub mod anchor;
pub mod refs;
pub mod render;
pub mod summary;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use anchor::{follow, Followed, LineMap};

/// Largest review text in bytes.
pub const MAX_REVIEW_BYTES: usize = 256 * 1024;
/// Most distinct files one review may reference (further paths stay plain text).
pub const MAX_FILES: usize = 64;
/// Most references one review may hold (further ones stay plain text).
pub const MAX_REFERENCES: usize = 1000;
/// Largest file a review keeps the base text of (larger ones stay plain text).
pub const MAX_BASE_BYTES: usize = 512 * 1024;
/// Most base text one review keeps, all files together.
pub const MAX_BASES_BYTES: usize = 4 * 1024 * 1024;

/// One reference: a workspace-relative path and 1-based lines of its base text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reference {
    pub path: String,
    pub start: u32,
    pub end: u32,
}

/// A review as the page shows it, before it gets an id and an author.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Draft {
    pub title: String,
    pub markdown: String,
    /// Sanitised HTML; reference elements carry `data-ref` = index into `refs`.
    pub html: String,
    pub refs: Vec<Reference>,
    /// Base text of every referenced file, by workspace-relative path.
    pub bases: BTreeMap<String, Arc<str>>,
    pub commit_message: String,
}

/// A referenced file: its workspace-relative path and its base text.
pub type Base = (String, Arc<str>);

/// The distinct paths `markdown` references, as written, in order of first use, at most
/// [`MAX_FILES`]: what the caller loads base texts for.
pub fn referenced_paths(markdown: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for found in refs::find(markdown) {
        if seen.len() >= MAX_FILES {
            break;
        }
        if !seen.contains(&found.path) {
            seen.push(found.path);
        }
    }
    seen
}

/// Builds a draft from `markdown` and the base texts loaded for its paths (by the path
/// as written); references to paths without a base stay plain text.
pub fn draft(markdown: &str, bases: &HashMap<String, Base>) -> Draft {
    let mut list: Vec<Reference> = Vec::new();
    let html = render::render(markdown, |found| {
        let (path, _) = bases.get(&found.path)?;
        let wanted = Reference {
            path: path.clone(),
            start: found.start,
            end: found.end,
        };
        if let Some(i) = list.iter().position(|r| *r == wanted) {
            return Some(i);
        }
        (list.len() < MAX_REFERENCES).then(|| {
            list.push(wanted);
            list.len() - 1
        })
    });
    let used: BTreeMap<String, Arc<str>> = bases
        .values()
        .filter(|(path, _)| list.iter().any(|r| &r.path == path))
        .map(|(path, text)| (path.clone(), Arc::clone(text)))
        .collect();
    Draft {
        title: summary::title(markdown),
        markdown: markdown.to_string(),
        html,
        refs: list,
        bases: used,
        commit_message: summary::commit_message(markdown),
    }
}

/// A reference as it stands now.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resolved {
    #[serde(flatten)]
    pub written: Reference,
    pub now: Followed,
}

/// Follows every reference of `draft` into the files as they are now (`current` reads
/// a workspace-relative path; `None`: gone). Each file is read and diffed once.
pub fn resolve(draft: &Draft, mut current: impl FnMut(&str) -> Option<String>) -> Vec<Resolved> {
    let mut maps: HashMap<&str, Option<LineMap>> = HashMap::new();
    draft
        .refs
        .iter()
        .map(|r| {
            let base = draft.bases.get(&r.path).map(|b| b.as_ref()).unwrap_or("");
            let map = maps
                .entry(r.path.as_str())
                .or_insert_with(|| current(&r.path).map(|now| LineMap::new(base, &now)));
            Resolved {
                written: r.clone(),
                now: follow(base, map.as_ref(), r.start, r.end),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::anchor::Fate;
    use super::*;

    fn bases(entries: &[(&str, &str, &str)]) -> HashMap<String, Base> {
        entries
            .iter()
            .map(|(as_written, path, text)| {
                (as_written.to_string(), (path.to_string(), Arc::from(*text)))
            })
            .collect()
    }

    #[test]
    fn references_to_known_files_are_numbered_once_and_followed() {
        let md = "# T\n\nsrc/a.rs:2 and again src/a.rs:2, then missing.rs:1 and src/a.rs:3-4";
        assert_eq!(referenced_paths(md), vec!["src/a.rs", "missing.rs"]);
        let d = draft(md, &bases(&[("src/a.rs", "src/a.rs", "1\n2\n3\n4\n")]));
        assert_eq!(d.refs.len(), 2, "{:?}", d.refs);
        assert_eq!(d.html.matches("data-ref=\"0\"").count(), 2, "{}", d.html);
        assert!(!d.html.contains("missing.rs:1</a>"));
        let now = resolve(&d, |_| Some("0\n1\n2\n3\nfour\n".into()));
        assert_eq!((now[0].now.start, now[0].now.fate), (3, Fate::Moved));
        assert_eq!(now[1].now.fate, Fate::Stale);
        assert_eq!(resolve(&d, |_| None)[0].now.fate, Fate::Gone);
    }
}
