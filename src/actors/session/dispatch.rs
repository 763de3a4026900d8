//! MCP dispatch: a frame from the client is classified, its method parsed once into
//! [`Method`] (or [`Notification`]) and answered here; `tools/call` goes on to
//! [`calls`](super::calls).

use std::sync::Arc;

use actix::prelude::*;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::{Session, SessionChange};
use crate::actors::messages::connection::Generation;
use crate::actors::messages::session::{ConnectionKind, FromClient, McpState};
use crate::actors::outbound::Outbound;
use crate::actors::supervise::catch;
use crate::metrics::MethodLabel;
use crate::protocol::ide::IdeConnectedParams;
use crate::protocol::jsonrpc::{self, parse_params, Incoming, Request, RpcError};
use crate::protocol::mcp::{
    negotiate_version, CancelledParams, GetPromptParams, Implementation, InitializeParams,
    InitializeResult, ListParams, SetLevelParams,
};
use crate::resources::{self, UriParams};

/// The MCP methods a session answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    Initialize,
    Ping,
    ToolsList,
    ToolsCall,
    PromptsList,
    PromptsGet,
    SetLogLevel,
    ResourcesList,
    ResourceTemplatesList,
    ResourcesRead,
    ResourcesSubscribe,
    ResourcesUnsubscribe,
    Complete,
}

impl Method {
    const ALL: [Method; 13] = [
        Method::Initialize,
        Method::Ping,
        Method::ToolsList,
        Method::ToolsCall,
        Method::PromptsList,
        Method::PromptsGet,
        Method::SetLogLevel,
        Method::ResourcesList,
        Method::ResourceTemplatesList,
        Method::ResourcesRead,
        Method::ResourcesSubscribe,
        Method::ResourcesUnsubscribe,
        Method::Complete,
    ];

    pub(super) fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The wire name (a `'static` label for metrics).
    pub(super) fn name(self) -> &'static str {
        match self {
            Method::Initialize => "initialize",
            Method::Ping => "ping",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::SetLogLevel => "logging/setLevel",
            Method::ResourcesList => "resources/list",
            Method::ResourceTemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::ResourcesSubscribe => "resources/subscribe",
            Method::ResourcesUnsubscribe => "resources/unsubscribe",
            Method::Complete => "completion/complete",
        }
    }

    /// Methods a client may send before `initialize` was answered.
    fn before_initialize(self) -> bool {
        matches!(self, Method::Initialize | Method::Ping)
    }
}

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
        Some(match name {
            "notifications/initialized" => Notification::Initialized,
            "ide_connected" => Notification::IdeConnected,
            "notifications/cancelled" => Notification::Cancelled,
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
    }

    impl<T: Serialize> Json for T {
        fn response(&self, id: &RequestId) -> String {
            jsonrpc::response(id, self)
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
        if !conn.mcp.initialized && !method.before_initialize() {
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
                let _: ListParams = parse_params(params)?;
                let services = Arc::clone(&self.services);
                self.answer_later(req.id.clone(), reply, async move {
                    Ok(json!({ "resources": resources::list(&services).await }))
                });
            }
            Method::ResourceTemplatesList => {
                let _: ListParams = parse_params(params)?;
                respond(&json!({
                    "resourceTemplates": resources::templates(&self.services.workspace)
                }));
            }
            Method::ResourcesRead => {
                let UriParams { uri } = parse_params(params)?;
                let services = Arc::clone(&self.services);
                self.answer_later(req.id.clone(), reply, async move {
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
                self.answer_later(req.id.clone(), reply, async move {
                    resources::complete(&services, complete).await
                });
            }
        }
        Ok(())
    }

    /// Answers request `id` on `reply` when `answer` is ready (reads that wait for a
    /// file or another actor), without holding up this session's other messages.
    fn answer_later(
        &self,
        id: jsonrpc::RequestId,
        reply: &Outbound,
        answer: impl std::future::Future<Output = Result<Value, RpcError>> + 'static,
    ) {
        let reply = reply.clone();
        actix::spawn(async move {
            reply.send_text(match answer.await {
                Ok(result) => jsonrpc::response(&id, &result),
                Err(err) => jsonrpc::error_response(Some(&id), &err),
            });
        });
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
        let kind = conn.kind;
        let label = conn.mcp.client.as_ref().map(Implementation::label);
        let replaces = self
            .last_client
            .as_ref()
            .is_none_or(|(k, ..)| *k != ConnectionKind::Ide || kind == ConnectionKind::Ide);
        if let (Some(label), true) = (label, replaces) {
            self.last_client = Some((kind, label, version));
        }
    }

    fn initialize_result(&self, version: &'static str) -> InitializeResult {
        InitializeResult::of_bridge(
            version,
            format!(
                "ide-bridge serves the workspace {} to this agent (session {}). \
                 Tools that need an editor say so when none is connected.",
                self.services.workspace.root().display(),
                self.id
            ),
        )
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
                    self.report(SessionChange::Initialized(client));
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
                    if self.cancel_call(&(generation, p.request_id.clone()), ctx) {
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

#[cfg(test)]
mod tests {
    use super::Method;

    #[test]
    fn every_method_parses_from_its_own_wire_name() {
        for m in Method::ALL {
            assert_eq!(Method::parse(m.name()), Some(m));
        }
        assert_eq!(Method::parse("resources/watch"), None);
    }
}
