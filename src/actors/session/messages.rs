//! Messages a Session handles: from its transports (attach, frames, detach), from the
//! registry (describe, notify, merge, evict), and from the tools it runs (per-agent memory).

use std::collections::HashMap;
use std::path::PathBuf;

use actix::prelude::*;
use serde::Serialize;
use serde_json::Value;

use super::connection::{ConnectionInfo, ConnectionKind, McpState};
use super::Session;
use crate::actors::outbound::Outbound;
use crate::protocol::jsonrpc::Incoming;
use crate::workspace::files::Fingerprint;

/// Identifies one transport (a WebSocket, or one HTTP MCP session) for its lifetime.
pub type Generation = u64;

/// Tells a transport which Session now serves it (after sessions merged).
#[derive(Message, Clone)]
#[rtype(result = "()")]
pub struct Rebind(pub Addr<Session>);

/// Attach a connection (sent by the transport when it starts).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Attach {
    /// Identifies the transport.
    pub generation: Generation,
    /// How the agent reached the bridge.
    pub kind: ConnectionKind,
    /// Where notifications for this connection go (for HTTP: the GET stream, if any).
    pub outbound: Outbound,
    /// The transport, told when the session it feeds changes.
    pub transport: Recipient<Rebind>,
}

/// The connection with this generation closed.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Detach {
    /// Identifies the transport.
    pub generation: Generation,
    /// The client ended the session on purpose (HTTP DELETE, or an HTTP session idle
    /// past the grace period): no grace period follows when it was the last connection.
    pub ended: bool,
}

/// A classified frame from the client.
#[derive(Message)]
#[rtype(result = "()")]
pub struct FromClient {
    /// Identifies the transport.
    pub generation: Generation,
    /// The frame.
    pub message: Incoming,
    /// Where the answer to a request (and its progress) goes; `None` means the
    /// connection's own outbound (WebSockets). HTTP POSTs bring their response stream.
    pub reply: Option<Outbound>,
}

/// An HTTP client opened (or reopened) its GET stream: server-initiated messages for
/// this connection go there from now on.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ReplacePush {
    /// Identifies the transport.
    pub generation: Generation,
    /// The new stream.
    pub outbound: Outbound,
}

/// Ask for [`SessionInfo`].
#[derive(Message)]
#[rtype(result = "SessionInfo")]
pub struct Describe;

/// Send `notifications/tools/list_changed` to every initialized connection; true when
/// at least one got it.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct NotifyListChanged;

/// Send a notification to the agent if it listens (editor events).
#[derive(Message)]
#[rtype(result = "()")]
pub struct SendNotification {
    /// Method.
    pub method: &'static str,
    /// Params.
    pub params: Value,
}

/// Another agent joined the bridge (logged to this agent at level info).
#[derive(Message)]
#[rtype(result = "()")]
pub struct PeerJoined {
    /// The new session.
    pub session_id: String,
    /// Sessions now registered.
    pub active: usize,
}

/// Close the connections and stop (registry made room for another agent).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Evict {
    /// Close reason sent to the agent.
    pub reason: String,
}

/// The bridge is stopping: close every connection with 1001.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Shutdown;

/// This session belongs to the same agent as `target` (same client process): hand
/// every connection and the per-agent memory over to it, then stop.
#[derive(Message)]
#[rtype(result = "()")]
pub struct MergeInto {
    /// The session that stays.
    pub target: Addr<Session>,
    /// Its id, for the log.
    pub target_id: String,
}

/// A connection handed over by a merged session, with its MCP state.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Adopt {
    /// Identifies the transport.
    pub generation: Generation,
    /// How the agent reached the bridge.
    pub kind: ConnectionKind,
    /// Where notifications for this connection go.
    pub outbound: Outbound,
    /// The transport.
    pub transport: Recipient<Rebind>,
    /// Handshake state of that connection.
    pub mcp: McpState,
}

/// Per-agent memory of a merged session.
#[derive(Message, Default)]
#[rtype(result = "()")]
pub struct Absorb {
    /// Files it opened, oldest first.
    pub opened_files: Vec<PathBuf>,
    /// File versions it read or wrote.
    pub read_versions: HashMap<PathBuf, Fingerprint>,
    /// Its terminals.
    pub terminals: Vec<(String, TerminalRun)>,
    /// Its client pid.
    pub client_pid: Option<u32>,
}

/// Files this session opened, oldest first (also its durable state for checkpoints).
#[derive(Message)]
#[rtype(result = "Vec<PathBuf>")]
pub struct OpenedFiles;

/// Remember a file as opened by this session.
#[derive(Message)]
#[rtype(result = "()")]
pub struct RecordOpened(pub PathBuf);

/// Remember the version of a file this session last read or wrote (`None` forgets it).
#[derive(Message)]
#[rtype(result = "()")]
pub struct RecordVersion {
    /// Resolved path.
    pub path: PathBuf,
    /// Its content fingerprint.
    pub fingerprint: Option<Fingerprint>,
}

/// The version of a file this session last read or wrote.
#[derive(Message)]
#[rtype(result = "Option<Fingerprint>")]
pub struct KnownVersion(pub PathBuf);

/// The last run in a bridge-side terminal.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalRun {
    /// Command line as run.
    pub command: String,
    /// Exit code.
    pub exit_code: Option<i32>,
    /// Combined output (stdout then stderr).
    pub output: String,
    /// When it finished.
    pub finished_at: String,
}

/// Keep the last run of a session-prefixed terminal.
#[derive(Message)]
#[rtype(result = "()")]
pub struct RecordTerminal {
    /// Full (prefixed) terminal name.
    pub name: String,
    /// The run.
    pub run: TerminalRun,
}

/// This session's terminals and their last runs, by full name.
#[derive(Message)]
#[rtype(result = "Vec<(String, TerminalRun)>")]
pub struct Terminals;

/// What `/status` shows about a session.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// 8-hex id.
    pub id: String,
    /// At least one connection is attached.
    pub connected: bool,
    /// Waiting for its agent to reconnect.
    pub in_grace: bool,
    /// `initialize` answered on at least one current connection.
    pub initialized: bool,
    /// Files opened by this session.
    pub opened_files: usize,
    /// Tool calls running now.
    pub active_tool_calls: usize,
    /// Client name and version (of the IDE connection when there is one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The agent's process: the CLI's pid from `ide_connected`, or the client process
    /// an `ide-bridge mcp` relay reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_pid: Option<u32>,
    /// Negotiated MCP version (of the IDE connection when there is one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<&'static str>,
    /// Every connection of this agent.
    pub connections: Vec<ConnectionInfo>,
    /// Prefix for terminals this session creates.
    pub terminal_prefix: String,
    /// When the session was created.
    pub created_at: String,
    /// The session did not answer the registry in time.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unresponsive: bool,
}

impl SessionInfo {
    /// Placeholder for a session that did not answer.
    pub fn unresponsive(id: String) -> Self {
        Self {
            terminal_prefix: String::new(),
            id,
            connected: false,
            in_grace: false,
            initialized: false,
            opened_files: 0,
            active_tool_calls: 0,
            client: None,
            client_pid: None,
            protocol_version: None,
            connections: Vec::new(),
            created_at: String::new(),
            unresponsive: true,
        }
    }
}
