//! What other actors send the Dashboard (the browser page's actor).

use std::time::Duration;

use actix::prelude::*;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::orchestrator::TaskId;

/// A Claude task's tool request that a permission rule sends to the person
/// (`decision = "ask"`). The answer is a receiver of the decision (`true`: allow); the
/// asker denies when it does not come within `timeout` (or the receiver closes).
#[derive(Debug, Message)]
#[rtype(result = "oneshot::Receiver<bool>")]
pub struct AskApproval {
    pub task_id: TaskId,
    /// The tool the task wants (`Bash`, `Write`, …).
    pub tool: String,
    /// Its input, as the task sent it.
    pub input: Value,
    /// The rule that said `ask`.
    pub rule: String,
    /// How long the asker waits before it denies.
    pub timeout: Duration,
}
