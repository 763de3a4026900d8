//! Tool requests of Claude tasks that a permission rule with `decision = "ask"` sent
//! to the person. Each waits for a decision in the page; the task's driver gives up
//! (and denies) when its timeout passes.

use serde::Serialize;
use serde_json::Value;

use super::waiting::Waiting;
use crate::actors::messages::dashboard::{AskApproval, Asker};
use crate::actors::messages::session::SessionId;
use crate::orchestrator::TaskId;

/// A request as the page lists it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalView {
    pub id: u64,
    /// The Claude task asking (absent for an agent's dialog).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<TaskId>,
    /// The interactive agent asking (absent for a task).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionId>,
    /// How people see that agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    pub tool: String,
    pub input: Value,
    /// The rule that said `ask` (tasks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Unix ms.
    pub created_at: u64,
    /// Unix ms: a task's request is denied then; an agent's dialog is left to its
    /// terminal.
    pub deadline: u64,
}

/// Requests waiting for the person, oldest first; the answer is `true` for allow.
pub type PendingApprovals = Waiting<ApprovalView, bool>;

/// How the page lists request `id`, asked at `now_ms`.
pub fn view_of(ask: AskApproval, id: u64, now_ms: u64) -> ApprovalView {
    let deadline = now_ms + u64::try_from(ask.timeout.as_millis()).unwrap_or(u64::MAX);
    let (task_id, rule, session, agent) = match ask.asker {
        Asker::Task { task_id, rule } => (Some(task_id), Some(rule), None, None),
        Asker::Agent { session, agent } => (None, None, Some(session), Some(agent)),
    };
    ApprovalView {
        id,
        task_id,
        session,
        agent,
        tool: ask.tool,
        input: ask.input,
        rule,
        created_at: now_ms,
        deadline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_request_is_listed_with_its_deadline() {
        let ask = AskApproval {
            asker: Asker::Task {
                task_id: TaskId::from("t-1"),
                rule: "rule 0 (Bash)".into(),
            },
            tool: "Bash".into(),
            input: serde_json::json!({"command": "ls"}),
            timeout: Duration::from_secs(5),
            only_if_watched: false,
        };
        let mut a = PendingApprovals::default();
        let mut decision = a.add(|id| view_of(ask, id, 1000));
        let v = &a.views()[0];
        assert_eq!((v.id, v.deadline, v.tool.as_str()), (1, 6000, "Bash"));
        assert_eq!(a.settle(|x| x.id == 1, true), 1);
        assert_eq!(decision.try_recv(), Ok(true));
    }
}
