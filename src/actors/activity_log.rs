//! ActivityLog actor: a bounded timeline of tool calls and lifecycle events. Tool
//! calls and lifecycle entries share one monotonic id so they merge into one timeline.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use actix::{Actor, Context, Handler, Message, MessageResult, Supervised};
use serde::Serialize;

use super::supervise::{guard, ActorFault};
use crate::metrics::Metrics;

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "activity_log";

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CallStatus {
    /// The tool returned a result without `isError`.
    Success,
    /// The tool returned `isError: true`.
    Error,
    /// The per-tool timeout fired.
    Timeout,
    /// The client cancelled it, or its connection closed.
    Cancelled,
    /// Refused before running (concurrency cap, editor missing).
    Rejected,
}

impl CallStatus {
    /// Lowercase name, as in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Success => "success",
            CallStatus::Error => "error",
            CallStatus::Timeout => "timeout",
            CallStatus::Cancelled => "cancelled",
            CallStatus::Rejected => "rejected",
        }
    }
}

/// Lifecycle events recorded in the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LifecycleEvent {
    /// An agent connected with a new session.
    AgentConnected,
    /// An agent reattached to its session within the grace period.
    AgentReconnected,
    /// An agent's connection closed; its session waits in grace.
    AgentDisconnected,
    /// A session's grace period ran out.
    GraceExpired,
    /// A session was evicted to make room for a new agent.
    SessionEvicted,
    /// A connection was refused.
    ConnectionRefused,
    /// A supervised actor restarted after a fault.
    ActorRestarted,
    /// The bridge started.
    BridgeStarted,
    /// The bridge is stopping.
    BridgeStopping,
}

/// One timeline entry.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Monotonic id shared by all entry kinds.
    pub id: u64,
    /// Unix milliseconds.
    pub timestamp: u64,
    /// What happened.
    #[serde(flatten)]
    pub kind: EntryKind,
}

/// The two kinds of entries.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum EntryKind {
    /// A finished tool call.
    #[serde(rename_all = "camelCase")]
    ToolCall {
        /// Tool name.
        tool: String,
        /// Calling session.
        session_id: String,
        /// Outcome.
        status: CallStatus,
        /// Wall time.
        duration_ms: u64,
        /// Short argument summary (no secrets, no file contents).
        summary: String,
    },
    /// A lifecycle event.
    #[serde(rename_all = "camelCase")]
    Lifecycle {
        /// Event.
        event: LifecycleEvent,
        /// Session concerned, if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        /// Free text.
        detail: String,
    },
}

/// Record a finished tool call.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct RecordToolCall {
    /// Tool name.
    pub tool: String,
    /// Calling session.
    pub session_id: String,
    /// Outcome.
    pub status: CallStatus,
    /// Wall time.
    pub duration_ms: u64,
    /// Argument summary.
    pub summary: String,
}

/// Record a lifecycle event.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct RecordLifecycle {
    /// Event.
    pub event: LifecycleEvent,
    /// Session concerned.
    pub session_id: Option<String>,
    /// Free text.
    pub detail: String,
}

/// Query the timeline, newest last.
#[derive(Debug, Default, Message)]
#[rtype(result = "Result<Vec<Entry>, ActorFault>")]
pub struct Query {
    /// Only this session's entries.
    pub session_id: Option<String>,
    /// Only calls of this tool.
    pub tool: Option<String>,
    /// Only entries after this id.
    pub after_id: Option<u64>,
    /// Include lifecycle entries.
    pub include_lifecycle: bool,
    /// At most this many (the newest).
    pub limit: usize,
}

/// Totals since start-up.
#[derive(Debug, Default, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Tool calls recorded.
    pub tool_calls: u64,
    /// Of which ended with an error, timeout or rejection.
    pub tool_errors: u64,
    /// Supervised actor restarts.
    pub actor_restarts: u64,
}

/// Ask for [`Totals`].
#[derive(Debug, Message)]
#[rtype(result = "Result<Totals, ActorFault>")]
pub struct GetTotals;

/// The ActivityLog actor.
pub struct ActivityLog {
    tool_calls: VecDeque<Entry>,
    lifecycle: VecDeque<Entry>,
    next_id: u64,
    max_entries: usize,
    totals: Totals,
    metrics: Arc<Metrics>,
}

impl ActivityLog {
    /// A log keeping `max_entries` of each kind (batch-evicted at 120 %).
    pub fn new(max_entries: usize, metrics: Arc<Metrics>) -> Self {
        Self {
            tool_calls: VecDeque::new(),
            lifecycle: VecDeque::new(),
            next_id: 1,
            max_entries,
            totals: Totals::default(),
            metrics,
        }
    }

    fn push(&mut self, kind: EntryKind) {
        let entry = Entry {
            id: self.next_id,
            timestamp: now_ms(),
            kind,
        };
        self.next_id += 1;
        let (queue, max) = match entry.kind {
            EntryKind::ToolCall { .. } => (&mut self.tool_calls, self.max_entries),
            EntryKind::Lifecycle { .. } => (&mut self.lifecycle, self.max_entries),
        };
        queue.push_back(entry);
        if queue.len() >= max + max / 5 {
            let excess = queue.len() - max;
            queue.drain(..excess);
        }
    }

    fn query(&self, q: &Query) -> Vec<Entry> {
        let matches = |e: &&Entry| {
            if q.after_id.is_some_and(|after| e.id <= after) {
                return false;
            }
            match &e.kind {
                EntryKind::ToolCall {
                    tool, session_id, ..
                } => {
                    q.session_id.as_ref().is_none_or(|s| s == session_id)
                        && q.tool.as_ref().is_none_or(|t| t == tool)
                }
                EntryKind::Lifecycle { session_id, .. } => {
                    q.include_lifecycle
                        && q.tool.is_none()
                        && q.session_id
                            .as_ref()
                            .is_none_or(|s| session_id.as_ref() == Some(s))
                }
            }
        };
        let mut out: Vec<Entry> = self
            .tool_calls
            .iter()
            .filter(matches)
            .chain(self.lifecycle.iter().filter(matches))
            .cloned()
            .collect();
        out.sort_by_key(|e| e.id);
        let skip = out.len().saturating_sub(q.limit);
        out.drain(..skip);
        out
    }
}

/// Unix time in milliseconds.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Actor for ActivityLog {
    type Context = Context<Self>;
}

impl Supervised for ActivityLog {
    fn restarting(&mut self, _ctx: &mut Context<Self>) {
        self.metrics.record_restart(NAME);
        self.totals.actor_restarts += 1;
        tracing::warn!(actor = NAME, "restarted after a fault");
        self.push(EntryKind::Lifecycle {
            event: LifecycleEvent::ActorRestarted,
            session_id: None,
            detail: NAME.to_string(),
        });
    }
}

impl Handler<RecordToolCall> for ActivityLog {
    type Result = ();
    fn handle(&mut self, msg: RecordToolCall, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            act.totals.tool_calls += 1;
            if msg.status != CallStatus::Success && msg.status != CallStatus::Cancelled {
                act.totals.tool_errors += 1;
            }
            act.push(EntryKind::ToolCall {
                tool: msg.tool,
                session_id: msg.session_id,
                status: msg.status,
                duration_ms: msg.duration_ms,
                summary: msg.summary,
            });
        });
    }
}

impl Handler<RecordLifecycle> for ActivityLog {
    type Result = ();
    fn handle(&mut self, msg: RecordLifecycle, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            if msg.event == LifecycleEvent::ActorRestarted {
                act.totals.actor_restarts += 1;
            }
            act.push(EntryKind::Lifecycle {
                event: msg.event,
                session_id: msg.session_id,
                detail: msg.detail,
            });
        });
    }
}

impl Handler<Query> for ActivityLog {
    type Result = Result<Vec<Entry>, ActorFault>;
    fn handle(&mut self, msg: Query, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| act.query(&msg))
    }
}

impl Handler<GetTotals> for ActivityLog {
    type Result = MessageResult<GetTotals>;
    fn handle(&mut self, _: GetTotals, ctx: &mut Context<Self>) -> Self::Result {
        MessageResult(guard(NAME, self, ctx, |act, _| act.totals.clone()))
    }
}

#[cfg(feature = "fault-injection")]
mod faults {
    use super::*;
    use crate::actors::fault::{Crash, Stall};
    use actix::{ActorFutureExt, ResponseActFuture, WrapFuture};

    impl Handler<Crash> for ActivityLog {
        type Result = Result<(), ActorFault>;
        fn handle(&mut self, _: Crash, ctx: &mut Context<Self>) -> Self::Result {
            guard(NAME, self, ctx, |_, _| panic!("injected fault in {NAME}"))
        }
    }

    impl Handler<Stall> for ActivityLog {
        type Result = ResponseActFuture<Self, Result<(), ActorFault>>;
        fn handle(&mut self, msg: Stall, _: &mut Context<Self>) -> Self::Result {
            Box::pin(
                actix::clock::sleep(msg.0)
                    .into_actor(self)
                    .map(|_, _, _| Ok(())),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(log: &mut ActivityLog, tool: &str, session: &str) {
        log.totals.tool_calls += 1;
        log.push(EntryKind::ToolCall {
            tool: tool.into(),
            session_id: session.into(),
            status: CallStatus::Success,
            duration_ms: 1,
            summary: String::new(),
        });
    }

    #[test]
    fn evicts_in_a_batch_at_120_percent() {
        let mut log = ActivityLog::new(10, Arc::new(Metrics::new()));
        for _ in 0..11 {
            call(&mut log, "t", "s");
        }
        assert_eq!(log.tool_calls.len(), 11);
        call(&mut log, "t", "s");
        assert_eq!(
            log.tool_calls.len(),
            10,
            "12 = 120 % of 10 triggers eviction to 10"
        );
        assert_eq!(log.tool_calls.front().unwrap().id, 3);
    }

    #[test]
    fn query_merges_kinds_by_id_and_filters() {
        let mut log = ActivityLog::new(100, Arc::new(Metrics::new()));
        call(&mut log, "a", "s1");
        log.push(EntryKind::Lifecycle {
            event: LifecycleEvent::AgentConnected,
            session_id: Some("s2".into()),
            detail: String::new(),
        });
        call(&mut log, "b", "s2");
        let all = log.query(&Query {
            include_lifecycle: true,
            limit: 10,
            ..Default::default()
        });
        assert_eq!(all.iter().map(|e| e.id).collect::<Vec<_>>(), vec![1, 2, 3]);
        let s2 = log.query(&Query {
            session_id: Some("s2".into()),
            include_lifecycle: true,
            limit: 10,
            ..Default::default()
        });
        assert_eq!(s2.len(), 2);
        let newest = log.query(&Query {
            limit: 1,
            ..Default::default()
        });
        assert_eq!(newest[0].id, 3);
    }
}
