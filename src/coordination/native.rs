//! An agent's own tool calls between the hook before them and their end: started when
//! the `PreToolUse` hook comes, ended by what the transcript their result goes to says
//! (the conversation's, or a sub-agent's), or by a `PostToolUse` hook where one is
//! installed. Kept per agent in its Session, bounded.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use crate::hooks::transcript::Outcome;

/// Calls waiting for their end, per agent; the oldest is dropped beyond this.
pub const MAX_STARTED: usize = 64;
/// Transcripts whose read offset an agent keeps (its conversation and its sub-agents');
/// the least recently used is forgotten beyond this.
pub const MAX_TRANSCRIPTS: usize = 16;
/// Outcomes of calls not started when read, kept for a hook that comes after its
/// call's result was read (the oldest is dropped beyond this).
pub const MAX_ORPHANS: usize = 64;
/// A call still waiting this long after its hook is given up (its result went where the
/// bridge does not read, or the CLI stopped): it no longer counts, and it is dropped.
pub const STALE_MS: u64 = 10 * 60 * 1000;

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
    /// `toolu_…`, as the CLI names it in hooks and transcripts.
    pub tool_use_id: String,
    pub tool: String,
    /// For the timeline (file, command, pattern).
    pub summary: String,
    pub effect: Effect,
    /// Unix ms when its hook came.
    pub at_ms: u64,
    /// The bridge refused it (a claimed file): it ends as rejected.
    pub denied: bool,
    /// The transcript its result is written to.
    pub transcript: PathBuf,
    /// Its `PreToolUse` hook came (the file it writes was read before it ran); false for
    /// a call found in its transcript.
    pub heard: bool,
}

/// A call that ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub call: Started,
    /// It failed.
    pub failed: bool,
    /// From its hook to its result.
    pub duration_ms: u64,
    /// Why it failed (the first line of the tool's answer).
    pub error: String,
}

/// Ids of ended calls an agent remembers, so that a late hook or a transcript read
/// again does not start them anew.
pub const MAX_FINISHED: usize = 256;

/// One agent's calls in flight and where each of its transcripts was last read.
#[derive(Debug, Default)]
pub struct NativeCalls {
    /// Most recently used last.
    cursors: VecDeque<(PathBuf, u64)>,
    started: VecDeque<Started>,
    /// Calls that ended lately, oldest first.
    finished: VecDeque<String>,
    /// Outcomes read before their call was known, oldest first: a hook that comes after
    /// its call's result was read (several calls at once, a slow hook) ends at once.
    orphans: VecDeque<Outcome>,
}

impl NativeCalls {
    /// A call started (a second hook for the same call replaces the first). Calls given
    /// up on ([`STALE_MS`]) are dropped. Answers the call ended, when its outcome was
    /// read already.
    pub fn start(&mut self, call: Started) -> Option<Ended> {
        if self.finished.contains(&call.tool_use_id) {
            return None; // it ended already (known from its transcript before its hook came)
        }
        let id = call.tool_use_id.clone();
        let horizon = call.at_ms.saturating_sub(STALE_MS);
        self.started
            .retain(|c| c.tool_use_id != call.tool_use_id && c.at_ms >= horizon);
        if self.started.len() >= MAX_STARTED {
            self.started.pop_front();
        }
        self.started.push_back(call);
        let orphan = self.orphans.iter().position(|o| o.tool_use_id == id)?;
        let o = self.orphans.remove(orphan)?;
        self.end(
            &id,
            o.is_error,
            o.at_ms.unwrap_or(0).max(self.started.back()?.at_ms),
            o.text,
        )
    }

    /// Calls the transcript shows that no hook announced (a hook the CLI gave up on, or
    /// one that reached the bridge after the call was read): started now, so that their
    /// outcomes end them. Answers those whose outcome was read already.
    pub fn discover(&mut self, calls: Vec<Started>) -> Vec<Ended> {
        let mut ended = Vec::new();
        for call in calls {
            let known = self.finished.contains(&call.tool_use_id)
                || self
                    .started
                    .iter()
                    .any(|c| c.tool_use_id == call.tool_use_id);
            if !known {
                ended.extend(self.start(call));
            }
        }
        ended
    }

    /// Where to read the transcript at `path` from; `None` when the agent has not read
    /// it yet (the caller starts it at the file's end: nothing before is ours).
    pub fn cursor(&self, path: &Path) -> Option<u64> {
        self.cursors
            .iter()
            .find(|(known, _)| known == path)
            .map(|(_, offset)| *offset)
    }

    /// The transcript at `path` was read up to `offset` (a cursor never goes back: two
    /// reads of one file may finish in any order).
    pub fn read_up_to(&mut self, path: &Path, offset: u64) {
        let at = self.cursors.iter().position(|(known, _)| known == path);
        let offset = match at.and_then(|i| self.cursors.remove(i)) {
            Some((_, before)) => before.max(offset),
            None => offset,
        };
        if self.cursors.len() >= MAX_TRANSCRIPTS {
            self.cursors.pop_front();
        }
        self.cursors.push_back((path.to_path_buf(), offset));
    }

    /// The transcripts that calls wait on, and `also` (the one a hook names, where a
    /// call no hook announced may be), each with where to read it from.
    pub fn to_read(&self, also: Option<PathBuf>) -> Vec<(PathBuf, Option<u64>)> {
        let mut out: Vec<(PathBuf, Option<u64>)> = Vec::new();
        for path in self
            .started
            .iter()
            .map(|c| &c.transcript)
            .chain(also.as_ref())
        {
            if !out.iter().any(|(p, _)| p == path) {
                out.push((path.clone(), self.cursor(path)));
            }
        }
        out
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
        self.read_up_to(path, offset);
        let mut ended = Vec::new();
        for o in outcomes {
            let at = o.at_ms.unwrap_or(now_ms);
            let known = self.started.iter().any(|c| c.tool_use_id == o.tool_use_id);
            if known {
                ended.extend(self.end(&o.tool_use_id, o.is_error, at, o.text));
            } else if !self.finished.contains(&o.tool_use_id) {
                if self.orphans.len() >= MAX_ORPHANS {
                    self.orphans.pop_front();
                }
                // Its file's text before is not kept: a call whose hook comes after
                // its result is one the hook saw before it ran.
                self.orphans.push_back(Outcome {
                    at_ms: Some(at),
                    before: None,
                    ..o
                });
            }
        }
        ended
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
        if self.finished.len() >= MAX_FINISHED {
            self.finished.pop_front();
        }
        self.finished.push_back(call.tool_use_id.clone());
        Some(Ended {
            duration_ms: at_ms.saturating_sub(call.at_ms),
            failed: failed || call.denied,
            error: if failed { error } else { String::new() },
            call,
        })
    }

    /// The ids of the calls that ended lately, oldest first: kept across a restart, so
    /// that the transcript read again then does not record them a second time.
    pub fn finished_ids(&self) -> Vec<String> {
        self.finished.iter().cloned().collect()
    }

    /// Calls an earlier run of the bridge saw end ([`NativeCalls::finished_ids`]).
    pub fn remember_finished(&mut self, ids: Vec<String>) {
        let skip = ids.len().saturating_sub(MAX_FINISHED);
        for id in ids.into_iter().skip(skip) {
            if !self.finished.contains(&id) {
                if self.finished.len() >= MAX_FINISHED {
                    self.finished.pop_front();
                }
                self.finished.push_back(id);
            }
        }
    }

    /// Calls still waiting for their end, not given up on at `now_ms`.
    pub fn waiting(&self, now_ms: u64) -> usize {
        let horizon = now_ms.saturating_sub(STALE_MS);
        self.started.iter().filter(|c| c.at_ms >= horizon).count()
    }

    /// Takes over a merged session's calls.
    pub fn absorb(&mut self, other: NativeCalls) {
        for call in other.started {
            self.start(call);
        }
        for o in other.orphans {
            if self.orphans.len() >= MAX_ORPHANS {
                self.orphans.pop_front();
            }
            self.orphans.push_back(o);
        }
        for (path, offset) in other.cursors {
            self.read_up_to(&path, offset);
        }
        for id in other.finished {
            if self.finished.len() >= MAX_FINISHED {
                self.finished.pop_front();
            }
            self.finished.push_back(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, at: u64, transcript: &str) -> Started {
        Started {
            tool_use_id: id.into(),
            tool: "Read".into(),
            summary: "a.txt".into(),
            effect: Effect::None,
            at_ms: at,
            denied: false,
            transcript: PathBuf::from(transcript),
            heard: true,
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
            before: None,
        }
    }

    #[test]
    fn outcomes_end_their_calls_once_and_others_are_ignored() {
        let mut n = NativeCalls::default();
        let t = Path::new("/c/projects/x/1.jsonl");
        assert_eq!(n.cursor(t), None);
        n.start(call("a", 100, "/c/projects/x/1.jsonl"));
        n.start(call("b", 200, "/c/projects/x/1/subagents/agent-s.jsonl"));
        assert_eq!(
            n.to_read(None).len(),
            2,
            "the conversation's and the sub-agent's"
        );
        assert_eq!(n.to_read(Some(t.to_path_buf())).len(), 2, "named once");
        let other = PathBuf::from("/c/projects/x/2.jsonl");
        assert_eq!(
            n.to_read(Some(other.clone()))[2],
            (other, None),
            "a hook's own"
        );
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
        n.read_up_to(t, 20);
        assert_eq!(n.cursor(t), Some(50), "a cursor never goes back");
        let sub = Path::new("/c/projects/x/1/subagents/agent-s.jsonl");
        let ended = n.settle(
            sub,
            90,
            vec![outcome("b", true, 260), outcome("a", false, 300)],
            0,
        );
        assert_eq!(ended.len(), 1, "a ended already");
        assert!(ended[0].failed && ended[0].error == "Exit code 1");
        assert_eq!(n.waiting(300), 0);
    }

    #[test]
    fn denied_stale_and_extra_calls_and_cursors_are_bounded() {
        let mut n = NativeCalls::default();
        let mut denied = call("d", 0, "/t");
        denied.denied = true;
        n.start(denied);
        assert!(n.end("d", false, 5, String::new()).unwrap().failed);
        n.start(call("old", 0, "/t"));
        assert_eq!(n.waiting(STALE_MS + 1), 0, "given up on");
        n.start(call("new", STALE_MS + 1, "/t"));
        assert!(n.end("old", false, 0, String::new()).is_none(), "dropped");
        for i in 0..MAX_STARTED + 5 {
            n.start(call(&i.to_string(), STALE_MS + 2, "/t"));
        }
        assert_eq!(n.started.len(), MAX_STARTED);
        assert!(
            n.end("0", false, 0, String::new()).is_none(),
            "the oldest went"
        );
        for i in 0..MAX_TRANSCRIPTS + 3 {
            n.read_up_to(Path::new(&format!("/t{i}")), 1);
        }
        assert_eq!(n.cursors.len(), MAX_TRANSCRIPTS);
    }

    #[test]
    fn an_outcome_read_before_its_hook_came_ends_the_call_when_it_does() {
        let mut n = NativeCalls::default();
        let t = Path::new("/c/projects/x/1.jsonl");
        assert!(n
            .settle(t, 10, vec![outcome("early", true, 150)], 999)
            .is_empty());
        let ended = n
            .start(call("early", 100, "/c/projects/x/1.jsonl"))
            .expect("ended at once");
        assert_eq!((ended.failed, ended.duration_ms), (true, 50));
        assert_eq!(n.waiting(200), 0);
        // Once: a second hook for it does not start it again.
        assert!(n
            .start(call("early", 120, "/c/projects/x/1.jsonl"))
            .is_none());
        assert_eq!(n.waiting(200), 0);
        // A discovered call whose outcome was read earlier ends too.
        n.settle(t, 20, vec![outcome("seen", false, 300)], 999);
        let ended = n.discover(vec![call("seen", 250, "/c/projects/x/1.jsonl")]);
        assert_eq!(ended.len(), 1);
        // Orphans are bounded: the oldest go.
        let many: Vec<Outcome> = (0..MAX_ORPHANS + 3)
            .map(|i| outcome(&format!("o{i}"), false, 1))
            .collect();
        n.settle(t, 30, many, 999);
        assert_eq!(n.orphans.len(), MAX_ORPHANS);
        assert!(n.start(call("o0", 0, "/c/projects/x/1.jsonl")).is_none());
        assert!(n
            .start(call(
                &format!("o{}", MAX_ORPHANS + 2),
                0,
                "/c/projects/x/1.jsonl"
            ))
            .is_some());
    }
}
