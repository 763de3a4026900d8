//! Messages the Automation actor handles from other actors.

use std::path::PathBuf;

use actix::prelude::*;

use super::session::SessionId;
use crate::diagnostics::Diagnostic;
use crate::orchestrator::{TaskId, TaskOrigin, TaskStatus};

/// What the editor just told the bridge (sent by the ExtensionClient).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub enum EditorEvent {
    /// A file's diagnostics changed; empty means cleared.
    Diagnostics {
        /// The path as the editor sent it.
        file: String,
        /// Its diagnostics now.
        diagnostics: Vec<Diagnostic>,
    },
    /// The editor saved a file.
    FileSaved {
        /// The path as the editor sent it.
        file: String,
    },
    /// The editor went away: the files it reported diagnostics for are the
    /// workspace linters' again.
    Disconnected,
}

/// The bridge's own linters found that a file's diagnostics changed (sent by the
/// Diagnostics actor after a re-run; one message per file whose list differs from
/// the previous run, an empty list when its diagnostics cleared).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct WorkspaceDiagnostics {
    /// Absolute path.
    pub file: PathBuf,
    /// Its diagnostics now.
    pub diagnostics: Vec<Diagnostic>,
}

/// Something the bridge itself saw happen (sent by the Orchestrator, the registry and
/// the command tools).
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub enum BridgeEvent {
    /// A Claude task reached a final state.
    TaskEnded {
        /// The task.
        task: TaskId,
        /// Who started it.
        origin: TaskOrigin,
        /// How it ended (`done`, `error`, `cancelled`).
        status: TaskStatus,
        /// The end of its output (bounded by the sender).
        output_tail: String,
    },
    /// An agent's connection completed the MCP handshake in a new session.
    AgentConnected {
        /// Its session.
        session: SessionId,
        /// The client's `clientInfo.name` (empty when it sent none).
        client: String,
    },
    /// An agent's session ended for good (grace expired or the client ended it).
    AgentGone {
        /// Its session.
        session: SessionId,
        /// The client's name, as it connected.
        client: String,
    },
    /// A command run through `runCommand` exited non-zero or timed out.
    CommandFailed {
        /// The program and its arguments, as run.
        command: String,
        /// Exit code (`None` when killed or timed out).
        exit_code: Option<i32>,
        /// It ran past its timeout.
        timed_out: bool,
        /// The end of its output (bounded by the sender).
        output_tail: String,
        /// The session whose agent ran it.
        session: Option<SessionId>,
    },
}
