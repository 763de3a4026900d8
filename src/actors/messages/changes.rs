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
    /// The call that writes: a native one's `toolu_…`, a bridge write tool's
    /// `bridge:<n>` (writes are matched by it).
    pub call: Option<String>,
    /// What the file held before the write.
    pub baseline: Baseline,
}

/// What a file held before a write, as [`BeforeWrite`] knows it.
#[derive(Debug)]
pub enum Baseline {
    /// What is on disk now (the write has not happened yet).
    Disk,
    /// This text: an editor's buffer with unsaved changes (which its save writes too),
    /// or the text a native Edit's result says the file had.
    Text(String),
    /// The file did not exist (a native Write that created it).
    Absent,
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

/// An agent's own shell command starts (`ran: None`) or ended (`ran: Some(agent)`):
/// the followed files among `files` (named in the command, workspace-relative) are
/// caught up — as the person's when it starts, so that what they hold when it ends is
/// credited to it only for what changed while it ran.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct CommandRan {
    pub session: SessionId,
    /// How people see the agent; `None`: the command starts.
    pub ended_by: Option<String>,
    pub files: Vec<String>,
}

/// The write announced by a [`BeforeWrite`] did not happen (the call failed).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct WriteAbandoned {
    pub session: SessionId,
    pub path: PathBuf,
    pub call: Option<String>,
}
