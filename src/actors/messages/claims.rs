//! Messages the Claims actor handles from other actors (the registry telling it an
//! agent is gone for good). What tools, hooks and the page ask it stays next to it.

use actix::prelude::*;

use super::session::SessionId;

/// An agent's session ended for good: its claims end with it.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct AgentGone(pub SessionId);
