//! Why a tool call failed. Handlers return [`ToolResult`]; the registry turns an error
//! into a result with `isError: true` whose text is the error's message (the text
//! agents read, which tests assert word for word).

use std::path::PathBuf;

use crate::actors::extension::ExtError;
use crate::actors::supervise::ActorFault;
use crate::actors::writer::WriteError;
use crate::exec::process::RunError;
use crate::exec::PolicyError;
use crate::protocol::mcp::CallToolResult;
use crate::workspace::files::FileError;
use crate::workspace::search::SearchError;
use crate::workspace::PathError;

/// What a tool handler returns: its result, or why it failed.
pub type ToolResult = Result<CallToolResult, ToolError>;

/// A tool failure the agent can read and act on.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// A path argument is outside the workspace or cannot be checked.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The editor could not answer.
    #[error(transparent)]
    Editor(#[from] ExtError),
    /// An actor the tool needs failed or is restarting.
    #[error(transparent)]
    Actor(#[from] ActorFault),
    /// The WorkspaceWriter refused the write.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// Reading a file failed.
    #[error(transparent)]
    File(#[from] FileError),
    /// A search did not run or did not finish.
    #[error(transparent)]
    Search(#[from] SearchError),
    /// The command policy refused a program.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// A program could not be started.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A confined command was refused or could not be started.
    #[error(transparent)]
    Confined(#[from] crate::exec::ConfinedError),
    /// A git command failed or an argument could become a flag.
    #[error(transparent)]
    Git(#[from] crate::tools::git::GitError),
    /// A directory argument names something else.
    #[error("Not a directory: {}", .0.display())]
    NotADirectory(PathBuf),
    /// Blocking work (file I/O, walks) panicked or was cancelled.
    #[error("internal error in a blocking task: {0}")]
    Blocking(#[from] tokio::task::JoinError),
    /// The Orchestrator's mailbox refused the request.
    #[error("the orchestrator is unavailable: {0}")]
    OrchestratorUnavailable(actix::MailboxError),
    /// Any other refusal, worded for the agent.
    #[error("{0}")]
    Refused(String),
}

impl ToolError {
    /// A refusal worded for the agent.
    pub fn refused(message: impl Into<String>) -> Self {
        Self::Refused(message.into())
    }
}

impl From<ToolError> for CallToolResult {
    fn from(error: ToolError) -> Self {
        CallToolResult::error(error.to_string())
    }
}
