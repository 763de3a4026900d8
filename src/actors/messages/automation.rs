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

/// Something the bridge itself saw happen (sent by the Orchestrator, the registry, the
/// claims and the command tools). A variant here carries the bridge's own types, which
/// the Automation actor translates; [`BridgeEvent::Policy`] carries the policy's event
/// as it is.
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
    /// An agent changed a file (its own tools through its hooks, or a bridge write
    /// tool).
    AgentEdited {
        session: SessionId,
        /// How people see the agent.
        agent: String,
        /// Absolute path.
        file: PathBuf,
        /// The tool.
        tool: String,
    },
    /// An agent's own shell command failed.
    AgentCommandFailed {
        session: SessionId,
        agent: String,
        /// The command line (bounded by the sender).
        command: String,
        /// What the CLI reported.
        error: String,
    },
    /// The person submitted a prompt to an agent.
    PromptSubmitted {
        session: SessionId,
        agent: String,
        /// The prompt (bounded by the sender).
        prompt: String,
    },
    /// An event already in the policy's own terms (`crate::automation::Event`): what
    /// a reporter that can say it as the policy does sends, without a variant here or
    /// a translation in the Automation actor.
    Policy(crate::automation::Event),
}

/// An agent is about to end its turn: runs the stop through the policy. Non-gating
/// `onAgentStop` hooks fire as usual; a done-gate answers the check to run (the
/// caller runs it and reports with [`GateChecked`]), or nothing when there is no gate,
/// its holds since the agent's last prompt ([`BridgeEvent::PromptSubmitted`]) are
/// spent, or automation's own work is in flight.
#[derive(Debug, Message)]
#[rtype(result = "Option<GateCheck>")]
pub struct AskGate {
    pub session: SessionId,
    pub agent: String,
    /// The agent's last message (bounded by the sender).
    pub message: String,
}

/// An agent proposes a change to `file` (workspace-relative) with `tool`: the
/// `onEditProposed` hooks that react fire, and the edit gate's check, when the policy
/// has one for the file, is handed back for the proposer to run (it has the text).
#[derive(Debug, Message)]
#[rtype(result = "Option<EditGate>")]
pub struct AskEditGate {
    pub session: SessionId,
    pub agent: String,
    pub file: String,
    pub tool: String,
}

/// The check an edit gate asks for.
#[derive(Debug, Clone)]
pub struct EditGate {
    /// The hook.
    pub hook: &'static str,
    /// An added diagnostic at or above this refuses the change.
    pub min_severity: crate::diagnostics::Severity,
}

/// How an edit gate's check ended, for the hook's record (and the timeline when it
/// refused).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct EditGateChecked {
    pub hook: &'static str,
    /// The file (workspace-relative).
    pub file: String,
    /// `passed`, `refused: …`, `not checked: …`.
    pub outcome: String,
    pub refused: bool,
}

/// The check a done-gate asks for.
#[derive(Debug, Clone)]
pub struct GateCheck {
    /// The hook.
    pub hook: &'static str,
    /// `Command` (arguments rendered) or `Diagnostics`.
    pub action: crate::automation::policy::Action,
    /// Timeout of a command.
    pub timeout_ms: u64,
}

/// The done-gate's check ran: `failure` says why it failed. Answers the reason that
/// keeps the agent working, or nothing (it passed, or the gate does not hold).
#[derive(Debug, Message)]
#[rtype(result = "Option<String>")]
pub struct GateChecked {
    pub session: SessionId,
    pub hook: &'static str,
    /// `None`: passed.
    pub failure: Option<String>,
    /// The check never finished: whoever waited for it went away (the agent's hook
    /// was killed). Settles the gate without counting a hold.
    pub abandoned: bool,
}
