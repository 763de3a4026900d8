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
    /// The native call (`toolu_…`) that writes; `None` for a bridge write tool.
    pub call: Option<String>,
    /// The text as the writer sees it, when that is not the file on disk (an editor's
    /// buffer with unsaved changes, which its save will write too); `None`: read the
    /// file.
    pub text: Option<String>,
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
    /// As in its [`BeforeWrite`].
    pub call: Option<String>,
}

/// The write announced by a [`BeforeWrite`] did not happen (the call failed).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct WriteAbandoned {
    pub session: SessionId,
    pub path: PathBuf,
    pub call: Option<String>,
}
