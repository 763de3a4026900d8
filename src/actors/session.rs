//! Session actor: one per agent. Owns the MCP state, the files the agent opened, its
//! terminal prefix, its in-flight tool calls (timeout, cancellation, concurrency cap)
//! and the grace timer that keeps it alive across reconnects.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use actix_ws::CloseCode;
use futures_util::FutureExt;
use serde::Serialize;
use serde_json::{json, Value};

use super::activity_log::{CallStatus, LifecycleEvent, RecordLifecycle, RecordToolCall};
use super::extension::CloseSessionDiffs;
use super::outbound::Outbound;
use super::registry::{
    iso_now, SessionAttached, SessionDetached, SessionEnded, SessionInitialized,
};
use super::supervise::{catch, panic_message};
use crate::metrics::MethodLabel;
use crate::protocol::ide::IdeConnectedParams;
use crate::protocol::jsonrpc::{self, parse_params, Incoming, Request, RequestId, RpcError};
use crate::protocol::mcp::{
    negotiate_version, CallToolParams, CallToolResult, CancelledParams, GetPromptParams,
    Implementation, InitializeParams, InitializeResult, ListParams, LogLevel, LogMessageParams,
    SetLevelParams,
};
use crate::services::Services;
use crate::tools::{summary, ProgressReporter, ToolContext, ToolTimeout};
use crate::workspace::files::Fingerprint;

/// Files remembered per session; the oldest is forgotten beyond this.
pub const MAX_OPENED_FILES: usize = 1000;
/// File versions remembered per session for concurrent-modification checks.
pub const MAX_READ_VERSIONS: usize = 4096;
/// Terminals whose last output a session keeps (without an editor).
pub const MAX_TERMINALS: usize = 32;

/// Methods the session answers; anything else is -32601.
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "logging/setLevel",
];

/// A new 8-hex-digit session id.
pub fn new_session_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..8].to_string()
}

#[derive(Serialize)]
struct Empty {}

struct Connection {
    generation: u64,
    outbound: Outbound,
}

struct McpState {
    initialized: bool,
    log_level: LogLevel,
    client: Option<Implementation>,
    protocol_version: Option<&'static str>,
    client_pid: Option<u32>,
}

impl Default for McpState {
    fn default() -> Self {
        Self {
            initialized: false,
            log_level: LogLevel::Warning,
            client: None,
            protocol_version: None,
            client_pid: None,
        }
    }
}

struct InFlight {
    handle: SpawnHandle,
    tool: &'static str,
    started: Instant,
    summary: String,
}

enum Outcome {
    Done(CallToolResult),
    Panicked(String),
    TimedOut(Duration),
}

/// What `/status` shows about a session.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// 8-hex id.
    pub id: String,
    /// A connection is attached.
    pub connected: bool,
    /// Waiting for its agent to reconnect.
    pub in_grace: bool,
    /// `initialize` answered on the current connection.
    pub initialized: bool,
    /// Files opened by this session.
    pub opened_files: usize,
    /// Tool calls running now.
    pub active_tool_calls: usize,
    /// Client name and version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The CLI's pid from `ide_connected`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_pid: Option<u32>,
    /// Negotiated MCP version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<&'static str>,
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
            created_at: String::new(),
            unresponsive: true,
        }
    }
}

/// Attach a connection (sent by the transport when it starts).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Attach {
    /// Identifies the transport.
    pub generation: u64,
    /// Where to write.
    pub outbound: Outbound,
}

/// The connection with this generation closed.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Detach {
    /// Identifies the transport.
    pub generation: u64,
}

/// A classified frame from the client.
#[derive(Message)]
#[rtype(result = "()")]
pub struct FromClient {
    /// Identifies the transport.
    pub generation: u64,
    /// The frame.
    pub message: Incoming,
}

/// Ask for [`SessionInfo`].
#[derive(Message)]
#[rtype(result = "SessionInfo")]
pub struct Describe;

/// Send `notifications/tools/list_changed` if the agent listens; true when sent.
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

/// Close the connection and stop (registry made room for another agent).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Evict {
    /// Close reason sent to the agent.
    pub reason: String,
}

/// The bridge is stopping: close the connection with 1001.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Shutdown;

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

/// The Session actor.
pub struct Session {
    id: Arc<str>,
    terminal_prefix: Arc<str>,
    services: Arc<Services>,
    conn: Option<Connection>,
    mcp: McpState,
    opened_files: Vec<PathBuf>,
    read_versions: HashMap<PathBuf, Fingerprint>,
    terminals: Vec<(String, TerminalRun)>,
    in_flight: HashMap<RequestId, InFlight>,
    grace_timer: Option<SpawnHandle>,
    created_at: String,
    ever_attached: bool,
    restored: bool,
}

impl Session {
    /// A session with `id`, not yet attached to a connection.
    pub fn new(id: String, services: Arc<Services>) -> Self {
        let terminal_prefix: Arc<str> = Arc::from(format!("{id}-"));
        Self {
            id: Arc::from(id),
            terminal_prefix,
            services,
            conn: None,
            mcp: McpState::default(),
            opened_files: Vec::new(),
            read_versions: HashMap::new(),
            terminals: Vec::new(),
            in_flight: HashMap::new(),
            grace_timer: None,
            created_at: iso_now(),
            ever_attached: false,
            restored: false,
        }
    }

    /// A session restored from a checkpoint: it starts in its grace period, waiting
    /// for its agent to reconnect.
    pub fn restored(id: String, opened_files: Vec<PathBuf>, services: Arc<Services>) -> Self {
        let mut session = Self::new(id, services);
        session.opened_files = opened_files;
        session.ever_attached = true;
        session.restored = true;
        session
    }

    fn start_grace(&mut self, ctx: &mut Context<Self>) {
        let grace = self.services.settings.grace_period();
        self.grace_timer = Some(ctx.run_later(grace, |act, ctx| {
            act.grace_timer = None;
            act.lifecycle(LifecycleEvent::GraceExpired, "session closed".into());
            act.services.registry.do_send(SessionEnded {
                session_id: act.id.to_string(),
            });
            ctx.stop();
        }));
    }

    fn send(&self, text: String) {
        if let Some(conn) = &self.conn {
            conn.outbound.send_text(text);
        }
    }

    fn respond<T: Serialize>(&self, id: &RequestId, result: &T) {
        self.send(jsonrpc::response(id, result));
    }

    fn respond_error(&self, id: Option<&RequestId>, error: &RpcError) {
        self.send(jsonrpc::error_response(id, error));
    }

    /// Sends `notifications/message` when `level` passes the client's filter.
    fn log(&self, level: LogLevel, data: Value) {
        if self.mcp.initialized && level >= self.mcp.log_level {
            self.send(jsonrpc::notification(
                "notifications/message",
                &LogMessageParams {
                    level,
                    logger: "ide-bridge",
                    data: &data,
                },
            ));
        }
    }

    fn lifecycle(&self, event: LifecycleEvent, detail: String) {
        self.services.activity.do_send(RecordLifecycle {
            event,
            session_id: Some(self.id.to_string()),
            detail,
        });
    }

    fn record_call(
        &self,
        tool: &'static str,
        started: Instant,
        summary: String,
        status: CallStatus,
    ) {
        let elapsed = started.elapsed();
        self.services
            .metrics
            .record_tool_call(tool, status.as_str(), elapsed.as_secs_f64());
        self.services.activity.do_send(RecordToolCall {
            tool: tool.to_string(),
            session_id: self.id.to_string(),
            status,
            duration_ms: elapsed.as_millis() as u64,
            summary,
        });
    }

    fn cancel(&mut self, flight: InFlight, ctx: &mut Context<Self>) {
        ctx.cancel_future(flight.handle);
        self.record_call(
            flight.tool,
            flight.started,
            flight.summary,
            CallStatus::Cancelled,
        );
    }

    fn cancel_all(&mut self, ctx: &mut Context<Self>) {
        for (_, flight) in std::mem::take(&mut self.in_flight) {
            self.cancel(flight, ctx);
        }
    }

    fn attach(&mut self, msg: Attach, ctx: &mut Context<Self>) {
        if let Some(old) = self.conn.take() {
            old.outbound.close(
                CloseCode::Normal,
                "replaced by a newer connection of the same session",
            );
        }
        self.cancel_all(ctx);
        if let Some(timer) = self.grace_timer.take() {
            ctx.cancel_future(timer);
        }
        self.conn = Some(Connection {
            generation: msg.generation,
            outbound: msg.outbound,
        });
        self.mcp = McpState::default();
        if self.ever_attached {
            self.services.registry.do_send(SessionAttached {
                session_id: self.id.to_string(),
            });
            self.lifecycle(LifecycleEvent::AgentReconnected, "reattached".into());
        } else {
            self.lifecycle(LifecycleEvent::AgentConnected, "new session".into());
        }
        self.ever_attached = true;
    }

    fn detach(&mut self, generation: u64, ctx: &mut Context<Self>) {
        if self.conn.as_ref().map(|c| c.generation) != Some(generation) {
            return;
        }
        self.conn = None;
        self.cancel_all(ctx);
        // Its pending diffs belong to it: the agent is gone, so they are rejected.
        self.services.extension.do_send(CloseSessionDiffs {
            session_id: self.id.to_string(),
        });
        self.services.registry.do_send(SessionDetached {
            session_id: self.id.to_string(),
        });
        let grace = self.services.settings.grace_period();
        self.lifecycle(
            LifecycleEvent::AgentDisconnected,
            format!(
                "waiting {} ms for the agent to reconnect",
                grace.as_millis()
            ),
        );
        self.grace_timer = Some(ctx.run_later(grace, |act, ctx| {
            act.grace_timer = None;
            act.lifecycle(LifecycleEvent::GraceExpired, "session closed".into());
            act.services.registry.do_send(SessionEnded {
                session_id: act.id.to_string(),
            });
            ctx.stop();
        }));
    }

    fn on_message(&mut self, message: Incoming, ctx: &mut Context<Self>) {
        match message {
            Incoming::Request(req) => {
                let id = req.id.clone();
                if let Err(err) = self.dispatch(req, ctx) {
                    self.respond_error(Some(&id), &err);
                }
            }
            Incoming::Notification { method, params } => {
                self.on_notification(&method, params.as_deref(), ctx)
            }
            Incoming::Response { id, .. } => {
                tracing::debug!(session = %self.id, ?id, "ignoring a response to a request the bridge never sent");
            }
            Incoming::Invalid { id, error } => self.respond_error(id.as_ref(), &error),
        }
    }

    fn dispatch(&mut self, req: Request, ctx: &mut Context<Self>) -> Result<(), RpcError> {
        if self.in_flight.contains_key(&req.id) {
            return Err(RpcError::invalid_request(format!(
                "Duplicate request id {}: a request with this id is still in flight",
                req.id
            )));
        }
        let method = req.method.as_str();
        let Some(known) = KNOWN_METHODS.iter().find(|m| **m == method) else {
            return Err(RpcError::method_not_found(method));
        };
        self.services
            .metrics
            .mcp_requests
            .get_or_create(&MethodLabel { method: known })
            .inc();
        let params = req.params.as_deref();
        if !self.mcp.initialized && method != "initialize" && method != "ping" {
            return Err(RpcError::invalid_request(format!(
                "Server not initialized: send \"initialize\" before \"{method}\""
            )));
        }
        match method {
            "initialize" => {
                let result = self.initialize(parse_params(params)?);
                self.respond(&req.id, &result);
            }
            "ping" => self.respond(&req.id, &Empty {}),
            "tools/list" => {
                let list: ListParams = parse_params(params)?;
                let (tools, next_cursor) = self
                    .services
                    .tools
                    .page(list.cursor.as_deref())
                    .map_err(RpcError::invalid_params)?;
                self.respond(
                    &req.id,
                    &json!({ "tools": tools, "nextCursor": next_cursor }).without_null_cursor(),
                );
            }
            "tools/call" => self.call_tool(req.id, params, ctx)?,
            "prompts/list" => {
                let list: ListParams = parse_params(params)?;
                let (prompts, next_cursor) = self
                    .services
                    .prompts
                    .page(list.cursor.as_deref())
                    .map_err(RpcError::invalid_params)?;
                self.respond(
                    &req.id,
                    &json!({ "prompts": prompts, "nextCursor": next_cursor }).without_null_cursor(),
                );
            }
            "prompts/get" => {
                let get: GetPromptParams = parse_params(params)?;
                let result = self.services.prompts.render(&get.name, &get.arguments)?;
                self.respond(&req.id, &result);
            }
            "logging/setLevel" => {
                let set: SetLevelParams = parse_params(params)?;
                self.mcp.log_level = set.level;
                self.respond(&req.id, &Empty {});
            }
            _ => return Err(RpcError::method_not_found(method)),
        }
        Ok(())
    }

    fn initialize(&mut self, params: InitializeParams) -> InitializeResult {
        let version = negotiate_version(params.protocol_version.as_deref());
        self.mcp = McpState {
            initialized: true,
            protocol_version: Some(version),
            client: params.client_info,
            ..McpState::default()
        };
        InitializeResult {
            protocol_version: version,
            capabilities: json!({
                "tools": { "listChanged": true },
                "prompts": { "listChanged": false },
                "logging": {}
            }),
            server_info: Implementation {
                name: "ide-bridge".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            instructions: format!(
                "ide-bridge serves the workspace {} to this agent (session {}). \
                 Tools that need an editor say so when none is connected.",
                self.services.workspace.root().display(),
                self.id
            ),
        }
    }

    fn on_notification(
        &mut self,
        method: &str,
        params: Option<&serde_json::value::RawValue>,
        ctx: &mut Context<Self>,
    ) {
        match method {
            "notifications/initialized" if self.mcp.initialized => {
                self.services.registry.do_send(SessionInitialized {
                    session_id: self.id.to_string(),
                });
            }
            "ide_connected" => {
                if let Ok(p) = parse_params::<IdeConnectedParams>(params) {
                    self.mcp.client_pid = p.pid;
                }
            }
            "notifications/cancelled" => match parse_params::<CancelledParams>(params) {
                Ok(p) => {
                    if let Some(flight) = self.in_flight.remove(&p.request_id) {
                        self.cancel(flight, ctx);
                        tracing::debug!(session = %self.id, id = %p.request_id, reason = ?p.reason, "tool call cancelled by the client");
                    }
                }
                Err(err) => {
                    tracing::debug!(session = %self.id, %err.message, "bad notifications/cancelled")
                }
            },
            other => tracing::debug!(session = %self.id, method = other, "ignoring notification"),
        }
    }

    fn call_tool(
        &mut self,
        id: RequestId,
        params: Option<&serde_json::value::RawValue>,
        ctx: &mut Context<Self>,
    ) -> Result<(), RpcError> {
        let call: CallToolParams = parse_params(params)?;
        let services = Arc::clone(&self.services);
        let Some(tool) = services.tools.get(&call.name) else {
            return Err(RpcError::new(
                jsonrpc::TOOL_NOT_FOUND,
                format!(
                    "Unknown tool: {} (call tools/list for the available tools)",
                    call.name
                ),
            ));
        };
        let raw = call.arguments.as_deref().map(|r| r.get()).unwrap_or("{}");
        let limit = services.settings.tools.max_argument_bytes;
        if raw.len() > limit {
            return Err(RpcError::invalid_params(format!(
                "Tool arguments are {} bytes; the limit is {limit} bytes",
                raw.len()
            )));
        }
        let args: Value = serde_json::from_str(raw)
            .map_err(|e| RpcError::invalid_params(format!("Invalid arguments: {e}")))?;
        if !args.is_object() {
            return Err(RpcError::invalid_params(
                "Tool arguments must be a JSON object",
            ));
        }
        tool.validate(&args).map_err(RpcError::invalid_params)?;
        let name = tool.info.name;
        let summary = summary::summarize(&args);
        let max = services.settings.tools.max_concurrent_per_session;
        if self.in_flight.len() >= max {
            self.record_call(name, Instant::now(), summary, CallStatus::Rejected);
            self.respond(
                &id,
                &CallToolResult::error(format!("Too many concurrent tool calls (max {max})")),
            );
            return Ok(());
        }
        let progress = match (call.meta.and_then(|m| m.progress_token), &self.conn) {
            (Some(token), Some(conn)) => Some(ProgressReporter::new(token, conn.outbound.clone())),
            _ => None,
        };
        let tool_ctx = ToolContext {
            session_id: Arc::clone(&self.id),
            terminal_prefix: Arc::clone(&self.terminal_prefix),
            session: ctx.address(),
            services: Arc::clone(&services),
            progress,
        };
        let future = tool
            .invoke(tool_ctx, args)
            .map_err(RpcError::invalid_params)?;
        let timeout = match tool.timeout {
            ToolTimeout::Default => Some(services.settings.tool_timeout()),
            ToolTimeout::Unbounded => None,
            ToolTimeout::Fixed(d) => Some(d),
        };
        let run = async move {
            let guarded = AssertUnwindSafe(future).catch_unwind();
            let finished = match timeout {
                Some(limit) => match actix::clock::timeout(limit, guarded).await {
                    Ok(done) => done,
                    Err(_) => return Outcome::TimedOut(limit),
                },
                None => guarded.await,
            };
            match finished {
                Ok(result) => Outcome::Done(result),
                Err(payload) => Outcome::Panicked(panic_message(payload.as_ref())),
            }
        };
        let key = id.clone();
        let handle = ctx.spawn(run.into_actor(self).map(move |outcome, act, _| {
            act.finish_call(key, outcome);
        }));
        self.in_flight.insert(
            id,
            InFlight {
                handle,
                tool: name,
                started: Instant::now(),
                summary,
            },
        );
        Ok(())
    }

    fn finish_call(&mut self, id: RequestId, outcome: Outcome) {
        let Some(flight) = self.in_flight.remove(&id) else {
            return;
        };
        let (result, status) = match outcome {
            Outcome::Done(result) => {
                let status = if result.is_error {
                    CallStatus::Error
                } else {
                    CallStatus::Success
                };
                (result, status)
            }
            Outcome::Panicked(message) => {
                tracing::error!(session = %self.id, tool = flight.tool, %message, "tool handler panicked");
                (
                    CallToolResult::error(format!(
                        "Tool \"{}\" failed with an internal error: {message}",
                        flight.tool
                    )),
                    CallStatus::Error,
                )
            }
            Outcome::TimedOut(limit) => {
                let text = format!(
                    "Tool \"{}\" timed out after {}ms",
                    flight.tool,
                    limit.as_millis()
                );
                self.log(
                    LogLevel::Warning,
                    json!({ "event": "tool_timeout", "message": text }),
                );
                (CallToolResult::error(text), CallStatus::Timeout)
            }
        };
        self.respond(&id, &result);
        self.record_call(flight.tool, flight.started, flight.summary, status);
    }

    fn describe(&self) -> SessionInfo {
        SessionInfo {
            id: self.id.to_string(),
            connected: self.conn.is_some(),
            in_grace: self.grace_timer.is_some(),
            initialized: self.mcp.initialized,
            opened_files: self.opened_files.len(),
            active_tool_calls: self.in_flight.len(),
            client: self
                .mcp
                .client
                .as_ref()
                .map(|c| format!("{} {}", c.name, c.version).trim().to_string()),
            client_pid: self.mcp.client_pid,
            protocol_version: self.mcp.protocol_version,
            terminal_prefix: self.terminal_prefix.to_string(),
            created_at: self.created_at.clone(),
            unresponsive: false,
        }
    }
}

/// Drops a `nextCursor: null` so that the last page carries no cursor.
trait WithoutNullCursor {
    fn without_null_cursor(self) -> Self;
}

impl WithoutNullCursor for Value {
    fn without_null_cursor(mut self) -> Self {
        if let Some(map) = self.as_object_mut() {
            if map.get("nextCursor").is_some_and(Value::is_null) {
                map.remove("nextCursor");
            }
        }
        self
    }
}

impl Actor for Session {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        if self.restored {
            self.start_grace(ctx);
        }
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        if let Some(conn) = self.conn.take() {
            conn.outbound.close(CloseCode::Away, "session closed");
        }
    }
}

impl Handler<Attach> for Session {
    type Result = ();
    fn handle(&mut self, msg: Attach, ctx: &mut Context<Self>) {
        self.attach(msg, ctx);
    }
}

impl Handler<Detach> for Session {
    type Result = ();
    fn handle(&mut self, msg: Detach, ctx: &mut Context<Self>) {
        self.detach(msg.generation, ctx);
    }
}

impl Handler<FromClient> for Session {
    type Result = ();
    fn handle(&mut self, msg: FromClient, ctx: &mut Context<Self>) {
        if self.conn.as_ref().map(|c| c.generation) != Some(msg.generation) {
            return; // a frame from a connection this session already replaced
        }
        let id = match &msg.message {
            Incoming::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        // A bug in one request must not take the session (or others) down.
        if let Err(fault) = catch("session", || self.on_message(msg.message, ctx)) {
            if let Some(id) = id {
                self.respond_error(Some(&id), &RpcError::internal(fault.to_string()));
            }
        }
    }
}

impl Handler<Describe> for Session {
    type Result = MessageResult<Describe>;
    fn handle(&mut self, _: Describe, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.describe())
    }
}

impl Handler<NotifyListChanged> for Session {
    type Result = bool;
    fn handle(&mut self, _: NotifyListChanged, _: &mut Context<Self>) -> bool {
        if self.conn.is_none() || !self.mcp.initialized {
            return false;
        }
        self.send(jsonrpc::notification(
            "notifications/tools/list_changed",
            &Empty {},
        ));
        true
    }
}

impl Handler<PeerJoined> for Session {
    type Result = ();
    fn handle(&mut self, msg: PeerJoined, _: &mut Context<Self>) {
        self.log(
            LogLevel::Info,
            json!({
                "event": "agent_connected",
                "sessionId": msg.session_id,
                "activeSessions": msg.active,
            }),
        );
    }
}

impl Handler<Evict> for Session {
    type Result = ();
    fn handle(&mut self, msg: Evict, ctx: &mut Context<Self>) {
        self.cancel_all(ctx);
        if let Some(conn) = self.conn.take() {
            conn.outbound.close(CloseCode::Policy, msg.reason);
        }
        ctx.stop();
    }
}

impl Handler<Shutdown> for Session {
    type Result = ();
    fn handle(&mut self, _: Shutdown, ctx: &mut Context<Self>) {
        self.cancel_all(ctx);
        if let Some(conn) = self.conn.take() {
            conn.outbound
                .close(CloseCode::Away, "ide-bridge is shutting down");
        }
    }
}

/// Moves `item` to the back of a recency list (dropping an older `same` entry) and
/// keeps the last `cap` entries.
fn push_recent<T>(list: &mut Vec<T>, cap: usize, same: impl Fn(&T) -> bool, item: T) {
    list.retain(|x| !same(x));
    list.push(item);
    if list.len() > cap {
        let excess = list.len() - cap;
        list.drain(..excess);
    }
}

impl Handler<OpenedFiles> for Session {
    type Result = MessageResult<OpenedFiles>;
    fn handle(&mut self, _: OpenedFiles, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.opened_files.clone())
    }
}

impl Handler<RecordOpened> for Session {
    type Result = ();
    fn handle(&mut self, msg: RecordOpened, _: &mut Context<Self>) {
        let path = msg.0;
        push_recent(
            &mut self.opened_files,
            MAX_OPENED_FILES,
            |p| p == &path,
            path.clone(),
        );
    }
}

impl Handler<RecordVersion> for Session {
    type Result = ();
    fn handle(&mut self, msg: RecordVersion, _: &mut Context<Self>) {
        match msg.fingerprint {
            Some(fp) => {
                if self.read_versions.len() >= MAX_READ_VERSIONS
                    && !self.read_versions.contains_key(&msg.path)
                {
                    // Forget an arbitrary entry: the cost is one missed conflict check.
                    if let Some(k) = self.read_versions.keys().next().cloned() {
                        self.read_versions.remove(&k);
                    }
                }
                self.read_versions.insert(msg.path, fp);
            }
            None => {
                self.read_versions.remove(&msg.path);
            }
        }
    }
}

impl Handler<KnownVersion> for Session {
    type Result = Option<Fingerprint>;
    fn handle(&mut self, msg: KnownVersion, _: &mut Context<Self>) -> Self::Result {
        self.read_versions.get(&msg.0).copied()
    }
}

impl Handler<RecordTerminal> for Session {
    type Result = ();
    fn handle(&mut self, msg: RecordTerminal, _: &mut Context<Self>) {
        let name = msg.name.clone();
        push_recent(
            &mut self.terminals,
            MAX_TERMINALS,
            |(n, _)| n == &name,
            (msg.name, msg.run),
        );
    }
}

impl Handler<Terminals> for Session {
    type Result = MessageResult<Terminals>;
    fn handle(&mut self, _: Terminals, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.terminals.clone())
    }
}

impl Handler<SendNotification> for Session {
    type Result = ();
    fn handle(&mut self, msg: SendNotification, _: &mut Context<Self>) {
        if self.mcp.initialized {
            self.send(jsonrpc::notification(msg.method, &msg.params));
        }
    }
}
