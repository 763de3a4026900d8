//! Messages a Session handles: from its transports (attach, frames, detach), from the
//! registry (describe, notify, merge, evict) and from the session it merges into. The
//! per-agent memory that tools read and write is in `actors::session::memory`.

use std::collections::HashMap;
use std::path::PathBuf;

use actix::prelude::*;
use serde::Serialize;
use serde_json::Value;

use super::connection::Generation;
use crate::actors::outbound::Outbound;
use crate::protocol::jsonrpc::Incoming;
use crate::protocol::mcp::{Implementation, LogLevel};
use crate::workspace::files::Fingerprint;

pub use crate::id::SessionId;

/// How an agent reached the bridge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ConnectionKind {
    /// A WebSocket with the IDE token header: Claude Code's IDE connection (and any
    /// client speaking that protocol). Sees every tool.
    Ide,
    /// A WebSocket from an `ide-bridge mcp` stdio relay: a model-facing MCP server.
    Relay,
    /// Streamable HTTP at `/mcp`: a model-facing MCP server.
    Http,
}

impl ConnectionKind {
    /// True for connections whose tools a model sees directly; `tools.expose` narrows
    /// what they list and may call.
    pub fn model_facing(self) -> bool {
        !matches!(self, ConnectionKind::Ide)
    }
}

/// The MCP handshake state of one connection (it travels with the connection when
/// sessions merge).
#[derive(Debug, Clone)]
pub struct McpState {
    /// `initialize` was answered.
    pub initialized: bool,
    /// Minimum level of `notifications/message` the client wants: `notice` until it
    /// says otherwise with `logging/setLevel`, so that automation notices and undo
    /// notes (notice) reach every agent, and the chatter (info) does not.
    pub log_level: LogLevel,
    /// The client's `clientInfo`.
    pub client: Option<Implementation>,
    /// Negotiated protocol version.
    pub protocol_version: Option<&'static str>,
    /// It sent a request of the stateless revision (MCP 2026-07-28): it gets
    /// notifications only on its `subscriptions/listen` streams.
    pub stateless: bool,
}

impl Default for McpState {
    fn default() -> Self {
        Self {
            initialized: false,
            log_level: LogLevel::Notice,
            client: None,
            protocol_version: None,
            stateless: false,
        }
    }
}

/// The recipients of one Session: what its transports, the registry and a merging
/// session send it. Holders depend on these messages, not on the Session actor.
#[derive(Clone)]
pub struct SessionHandle {
    /// From transports.
    pub attach: Recipient<Attach>,
    /// From transports.
    pub detach: Recipient<Detach>,
    /// From transports.
    pub from_client: Recipient<FromClient>,
    /// From the HTTP transport.
    pub replace_push: Recipient<ReplacePush>,
    /// From the HTTP transport.
    pub idle: Recipient<ConnectionIdle>,
    /// From a session merging into this one.
    pub adopt: Recipient<Adopt>,
    /// From a session merging into this one.
    pub absorb: Recipient<Absorb>,
    /// From the registry.
    pub merge_into: Recipient<MergeInto>,
    /// From the registry.
    pub describe: Recipient<Describe>,
    /// From the registry (checkpoints).
    pub keep: Recipient<Keep>,
    /// From the registry.
    pub notify_list_changed: Recipient<NotifyListChanged>,
    /// From the registry.
    pub send_notification: Recipient<SendNotification>,
    /// From the registry.
    pub log: Recipient<AgentLog>,
    /// From the registry.
    pub evict: Recipient<Evict>,
    /// From the registry.
    pub shutdown: Recipient<Shutdown>,
    /// From hooks (native reads and writes).
    pub saw: Recipient<Saw>,
    /// From the registry (another agent changed a file).
    pub changed_by: Recipient<ChangedBy>,
    /// From hooks (the notice for the agent's next native call).
    pub take_notice: Recipient<TakeNotice>,
    /// From hooks: the agent's own calls, from start to end.
    pub native_start: Recipient<NativeStart>,
    pub native_cursor: Recipient<NativeCursor>,
    pub native_to_read: Recipient<NativeToRead>,
    pub native_settle: Recipient<NativeSettle>,
    pub native_end: Recipient<NativeEnd>,
    /// From the registry: the watcher's changes (for `resources/subscribe`).
    pub files_changed: Recipient<crate::actors::messages::watch::WorkspaceChanged>,
}

impl SessionHandle {
    /// The recipients of `addr`: the Session, or a stand-in that handles the same
    /// messages (tests).
    pub fn of<A>(addr: &Addr<A>) -> Self
    where
        A: Actor<Context = Context<A>>
            + Handler<Attach>
            + Handler<Detach>
            + Handler<FromClient>
            + Handler<ReplacePush>
            + Handler<ConnectionIdle>
            + Handler<Adopt>
            + Handler<Absorb>
            + Handler<MergeInto>
            + Handler<Describe>
            + Handler<Keep>
            + Handler<NotifyListChanged>
            + Handler<SendNotification>
            + Handler<AgentLog>
            + Handler<Evict>
            + Handler<Shutdown>
            + Handler<Saw>
            + Handler<ChangedBy>
            + Handler<TakeNotice>
            + Handler<NativeStart>
            + Handler<NativeCursor>
            + Handler<NativeToRead>
            + Handler<NativeSettle>
            + Handler<NativeEnd>
            + Handler<crate::actors::messages::watch::WorkspaceChanged>,
    {
        Self {
            attach: addr.clone().recipient(),
            detach: addr.clone().recipient(),
            from_client: addr.clone().recipient(),
            replace_push: addr.clone().recipient(),
            idle: addr.clone().recipient(),
            adopt: addr.clone().recipient(),
            absorb: addr.clone().recipient(),
            merge_into: addr.clone().recipient(),
            describe: addr.clone().recipient(),
            keep: addr.clone().recipient(),
            notify_list_changed: addr.clone().recipient(),
            send_notification: addr.clone().recipient(),
            log: addr.clone().recipient(),
            evict: addr.clone().recipient(),
            shutdown: addr.clone().recipient(),
            saw: addr.clone().recipient(),
            changed_by: addr.clone().recipient(),
            files_changed: addr.clone().recipient(),
            take_notice: addr.clone().recipient(),
            native_start: addr.clone().recipient(),
            native_cursor: addr.clone().recipient(),
            native_to_read: addr.clone().recipient(),
            native_settle: addr.clone().recipient(),
            native_end: addr.clone().recipient(),
        }
    }

    /// False once the session stopped.
    pub fn connected(&self) -> bool {
        self.attach.connected()
    }
}

/// The actor on the other end of a WebSocket transport. The transport forwards every
/// classified frame, whatever the protocol spoken over it.
pub trait Peer {
    /// The connection is open: `outbound` writes to it; `transport` is told when
    /// another actor takes the connection over.
    fn attach(&self, generation: Generation, outbound: Outbound, transport: Recipient<Rebind>);
    /// A frame arrived.
    fn frame(&self, generation: Generation, message: Incoming);
    /// The connection closed.
    fn detach(&self, generation: Generation);
    /// The agent's session merged into `session`, which serves the connection from
    /// now on. Only agent peers move; the editor's ignores it.
    fn rebind(&mut self, session: SessionHandle) {
        let _ = session;
    }
}

/// An agent connection's [`Peer`]: its session (which changes when sessions merge) and
/// how the agent connected.
pub struct AgentPeer {
    /// The session fed.
    pub session: SessionHandle,
    /// How the agent connected.
    pub kind: ConnectionKind,
}

impl Peer for AgentPeer {
    fn attach(&self, generation: Generation, outbound: Outbound, transport: Recipient<Rebind>) {
        self.session.attach.do_send(Attach {
            generation,
            kind: self.kind,
            outbound,
            transport,
            mcp: McpState::default(),
        });
    }

    fn frame(&self, generation: Generation, message: Incoming) {
        self.session.from_client.do_send(FromClient {
            generation,
            message,
            reply: None,
        });
    }

    fn detach(&self, generation: Generation) {
        self.session.detach.do_send(Detach {
            generation,
            ended: false,
        });
    }

    fn rebind(&mut self, session: SessionHandle) {
        self.session = session;
    }
}

/// Tells a transport which Session now serves it (after sessions merged).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Rebind(pub SessionHandle);

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
    /// The MCP state it starts in: fresh, or, for an HTTP session resumed after a
    /// restart, initialized as its client left it.
    pub mcp: McpState,
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

/// How much an HTTP connection is doing, from a full bridge's point of view: the
/// registry may give the slot of a session that does little to a new agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Activity {
    /// Nothing in flight and no stream open: its client may well be gone.
    Idle,
    /// Nothing in flight, but its GET stream is open (it listens for notifications).
    Listening,
    /// A request is being answered (every WebSocket connection counts as busy).
    #[default]
    Busy,
}

/// An HTTP connection's [`Activity`] changed. A session takes the busiest of its
/// connections': an idle one counts as in its grace period for the registry, a
/// listening one is given up for a new agent only when none is in grace.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ConnectionIdle {
    /// Identifies the transport.
    pub generation: Generation,
    /// What it does now.
    pub activity: Activity,
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

/// Send a notification to the agent if it listens (editor events: IDE connections
/// when the agent has one, else all).
#[derive(Message)]
#[rtype(result = "()")]
pub struct SendNotification {
    /// JSON-RPC method, e.g. `selection_changed`.
    pub method: &'static str,
    /// Sent as they are.
    pub params: Value,
}

/// Something for the agent's log: sent as MCP `notifications/message` to each of its
/// connections whose client asked for `level` or lower (another agent joined the
/// bridge, an automation `notify` hook fired).
#[derive(Message)]
#[rtype(result = "()")]
pub struct AgentLog {
    /// Its level.
    pub level: crate::protocol::mcp::LogLevel,
    /// The message's `data`.
    pub data: Value,
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
    pub target: SessionHandle,
    /// Its id, for the log.
    pub target_id: SessionId,
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
    /// The transport, told about its new session.
    pub transport: Recipient<Rebind>,
    /// Handshake state of that connection.
    pub mcp: McpState,
    /// Its `resources/subscribe` subscriptions.
    pub subscriptions: HashMap<PathBuf, String>,
    /// Its open `subscriptions/listen` streams.
    pub listeners: Vec<Listener>,
}

/// One open `subscriptions/listen` stream.
pub struct Listener {
    /// The listen request's id (the client cancels it by this id).
    pub id: crate::protocol::jsonrpc::RequestId,
    /// The same id as JSON, which tags every notification on the stream.
    pub subscription: serde_json::Value,
    /// The stream: the request's own reply (an HTTP response, or the connection).
    pub outbound: Outbound,
    /// It wants `notifications/tools/list_changed`.
    pub tools: bool,
    /// Files it wants `notifications/resources/updated` for, each with its URI.
    pub files: std::collections::HashMap<std::path::PathBuf, String>,
}

impl Listener {
    /// Sends notification `method` tagged with this stream's subscription; false when
    /// the stream is gone.
    pub fn send(&self, method: &str, mut params: serde_json::Value) -> bool {
        if let Some(map) = params.as_object_mut() {
            map.insert(
                "_meta".into(),
                serde_json::json!({ crate::protocol::modern::SUBSCRIPTION_KEY: self.subscription }),
            );
        }
        self.outbound
            .send_text(crate::protocol::jsonrpc::notification(method, &params))
    }
}

/// Per-agent memory of a merged session.
#[derive(Message, Default)]
#[rtype(result = "()")]
pub struct Absorb {
    /// Files it opened, oldest first.
    pub opened_files: Vec<PathBuf>,
    /// File versions it read or wrote.
    pub read_versions: HashMap<PathBuf, Fingerprint>,
    pub terminals: Vec<(String, TerminalRun)>,
    pub client_pid: Option<u32>,
    /// What it knows about other agents' changes.
    pub awareness: crate::coordination::awareness::Awareness,
    /// Its own tool calls in flight.
    pub native: crate::coordination::native::NativeCalls,
}

/// The agent read or wrote this file (natively, seen through a hook, or through a
/// bridge tool): it knows its content as of `at_ms` (Unix ms: when a read started, when
/// a write was done).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Saw {
    pub path: PathBuf,
    pub at_ms: u64,
}

/// Another agent changed a file; if this agent saw it since, a notice waits for its
/// next tool call.
#[derive(Message, Clone)]
#[rtype(result = "()")]
pub struct ChangedBy {
    /// The resolved path.
    pub path: PathBuf,
    /// Workspace-relative, as the notice shows it.
    pub display: String,
    /// The agent that changed it, as people see it.
    pub by: String,
    /// When the change was done (Unix ms).
    pub at_ms: u64,
}

/// The notice waiting for the agent's next tool call, if any (given once).
#[derive(Message)]
#[rtype(result = "Option<String>")]
pub struct TakeNotice;

/// One of the agent's own tool calls started (its `PreToolUse` hook came). Answers the
/// call ended, when its outcome was read before its hook came.
#[derive(Message)]
#[rtype(result = "Option<crate::coordination::native::Ended>")]
pub struct NativeStart(pub crate::coordination::native::Started);

/// Where to read the agent's transcript at this path from (`None`: not read yet, so
/// from its end).
#[derive(Message)]
#[rtype(result = "Option<u64>")]
pub struct NativeCursor(pub PathBuf);

/// The transcripts the agent's calls wait on, and the one its hook names (`Some`: a
/// call no hook announced may be there), each with where to read it from.
#[derive(Message)]
#[rtype(result = "Vec<(PathBuf, Option<u64>)>")]
pub struct NativeToRead(pub Option<PathBuf>);

/// What the agent's transcript said up to `offset`: the calls that ended, and how many
/// still wait for their end.
#[derive(Message)]
#[rtype(result = "(Vec<crate::coordination::native::Ended>, usize)")]
pub struct NativeSettle {
    pub transcript: PathBuf,
    pub offset: u64,
    /// Calls the transcript shows, started first unless known (see
    /// [`NativeCalls::discover`](crate::coordination::native::NativeCalls::discover)).
    pub discovered: Vec<crate::coordination::native::Started>,
    pub outcomes: Vec<crate::hooks::transcript::Outcome>,
    /// For outcomes without a time.
    pub now_ms: u64,
}

/// A `PostToolUse` hook said how a call ended: the call, if it was one of ours.
#[derive(Message)]
#[rtype(result = "Option<crate::coordination::native::Ended>")]
pub struct NativeEnd {
    pub tool_use_id: String,
    pub failed: bool,
    pub at_ms: u64,
    pub error: String,
}

/// Files this session opened, oldest first.
#[derive(Message)]
#[rtype(result = "Vec<PathBuf>")]
pub struct OpenedFiles;

/// What a checkpoint keeps of this session: the files it opened (oldest first) and
/// what it knows of other agents' changes.
#[derive(Message)]
#[rtype(result = "Kept")]
pub struct Keep;

/// [`Keep`]'s answer.
#[derive(Debug, Default)]
pub struct Kept {
    pub opened_files: Vec<PathBuf>,
    /// How the agent last introduced itself.
    pub client: Option<crate::protocol::mcp::Implementation>,
    /// The agent's own tool calls that ended lately (their `tool_use_id`s).
    pub ended_calls: Vec<String>,
    /// When the session was made (ISO 8601).
    pub created_at: String,
    pub awareness: crate::coordination::awareness::Remembered,
}

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

/// Keep the last run of a session-prefixed terminal.
#[derive(Message)]
#[rtype(result = "()")]
pub struct RecordTerminal {
    /// Full (prefixed) terminal name.
    pub name: String,
    /// Its latest run.
    pub run: TerminalRun,
}

/// This session's terminals and their last runs, by full name.
#[derive(Message)]
#[rtype(result = "Vec<(String, TerminalRun)>")]
pub struct Terminals;

/// What a running tool can ask of its session: the memory it keeps for its agent
/// (opened files, file versions, bridge-side terminals). Tools hold this, never the
/// Session's address.
#[derive(Clone)]
pub struct MemoryHandle {
    pub opened_files: Recipient<OpenedFiles>,
    pub record_opened: Recipient<RecordOpened>,
    pub known_version: Recipient<KnownVersion>,
    pub record_version: Recipient<RecordVersion>,
    pub terminals: Recipient<Terminals>,
    pub record_terminal: Recipient<RecordTerminal>,
}

impl MemoryHandle {
    /// The recipients of `addr`: the Session, or a stand-in that handles the same
    /// messages (tests).
    pub fn of<A>(addr: &Addr<A>) -> Self
    where
        A: Actor<Context = Context<A>>
            + Handler<OpenedFiles>
            + Handler<RecordOpened>
            + Handler<KnownVersion>
            + Handler<RecordVersion>
            + Handler<Terminals>
            + Handler<RecordTerminal>,
    {
        Self {
            opened_files: addr.clone().recipient(),
            record_opened: addr.clone().recipient(),
            known_version: addr.clone().recipient(),
            record_version: addr.clone().recipient(),
            terminals: addr.clone().recipient(),
            record_terminal: addr.clone().recipient(),
        }
    }
}

/// The last run in a bridge-side terminal.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalRun {
    /// Command line as run.
    pub command: String,
    /// `None` when the process was killed by a signal or timed out.
    pub exit_code: Option<i32>,
    /// Combined output (stdout then stderr).
    pub output: String,
    /// RFC 3339 time it finished.
    pub finished_at: String,
}

/// What `/status` shows about one connection.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionInfo {
    /// How it arrived.
    pub kind: ConnectionKind,
    /// `initialize` answered.
    pub initialized: bool,
    /// Client name and version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Negotiated MCP version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<&'static str>,
}

/// What `/status` shows about a session.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// 8-hex id.
    pub id: SessionId,
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
    /// RFC 3339 time the session was created.
    pub created_at: String,
    /// The session did not answer the registry in time.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unresponsive: bool,
}

impl SessionInfo {
    /// Placeholder for a session that did not answer.
    pub fn unresponsive(id: SessionId) -> Self {
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
