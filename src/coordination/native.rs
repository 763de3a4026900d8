//! An agent's own tool calls between the hook before them and their end: started when
//! the `PreToolUse` hook comes, ended by what the transcript says (or a `PostToolUse`
//! hook, where one is installed). Kept per agent in its Session, bounded.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use crate::hooks::transcript::Outcome;

/// Calls waiting for their end, per agent; the oldest is dropped beyond this.
pub const MAX_STARTED: usize = 64;

/// What a call does to the workspace, as far as the others care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Read this file (resolved path).
    Read(PathBuf),
    /// Changed this file (resolved path, workspace-relative).
    Write { path: PathBuf, display: String },
    /// Ran this shell command.
    Command(String),
    /// Nothing the bridge follows.
    None,
}

/// A call whose hook came before it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    /// `toolu_…`, as the CLI names it in hooks and the transcript.
    pub tool_use_id: String,
    pub tool: String,
    /// For the timeline (file, command, pattern).
    pub summary: String,
    pub effect: Effect,
    /// Unix ms when its hook came.
    pub at_ms: u64,
    /// The bridge refused it (a claimed file): it ends as rejected.
    pub denied: bool,
}

/// A call that ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub call: Started,
    /// It failed.
    pub failed: bool,
    /// From its hook to its result.
    pub duration_ms: u64,
    /// Why it failed (the start of the tool's answer).
    pub error: String,
}

/// One agent's calls in flight and where its transcript was last read.
#[derive(Debug, Default)]
pub struct NativeCalls {
    transcript: Option<(PathBuf, u64)>,
    started: VecDeque<Started>,
}

impl NativeCalls {
    /// A call started (a second hook for the same call replaces the first).
    pub fn start(&mut self, call: Started) {
        self.started.retain(|c| c.tool_use_id != call.tool_use_id);
        if self.started.len() >= MAX_STARTED {
            self.started.pop_front();
        }
        self.started.push_back(call);
    }

    /// Where to read the transcript at `path` from; `None` when it is not the one last
    /// read (a new conversation): read from its end, nothing before it is ours.
    pub fn cursor(&self, path: &Path) -> Option<u64> {
        match &self.transcript {
            Some((known, offset)) if known == path => Some(*offset),
            _ => None,
        }
    }

    /// Outcomes read up to `offset` of the transcript at `path` (`now_ms` for those
    /// without a time): the calls they end.
    pub fn settle(
        &mut self,
        path: &Path,
        offset: u64,
        outcomes: Vec<Outcome>,
        now_ms: u64,
    ) -> Vec<Ended> {
        self.transcript = Some((path.to_path_buf(), offset));
        outcomes
            .into_iter()
            .filter_map(|o| {
                let at = o.at_ms.unwrap_or(now_ms);
                self.end(&o.tool_use_id, o.is_error, at, o.text)
            })
            .collect()
    }

    /// The call `tool_use_id` ended at `at_ms`; `None` when it is not one of ours (its
    /// hook never came, or it ended already).
    pub fn end(
        &mut self,
        tool_use_id: &str,
        failed: bool,
        at_ms: u64,
        error: String,
    ) -> Option<Ended> {
        let i = self
            .started
            .iter()
            .position(|c| c.tool_use_id == tool_use_id)?;
        let call = self.started.remove(i)?;
        Some(Ended {
            duration_ms: at_ms.saturating_sub(call.at_ms),
            failed: failed || call.denied,
            error: if failed { error } else { String::new() },
            call,
        })
    }

    /// Calls still waiting for their end.
    pub fn waiting(&self) -> usize {
        self.started.len()
    }

    /// Takes over a merged session's calls.
    pub fn absorb(&mut self, other: NativeCalls) {
        for call in other.started {
            self.start(call);
        }
        if self.transcript.is_none() {
            self.transcript = other.transcript;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, at: u64) -> Started {
        Started {
            tool_use_id: id.into(),
            tool: "Read".into(),
            summary: "a.txt".into(),
            effect: Effect::None,
            at_ms: at,
            denied: false,
        }
    }

    fn outcome(id: &str, err: bool, at: u64) -> Outcome {
        Outcome {
            tool_use_id: id.into(),
            is_error: err,
            at_ms: Some(at),
            text: if err {
                "Exit code 1".into()
            } else {
                "ok".into()
            },
        }
    }

    #[test]
    fn outcomes_end_their_calls_once_and_others_are_ignored() {
        let mut n = NativeCalls::default();
        let t = Path::new("/c/projects/x/1.jsonl");
        assert_eq!(n.cursor(t), None);
        n.start(call("a", 100));
        n.start(call("b", 200));
        let ended = n.settle(
            t,
            50,
            vec![outcome("a", false, 130), outcome("zzz", false, 1)],
            0,
        );
        assert_eq!(ended.len(), 1);
        assert_eq!((ended[0].duration_ms, ended[0].failed), (30, false));
        assert_eq!(ended[0].error, "");
        assert_eq!(n.cursor(t), Some(50));
        let ended = n.settle(
            t,
            90,
            vec![outcome("b", true, 260), outcome("a", false, 300)],
            0,
        );
        assert_eq!(ended.len(), 1, "a ended already");
        assert!(ended[0].failed && ended[0].error == "Exit code 1");
        assert_eq!(
            n.cursor(Path::new("/c/projects/x/2.jsonl")),
            None,
            "a new conversation"
        );
    }

    #[test]
    fn a_denied_call_ends_failed_and_the_table_is_bounded() {
        let mut n = NativeCalls::default();
        let mut denied = call("d", 0);
        denied.denied = true;
        n.start(denied);
        assert!(n.end("d", false, 5, String::new()).unwrap().failed);
        for i in 0..MAX_STARTED + 5 {
            n.start(call(&i.to_string(), 0));
        }
        assert_eq!(n.started.len(), MAX_STARTED);
        assert!(
            n.end("0", false, 0, String::new()).is_none(),
            "the oldest went"
        );
    }
}
