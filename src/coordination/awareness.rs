//! What an agent knows about the files other agents change: the files it has seen
//! (read or written, natively or through the bridge) and, for each of them another
//! agent changed since, one notice waiting for its next tool call. A notice is given
//! once; the file counts as unseen until the agent reads it again. Other notes for the
//! model (automation notices) wait beside them.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::path::PathBuf;

/// Files remembered as seen per agent; beyond this an arbitrary one is forgotten (the
/// cost: one missed notice).
pub const MAX_SEEN: usize = 4096;
/// Files with a waiting notice per agent; further changes are counted, not named.
pub const MAX_NOTICES: usize = 50;
/// Agents named per file in a notice.
const MAX_CHANGERS: usize = 3;
/// Other notes kept for the next call (the oldest go first).
pub const MAX_NOTES: usize = 10;

/// One agent's view of other agents' changes.
#[derive(Debug, Default)]
pub struct Awareness {
    seen: HashSet<PathBuf>,
    /// Workspace-relative path → the agents that changed it since this one saw it.
    notices: BTreeMap<String, Vec<String>>,
    /// Changes beyond [`MAX_NOTICES`] files, counted.
    unnamed: usize,
    /// Other notes for the model, oldest first.
    notes: VecDeque<String>,
}

impl Awareness {
    /// The agent read or wrote `path`: it knows the content now.
    pub fn saw(&mut self, path: PathBuf) {
        if self.seen.len() >= MAX_SEEN && !self.seen.contains(&path) {
            if let Some(any) = self.seen.iter().next().cloned() {
                self.seen.remove(&any);
            }
        }
        self.seen.insert(path);
    }

    /// The agent `by` changed `path` (shown as `display`): when this agent had seen it,
    /// a notice waits for its next call and the file counts as unseen.
    pub fn changed_by(&mut self, path: &PathBuf, display: &str, by: &str) -> bool {
        if !self.seen.remove(path) {
            return false;
        }
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
        true
    }

    /// A note for the model at the agent's next tool call (an automation notice).
    pub fn note(&mut self, text: String) {
        if self.notes.len() >= MAX_NOTES {
            self.notes.pop_front();
        }
        self.notes.push_back(text);
    }

    /// Everything waiting for the agent's next tool call, once.
    pub fn take_notice(&mut self) -> Option<String> {
        let changed = self.take_changes();
        let notes: Vec<String> = self.notes.drain(..).collect();
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

    /// Takes over a merged session's awareness.
    pub fn absorb(&mut self, other: Awareness) {
        for path in other.seen {
            self.saw(path);
        }
        for (file, by) in other.notices {
            for b in by {
                let entry = self.notices.entry(file.clone()).or_default();
                if !entry.contains(&b) && entry.len() < MAX_CHANGERS {
                    entry.push(b);
                }
            }
        }
        self.unnamed += other.unnamed;
        for note in other.notes {
            self.note(note);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_to_a_seen_file_makes_one_notice_naming_file_and_agent() {
        let mut a = Awareness::default();
        let p = PathBuf::from("/w/b.py");
        assert!(
            !a.changed_by(&p, "b.py", "claude-code aaaa0001"),
            "not seen: no notice"
        );
        a.saw(p.clone());
        assert!(a.changed_by(&p, "b.py", "claude-code aaaa0001"));
        assert!(
            !a.changed_by(&p, "b.py", "claude-code aaaa0001"),
            "unseen again"
        );
        let text = a.take_notice().unwrap();
        assert!(text.contains("b.py (by claude-code aaaa0001)"), "{text}");
        assert_eq!(a.take_notice(), None, "given once");
        a.saw(p.clone());
        assert!(a.changed_by(&p, "b.py", "x"));
    }

    #[test]
    fn notes_ride_with_the_notice_and_are_bounded() {
        let mut a = Awareness::default();
        for i in 0..MAX_NOTES + 2 {
            a.note(format!("note {i}"));
        }
        let p = PathBuf::from("/w/x");
        a.saw(p.clone());
        a.changed_by(&p, "x", "b");
        let text = a.take_notice().unwrap();
        assert!(
            text.starts_with("ide-bridge: another agent changed a file"),
            "{text}"
        );
        assert!(
            !text.contains("note 1\n") && text.ends_with(&format!("note {}", MAX_NOTES + 1)),
            "{text}"
        );
        assert_eq!(a.take_notice(), None);
    }

    #[test]
    fn notices_and_memory_are_bounded() {
        let mut a = Awareness::default();
        for i in 0..MAX_SEEN + 10 {
            a.saw(PathBuf::from(format!("/w/{i}")));
        }
        assert_eq!(a.seen.len(), MAX_SEEN);
        let seen: Vec<PathBuf> = a.seen.iter().cloned().collect();
        for p in &seen {
            a.changed_by(p, &p.display().to_string(), "x");
        }
        assert_eq!(a.notices.len(), MAX_NOTICES);
        let text = a.take_notice().unwrap();
        assert!(
            text.contains(&format!("{} more", MAX_SEEN - MAX_NOTICES)),
            "{text}"
        );
    }
}
