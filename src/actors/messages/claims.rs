//! Messages the Claims actor handles from other actors (the registry telling it an
//! agent is gone for good, or is the same as another). What tools, hooks and the page
//! ask it stays next to it.

use actix::prelude::*;

use super::session::SessionId;

/// An agent's session ended for good: its claims end with it.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct AgentGone(pub SessionId);

/// The agent `to` is the one whose claims were held by session `from` (the sessions
/// merged) or by client process `pid` (the agent came back in a new session after a
/// restart): those claims are its now.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct ClaimsMove {
    pub from: Option<SessionId>,
    pub pid: Option<u32>,
    pub to: SessionId,
    /// How people see `to`.
    pub label: String,
}

/// The sessions that hold file claims now (the Claims actor tells the registry after
/// every change): the registry makes room for a new agent with another's slot.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct ClaimHolders(pub Vec<SessionId>);

/// What the registry tells the Claims actor.
#[derive(Clone)]
pub struct ClaimsLink {
    pub gone: Recipient<AgentGone>,
    pub moved: Recipient<ClaimsMove>,
}
