//! Messages the Changes actor handles from other actors: a write is about to happen
//! (the hooks before an agent's Edit/Write, the bridge's write tools) and an agent's
//! write happened (the registry, which knows the agent's name). What tools and the
//! page ask it stays next to it.

use std::path::PathBuf;

use actix::prelude::*;

use super::session::SessionId;

/// Agent `session` is about to write `path`: remember its text now, so that the
/// change can be told hunk by hunk once the write happened.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct BeforeWrite {
    pub session: SessionId,
    pub path: PathBuf,
}

/// Agent `session` (seen as `agent`) changed `path` (`display`: workspace-relative)
/// with `tool`.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct AgentWrote {
    pub session: SessionId,
    pub agent: String,
    pub path: PathBuf,
    pub display: String,
    pub tool: String,
}
