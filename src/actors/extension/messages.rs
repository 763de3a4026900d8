//! Everything the ExtensionClient answers: its messages (the ones other actors send are
//! in `actors::messages::editor` and re-exported here), their results and errors.

use std::time::Duration;

use actix::prelude::*;
use serde_json::Value;
use tokio::sync::oneshot;

pub use crate::actors::messages::editor::{
    CloseSessionDiffs, EditorAttach, EditorDetach, EditorFrame, NotifyEditor,
};
use crate::actors::messages::session::SessionId;
use crate::actors::supervise::ActorFault;
use crate::diagnostics::FileDiagnostics;

use super::ExtensionStatus;

/// Why an editor request failed (the text is what agents read).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExtError {
    /// No editor.
    #[error("Editor not connected: no editor is connected to ide-bridge. Open the workspace in an editor with the ide-bridge plugin (VS Code or Neovim; it finds the bridge through the lock file), then retry.")]
    NotConnected,
    /// The per-request timeout fired.
    #[error("Extension request timed out after {ms} ms ({method}); the editor may be busy")]
    Timeout {
        /// The timeout that fired.
        ms: u64,
        /// The request's method.
        method: String,
    },
    /// The breaker is open.
    #[error("Extension request timed out earlier and the editor is suspended (circuit breaker open after {failures} timeouts); {}", retry_text(*retry_in_ms))]
    CircuitOpen {
        /// Consecutive timeouts.
        failures: u32,
        /// Until the next probe (0: a probe is in flight).
        retry_in_ms: u64,
    },
    /// The editor went away; carries the request's method.
    #[error("The editor disconnected before answering {0}")]
    Disconnected(String),
    /// The editor answered with an error.
    #[error("The editor could not do {method}: {message}")]
    Editor {
        /// The request's method.
        method: String,
        /// The error's `message` (or the whole error when it has none).
        message: String,
    },
    /// The actor restarted with the request in flight; carries the request's method.
    #[error("The editor connection restarted while {0} was in flight; retry")]
    Restarted(String),
    /// The actor could not be reached.
    #[error(transparent)]
    Fault(#[from] ActorFault),
}

/// How a diff ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffOutcome {
    /// Accepted (possibly edited): the final text.
    Saved(String),
    /// Rejected, closed, replaced, or its agent or editor went away.
    Rejected,
}

/// The answer to one editor request, sent exactly once.
pub type Reply = oneshot::Sender<Result<Value, ExtError>>;

/// Send `extension/<method>`; the answer (or why there is none) goes to `reply`.
/// If the actor is gone before it handles this, `reply` is dropped unanswered.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Call {
    /// Which method (sent as `extension/<name>`).
    pub method: crate::protocol::editor::Method,
    /// Sent as they are.
    pub params: Value,
    /// Overrides `editor.request_timeout_ms`.
    pub timeout: Option<Duration>,
    /// Where the answer goes.
    pub reply: Reply,
}

/// Show a diff owned by `session_id`; resolves when the user decides or it is rejected.
#[derive(Message)]
#[rtype(result = "Result<DiffOutcome, ExtError>")]
pub struct OpenDiff {
    /// The session that owns it (its diffs close when its IDE connection goes).
    pub session_id: SessionId,
    /// Tab name (unique among pending diffs: a new diff in the tab rejects the old).
    pub tab_name: String,
    /// `extension/openDiff` params.
    pub params: Value,
}

/// Reject the pending diff in `tab_name`; true when there was one.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct CloseDiff {
    /// The diff's tab.
    pub tab_name: String,
}

/// Ask for [`ExtensionStatus`].
#[derive(Message)]
#[rtype(result = "ExtensionStatus")]
pub struct GetStatus;

/// A read of what the editor pushed.
#[derive(Message)]
#[rtype(result = "Cached")]
pub enum Read {
    /// Diagnostics of one file (as the editor names it), or of all.
    Diagnostics(Option<String>),
    /// The latest selection.
    Selection,
}

/// The answer to a [`Read`].
#[derive(Debug, Clone)]
pub enum Cached {
    /// Diagnostics by file.
    Diagnostics(Vec<FileDiagnostics>),
    /// The selection in Claude's `selection_changed` shape, if any.
    Selection(Option<Value>),
}

/// Wait for the next diagnostics change.
#[derive(Message)]
#[rtype(result = "Result<oneshot::Receiver<Vec<FileDiagnostics>>, ExtError>")]
pub struct WatchDiagnostics;

/// When the bridge tries a suspended editor again, as [`ExtError::CircuitOpen`] says it.
fn retry_text(retry_in_ms: u64) -> String {
    if retry_in_ms == 0 {
        "the bridge is checking whether it answers again: try again in a moment".into()
    } else {
        format!("the bridge retries it in {retry_in_ms} ms")
    }
}
