//! What an agent knows about the files other agents change: the files it has seen
//! (read or written, natively or through the bridge), each with when it read them, and,
//! for each of them another agent changed since, one notice waiting for its next tool
//! call. A notice is given once; the file counts as unseen until the agent reads it
//! again. Other notes for the model (automation notices) wait beside them.
//!
//! The bridge may learn of a native call only at the agent's next hook, so a read can be
//! learned after a change it preceded: changes to files the agent had not seen are
//! remembered a while ([`MAX_RECENT`]), and a read learned later that started before one
//! of them gives its notice then. Times are Unix milliseconds: when a read started, when
//! a change was done.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Files remembered as seen per agent; beyond this an arbitrary one is forgotten (the
/// cost: one missed notice).
pub const MAX_SEEN: usize = 4096;
/// Changes to files the agent had not seen, remembered for a read learned late; beyond
/// this the oldest is forgotten (the cost: one missed notice).
pub const MAX_RECENT: usize = 256;
/// Files with a waiting notice per agent; further changes are counted, not named.
pub const MAX_NOTICES: usize = 50;
/// Agents named per file in a notice.
const MAX_CHANGERS: usize = 3;
/// Other notes kept for the next call (the oldest go first).
pub const MAX_NOTES: usize = 10;
/// Seen files a checkpoint keeps per agent (the most recently read).
pub const MAX_KEPT_SEEN: usize = 512;

/// A change to a file the agent had not seen when it was learned.
#[derive(Debug)]
struct Recent {
    /// When it was done.
    at_ms: u64,
    display: String,
    by: String,
}

/// One agent's view of other agents' changes.
#[derive(Debug, Default)]
pub struct Awareness {
    /// Path → when the agent last started reading it (or finished writing it).
    seen: HashMap<PathBuf, u64>,
    /// Path → the last change another agent made to it while this one had not seen it.
    recent: HashMap<PathBuf, Recent>,
    /// Workspace-relative path → the agents that changed it since this one saw it.
    notices: BTreeMap<String, Vec<String>>,
    /// Changes beyond [`MAX_NOTICES`] files, counted.
    unnamed: usize,
    /// Other notes for the model, oldest first.
    notes: VecDeque<String>,
    /// Notes dropped (the oldest, past [`MAX_NOTES`]) since the last call, counted.
    dropped_notes: usize,
}

impl Awareness {
    /// The agent read `path` from `at_ms` on (or wrote it, done at `at_ms`): it knows
    /// the content as of then. A change another agent made after that, learned
    /// before this read was, gives its notice now.
    pub fn saw(&mut self, path: PathBuf, at_ms: u64) {
        if let Some(change) = self.recent.remove(&path) {
            if change.at_ms >= at_ms {
                self.seen.remove(&path);
                self.notice(&change.display, &change.by);
                return;
            }
        }
        if self.seen.len() >= MAX_SEEN && !self.seen.contains_key(&path) {
            if let Some(any) = self.seen.keys().next().cloned() {
                self.seen.remove(&any);
            }
        }
        let last = self.seen.entry(path).or_insert(at_ms);
        *last = (*last).max(at_ms);
    }

    /// The agent `by` changed `path` (shown as `display`), done at `at_ms`: when this
    /// agent had read it before that, a notice waits for its next call and the file
    /// counts as unseen. True when a notice was queued.
    pub fn changed_by(&mut self, path: &PathBuf, display: &str, by: &str, at_ms: u64) -> bool {
        match self.seen.get(path) {
            Some(&read) if read <= at_ms => {
                self.seen.remove(path);
                self.notice(display, by);
                true
            }
            // It read the file after the change was done: it knows the new content.
            Some(_) => false,
            None => {
                if self.recent.len() >= MAX_RECENT && !self.recent.contains_key(path) {
                    let oldest = self.recent.iter().min_by_key(|(_, r)| r.at_ms);
                    if let Some(oldest) = oldest.map(|(p, _)| p.clone()) {
                        self.recent.remove(&oldest);
                    }
                }
                let recent = Recent {
                    at_ms,
                    display: display.to_string(),
                    by: by.to_string(),
                };
                match self.recent.get_mut(path) {
                    Some(known) if known.at_ms > at_ms => {}
                    Some(known) => *known = recent,
                    None => {
                        self.recent.insert(path.clone(), recent);
                    }
                }
                false
            }
        }
    }

    /// Queues a notice that `by` changed `display`.
    fn notice(&mut self, display: &str, by: &str) {
        if let Some(changers) = self.notices.get_mut(display) {
            if !changers.iter().any(|c| c == by) && changers.len() < MAX_CHANGERS {
                changers.push(by.to_string());
            }
        } else if self.notices.len() < MAX_NOTICES {
            self.notices
                .insert(display.to_string(), vec![by.to_string()]);
        } else {
            self.unnamed += 1;
        }
    }

    /// A note for the model at the agent's next tool call (an automation notice).
    pub fn note(&mut self, text: String) {
        if self.notes.len() >= MAX_NOTES {
            self.notes.pop_front();
            self.dropped_notes += 1;
        }
        self.notes.push_back(text);
    }

    /// Everything waiting for the agent's next tool call, once.
    pub fn take_notice(&mut self) -> Option<String> {
        let changed = self.take_changes();
        let dropped = std::mem::take(&mut self.dropped_notes);
        let notes: Vec<String> = (dropped > 0)
            .then(|| {
                format!(
                    "ide-bridge: {dropped} earlier automation notice{} dropped (the latest {MAX_NOTES} follow)",
                    if dropped == 1 { " was" } else { "s were" }
                )
            })
            .into_iter()
            .chain(self.notes.drain(..))
            .collect();
        match (changed, notes.is_empty()) {
            (None, true) => None,
            (Some(c), true) => Some(c),
            (changed, false) => {
                let mut all: Vec<String> = changed.into_iter().collect();
                all.extend(notes);
                Some(all.join("\n"))
            }
        }
    }

    /// The notice about files other agents changed, once.
    fn take_changes(&mut self) -> Option<String> {
        if self.notices.is_empty() && self.unnamed == 0 {
            return None;
        }
        let mut files: Vec<String> = std::mem::take(&mut self.notices)
            .into_iter()
            .map(|(file, by)| format!("{file} (by {})", by.join(", ")))
            .collect();
        if self.unnamed > 0 {
            files.push(format!("{} more", std::mem::take(&mut self.unnamed)));
        }
        Some(format!(
            "ide-bridge: another agent changed {} after you last read {}: {}. Read {} again \
             before relying on what you read or editing {}.",
            if files.len() == 1 { "a file" } else { "files" },
            if files.len() == 1 { "it" } else { "them" },
            files.join("; "),
            if files.len() == 1 { "it" } else { "them" },
            if files.len() == 1 { "it" } else { "them" },
        ))
    }

    /// What a checkpoint keeps: everything but the oldest seen files past
    /// [`MAX_KEPT_SEEN`] (and paths that are not UTF-8).
    pub fn export(&self) -> Remembered {
        let mut seen: Vec<(String, u64)> = self
            .seen
            .iter()
            .filter_map(|(p, at)| Some((p.to_str()?.to_string(), *at)))
            .collect();
        seen.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        seen.truncate(MAX_KEPT_SEEN);
        let mut recent: Vec<RememberedChange> = self
            .recent
            .iter()
            .filter_map(|(p, r)| {
                Some(RememberedChange {
                    path: p.to_str()?.to_string(),
                    at_ms: r.at_ms,
                    display: r.display.clone(),
                    by: r.by.clone(),
                })
            })
            .collect();
        recent.sort_by(|a, b| a.path.cmp(&b.path));
        Remembered {
            seen,
            recent,
            notices: self.notices.clone(),
            unnamed: self.unnamed,
            notes: self.notes.iter().cloned().collect(),
        }
    }

    /// An awareness as a checkpoint kept it, within this process's bounds.
    pub fn restore(kept: Remembered) -> Awareness {
        let as_kept = Awareness {
            seen: kept
                .seen
                .into_iter()
                .take(MAX_SEEN)
                .map(|(path, at_ms)| (PathBuf::from(path), at_ms))
                .collect(),
            recent: kept
                .recent
                .into_iter()
                .take(MAX_RECENT)
                .map(|c| {
                    let recent = Recent {
                        at_ms: c.at_ms,
                        display: c.display,
                        by: c.by,
                    };
                    (PathBuf::from(c.path), recent)
                })
                .collect(),
            notices: kept.notices,
            unnamed: kept.unnamed,
            notes: kept.notes.into_iter().collect(),
            dropped_notes: 0,
        };
        // Taken over as a merged session's is: within this process's bounds.
        let mut a = Awareness::default();
        a.absorb(as_kept);
        a
    }

    /// Takes over a merged session's awareness.
    pub fn absorb(&mut self, other: Awareness) {
        for (path, at_ms) in other.seen {
            self.saw(path, at_ms);
        }
        for (path, change) in other.recent {
            self.changed_by(&path, &change.display, &change.by, change.at_ms);
        }
        for (file, by) in other.notices {
            for b in by {
                self.notice(&file, &b);
            }
        }
        self.unnamed += other.unnamed;
        self.dropped_notes += other.dropped_notes;
        for note in other.notes {
            self.note(note);
        }
    }
}

/// An agent's awareness as a checkpoint keeps it, so that a restart loses neither its
/// notices nor what it read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Remembered {
    /// Absolute path and when it was read (Unix ms), most recent first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seen: Vec<(String, u64)>,
    /// Changes to files it had not seen.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recent: Vec<RememberedChange>,
    /// Waiting notices: workspace-relative path → who changed it.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub notices: BTreeMap<String, Vec<String>>,
    #[serde(skip_serializing_if = "is_zero")]
    pub unnamed: usize,
    /// Other notes waiting for its next call.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Remembered {
    /// Nothing to keep.
    pub fn is_empty(&self) -> bool {
        *self == Remembered::default()
    }
}

/// A change to a file the agent had not seen, as a checkpoint keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RememberedChange {
    pub path: String,
    pub at_ms: u64,
    pub display: String,
    pub by: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_to_a_seen_file_makes_one_notice_naming_file_and_agent() {
        let mut a = Awareness::default();
        let p = PathBuf::from("/w/b.py");
        assert!(
            !a.changed_by(&p, "b.py", "claude-code aaaa0001", 10),
            "not seen: no notice"
        );
        a.saw(p.clone(), 20);
        assert!(a.changed_by(&p, "b.py", "claude-code aaaa0001", 30));
        assert!(
            !a.changed_by(&p, "b.py", "claude-code aaaa0001", 40),
            "unseen again"
        );
        let text = a.take_notice().unwrap();
        assert!(text.contains("b.py (by claude-code aaaa0001)"), "{text}");
        assert_eq!(a.take_notice(), None, "given once");
        a.saw(p.clone(), 50);
        assert!(a.changed_by(&p, "b.py", "x", 60));
    }

    #[test]
    fn a_read_learned_after_a_change_it_preceded_gives_the_notice_then() {
        let mut a = Awareness::default();
        let p = PathBuf::from("/w/README.md");
        // B's edit, done at 200, is learned first; A's read, from 100, after it.
        assert!(!a.changed_by(&p, "README.md", "B", 200));
        assert_eq!(a.take_notice(), None);
        a.saw(p.clone(), 100);
        let text = a.take_notice().expect("the notice once the read is known");
        assert!(text.contains("README.md (by B)"), "{text}");
        // It counts as unseen: the next change is not noticed until it reads again.
        assert!(!a.changed_by(&p, "README.md", "B", 300));
        a.saw(p.clone(), 400);
        assert_eq!(a.take_notice(), None, "a read after the change knows it");
        // A read that started after a change learned later knows the change already.
        assert!(!a.changed_by(&p, "README.md", "B", 350));
        assert!(a.changed_by(&p, "README.md", "B", 500));
        assert!(a.take_notice().is_some());
    }

    #[test]
    fn changes_to_unseen_files_are_remembered_up_to_a_bound() {
        let mut a = Awareness::default();
        for i in 0..MAX_RECENT as u64 + 10 {
            a.changed_by(
                &PathBuf::from(format!("/w/{i}")),
                &i.to_string(),
                "B",
                1000 + i,
            );
        }
        assert_eq!(a.recent.len(), MAX_RECENT);
        // The oldest went first.
        a.saw(PathBuf::from("/w/0"), 1);
        assert_eq!(a.take_notice(), None);
        a.saw(PathBuf::from(format!("/w/{}", MAX_RECENT + 9)), 1);
        assert!(a.take_notice().is_some());
    }

    #[test]
    fn notes_ride_with_the_notice_and_are_bounded() {
        let mut a = Awareness::default();
        for i in 0..MAX_NOTES + 2 {
            a.note(format!("note {i}"));
        }
        let p = PathBuf::from("/w/x");
        a.saw(p.clone(), 1);
        a.changed_by(&p, "x", "b", 2);
        let text = a.take_notice().unwrap();
        assert!(
            text.starts_with("ide-bridge: another agent changed a file"),
            "{text}"
        );
        assert!(
            !text.contains("note 1\n") && text.ends_with(&format!("note {}", MAX_NOTES + 1)),
            "{text}"
        );
        assert!(
            text.contains("ide-bridge: 2 earlier automation notices were dropped"),
            "{text}"
        );
        assert_eq!(a.take_notice(), None);
    }

    #[test]
    fn notices_and_memory_are_bounded() {
        let mut a = Awareness::default();
        for i in 0..MAX_SEEN + 10 {
            a.saw(PathBuf::from(format!("/w/{i}")), 1);
        }
        assert_eq!(a.seen.len(), MAX_SEEN);
        let seen: Vec<PathBuf> = a.seen.keys().cloned().collect();
        for p in &seen {
            a.changed_by(p, &p.display().to_string(), "x", 2);
        }
        assert_eq!(a.notices.len(), MAX_NOTICES);
        let text = a.take_notice().unwrap();
        assert!(
            text.contains(&format!("{} more", MAX_SEEN - MAX_NOTICES)),
            "{text}"
        );
    }

    #[test]
    fn what_a_checkpoint_keeps_comes_back_as_it_was() {
        let mut a = Awareness::default();
        let (read, unseen, told) = (
            PathBuf::from("/w/read.py"),
            PathBuf::from("/w/unseen.py"),
            PathBuf::from("/w/told.py"),
        );
        a.saw(read.clone(), 100);
        a.saw(told.clone(), 100);
        a.changed_by(&told, "told.py", "B", 200);
        a.changed_by(&unseen, "unseen.py", "B", 300);
        a.note("a note".into());
        let kept = a.export();
        let text = serde_json::to_string(&kept).unwrap();
        let back: Remembered = serde_json::from_str(&text).unwrap();
        assert_eq!(back, kept);
        let mut b = Awareness::restore(back);
        // The waiting notice and note, once.
        let notice = b.take_notice().unwrap();
        assert!(
            notice.contains("told.py (by B)") && notice.ends_with("a note"),
            "{notice}"
        );
        // What it read: a later change is noticed.
        assert!(b.changed_by(&read, "read.py", "C", 400));
        // The change it had not seen: a read learned late that preceded it.
        b.saw(unseen, 250);
        assert!(b.take_notice().unwrap().contains("unseen.py (by B)"));
        assert!(Remembered::default().is_empty());
        assert_eq!(serde_json::to_string(&Remembered::default()).unwrap(), "{}");
    }

    #[test]
    fn a_checkpoint_keeps_the_most_recently_seen_files() {
        let mut a = Awareness::default();
        for i in 0..MAX_KEPT_SEEN as u64 + 5 {
            a.saw(PathBuf::from(format!("/w/{i}")), i);
        }
        let kept = a.export();
        assert_eq!(kept.seen.len(), MAX_KEPT_SEEN);
        assert_eq!(
            kept.seen[0],
            (
                format!("/w/{}", MAX_KEPT_SEEN + 4),
                MAX_KEPT_SEEN as u64 + 4
            )
        );
        assert!(!kept.seen.iter().any(|(p, _)| p == "/w/0"));
    }
}
