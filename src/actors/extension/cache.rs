//! What the editor pushes, kept for agents: diagnostics per file (at most 500 files,
//! 500 per file and 20 000 in all, kept across editor reconnects), the latest selection
//! and AI comments (at most 200 files of 100 comments of 4 KiB, counted in `/status`). Messages are sanitised; positions arrive 1-based and are
//! stored 0-based. [`Read`] is answered from here.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

use actix::prelude::*;
use serde::Deserialize;
use serde_json::Value;

use super::{Cached, ExtensionClient, Read, NAME};
use crate::actors::supervise::guard;
use crate::diagnostics::{sanitize, Diagnostic, FileDiagnostics, Range, Severity};
use crate::protocol::ide::{Position, SelectionChanged, SelectionRange};
use crate::workspace::file_url;

/// Files whose diagnostics are kept.
pub const MAX_DIAGNOSTIC_FILES: usize = 500;
/// Diagnostics kept of one file (errors first, then warnings, information, hints).
pub const MAX_DIAGNOSTICS_PER_FILE: usize = 500;
/// Diagnostics kept over all files; past it the least recently updated files go.
pub const MAX_DIAGNOSTICS_KEPT: usize = 20_000;
/// Files whose AI comments are kept.
pub const MAX_AI_COMMENT_FILES: usize = 200;
/// AI comments kept of one file.
pub const MAX_AI_COMMENTS_PER_FILE: usize = 100;
/// Longest AI comment kept (its JSON); a longer one is dropped.
pub const MAX_AI_COMMENT_BYTES: usize = 4096;
/// Longest file name the editor's pushes are kept under.
pub const MAX_PUSHED_PATH_BYTES: usize = 4096;
/// Longest diagnostic `code` kept (characters); a longer one is cut.
const MAX_CODE_CHARS: usize = 100;

/// A map that forgets the least recently updated key beyond `cap`.
#[derive(Debug)]
pub struct Capped<K, V> {
    map: HashMap<K, V>,
    order: VecDeque<K>,
    cap: usize,
}

impl<K: Eq + Hash + Clone, V> Capped<K, V> {
    /// Empty, holding at most `cap` keys.
    pub fn new(cap: usize) -> Self {
        Self {
            map: HashMap::new(),
            order: VecDeque::new(),
            cap,
        }
    }

    /// Inserts or replaces; returns the key evicted to make room, if any.
    pub fn insert(&mut self, key: K, value: V) -> Option<K> {
        if self.map.insert(key.clone(), value).is_some() {
            self.order.retain(|k| k != &key);
        }
        self.order.push_back(key);
        if self.order.len() > self.cap {
            let old = self.order.pop_front()?;
            self.map.remove(&old);
            return Some(old);
        }
        None
    }

    /// Removes a key.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        self.order.retain(|k| k != key);
        self.map.remove(key)
    }

    /// Looks a key up.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.map.get(key)
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Removes the least recently updated entry.
    pub fn pop_oldest(&mut self) -> Option<(K, V)> {
        let key = self.order.pop_front()?;
        let value = self.map.remove(&key)?;
        Some((key, value))
    }

    /// Values, in no order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.map.values()
    }

    /// Entries, least recently updated first.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.order
            .iter()
            .filter_map(|k| self.map.get(k).map(|v| (k, v)))
    }
}

/// A diagnostic as the extension sends it (1-based).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireDiagnostic {
    message: String,
    #[serde(default)]
    severity: Option<String>,
    #[serde(default = "one")]
    line: u32,
    #[serde(default = "one")]
    column: u32,
    end_line: Option<u32>,
    end_column: Option<u32>,
    source: Option<String>,
    code: Option<Value>,
}

fn one() -> u32 {
    1
}

impl WireDiagnostic {
    /// Claude Code's shape.
    pub fn into_diagnostic(self) -> Diagnostic {
        let severity = match self
            .severity
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("error") => Severity::Error,
            Some("warning") => Severity::Warning,
            Some("hint") => Severity::Hint,
            _ => Severity::Info,
        };
        Diagnostic {
            message: sanitize(&self.message),
            severity,
            range: Range::from_one_based(
                self.line,
                self.column,
                self.end_line.unwrap_or(self.line),
                self.end_column.unwrap_or(self.column),
            ),
            source: self.source.map(|s| sanitize(&s)),
            code: self.code.map(|c| {
                let code = match c {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                sanitize(&code).chars().take(MAX_CODE_CHARS).collect()
            }),
        }
    }
}

/// A selection as the extension sends it (1-based).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireSelection {
    /// Absolute path.
    pub file: String,
    #[serde(default = "one")]
    pub start_line: u32,
    #[serde(default = "one")]
    pub start_column: u32,
    #[serde(default = "one")]
    pub end_line: u32,
    #[serde(default = "one")]
    pub end_column: u32,
    #[serde(default)]
    pub selected_text: String,
}

impl WireSelection {
    /// Claude Code's `selection_changed` shape (0-based).
    pub fn to_claude(&self) -> SelectionChanged {
        let p = |l: u32, c: u32| Position {
            line: l.saturating_sub(1),
            character: c.saturating_sub(1),
        };
        let (start, end) = (
            p(self.start_line, self.start_column),
            p(self.end_line, self.end_column),
        );
        SelectionChanged {
            text: self.selected_text.clone(),
            file_path: self.file.clone(),
            file_url: file_url(std::path::Path::new(&self.file)),
            selection: SelectionRange {
                start,
                end,
                is_empty: start == end,
            },
        }
    }
}

/// What the editor pushed and tools read.
#[derive(Debug)]
pub struct EditorCache {
    /// Diagnostics by absolute path.
    pub diagnostics: Capped<String, Vec<Diagnostic>>,
    /// AI comments by file.
    pub ai_comments: Capped<String, Vec<Value>>,
    /// Latest selection (cleared when the editor goes).
    pub selection: Option<WireSelection>,
}

impl Default for EditorCache {
    fn default() -> Self {
        Self {
            diagnostics: Capped::new(MAX_DIAGNOSTIC_FILES),
            ai_comments: Capped::new(MAX_AI_COMMENT_FILES),
            selection: None,
        }
    }
}

impl EditorCache {
    /// Stores a file's diagnostics (an empty list clears it). True when it changed.
    pub fn set_diagnostics(&mut self, file: String, wire: Vec<WireDiagnostic>) -> bool {
        if file.len() > MAX_PUSHED_PATH_BYTES {
            tracing::debug!(
                bytes = file.len(),
                "diagnostics for an over-long file name ignored"
            );
            return false;
        }
        let pushed = wire.len();
        let mut diags: Vec<Diagnostic> = wire
            .into_iter()
            .map(WireDiagnostic::into_diagnostic)
            .collect();
        if diags.is_empty() {
            return self.diagnostics.remove(&file).is_some();
        }
        if pushed > MAX_DIAGNOSTICS_PER_FILE {
            diags.sort_by_key(|d| d.severity);
            diags.truncate(MAX_DIAGNOSTICS_PER_FILE);
            tracing::debug!(
                file,
                pushed,
                kept = MAX_DIAGNOSTICS_PER_FILE,
                "the editor's diagnostics for one file cut to the most severe"
            );
        }
        if self.diagnostics.get(&file) == Some(&diags) {
            return false;
        }
        self.diagnostics.insert(file, diags);
        let mut kept: usize = self.diagnostics.values().map(Vec::len).sum();
        while kept > MAX_DIAGNOSTICS_KEPT {
            let Some((gone, list)) = self.diagnostics.pop_oldest() else {
                break;
            };
            kept -= list.len();
            tracing::debug!(
                file = gone,
                "diagnostics forgotten: more than {MAX_DIAGNOSTICS_KEPT} kept"
            );
        }
        true
    }

    /// Replaces the AI comments of every file mentioned (grouped by their `file`).
    pub fn set_ai_comments(&mut self, comments: Vec<Value>, file: Option<&str>) {
        // With `file`, that file's comments are replaced even by an empty list (its last
        // comment was removed).
        if let Some(file) = file {
            self.ai_comments.remove(&file.to_string());
        }
        let mut by_file: HashMap<String, Vec<Value>> = HashMap::new();
        for mut c in comments {
            let Some(file) = c.get("file").and_then(Value::as_str).map(str::to_string) else {
                continue;
            };
            if file.len() > MAX_PUSHED_PATH_BYTES
                || by_file
                    .get(&file)
                    .is_some_and(|l| l.len() >= MAX_AI_COMMENTS_PER_FILE)
                || serde_json::to_vec(&c).map_or(true, |b| b.len() > MAX_AI_COMMENT_BYTES)
            {
                tracing::debug!("an AI comment past the cache's limits dropped");
                continue;
            }
            for key in ["comment", "fullLine"] {
                if let Some(Value::String(s)) = c.get_mut(key) {
                    *s = sanitize(s);
                }
            }
            by_file.entry(file).or_default().push(c);
        }
        for (file, list) in by_file {
            self.ai_comments.insert(file, list);
        }
    }
}

impl EditorCache {
    /// Answers a [`Read`].
    pub fn read(&self, read: Read) -> Cached {
        match read {
            Read::Diagnostics(file) => Cached::Diagnostics(
                self.diagnostics
                    .iter()
                    .filter(|(f, _)| file.as_ref().is_none_or(|want| want == *f))
                    .map(|(f, d)| FileDiagnostics {
                        uri: file_url(std::path::Path::new(f)),
                        diagnostics: d.clone(),
                    })
                    .collect(),
            ),
            Read::Selection => Cached::Selection(
                self.selection
                    .as_ref()
                    .and_then(|s| serde_json::to_value(s.to_claude()).ok()),
            ),
        }
    }
}

impl Handler<Read> for ExtensionClient {
    type Result = MessageResult<Read>;
    fn handle(&mut self, msg: Read, ctx: &mut Context<Self>) -> Self::Result {
        // A fault answers as an empty cache (the actor restarts).
        let empty = match &msg {
            Read::Diagnostics(_) => Cached::Diagnostics(Vec::new()),
            Read::Selection => Cached::Selection(None),
        };
        MessageResult(guard(NAME, self, ctx, |act, _| act.cache.read(msg)).unwrap_or(empty))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(msg: &str) -> WireDiagnostic {
        serde_json::from_value(serde_json::json!({"message": msg, "severity": "error", "line": 3, "column": 5, "endLine": 3, "endColumn": 9})).unwrap()
    }

    fn wire_of(severity: &str, n: usize) -> WireDiagnostic {
        serde_json::from_value(serde_json::json!({"message": format!("{severity} {n}"), "severity": severity, "line": n + 1, "column": 1, "code": "x".repeat(1000)})).unwrap()
    }

    #[test]
    fn what_the_editor_pushes_is_bounded_per_file_and_in_all() {
        let mut c = EditorCache::default();
        // At the per-file limit every diagnostic is kept; one more and the least
        // severe goes (the errors, pushed last, all stay).
        let at: Vec<_> = (0..MAX_DIAGNOSTICS_PER_FILE)
            .map(|n| wire_of("hint", n))
            .collect();
        assert!(c.set_diagnostics("/at".into(), at));
        assert_eq!(
            c.diagnostics.get(&"/at".into()).unwrap().len(),
            MAX_DIAGNOSTICS_PER_FILE
        );
        let mut over: Vec<_> = (0..MAX_DIAGNOSTICS_PER_FILE)
            .map(|n| wire_of("hint", n))
            .collect();
        over.push(wire_of("error", 0));
        assert!(c.set_diagnostics("/over".into(), over));
        let kept = c.diagnostics.get(&"/over".into()).unwrap();
        assert_eq!(kept.len(), MAX_DIAGNOSTICS_PER_FILE);
        assert_eq!(kept[0].severity, Severity::Error);
        assert_eq!(
            kept[0].code.as_ref().unwrap().chars().count(),
            MAX_CODE_CHARS
        );
        // In all: the least recently updated files go once more are kept.
        let files = MAX_DIAGNOSTICS_KEPT / MAX_DIAGNOSTICS_PER_FILE;
        for f in 0..files {
            let full = (0..MAX_DIAGNOSTICS_PER_FILE)
                .map(|n| wire_of("warning", n))
                .collect();
            c.set_diagnostics(format!("/f{f}"), full);
        }
        let kept: usize = c.diagnostics.values().map(Vec::len).sum();
        assert_eq!(kept, MAX_DIAGNOSTICS_KEPT);
        assert!(
            c.diagnostics.get(&"/at".into()).is_none(),
            "the oldest went first"
        );
        assert!(c.diagnostics.get(&format!("/f{}", files - 1)).is_some());
        // A file name longer than any path is not kept.
        assert!(!c.set_diagnostics("/".repeat(MAX_PUSHED_PATH_BYTES + 1), vec![wire("x")]));
        // AI comments: at most so many per file, none over the size limit.
        let comment =
            |f: &str, text: &str| serde_json::json!({"file": f, "line": 1, "comment": text});
        let mut many: Vec<_> = (0..=MAX_AI_COMMENTS_PER_FILE)
            .map(|_| comment("/a", "AI: x"))
            .collect();
        many.push(comment("/big", &"y".repeat(MAX_AI_COMMENT_BYTES)));
        c.set_ai_comments(many, None);
        assert_eq!(
            c.ai_comments.get(&"/a".into()).unwrap().len(),
            MAX_AI_COMMENTS_PER_FILE
        );
        assert!(c.ai_comments.get(&"/big".into()).is_none());
    }

    #[test]
    fn a_files_ai_comments_are_cleared_when_it_is_named_with_none() {
        let mut c = EditorCache::default();
        let comment = |f: &str| serde_json::json!({"file": f, "line": 1, "comment": "AI: x"});
        c.set_ai_comments(vec![comment("/a"), comment("/b")], None);
        c.set_ai_comments(Vec::new(), Some("/a"));
        assert!(c.ai_comments.get(&"/a".to_string()).is_none());
        assert!(
            c.ai_comments.get(&"/b".to_string()).is_some(),
            "other files keep theirs"
        );
        c.set_ai_comments(Vec::new(), None);
        assert!(
            c.ai_comments.get(&"/b".to_string()).is_some(),
            "without a file nothing is cleared"
        );
    }

    #[test]
    fn diagnostics_are_capped_at_500_files_oldest_first() {
        let mut c = EditorCache::default();
        for i in 0..500 {
            c.set_diagnostics(format!("/f{i}"), vec![wire("x")]);
        }
        assert_eq!(c.diagnostics.len(), 500);
        assert!(c.diagnostics.get(&"/f0".to_string()).is_some());
        c.set_diagnostics("/f500".into(), vec![wire("x")]);
        assert_eq!(c.diagnostics.len(), 500);
        assert!(
            c.diagnostics.get(&"/f0".to_string()).is_none(),
            "the 501st evicts the oldest"
        );
        // Updating an old file makes it the newest.
        c.set_diagnostics("/f1".into(), vec![wire("changed")]);
        c.set_diagnostics("/f501".into(), vec![wire("x")]);
        assert!(c.diagnostics.get(&"/f1".to_string()).is_some());
        assert!(c.diagnostics.get(&"/f2".to_string()).is_none());
    }

    #[test]
    fn diagnostics_are_converted_and_sanitised() {
        let mut c = EditorCache::default();
        assert!(c.set_diagnostics("/a".into(), vec![wire("bad\u{7}\nthing")]));
        assert!(
            !c.set_diagnostics("/a".into(), vec![wire("bad\u{7}\nthing")]),
            "unchanged"
        );
        let d = &c.diagnostics.get(&"/a".to_string()).unwrap()[0];
        assert_eq!(
            (d.message.as_str(), d.severity),
            ("bad thing", Severity::Error)
        );
        assert_eq!(
            (
                d.range.start.line,
                d.range.start.character,
                d.range.end.character
            ),
            (2, 4, 8)
        );
        assert!(c.set_diagnostics("/a".into(), vec![]));
        assert!(c.diagnostics.is_empty());
    }

    #[test]
    fn ai_comments_are_capped_at_200_files() {
        let mut c = EditorCache::default();
        let comments: Vec<Value> = (0..201)
            .map(|i| serde_json::json!({"file": format!("/f{i}"), "line": 1, "comment": "AI: fix"}))
            .collect();
        c.set_ai_comments(comments[..200].to_vec(), None);
        assert_eq!(c.ai_comments.len(), 200);
        c.set_ai_comments(comments[200..].to_vec(), None);
        assert_eq!(c.ai_comments.len(), 200);
    }

    #[test]
    fn selections_become_zero_based() {
        let s = WireSelection {
            file: "/a.rs".into(),
            start_line: 2,
            start_column: 1,
            end_line: 2,
            end_column: 6,
            selected_text: "hello".into(),
        };
        let c = s.to_claude();
        assert_eq!(
            (
                c.selection.start.line,
                c.selection.end.character,
                c.selection.is_empty
            ),
            (1, 5, false)
        );
        assert_eq!(c.file_url, "file:///a.rs");
    }
}
