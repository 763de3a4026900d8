//! Tool requests of Claude tasks that a permission rule with `decision = "ask"` sent
//! to the person. Each waits for a decision in the page; the task's driver gives up
//! (and denies) when its timeout passes.

use serde::Serialize;
use serde_json::Value;

use super::waiting::Waiting;
use crate::actors::messages::dashboard::AskApproval;
use crate::orchestrator::TaskId;

/// A request as the page lists it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalView {
    pub id: u64,
    pub task_id: TaskId,
    pub tool: String,
    pub input: Value,
    /// The rule that said `ask`.
    pub rule: String,
    /// Unix ms.
    pub created_at: u64,
    /// Unix ms: denied when nobody decides before.
    pub deadline: u64,
}

/// Requests waiting for the person, oldest first; the answer is `true` for allow.
pub type PendingApprovals = Waiting<ApprovalView, bool>;

/// How the page lists request `id`, asked at `now_ms`.
pub fn view_of(ask: AskApproval, id: u64, now_ms: u64) -> ApprovalView {
    let deadline = now_ms + u64::try_from(ask.timeout.as_millis()).unwrap_or(u64::MAX);
    ApprovalView {
        id,
        task_id: ask.task_id,
        tool: ask.tool,
        input: ask.input,
        rule: ask.rule,
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
            task_id: TaskId::from("t-1"),
            tool: "Bash".into(),
            input: serde_json::json!({"command": "ls"}),
            rule: "rule 0 (Bash)".into(),
            timeout: Duration::from_secs(5),
        };
        let mut a = PendingApprovals::default();
        let mut decision = a.add(|id| view_of(ask, id, 1000));
        let v = &a.views()[0];
        assert_eq!((v.id, v.deadline, v.tool.as_str()), (1, 6000, "Bash"));
        assert_eq!(a.settle(|x| x.id == 1, true), 1);
        assert_eq!(decision.try_recv(), Ok(true));
    }
}
