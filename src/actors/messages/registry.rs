//! Messages the SessionRegistry handles from other actors: what sessions report about
//! themselves, what the editor side asks to fan out to agents, and the checkpoint's
//! export.

use std::path::PathBuf;

use actix::prelude::*;
use serde_json::Value;

use super::session::{SessionHandle, SessionId};
use crate::persist::checkpoint::SessionState;

/// A session's report about itself.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct SessionEvent {
    /// The reporting session.
    pub session_id: SessionId,
    /// What happened.
    pub change: SessionChange,
}

/// What a session reports to the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionChange {
    /// It has a connection again (after its grace period began).
    Attached,
    /// Its last connection closed; it waits in its grace period.
    Detached,
    /// Its connections are all idle HTTP ones (no request in flight, no stream): the
    /// registry treats it as in its grace period until it is [`Self::Active`] again.
    Idle,
    /// Its connections are HTTP ones with nothing in flight, some listening on their
    /// GET stream: it keeps its notifications, and its slot goes to a new agent when
    /// the bridge is full and no session is in grace (the least recently busy first).
    Listening,
    /// A request arrived on a connection of an [`Self::Idle`] or [`Self::Listening`]
    /// session.
    Active,
    /// A connection completed the MCP handshake (`notifications/initialized`).
    Initialized {
        /// The client's `clientInfo.name` when it sent one.
        client: Option<String>,
        /// It is an IDE connection (where editor events such as `at_mentioned` go).
        ide: bool,
    },
    /// It ended (grace expired, or its client ended it) and must be forgotten.
    Ended,
    /// It learned its client's process id (`ide_connected`): if another session
    /// already serves that process, the two are one agent and merge.
    ClientPid(u32),
}

/// The tool set changed; tell agents (debounced unless `immediate`).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct ToolsChanged {
    /// Skip the debounce (editor connect).
    pub immediate: bool,
}

/// An editor event for every listening agent (`selection_changed`, …).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Broadcast {
    /// Notification method.
    pub method: &'static str,
    /// Sent to each agent as they are.
    pub params: Value,
}

/// An automation `notify` hook's message for every agent: in its log (MCP
/// `notifications/message` at level notice) where a connection listens, and before its
/// model at its next tool call.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Announce(pub Value);

/// A note for agent `session` (sent as a log notification, and waiting as context at
/// its next tool call): the person undid its hunks, and why. Dropped when the agent is
/// gone.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct TellAgent {
    pub session: SessionId,
    pub text: String,
}

/// An `at_mentioned` from the editor or the page: delivered to listening agents (or the
/// one its `sessionId` names), or queued briefly until one listens.
#[derive(Debug, Message)]
#[rtype(result = "Delivery")]
pub struct Mention(pub Value);

/// What became of a [`Mention`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// Sent to this many agents.
    Sent(usize),
    /// No agent listens on an IDE connection: kept for the first that does, within the
    /// registry's TTL.
    Queued,
    /// The session it names does not exist.
    NoSuchSession(String),
    /// The registry failed while delivering it.
    Failed(String),
}

impl Default for Delivery {
    /// Sent to nobody (what a stand-in registry answers).
    fn default() -> Self {
        Delivery::Sent(0)
    }
}

/// An editor connected: tell it how many agents are here.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct EditorConnected;

/// Every session's durable state, for a checkpoint.
#[derive(Debug, Message)]
#[rtype(result = "Vec<SessionState>")]
pub struct ExportSessions;

/// What the editor side sends the registry: the ExtensionClient holds this instead
/// of the registry's address.
#[derive(Clone)]
pub struct RegistryHandle {
    /// Editor state that tools read changed.
    pub tools_changed: Recipient<ToolsChanged>,
    pub editor_connected: Recipient<EditorConnected>,
    /// Selection changes.
    pub broadcast: Recipient<Broadcast>,
    /// `at_mentioned`.
    pub mention: Recipient<Mention>,
}

/// Which agent this is, as the registry knows it.
#[derive(Debug, Message)]
#[rtype(result = "Option<AgentRef>")]
pub enum Identify {
    /// The session serving one of these processes (a hook's `$CLAUDE_PID` and its
    /// parent chain, nearest first; only the first two count: further ancestors are
    /// shared by unrelated agents).
    Process(Vec<u32>),
    /// The session with this id.
    Session(SessionId),
    /// The session reattached by this anchor (an HTTP session's, see `http::mcp`).
    Anchor(String),
}

/// An agent as the registry knows it.
#[derive(Clone)]
pub struct AgentRef {
    pub id: SessionId,
    /// How people and other agents see it: its client's name and its session id
    /// (`claude-code 1a2b3c4d`).
    pub label: String,
    /// Its client process, when known.
    pub pid: Option<u32>,
    pub session: SessionHandle,
}

/// An agent changed a file: every other agent that saw it gets a notice at its next
/// tool call, and automation hears of it (`onAgentEdited`).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct FileChanged {
    /// Who changed it.
    pub by: SessionId,
    /// The resolved path.
    pub path: PathBuf,
    /// Workspace-relative.
    pub display: String,
    /// The tool that changed it (`Edit`, `replaceBlock`, …).
    pub tool: String,
    /// The native call (`toolu_…`) that changed it; `None` for a bridge write tool.
    pub call: Option<String>,
    /// When the change was done (Unix ms): a native call's end, a bridge tool's write.
    pub at_ms: u64,
}
