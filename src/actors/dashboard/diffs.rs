//! Diffs waiting in the browser page: an agent's `openDiff` while no editor is
//! connected and a browser watches. Each waits for the person's decision, exactly
//! like a diff in an editor (the Dashboard rejects an older diff in the same tab, a
//! session's diffs when its connection goes, one on `close_tab`).

use serde::Serialize;

use super::waiting::Waiting;
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
    /// Names the offer in a later [`DiffCheck`] (unique per offer; 0: none comes).
    pub check_token: u64,
}

/// What the file's language server says of a proposal (`checkEdit`), shown with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffCheck {
    /// In a line: "adds 2 errors: …", "adds no problems", or why it was not checked.
    pub summary: String,
    /// Errors the proposal adds.
    pub errors_added: usize,
    /// Every problem it adds (at most 20), `line:column Severity: message`.
    pub added: Vec<String>,
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
    /// The language server's check of the proposal, once it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<DiffCheck>,
    #[serde(skip)]
    pub check_token: u64,
}

/// The diffs waiting for a decision, oldest first.
pub type PendingDiffs = Waiting<DiffView, DiffAnswer>;

impl DiffOffer {
    /// How the page lists this offer as diff `id`.
    pub fn into_view(self, id: u64, now_ms: u64) -> DiffView {
        DiffView {
            id,
            session_id: self.session,
            tab_name: self.tab,
            old_file_path: self.old_path,
            new_file_path: self.new_path,
            original: self.original,
            proposed: self.proposed,
            created_at: now_ms,
            check: None,
            check_token: self.check_token,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offer_becomes_the_view_the_page_lists() {
        let offer = DiffOffer {
            session: SessionId::from("s-1"),
            tab: "t".into(),
            old_path: "/w/a".into(),
            new_path: "/w/b".into(),
            original: "a\n".into(),
            proposed: "b\n".into(),
            check_token: 0,
        };
        let mut d = PendingDiffs::default();
        let _answer = d.add(|id| offer.into_view(id, 7));
        let v = &d.views()[0];
        assert_eq!(
            (
                v.id,
                v.tab_name.as_str(),
                v.new_file_path.as_str(),
                v.created_at
            ),
            (1, "t", "/w/b", 7)
        );
    }
}
