//! What other actors send the Dashboard (the browser page's actor).

use std::time::Duration;

use actix::prelude::*;
use serde_json::Value;
use tokio::sync::oneshot;

use super::session::SessionId;
use crate::orchestrator::TaskId;

/// A tool request for the person to allow or deny in the page: a Claude task's, which
/// a permission rule with `decision = "ask"` sends, or an interactive agent's
/// permission dialog (seen through its hooks). The answer is a receiver of the decision
/// (`true`: allow); the asker gives up when it does not come within `timeout`, or when
/// the receiver closes.
#[derive(Debug, Message)]
#[rtype(result = "oneshot::Receiver<bool>")]
pub struct AskApproval {
    pub asker: Asker,
    /// The tool wanted (`Bash`, `Write`, …).
    pub tool: String,
    /// Its input, as the asker sent it.
    pub input: Value,
    /// How long the asker waits.
    pub timeout: Duration,
    /// Ask only while a page is watching; with none, the receiver closes at once.
    pub only_if_watched: bool,
}

/// The agents' change sets moved (a write recorded, hunks kept or undone): the page
/// reloads its Changes view.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct ChangesUpdated;

/// Who asks for an approval.
#[derive(Debug, Clone)]
pub enum Asker {
    /// A Claude task the bridge runs; `rule` said `ask`. Denied on timeout.
    Task { task_id: TaskId, rule: String },
    /// An interactive agent's permission dialog: its terminal asks too, and the first
    /// answer wins.
    Agent {
        session: SessionId,
        /// How people see it.
        agent: String,
    },
}
