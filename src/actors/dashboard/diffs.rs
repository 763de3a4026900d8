//! Diffs waiting in the browser page: an agent's `openDiff` while no editor is
//! connected and a browser watches. Each waits for the person's decision, exactly
//! like a diff in an editor: a new diff in the same tab rejects the old one, a
//! session's diffs are rejected when its connection goes, `close_tab` rejects one.

use serde::Serialize;
use tokio::sync::oneshot;

use crate::actors::messages::session::SessionId;

/// What the person decided (or why nobody could).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffAnswer {
    /// Accepted; the final text, the person's edits included.
    Saved(String),
    /// Rejected (in the page, by a newer diff in the tab, or by the agent).
    Rejected,
    /// Nobody watched the page long enough to decide; the agent asks in its terminal.
    Unanswered,
}

/// An `openDiff` the page should show.
#[derive(Debug)]
pub struct DiffOffer {
    pub session: SessionId,
    pub tab: String,
    pub old_path: String,
    pub new_path: String,
    /// The file as it is (empty for a new file).
    pub original: String,
    /// The agent's proposed text.
    pub proposed: String,
}

/// A diff as the page lists it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffView {
    pub id: u64,
    pub session_id: SessionId,
    pub tab_name: String,
    pub old_file_path: String,
    pub new_file_path: String,
    pub original: String,
    pub proposed: String,
    /// Unix ms.
    pub created_at: u64,
}

struct Pending {
    view: DiffView,
    reply: oneshot::Sender<DiffAnswer>,
}

/// The diffs waiting for a decision, oldest first.
#[derive(Default)]
pub struct PendingDiffs {
    next_id: u64,
    pending: Vec<Pending>,
}

impl PendingDiffs {
    /// Adds `offer`; a diff already waiting in its tab is rejected.
    pub fn add(&mut self, offer: DiffOffer, now_ms: u64) -> oneshot::Receiver<DiffAnswer> {
        self.settle(|d| d.tab_name == offer.tab, DiffAnswer::Rejected);
        self.next_id += 1;
        let (reply, answer) = oneshot::channel();
        self.pending.push(Pending {
            view: DiffView {
                id: self.next_id,
                session_id: offer.session,
                tab_name: offer.tab,
                old_file_path: offer.old_path,
                new_file_path: offer.new_path,
                original: offer.original,
                proposed: offer.proposed,
                created_at: now_ms,
            },
            reply,
        });
        answer
    }

    /// Answers every diff `which` selects with `answer`; how many there were.
    pub fn settle(&mut self, which: impl Fn(&DiffView) -> bool, answer: DiffAnswer) -> usize {
        let (settled, kept): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|p| which(&p.view));
        self.pending = kept;
        let n = settled.len();
        for p in settled {
            let _ = p.reply.send(answer.clone());
        }
        n
    }

    /// Forgets diffs whose agent stopped waiting (its call was cancelled or timed out);
    /// how many.
    pub fn forget_abandoned(&mut self) -> usize {
        let before = self.pending.len();
        self.pending.retain(|p| !p.reply.is_closed());
        before - self.pending.len()
    }

    pub fn len(&self) -> usize {
        self.pending.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    pub fn views(&self) -> Vec<DiffView> {
        self.pending.iter().map(|p| p.view.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(tab: &str) -> DiffOffer {
        DiffOffer {
            session: SessionId::from("s-1"),
            tab: tab.into(),
            old_path: "/w/a".into(),
            new_path: "/w/a".into(),
            original: "a\n".into(),
            proposed: "b\n".into(),
        }
    }

    #[test]
    fn a_new_diff_in_the_same_tab_rejects_the_old_one() {
        let mut d = PendingDiffs::default();
        let mut first = d.add(offer("t"), 1);
        let _second = d.add(offer("t"), 2);
        assert_eq!(first.try_recv(), Ok(DiffAnswer::Rejected));
        assert_eq!(d.len(), 1);
        let id = d.views()[0].id;
        assert_eq!(d.settle(|v| v.id == id, DiffAnswer::Saved("x".into())), 1);
        assert!(d.is_empty());
    }

    #[test]
    fn abandoned_diffs_are_forgotten() {
        let mut d = PendingDiffs::default();
        drop(d.add(offer("t"), 1));
        let _kept = d.add(offer("u"), 1);
        assert_eq!(d.forget_abandoned(), 1);
        assert_eq!(d.views()[0].tab_name, "u");
    }
}
