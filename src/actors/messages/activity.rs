//! Messages the ActivityLog handles from every other actor (the activity log itself
//! depends on none of them).

use actix::prelude::*;
use serde::{Deserialize, Serialize};

use super::session::SessionId;

/// Lifecycle events recorded in the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LifecycleEvent {
    /// An agent connected with a new session.
    AgentConnected,
    /// An agent reattached to its session within the grace period.
    AgentReconnected,
    /// A second session turned out to serve the same client process and was merged
    /// into the first.
    SessionMerged,
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
    /// A session was restored from a checkpoint at start-up.
    SessionRestored,
    EditorConnected,
    EditorDisconnected,
    /// An editor request timed out; the circuit breaker opened.
    CircuitOpened,
    /// The editor answered again; the circuit breaker closed.
    CircuitClosed,
    /// A Claude task asked to use a tool; the policy decided.
    PermissionDecision,
    /// An automation hook started a task (or was skipped).
    AutomationFired,
    /// The automation policy was reloaded, or an edit of it was refused.
    AutomationPolicy,
    /// A `notify` hook's message.
    AutomationNotice,
    BridgeStarted,
    BridgeStopping,
    /// An agent (or the person) claimed files.
    FilesClaimed,
    /// A claim was released, expired, or ended with its agent.
    ClaimEnded,
    /// A write to a claimed file was refused (a bridge tool or a native Edit/Write).
    WriteRefused,
    /// A Claude Code conversation started or ended (its hooks said so).
    CliSession,
    /// The person submitted a prompt to an agent.
    PromptSubmitted,
    /// An agent ended its turn, or the done-gate kept it working.
    AgentStopped,
    /// An agent's permission dialog was answered in the page.
    PermissionAnswered,
    /// The person undid hunks an agent wrote.
    ChangesUndone,
}

/// Record a lifecycle event.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct RecordLifecycle {
    /// What happened.
    pub event: LifecycleEvent,
    /// The agent session it concerns, if any.
    pub session_id: Option<SessionId>,
    /// Shown after the event in the timeline.
    pub detail: String,
}
