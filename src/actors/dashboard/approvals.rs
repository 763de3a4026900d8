//! Tool requests of Claude tasks that a permission rule with `decision = "ask"` sent
//! to the person. Each waits for a decision in the page; the task's driver gives up
//! (and denies) when its timeout passes.

use serde::Serialize;
use serde_json::Value;
use tokio::sync::oneshot;

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

struct Pending {
    view: ApprovalView,
    reply: oneshot::Sender<bool>,
}

/// Requests waiting for the person, oldest first.
#[derive(Default)]
pub struct PendingApprovals {
    next_id: u64,
    pending: Vec<Pending>,
}

impl PendingApprovals {
    /// Adds a request; the receiver gets the decision (`true`: allowed).
    pub fn add(&mut self, ask: AskApproval, now_ms: u64) -> oneshot::Receiver<bool> {
        self.next_id += 1;
        let (reply, decision) = oneshot::channel();
        let deadline = now_ms + u64::try_from(ask.timeout.as_millis()).unwrap_or(u64::MAX);
        self.pending.push(Pending {
            view: ApprovalView {
                id: self.next_id,
                task_id: ask.task_id,
                tool: ask.tool,
                input: ask.input,
                rule: ask.rule,
                created_at: now_ms,
                deadline,
            },
            reply,
        });
        decision
    }

    /// Decides request `id`; false when it is not waiting (decided, timed out, gone).
    pub fn decide(&mut self, id: u64, allow: bool) -> bool {
        let Some(at) = self.pending.iter().position(|p| p.view.id == id) else {
            return false;
        };
        self.pending.remove(at).reply.send(allow).is_ok()
    }

    /// Forgets requests whose task stopped waiting (timed out, cancelled); how many.
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

    pub fn views(&self) -> Vec<ApprovalView> {
        self.pending.iter().map(|p| p.view.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ask() -> AskApproval {
        AskApproval {
            task_id: TaskId::from("t-1"),
            tool: "Bash".into(),
            input: serde_json::json!({"command": "ls"}),
            rule: "rule 0 (Bash)".into(),
            timeout: Duration::from_secs(5),
        }
    }

    #[test]
    fn a_decision_reaches_the_task_once() {
        let mut a = PendingApprovals::default();
        let mut rx = a.add(ask(), 1000);
        let v = &a.views()[0];
        assert_eq!(v.deadline, 6000);
        let id = v.id;
        assert!(a.decide(id, true));
        assert_eq!(rx.try_recv(), Ok(true));
        assert!(!a.decide(id, false), "decided already");
    }

    #[test]
    fn requests_nobody_waits_for_are_forgotten() {
        let mut a = PendingApprovals::default();
        drop(a.add(ask(), 0));
        assert_eq!(a.forget_abandoned(), 1);
        assert_eq!(a.len(), 0);
    }
}
