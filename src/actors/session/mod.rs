//! Session actor: one per agent. Owns the agent's connections (each with its own MCP
//! handshake state), the files it opened, its terminal prefix, its in-flight tool calls
//! (timeout, cancellation, concurrency cap) and the grace timer that keeps it alive
//! across reconnects. Two sessions found to serve the same client process merge.

mod connection;
mod messages;

pub use connection::{ConnectionInfo, ConnectionKind, McpState};
pub use messages::*;

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use actix_ws::CloseCode;
use connection::Connection;
use futures_util::FutureExt;
use serde::Serialize;
use serde_json::{json, Value};

use super::activity_log::{CallStatus, LifecycleEvent, RecordLifecycle, RecordToolCall};
use super::extension::CloseSessionDiffs;
use super::outbound::Outbound;
use super::registry::{
    iso_now, ClientPid, SessionAttached, SessionDetached, SessionEnded, SessionInitialized,
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
/// How long a merged session keeps passing frames on to the session that took its
/// connections.
const MERGE_LINGER: Duration = Duration::from_secs(5);

/// The MCP methods a session answers, parsed once from the wire name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    Initialize,
    Ping,
    ToolsList,
    ToolsCall,
    PromptsList,
    PromptsGet,
    SetLogLevel,
}

impl Method {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "initialize" => Method::Initialize,
            "ping" => Method::Ping,
            "tools/list" => Method::ToolsList,
            "tools/call" => Method::ToolsCall,
            "prompts/list" => Method::PromptsList,
            "prompts/get" => Method::PromptsGet,
            "logging/setLevel" => Method::SetLogLevel,
            _ => return None,
        })
    }

    /// The wire name (a `'static` label for metrics).
    fn name(self) -> &'static str {
        match self {
            Method::Initialize => "initialize",
            Method::Ping => "ping",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::SetLogLevel => "logging/setLevel",
        }
    }
}

/// A new 8-hex-digit session id.
pub fn new_session_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..8].to_string()
}

#[derive(Serialize)]
struct Empty {}

/// A request id is unique per connection, so calls are keyed by both.
type CallKey = (Generation, RequestId);

struct InFlight {
    handle: SpawnHandle,
    tool: &'static str,
    started: Instant,
    summary: String,
    /// Where the answer goes (the connection, or the HTTP POST that asked).
    reply: Outbound,
}

enum Outcome {
    Done(CallToolResult),
    Panicked(String),
    TimedOut(Duration),
}

/// The Session actor.
pub struct Session {
    id: Arc<str>,
    terminal_prefix: Arc<str>,
    services: Arc<Services>,
    conns: Vec<Connection>,
    client_pid: Option<u32>,
    /// The client as its IDE connection (else any connection) last introduced itself;
    /// kept while the agent is away.
    last_client: Option<(ConnectionKind, String, &'static str)>,
    opened_files: Vec<PathBuf>,
    read_versions: HashMap<PathBuf, Fingerprint>,
    terminals: Vec<(String, TerminalRun)>,
    in_flight: HashMap<CallKey, InFlight>,
    grace_timer: Option<SpawnHandle>,
    created_at: String,
    ever_attached: bool,
    restored: bool,
    /// After a merge: the session that took this one's connections. Frames still
    /// addressed here are passed on; the actor stops once its own calls finished and
    /// [`MERGE_LINGER`] has passed (a transport may send here until it handled `Rebind`).
    merged_into: Option<Addr<Session>>,
    /// The linger after a merge is over.
    lingered: bool,
}

impl Session {
    /// A session with `id`, not yet attached to a connection.
    pub fn new(id: String, services: Arc<Services>) -> Self {
        let terminal_prefix: Arc<str> = Arc::from(format!("{id}-"));
        Self {
            id: Arc::from(id),
            terminal_prefix,
            services,
            conns: Vec::new(),
            client_pid: None,
            last_client: None,
            opened_files: Vec::new(),
            read_versions: HashMap::new(),
            terminals: Vec::new(),
            in_flight: HashMap::new(),
            grace_timer: None,
            created_at: iso_now(),
            ever_attached: false,
            restored: false,
            merged_into: None,
            lingered: false,
        }
    }

    /// A session restored from a checkpoint: it starts in its grace period, waiting
    /// for its agent to reconnect.
    pub fn restored(
        id: String,
        opened_files: Vec<PathBuf>,
        client_pid: Option<u32>,
        services: Arc<Services>,
    ) -> Self {
        let mut session = Self::new(id, services);
        session.opened_files = opened_files;
        session.client_pid = client_pid;
        session.ever_attached = true;
        session.restored = true;
        session
    }

    fn start_grace(&mut self, ctx: &mut Context<Self>) {
        let grace = self.services.settings.grace_period();
        self.grace_timer = Some(ctx.run_later(grace, |act, ctx| {
            act.grace_timer = None;
            act.end(LifecycleEvent::GraceExpired, "session closed", ctx);
        }));
    }

    /// Forgets the session in the registry and stops.
    fn end(&mut self, event: LifecycleEvent, detail: &str, ctx: &mut Context<Self>) {
        self.lifecycle(event, detail.to_string());
        self.services.registry.do_send(SessionEnded {
            session_id: self.id.to_string(),
        });
        ctx.stop();
    }

    fn conn(&self, generation: Generation) -> Option<&Connection> {
        self.conns.iter().find(|c| c.generation == generation)
    }

    fn conn_mut(&mut self, generation: Generation) -> Option<&mut Connection> {
        self.conns.iter_mut().find(|c| c.generation == generation)
    }

    /// Sends `notifications/message` to every connection whose filter passes `level`.
    fn log(&self, level: LogLevel, data: Value) {
        let mut text = None;
        for conn in &self.conns {
            if conn.mcp.initialized && level >= conn.mcp.log_level {
                let text = text.get_or_insert_with(|| {
                    jsonrpc::notification(
                        "notifications/message",
                        &LogMessageParams {
                            level,
                            logger: "ide-bridge",
                            data: &data,
                        },
                    )
                });
                conn.outbound.send_text(text.clone());
            }
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

    /// Cancels the calls of one connection (or of all with `None`).
    fn cancel_calls(&mut self, generation: Option<Generation>, ctx: &mut Context<Self>) {
        let keys: Vec<CallKey> = self
            .in_flight
            .keys()
            .filter(|(g, _)| generation.is_none_or(|want| *g == want))
            .cloned()
            .collect();
        for key in keys {
            if let Some(flight) = self.in_flight.remove(&key) {
                self.cancel(flight, ctx);
            }
        }
    }

    /// Adds a connection. A newer IDE connection replaces an older one (the CLI
    /// reconnected while its old socket looked alive); relays and HTTP connections add
    /// up (one client may run several relays, and their sockets close by themselves).
    fn add_connection(&mut self, conn: Connection, ctx: &mut Context<Self>) {
        let replaced: Vec<Generation> = self
            .conns
            .iter()
            .filter(|c| c.kind == ConnectionKind::Ide && conn.kind == ConnectionKind::Ide)
            .map(|c| c.generation)
            .collect();
        for generation in replaced {
            self.cancel_calls(Some(generation), ctx);
            if let Some(i) = self.conns.iter().position(|c| c.generation == generation) {
                let old = self.conns.remove(i);
                old.outbound.close(
                    CloseCode::Normal,
                    "replaced by a newer connection of the same session",
                );
            }
        }
        if let Some(timer) = self.grace_timer.take() {
            ctx.cancel_future(timer);
        }
        let initialized = conn.mcp.initialized;
        self.conns.push(conn);
        if self.ever_attached {
            self.services.registry.do_send(SessionAttached {
                session_id: self.id.to_string(),
            });
            self.lifecycle(LifecycleEvent::AgentReconnected, "reattached".into());
        } else {
            self.lifecycle(LifecycleEvent::AgentConnected, "new session".into());
        }
        if initialized {
            self.services.registry.do_send(SessionInitialized {
                session_id: self.id.to_string(),
            });
        }
        self.ever_attached = true;
    }

    fn detach(&mut self, generation: Generation, ended: bool, ctx: &mut Context<Self>) {
        let Some(i) = self.conns.iter().position(|c| c.generation == generation) else {
            return;
        };
        let gone = self.conns.remove(i);
        self.cancel_calls(Some(generation), ctx);
        if gone.kind == ConnectionKind::Ide {
            // Diffs wait on the IDE connection: with it gone they are rejected.
            self.services.extension.do_send(CloseSessionDiffs {
                session_id: self.id.to_string(),
            });
        }
        if !self.conns.is_empty() {
            return;
        }
        if ended {
            self.services.extension.do_send(CloseSessionDiffs {
                session_id: self.id.to_string(),
            });
            return self.end(
                LifecycleEvent::AgentDisconnected,
                "the client ended the session",
                ctx,
            );
        }
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
        self.start_grace(ctx);
    }

    /// Hands every connection and the per-agent memory to `target`.
    fn merge_into(&mut self, msg: MergeInto, ctx: &mut Context<Self>) {
        if let Some(timer) = self.grace_timer.take() {
            ctx.cancel_future(timer);
        }
        for conn in std::mem::take(&mut self.conns) {
            // Adopt first, then rebind: the target learns the connection before the
            // transport's next frame can reach it.
            msg.target.do_send(Adopt {
                generation: conn.generation,
                kind: conn.kind,
                outbound: conn.outbound,
                transport: conn.transport.clone(),
                mcp: conn.mcp,
            });
            conn.transport.do_send(Rebind(msg.target.clone()));
        }
        msg.target.do_send(Absorb {
            opened_files: std::mem::take(&mut self.opened_files),
            read_versions: std::mem::take(&mut self.read_versions),
            terminals: std::mem::take(&mut self.terminals),
            client_pid: self.client_pid,
        });
        self.lifecycle(
            LifecycleEvent::SessionMerged,
            format!("same client process as session {}", msg.target_id),
        );
        self.merged_into = Some(msg.target);
        ctx.run_later(MERGE_LINGER, |act, ctx| {
            act.lingered = true;
            if act.in_flight.is_empty() {
                ctx.stop();
            }
        });
    }

    fn on_message(
        &mut self,
        generation: Generation,
        message: Incoming,
        reply: Outbound,
        ctx: &mut Context<Self>,
    ) {
        match message {
            Incoming::Request(req) => {
                let id = req.id.clone();
                if let Err(err) = self.dispatch(generation, req, &reply, ctx) {
                    reply.send_text(jsonrpc::error_response(Some(&id), &err));
                }
            }
            Incoming::Notification { method, params } => {
                self.on_notification(generation, &method, params.as_deref(), ctx)
            }
            Incoming::Response { id, .. } => {
                tracing::debug!(session = %self.id, ?id, "ignoring a response to a request the bridge never sent");
            }
            Incoming::Invalid { id, error } => {
                reply.send_text(jsonrpc::error_response(id.as_ref(), &error));
            }
        }
    }

    fn dispatch(
        &mut self,
        generation: Generation,
        req: Request,
        reply: &Outbound,
        ctx: &mut Context<Self>,
    ) -> Result<(), RpcError> {
        if self.in_flight.contains_key(&(generation, req.id.clone())) {
            return Err(RpcError::invalid_request(format!(
                "Duplicate request id {}: a request with this id is still in flight",
                req.id
            )));
        }
        let Some(method) = Method::parse(&req.method) else {
            return Err(RpcError::method_not_found(&req.method));
        };
        self.services
            .metrics
            .mcp_requests
            .get_or_create(&MethodLabel {
                method: method.name(),
            })
            .inc();
        let params = req.params.as_deref();
        let Some(conn) = self.conn(generation) else {
            return Ok(());
        };
        if !conn.mcp.initialized && !matches!(method, Method::Initialize | Method::Ping) {
            return Err(RpcError::invalid_request(format!(
                "Server not initialized: send \"initialize\" before \"{}\"",
                req.method
            )));
        }
        let model_facing = conn.kind.model_facing();
        let respond = |result: &dyn erased::Json| reply.send_text(result.response(&req.id));
        match method {
            Method::Initialize => {
                let params: InitializeParams = parse_params(params)?;
                let version = negotiate_version(params.protocol_version.as_deref());
                if let Some(conn) = self.conn_mut(generation) {
                    conn.mcp = McpState {
                        initialized: true,
                        protocol_version: Some(version),
                        client: params.client_info,
                        ..McpState::default()
                    };
                    let kind = conn.kind;
                    let label = conn.mcp.client.as_ref().map(Implementation::label);
                    let replaces = self.last_client.as_ref().is_none_or(|(k, ..)| {
                        *k != ConnectionKind::Ide || kind == ConnectionKind::Ide
                    });
                    if let (Some(label), true) = (label, replaces) {
                        self.last_client = Some((kind, label, version));
                    }
                }
                respond(&self.initialize_result(version));
            }
            Method::Ping => {
                respond(&Empty {});
            }
            Method::ToolsList => {
                let list: ListParams = parse_params(params)?;
                let (tools, next_cursor) = self
                    .services
                    .tools
                    .page(model_facing, list.cursor.as_deref())
                    .map_err(RpcError::invalid_params)?;
                respond(
                    &json!({ "tools": tools, "nextCursor": next_cursor }).without_null_cursor(),
                );
            }
            Method::ToolsCall => {
                let id = req.id.clone();
                self.call_tool(generation, id, params, reply.clone(), model_facing, ctx)?;
            }
            Method::PromptsList => {
                let list: ListParams = parse_params(params)?;
                let (prompts, next_cursor) = self
                    .services
                    .prompts
                    .page(list.cursor.as_deref())
                    .map_err(RpcError::invalid_params)?;
                respond(
                    &json!({ "prompts": prompts, "nextCursor": next_cursor }).without_null_cursor(),
                );
            }
            Method::PromptsGet => {
                let get: GetPromptParams = parse_params(params)?;
                let result = self.services.prompts.render(&get.name, &get.arguments)?;
                respond(&result);
            }
            Method::SetLogLevel => {
                let set: SetLevelParams = parse_params(params)?;
                if let Some(conn) = self.conn_mut(generation) {
                    conn.mcp.log_level = set.level;
                }
                respond(&Empty {});
            }
        }
        Ok(())
    }

    fn initialize_result(&self, version: &'static str) -> InitializeResult {
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
        generation: Generation,
        method: &str,
        params: Option<&serde_json::value::RawValue>,
        ctx: &mut Context<Self>,
    ) {
        match method {
            "notifications/initialized" => {
                if self.conn(generation).is_some_and(|c| c.mcp.initialized) {
                    self.services.registry.do_send(SessionInitialized {
                        session_id: self.id.to_string(),
                    });
                }
            }
            "ide_connected" => {
                if let Ok(IdeConnectedParams { pid: Some(pid) }) = parse_params(params) {
                    self.client_pid = Some(pid);
                    self.services.registry.do_send(ClientPid {
                        session_id: self.id.to_string(),
                        pid,
                    });
                }
            }
            "notifications/cancelled" => match parse_params::<CancelledParams>(params) {
                Ok(p) => {
                    if let Some(flight) = self.in_flight.remove(&(generation, p.request_id.clone()))
                    {
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
        generation: Generation,
        id: RequestId,
        params: Option<&serde_json::value::RawValue>,
        reply: Outbound,
        model_facing: bool,
        ctx: &mut Context<Self>,
    ) -> Result<(), RpcError> {
        let call: CallToolParams = parse_params(params)?;
        let services = Arc::clone(&self.services);
        let Some(tool) = services
            .tools
            .get(&call.name)
            .filter(|t| !model_facing || t.exposed)
        else {
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
            reply.send_text(jsonrpc::response(
                &id,
                &CallToolResult::error(format!("Too many concurrent tool calls (max {max})")),
            ));
            return Ok(());
        }
        let progress = call
            .meta
            .and_then(|m| m.progress_token)
            .map(|token| ProgressReporter::new(token, reply.clone()));
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
        let key = (generation, id);
        let handle = ctx.spawn(run.into_actor(self).map({
            let key = key.clone();
            move |outcome, act, ctx| act.finish_call(key, outcome, ctx)
        }));
        self.in_flight.insert(
            key,
            InFlight {
                handle,
                tool: name,
                started: Instant::now(),
                summary,
                reply,
            },
        );
        Ok(())
    }

    fn finish_call(&mut self, key: CallKey, outcome: Outcome, ctx: &mut Context<Self>) {
        let Some(flight) = self.in_flight.remove(&key) else {
            return;
        };
        let (result, status) = match outcome {
            Outcome::Done(result) => {
                let status = if !result.is_error {
                    CallStatus::Success
                } else if result.declined {
                    CallStatus::Declined
                } else {
                    CallStatus::Error
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
        flight.reply.send_text(jsonrpc::response(&key.1, &result));
        self.record_call(flight.tool, flight.started, flight.summary, status);
        if self.merged_into.is_some() && self.lingered && self.in_flight.is_empty() {
            ctx.stop();
        }
    }

    fn describe(&self) -> SessionInfo {
        // The IDE connection names the agent when there is one.
        let main = self
            .conns
            .iter()
            .filter(|c| c.mcp.initialized)
            .min_by_key(|c| c.kind != ConnectionKind::Ide);
        SessionInfo {
            id: self.id.to_string(),
            connected: !self.conns.is_empty(),
            in_grace: self.grace_timer.is_some(),
            initialized: main.is_some(),
            opened_files: self.opened_files.len(),
            active_tool_calls: self.in_flight.len(),
            client: main
                .and_then(|c| c.mcp.client.as_ref().map(Implementation::label))
                .or_else(|| self.last_client.as_ref().map(|(_, l, _)| l.clone())),
            client_pid: self.client_pid,
            protocol_version: main
                .and_then(|c| c.mcp.protocol_version)
                .or_else(|| self.last_client.as_ref().map(|(_, _, v)| *v)),
            connections: self.conns.iter().map(Connection::info).collect(),
            terminal_prefix: self.terminal_prefix.to_string(),
            created_at: self.created_at.clone(),
            unresponsive: false,
        }
    }

    /// Sends a notification to the connections that listen for it: editor events go to
    /// IDE connections (where Claude Code listens) when the agent has one, else to all.
    fn notify(&self, method: &str, params: &Value) {
        let listening = |c: &&Connection| c.mcp.initialized;
        let has_ide = self
            .conns
            .iter()
            .filter(listening)
            .any(|c| c.kind == ConnectionKind::Ide);
        let text = jsonrpc::notification(method, params);
        for conn in self.conns.iter().filter(listening) {
            if !has_ide || conn.kind == ConnectionKind::Ide {
                conn.outbound.send_text(text.clone());
            }
        }
    }
}

/// Serialising a JSON-RPC result of any type behind one `&dyn`.
mod erased {
    use serde::Serialize;

    use crate::protocol::jsonrpc::{self, RequestId};

    /// A result that can become a response.
    pub trait Json {
        /// The response to `id` carrying `self`.
        fn response(&self, id: &RequestId) -> String;
    }

    impl<T: Serialize> Json for T {
        fn response(&self, id: &RequestId) -> String {
            jsonrpc::response(id, self)
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
        for conn in self.conns.drain(..) {
            conn.outbound.close(CloseCode::Away, "session closed");
        }
    }
}

impl Handler<Attach> for Session {
    type Result = ();
    fn handle(&mut self, msg: Attach, ctx: &mut Context<Self>) {
        if let Some(target) = &self.merged_into {
            msg.transport.do_send(Rebind(target.clone()));
            target.do_send(msg);
            return;
        }
        let conn = Connection {
            generation: msg.generation,
            kind: msg.kind,
            outbound: msg.outbound,
            transport: msg.transport,
            mcp: McpState::default(),
        };
        self.add_connection(conn, ctx);
    }
}

impl Handler<Adopt> for Session {
    type Result = ();
    fn handle(&mut self, msg: Adopt, ctx: &mut Context<Self>) {
        let conn = Connection {
            generation: msg.generation,
            kind: msg.kind,
            outbound: msg.outbound,
            transport: msg.transport,
            mcp: msg.mcp,
        };
        self.add_connection(conn, ctx);
    }
}

impl Handler<Absorb> for Session {
    type Result = ();
    fn handle(&mut self, msg: Absorb, _: &mut Context<Self>) {
        for path in msg.opened_files {
            push_recent(
                &mut self.opened_files,
                MAX_OPENED_FILES,
                |p| p == &path,
                path.clone(),
            );
        }
        for (path, fp) in msg.read_versions {
            self.read_versions.entry(path).or_insert(fp);
        }
        for (name, run) in msg.terminals {
            let key = name.clone();
            push_recent(
                &mut self.terminals,
                MAX_TERMINALS,
                |(n, _)| n == &key,
                (name, run),
            );
        }
        self.client_pid = self.client_pid.or(msg.client_pid);
    }
}

impl Handler<MergeInto> for Session {
    type Result = ();
    fn handle(&mut self, msg: MergeInto, ctx: &mut Context<Self>) {
        self.merge_into(msg, ctx);
    }
}

impl Handler<Detach> for Session {
    type Result = ();
    fn handle(&mut self, msg: Detach, ctx: &mut Context<Self>) {
        if self.conn(msg.generation).is_none() {
            if let Some(target) = &self.merged_into {
                target.do_send(msg);
            }
            return;
        }
        self.detach(msg.generation, msg.ended, ctx);
    }
}

impl Handler<ReplacePush> for Session {
    type Result = ();
    fn handle(&mut self, msg: ReplacePush, _: &mut Context<Self>) {
        match self.conn_mut(msg.generation) {
            Some(conn) => conn.outbound = msg.outbound,
            None => {
                if let Some(target) = &self.merged_into {
                    target.do_send(msg);
                }
            }
        }
    }
}

impl Handler<FromClient> for Session {
    type Result = ();
    fn handle(&mut self, msg: FromClient, ctx: &mut Context<Self>) {
        let Some(conn) = self.conn(msg.generation) else {
            if let Some(target) = &self.merged_into {
                target.do_send(msg);
            }
            return; // else: a frame from a connection this session already dropped
        };
        let reply = msg.reply.unwrap_or_else(|| conn.outbound.clone());
        let id = match &msg.message {
            Incoming::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        // A bug in one request must not take the session (or others) down.
        let answer = reply.clone();
        if let Err(fault) = catch("session", || {
            self.on_message(msg.generation, msg.message, reply, ctx)
        }) {
            if let Some(id) = id {
                answer.send_text(jsonrpc::error_response(
                    Some(&id),
                    &RpcError::internal(fault.to_string()),
                ));
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
        let text = jsonrpc::notification("notifications/tools/list_changed", &Empty {});
        let mut delivered = false;
        for conn in self.conns.iter().filter(|c| c.mcp.initialized) {
            delivered |= conn.outbound.send_text(text.clone());
        }
        delivered
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
        self.cancel_calls(None, ctx);
        for conn in self.conns.drain(..) {
            conn.outbound.close(CloseCode::Policy, msg.reason.clone());
        }
        ctx.stop();
    }
}

impl Handler<Shutdown> for Session {
    type Result = ();
    fn handle(&mut self, _: Shutdown, ctx: &mut Context<Self>) {
        self.cancel_calls(None, ctx);
        for conn in &self.conns {
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
        self.notify(msg.method, &msg.params);
    }
}
