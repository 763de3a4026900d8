//! MCP dispatch: a frame from the client is classified, its method parsed once into
//! [`Method`] (or [`Notification`]) and answered here; `tools/call` goes on to
//! [`calls`](super::calls).

use std::sync::Arc;

use actix::prelude::*;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::calls::{CallId, Caller};
use super::connection::MAX_LISTENERS;
use super::{Session, SessionChange};
use crate::actors::messages::connection::Generation;
use crate::actors::messages::session::{ConnectionKind, FromClient, Listener, McpState};
use crate::actors::outbound::Outbound;
use crate::actors::supervise::catch;
use crate::protocol::ide::IdeConnectedParams;
use crate::protocol::jsonrpc::{self, parse_params, Incoming, Request, RpcError};
use crate::protocol::mcp::{
    negotiate_version, CancelledParams, GetPromptParams, Implementation, InitializeParams,
    InitializeResult, ListParams, SetLevelParams,
};
use crate::protocol::methods::Method;
use crate::protocol::modern;
use crate::resources::{self, UriParams};

/// The client notifications a session acts on; others are logged and ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Notification {
    /// `notifications/initialized`: the handshake is complete.
    Initialized,
    /// `ide_connected`: Claude Code names its process.
    IdeConnected,
    /// `notifications/cancelled`: the client gave up on a request.
    Cancelled,
}

impl Notification {
    fn parse(name: &str) -> Option<Self> {
        use crate::protocol::methods::Notification as Mcp;
        Some(match Mcp::parse(name) {
            Some(Mcp::Initialized) => Notification::Initialized,
            Some(Mcp::Cancelled) => Notification::Cancelled,
            _ if name == crate::protocol::ide::IDE_CONNECTED => Notification::IdeConnected,
            _ => return None,
        })
    }
}

#[derive(Serialize)]
struct Empty {}

/// Serialising a JSON-RPC result of any type behind one `&dyn`.
mod erased {
    use serde::Serialize;

    use crate::protocol::jsonrpc::{self, RequestId};

    /// A result that can become a response.
    pub trait Json {
        /// The response to `id` carrying `self`.
        fn response(&self, id: &RequestId) -> String;
        /// `self` as a JSON value.
        fn value(&self) -> serde_json::Value;
    }

    impl<T: Serialize> Json for T {
        fn response(&self, id: &RequestId) -> String {
            jsonrpc::response(id, self)
        }
        fn value(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap_or_default()
        }
    }
}

/// Drops a `nextCursor: null` so that the last page carries no cursor.
fn without_null_cursor(mut page: Value) -> Value {
    if let Some(map) = page.as_object_mut() {
        if map.get("nextCursor").is_some_and(Value::is_null) {
            map.remove("nextCursor");
        }
    }
    page
}

impl Session {
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
                // The era of this request: its `_meta` names the stateless revision (an
                // error when it does so wrongly: an answer of that revision too), or not.
                let era = modern::classify(req.params.as_deref());
                let stateless = !matches!(era, Ok(None));
                if let Err(err) = self.dispatch(generation, req, era, &reply, ctx) {
                    let err = if stateless {
                        modern::error_of(err)
                    } else {
                        err
                    };
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
        era: Result<Option<modern::RequestMeta>, RpcError>,
        reply: &Outbound,
        ctx: &mut Context<Self>,
    ) -> Result<(), RpcError> {
        let by_id = (generation, CallId::Request(req.id.clone()));
        let on_own_stream =
            self.answered_on_own_stream(generation, matches!(era, Ok(Some(_))), reply);
        if !on_own_stream && self.in_flight.contains_key(&by_id) {
            return Err(RpcError::invalid_request(format!(
                "Duplicate request id {}: a request with this id is still in flight",
                req.id
            )));
        }
        let stateless = era?;
        let Some(method) = Method::parse(&req.method) else {
            return Err(RpcError::method_not_found(&req.method));
        };
        self.services.metrics.count_request(method);
        let params = req.params.as_deref();
        let Some(conn) = self.conn(generation) else {
            return Ok(());
        };
        match &stateless {
            Some(_) if method.handshake_only() => {
                return Err(modern::not_in_revision(&req.method));
            }
            Some(meta) => self.stateless_request(generation, meta),
            None if method.stateless_only() => {
                return Err(modern::missing_envelope(&format!(
                    "params._meta[\"{}\"] and [\"{}\"] ({} is of MCP {})",
                    modern::VERSION_KEY,
                    modern::CAPABILITIES_KEY,
                    req.method,
                    modern::VERSION
                )));
            }
            None if !conn.mcp.initialized && !method.before_initialize() => {
                return Err(RpcError::invalid_request(format!(
                    "Server not initialized: send \"initialize\" before \"{}\"",
                    req.method
                )));
            }
            None => {}
        }
        let Some(conn) = self.conn(generation) else {
            return Ok(());
        };
        let model_facing = conn.kind.model_facing();
        // A stateless request's result names its type and the server.
        let era = stateless.as_ref().map(|_| method.name());
        let respond = |result: &dyn erased::Json| {
            reply.send_text(match era {
                Some(name) => jsonrpc::response(&req.id, &modern::complete(name, result.value())),
                None => result.response(&req.id),
            })
        };
        match method {
            Method::Initialize => {
                let params: InitializeParams = parse_params(params)?;
                let version = negotiate_version(params.protocol_version.as_deref());
                self.initialized(generation, params.client_info, version);
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
                respond(&without_null_cursor(
                    json!({ "tools": tools, "nextCursor": next_cursor }),
                ));
            }
            Method::ToolsCall
                if stateless
                    .as_ref()
                    .is_some_and(|meta| self.as_task(meta, params)) =>
            {
                self.start_task(generation, &req.id, params, model_facing, reply, ctx)?;
            }
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
                let Some(meta) = &stateless else {
                    return Ok(()); // refused above: only the stateless revision has tasks
                };
                let answer = self.task_request(method.name(), meta, params, ctx)?;
                respond(&answer);
            }
            Method::ToolsCall => {
                let id = req.id.clone();
                let stateless = era.is_some();
                let caller = Caller {
                    reply: reply.clone(),
                    model_facing,
                    stateless,
                };
                self.call_tool(generation, id, params, caller, ctx)?;
            }
            Method::Discover => {
                respond(&modern::discover(self.instructions()));
            }
            Method::Listen => {
                self.listen(generation, &req.id, params, reply)?;
            }
            Method::PromptsList => {
                let list: ListParams = parse_params(params)?;
                let (prompts, next_cursor) = self
                    .services
                    .prompts
                    .page(list.cursor.as_deref())
                    .map_err(RpcError::invalid_params)?;
                respond(&without_null_cursor(
                    json!({ "prompts": prompts, "nextCursor": next_cursor }),
                ));
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
            Method::ResourcesList => {
                let list: ListParams = parse_params(params)?;
                list.one_page().map_err(RpcError::invalid_params)?;
                let services = Arc::clone(&self.services);
                self.answer_later(req.id.clone(), era, reply, async move {
                    Ok(json!({ "resources": resources::list(&services).await }))
                });
            }
            Method::ResourceTemplatesList => {
                let list: ListParams = parse_params(params)?;
                list.one_page().map_err(RpcError::invalid_params)?;
                respond(&json!({
                    "resourceTemplates": resources::templates(&self.services.workspace)
                }));
            }
            Method::ResourcesRead => {
                let UriParams { uri } = parse_params(params)?;
                let services = Arc::clone(&self.services);
                self.answer_later(req.id.clone(), era, reply, async move {
                    resources::read(&services, &uri).await
                });
            }
            Method::ResourcesSubscribe | Method::ResourcesUnsubscribe => {
                let UriParams { uri } = parse_params(params)?;
                let resources::Target::File(path) =
                    resources::parse(&self.services.workspace, &uri)?
                else {
                    return Err(RpcError::invalid_params(format!(
                        "Resource {uri:?}: only workspace files (file://) can be subscribed to"
                    )));
                };
                let Some(conn) = self.conn_mut(generation) else {
                    return Ok(());
                };
                if method == Method::ResourcesUnsubscribe {
                    conn.subscriptions.remove(&path);
                } else if conn.subscriptions.len() >= resources::MAX_SUBSCRIPTIONS
                    && !conn.subscriptions.contains_key(&path)
                {
                    return Err(RpcError::invalid_params(format!(
                        "A connection may watch at most {} resources; unsubscribe from some first",
                        resources::MAX_SUBSCRIPTIONS
                    )));
                } else {
                    conn.subscriptions.insert(path, uri);
                }
                respond(&Empty {});
            }
            Method::Complete => {
                let complete: resources::CompleteParams = parse_params(params)?;
                let services = Arc::clone(&self.services);
                self.answer_later(req.id.clone(), era, reply, async move {
                    resources::complete(&services, complete).await
                });
            }
        }
        Ok(())
    }

    /// Answers request `id` on `reply` when `answer` is ready (reads that wait for a
    /// file or another actor), without holding up this session's other messages.
    /// `era` is the method's name when the request is of the stateless revision.
    fn answer_later(
        &self,
        id: jsonrpc::RequestId,
        era: Option<&'static str>,
        reply: &Outbound,
        answer: impl std::future::Future<Output = Result<Value, RpcError>> + 'static,
    ) {
        let reply = reply.clone();
        actix::spawn(async move {
            reply.send_text(match (answer.await, era) {
                (Ok(result), Some(name)) => jsonrpc::response(&id, &modern::complete(name, result)),
                (Ok(result), None) => jsonrpc::response(&id, &result),
                (Err(err), Some(_)) => jsonrpc::error_response(Some(&id), &modern::error_of(err)),
                (Err(err), None) => jsonrpc::error_response(Some(&id), &err),
            });
        });
    }

    /// A connection's first request of the stateless revision names its client: for
    /// `/status`, and the registry hears the agent is ready (as after `initialize`).
    fn stateless_request(&mut self, generation: Generation, meta: &modern::RequestMeta) {
        let Some(conn) = self.conn_mut(generation) else {
            return;
        };
        if conn.mcp.stateless {
            return;
        }
        conn.mcp.stateless = true;
        conn.mcp.protocol_version = Some(meta.version);
        if conn.mcp.client.is_none() {
            conn.mcp.client = meta.client.clone();
        }
        let (kind, client) = (conn.kind, conn.mcp.client.clone());
        self.introduced(kind, client.clone(), meta.version);
        self.report(SessionChange::Initialized {
            client: client.map(|c| c.name),
            ide: kind == ConnectionKind::Ide,
        });
    }

    /// `subscriptions/listen`: this stream (the request's own) gets the notifications
    /// asked for, tagged with the request's id, from the acknowledgement on; it stays
    /// open until the client cancels it or closes it.
    fn listen(
        &mut self,
        generation: Generation,
        id: &jsonrpc::RequestId,
        params: Option<&RawValue>,
        reply: &Outbound,
    ) -> Result<(), RpcError> {
        let modern::ListenParams { notifications } = parse_params(params)?;
        let workspace = &self.services.workspace;
        let mut files = std::collections::HashMap::new();
        for uri in notifications
            .resource_subscriptions
            .iter()
            .take(resources::MAX_SUBSCRIPTIONS)
        {
            if let Ok(resources::Target::File(path)) = resources::parse(workspace, uri) {
                files.insert(path, uri.clone());
            }
        }
        let Some(conn) = self.conn_mut(generation) else {
            return Ok(());
        };
        conn.listeners.retain(|l| !l.outbound.is_closed());
        if conn.listeners.len() >= MAX_LISTENERS {
            return Err(RpcError::invalid_request(format!(
                "A connection may keep at most {MAX_LISTENERS} subscriptions/listen streams open; \
                 cancel one first"
            )));
        }
        let subscription = serde_json::to_value(id).unwrap_or(Value::Null);
        let honoured: Vec<String> = files.values().cloned().collect();
        reply.send_text(jsonrpc::notification(
            crate::protocol::methods::Notification::SubscriptionsAcknowledged.name(),
            &modern::acknowledged(&subscription, &notifications, &honoured),
        ));
        conn.listeners.push(Listener {
            id: id.clone(),
            subscription,
            outbound: reply.clone(),
            tools: notifications.tools_list_changed,
            files,
        });
        Ok(())
    }

    /// Records the handshake of one connection; the IDE connection's client names the
    /// agent in `/status` over any other.
    fn initialized(
        &mut self,
        generation: Generation,
        client: Option<Implementation>,
        version: &'static str,
    ) {
        let Some(conn) = self.conn_mut(generation) else {
            return;
        };
        conn.mcp = McpState {
            initialized: true,
            protocol_version: Some(version),
            client,
            ..McpState::default()
        };
        let (kind, client) = (conn.kind, conn.mcp.client.clone());
        self.introduced(kind, client, version);
    }

    /// A connection of `kind` introduced its client: kept as the agent's unless an IDE
    /// connection (which names the agent) already did.
    fn introduced(
        &mut self,
        kind: ConnectionKind,
        client: Option<Implementation>,
        version: &'static str,
    ) {
        let replaces = self
            .last_client
            .as_ref()
            .is_none_or(|last| last.kind != ConnectionKind::Ide || kind == ConnectionKind::Ide);
        if let (Some(client), true) = (client, replaces) {
            self.last_client = Some(super::LastClient {
                kind,
                client,
                version: Some(version),
            });
        }
    }

    fn initialize_result(&self, version: &'static str) -> InitializeResult {
        InitializeResult::of_bridge(version, self.instructions())
    }

    /// What the model is told about this server (`initialize`, `server/discover`).
    fn instructions(&self) -> String {
        crate::protocol::mcp::instructions(self.services.workspace.root(), Some(self.id.as_str()))
    }

    fn on_notification(
        &mut self,
        generation: Generation,
        method: &str,
        params: Option<&RawValue>,
        ctx: &mut Context<Self>,
    ) {
        let Some(notification) = Notification::parse(method) else {
            tracing::debug!(session = %self.id, method, "ignoring notification");
            return;
        };
        match notification {
            Notification::Initialized => {
                if let Some(c) = self.conn(generation).filter(|c| c.mcp.initialized) {
                    let client = c.mcp.client.as_ref().map(|c| c.name.clone());
                    let ide = c.kind == ConnectionKind::Ide;
                    self.report(SessionChange::Initialized { client, ide });
                }
            }
            Notification::IdeConnected => {
                if let Ok(IdeConnectedParams { pid: Some(pid) }) = parse_params(params) {
                    self.client_pid = Some(pid);
                    self.report(SessionChange::ClientPid(pid));
                }
            }
            Notification::Cancelled => match parse_params::<CancelledParams>(params) {
                Ok(p) => {
                    if let Some(conn) = self.conn_mut(generation) {
                        // The client ends a subscriptions/listen stream by cancelling it.
                        conn.listeners.retain(|l| l.id != p.request_id);
                    }
                    if self.cancel_call_by_client(
                        &(generation, CallId::Request(p.request_id.clone())),
                        ctx,
                    ) {
                        tracing::debug!(session = %self.id, id = %p.request_id, reason = ?p.reason, "tool call cancelled by the client");
                    }
                }
                Err(err) => {
                    tracing::debug!(session = %self.id, %err.message, "bad notifications/cancelled")
                }
            },
        }
    }
}

impl Handler<FromClient> for Session {
    type Result = ();
    fn handle(&mut self, msg: FromClient, ctx: &mut Context<Self>) {
        let Some(conn) = self.conn(msg.generation) else {
            if let Some(target) = &self.merged_into {
                target.from_client.do_send(msg);
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
