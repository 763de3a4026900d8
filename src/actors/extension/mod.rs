//! ExtensionClient actor: the one editor connection. It sends `extension/*` requests
//! with a per-request timeout and a pending map in which every request settles exactly
//! once (result, error, timeout, or rejection when the editor goes away), guards the
//! editor with a circuit breaker, keeps what the editor pushes, owns the pending diffs
//! of each session, and turns editor events into agent notifications.

pub mod breaker;
pub mod cache;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use actix_ws::CloseCode;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::sync::oneshot;

use self::breaker::{Admission, Breaker, Clock, Jitter, State, SystemClock, XorShift};
use self::cache::{EditorCache, WireDiagnostic, WireSelection};
use super::activity_log::{ActivityLog, LifecycleEvent, RecordLifecycle};
use super::automation::EditorEvent;
use super::outbound::Outbound;
use super::registry::{Broadcast, EditorConnected, Mention, SessionRegistry, ToolsChanged};
use super::supervise::{guard, ActorFault};
use crate::diagnostics::FileDiagnostics;
use crate::metrics::Metrics;
use crate::protocol::jsonrpc::{self, Incoming, RequestId, RpcError};
use crate::workspace::file_url;

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "extension_client";

/// Debounce of `selection_changed` to agents.
pub const SELECTION_DEBOUNCE: Duration = Duration::from_millis(100);
/// Long-poll listeners kept at once.
pub const MAX_LISTENERS: usize = 64;

/// Why an editor request failed (the text is what agents read).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExtError {
    /// No editor.
    #[error("VS Code extension not connected: no editor is connected to ide-bridge. Open the workspace in an editor with the ide-bridge extension (it finds the bridge through the lock file), then retry.")]
    NotConnected,
    /// The per-request timeout fired.
    #[error("Extension request timed out after {ms} ms ({method}); the editor may be busy")]
    Timeout {
        /// Timeout.
        ms: u64,
        /// Method.
        method: String,
    },
    /// The breaker is open.
    #[error("Extension request timed out earlier and the editor is suspended (circuit breaker open after {failures} timeouts); the bridge retries it in {retry_in_ms} ms")]
    CircuitOpen {
        /// Consecutive timeouts.
        failures: u32,
        /// Until the next probe (0: a probe is in flight).
        retry_in_ms: u64,
    },
    /// The editor went away.
    #[error("The editor disconnected before answering {0}")]
    Disconnected(String),
    /// The editor answered with an error.
    #[error("The editor could not do {method}: {message}")]
    Editor {
        /// Method.
        method: String,
        /// Its message.
        message: String,
    },
    /// The actor restarted with the request in flight.
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

struct Pending {
    reply: Reply,
    timer: Option<SpawnHandle>,
    method: String,
    diff: Option<(String, String)>,
}

struct Connection {
    generation: u64,
    outbound: Outbound,
    hello: Option<Value>,
    connected_at: String,
}

/// What `/status` shows about the editor.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionStatus {
    /// An editor is connected.
    pub connected: bool,
    /// Its `extension/hello`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hello: Option<Value>,
    /// When it connected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connected_at: Option<String>,
    /// Circuit breaker state.
    pub circuit: State,
    /// Consecutive timeouts.
    pub failures: u32,
    /// Requests in flight.
    pub pending_requests: usize,
    /// Files with cached diagnostics.
    pub diagnostic_files: usize,
    /// Files with cached AI comments.
    pub ai_comment_files: usize,
}

/// Settings of the actor.
pub struct ExtensionConfig {
    /// Default per-request timeout.
    pub request_timeout: Duration,
}

/// The ExtensionClient actor.
pub struct ExtensionClient {
    conn: Option<Connection>,
    pending: HashMap<u64, Pending>,
    next_id: u64,
    breaker: Breaker,
    clock: Box<dyn Clock>,
    jitter: Box<dyn Jitter>,
    timeout: Duration,
    cache: EditorCache,
    listeners: Vec<oneshot::Sender<Vec<FileDiagnostics>>>,
    selection_timer: Option<SpawnHandle>,
    last_selection_sent: Option<Value>,
    registry: Addr<SessionRegistry>,
    automation: Option<Recipient<EditorEvent>>,
    activity: Addr<ActivityLog>,
    metrics: Arc<Metrics>,
}

impl ExtensionClient {
    /// A client with the real clock and jitter.
    pub fn new(
        config: ExtensionConfig,
        registry: Addr<SessionRegistry>,
        activity: Addr<ActivityLog>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            conn: None,
            pending: HashMap::new(),
            next_id: 1,
            breaker: Breaker::default(),
            clock: Box::new(SystemClock::default()),
            jitter: Box::new(XorShift::default()),
            timeout: config.request_timeout,
            cache: EditorCache::default(),
            listeners: Vec::new(),
            selection_timer: None,
            last_selection_sent: None,
            registry,
            automation: None,
            activity,
            metrics,
        }
    }

    fn lifecycle(&self, event: LifecycleEvent, detail: String) {
        self.activity.do_send(RecordLifecycle {
            event,
            session_id: None,
            detail,
        });
    }

    fn status(&self) -> ExtensionStatus {
        let now = self.clock.now_ms();
        ExtensionStatus {
            connected: self.conn.is_some(),
            hello: self.conn.as_ref().and_then(|c| c.hello.clone()),
            connected_at: self.conn.as_ref().map(|c| c.connected_at.clone()),
            circuit: self.breaker.state(now),
            failures: self.breaker.failures(),
            pending_requests: self.pending.len(),
            diagnostic_files: self.cache.diagnostics.len(),
            ai_comment_files: self.cache.ai_comments.len(),
        }
    }

    /// Settles every pending request with `error` (diffs are rejected).
    fn reject_all(&mut self, ctx: &mut Context<Self>, error: impl Fn(&str) -> ExtError) {
        for (_, p) in std::mem::take(&mut self.pending) {
            if let Some(t) = p.timer {
                ctx.cancel_future(t);
            }
            let outcome = if p.diff.is_some() {
                Ok(json!({ "decision": "DIFF_REJECTED" }))
            } else {
                Err(error(&p.method))
            };
            let _ = p.reply.send(outcome);
        }
    }

    /// Sends a request and parks `reply` in the pending map until it settles. A
    /// request that cannot be sent hands `reply` back with the reason.
    fn send_request(
        &mut self,
        method: &str,
        params: &Value,
        timeout: Option<Duration>,
        diff: Option<(String, String)>,
        reply: Reply,
        ctx: &mut Context<Self>,
    ) -> Result<(), Refused> {
        let Some(conn) = &self.conn else {
            return Err((ExtError::NotConnected, reply));
        };
        match self.breaker.admit(self.clock.now_ms()) {
            Admission::Closed | Admission::Probe => {}
            Admission::Open { retry_in_ms } => {
                let error = ExtError::CircuitOpen {
                    failures: self.breaker.failures(),
                    retry_in_ms,
                };
                return Err((error, reply));
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        conn.outbound
            .send_text(jsonrpc::request(id, method, params));
        let timer = timeout.map(|d| ctx.run_later(d, move |act, ctx| act.expire(id, d, ctx)));
        self.pending.insert(
            id,
            Pending {
                reply,
                timer,
                method: method.to_string(),
                diff,
            },
        );
        Ok(())
    }

    fn expire(&mut self, id: u64, after: Duration, _ctx: &mut Context<Self>) {
        let Some(p) = self.pending.remove(&id) else {
            return;
        };
        let now = self.clock.now_ms();
        let backoff = self.breaker.on_timeout(now, self.jitter.as_mut());
        tracing::warn!(method = %p.method, failures = self.breaker.failures(), backoff_ms = backoff, "editor request timed out; circuit breaker open");
        self.lifecycle(
            LifecycleEvent::CircuitOpened,
            format!(
                "{} timed out; editor suspended for {backoff} ms ({} failures)",
                p.method,
                self.breaker.failures()
            ),
        );
        let _ = p.reply.send(Err(ExtError::Timeout {
            ms: after.as_millis() as u64,
            method: p.method,
        }));
    }

    fn on_response(
        &mut self,
        id: &RequestId,
        result: Option<Value>,
        error: Option<Value>,
        ctx: &mut Context<Self>,
    ) {
        let RequestId::Number(n) = id else { return };
        let Some(p) = n.as_u64().and_then(|n| self.pending.remove(&n)) else {
            tracing::debug!(%id, "late or unknown editor response ignored");
            return;
        };
        if let Some(t) = p.timer {
            ctx.cancel_future(t);
        }
        if self.breaker.failures() > 0 {
            self.lifecycle(
                LifecycleEvent::CircuitClosed,
                "the editor answered again".into(),
            );
        }
        self.breaker.on_success();
        let outcome = match error {
            Some(e) => Err(ExtError::Editor {
                method: p.method.clone(),
                message: e
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| e.to_string()),
            }),
            None => Ok(result.unwrap_or(Value::Null)),
        };
        let _ = p.reply.send(outcome);
    }

    /// Handles one editor notification (or request, answered by the caller); false
    /// when the method is not one the bridge knows, which is then only logged.
    fn on_notification(&mut self, method: &str, params: Value, ctx: &mut Context<Self>) -> bool {
        match method {
            "extension/hello" => {
                if let Some(c) = &mut self.conn {
                    c.hello = Some(params);
                }
            }
            "extension/diagnosticsChanged" => {
                #[derive(Deserialize)]
                struct P {
                    file: String,
                    #[serde(default)]
                    diagnostics: Vec<WireDiagnostic>,
                }
                match serde_json::from_value::<P>(params) {
                    Ok(p) => {
                        let file = p.file.clone();
                        if self.cache.set_diagnostics(p.file, p.diagnostics) {
                            self.notify_listeners(&file);
                            self.registry.do_send(ToolsChanged { immediate: false });
                            if let Some(automation) = &self.automation {
                                let diagnostics = self
                                    .cache
                                    .diagnostics
                                    .get(&file)
                                    .cloned()
                                    .unwrap_or_default();
                                automation.do_send(EditorEvent::Diagnostics { file, diagnostics });
                            }
                        }
                    }
                    Err(e) => tracing::debug!(%e, "malformed diagnosticsChanged ignored"),
                }
            }
            "extension/selectionChanged" => match serde_json::from_value::<WireSelection>(params) {
                Ok(sel) => {
                    self.cache.active_file = Some(sel.file.clone());
                    self.cache.selection = Some(sel);
                    self.schedule_selection(ctx);
                }
                Err(e) => tracing::debug!(%e, "malformed selectionChanged ignored"),
            },
            "extension/activeFileChanged" => {
                if let Some(file) = params.get("file").and_then(Value::as_str) {
                    self.cache.active_file = Some(file.to_string());
                    // An empty selection in the new file tells agents which file is open.
                    self.cache.selection = Some(WireSelection {
                        file: file.to_string(),
                        start_line: 1,
                        start_column: 1,
                        end_line: 1,
                        end_column: 1,
                        selected_text: String::new(),
                    });
                    self.schedule_selection(ctx);
                }
            }
            "extension/aiCommentsChanged" => {
                let comments = params
                    .get("comments")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let file = params.get("file").and_then(Value::as_str);
                self.cache.set_ai_comments(comments, file);
                self.registry.do_send(ToolsChanged { immediate: false });
            }
            "extension/debugSessionChanged" => {
                self.cache.debug = Some(params);
                self.registry.do_send(ToolsChanged { immediate: false });
            }
            "extension/fileChanged" => {
                self.registry.do_send(ToolsChanged { immediate: false });
            }
            "extension/fileSaved" => {
                self.registry.do_send(ToolsChanged { immediate: false });
                let file = ["file", "filePath", "uri"]
                    .iter()
                    .find_map(|k| params.get(*k).and_then(Value::as_str));
                match (file, &self.automation) {
                    (Some(file), Some(automation)) => automation.do_send(EditorEvent::FileSaved {
                        file: file.to_string(),
                    }),
                    (None, _) => tracing::debug!("fileSaved without a file ignored"),
                    _ => {}
                }
            }
            "extension/atMentioned" => self.registry.do_send(Mention(params)),
            other => {
                tracing::info!(method = other, "unknown editor notification ignored");
                return false;
            }
        }
        true
    }

    fn notify_listeners(&mut self, file: &str) {
        let Some(diags) = self.cache.diagnostics.get(&file.to_string()).cloned() else {
            return;
        };
        let change = vec![FileDiagnostics {
            uri: file_url(std::path::Path::new(file)),
            diagnostics: diags,
        }];
        for l in self.listeners.drain(..) {
            let _ = l.send(change.clone());
        }
    }

    fn schedule_selection(&mut self, ctx: &mut Context<Self>) {
        if self.selection_timer.is_some() {
            return;
        }
        self.selection_timer = Some(ctx.run_later(SELECTION_DEBOUNCE, |act, _| {
            act.selection_timer = None;
            let Some(sel) = &act.cache.selection else {
                return;
            };
            let params = serde_json::to_value(sel.to_claude()).unwrap_or(Value::Null);
            if act.last_selection_sent.as_ref() == Some(&params) {
                return;
            }
            act.last_selection_sent = Some(params.clone());
            act.registry.do_send(Broadcast {
                method: "selection_changed",
                params,
            });
        }));
    }
}

impl Actor for ExtensionClient {
    type Context = Context<Self>;
}

impl Supervised for ExtensionClient {
    fn restarting(&mut self, ctx: &mut Context<Self>) {
        self.metrics.record_restart(NAME);
        tracing::warn!(
            actor = NAME,
            "restarted after a fault; failing the requests in flight"
        );
        self.selection_timer = None;
        self.reject_all(ctx, |m| ExtError::Restarted(m.to_string()));
        self.listeners.clear();
        self.lifecycle(LifecycleEvent::ActorRestarted, NAME.to_string());
    }
}

/// An editor connection is ready (from its Transport).
#[derive(Message)]
#[rtype(result = "()")]
pub struct EditorAttach {
    /// Identifies the transport.
    pub generation: u64,
    /// Where to write.
    pub outbound: Outbound,
}

/// The editor connection with this generation closed.
#[derive(Message)]
#[rtype(result = "()")]
pub struct EditorDetach {
    /// Identifies the transport.
    pub generation: u64,
}

/// A frame from the editor.
#[derive(Message)]
#[rtype(result = "()")]
pub struct EditorFrame {
    /// Identifies the transport.
    pub generation: u64,
    /// The frame.
    pub message: Incoming,
}

/// The answer to one editor request, sent exactly once.
pub type Reply = oneshot::Sender<Result<Value, ExtError>>;

/// A request that was not sent: why, and the reply to answer with it.
type Refused = (ExtError, Reply);

/// Answers a refused request with its reason. When the send panicked, its reply was
/// dropped with it and the caller sees the restart.
fn answer_refusal(sent: Result<Result<(), Refused>, ActorFault>) {
    if let Ok(Err((error, reply))) = sent {
        let _ = reply.send(Err(error));
    }
}

/// Send `extension/<method>`; the answer (or why there is none) goes to `reply`.
/// If the actor is gone before it handles this, `reply` is dropped unanswered.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Call {
    /// Full method name.
    pub method: String,
    /// Params.
    pub params: Value,
    /// Override of the default timeout.
    pub timeout: Option<Duration>,
    /// Where the answer goes.
    pub reply: Reply,
}

/// Show a diff owned by `session_id`; resolves when the user decides or it is rejected.
#[derive(Message)]
#[rtype(result = "Result<DiffOutcome, ExtError>")]
pub struct OpenDiff {
    /// Owning session.
    pub session_id: String,
    /// Tab name (unique among pending diffs).
    pub tab_name: String,
    /// `extension/openDiff` params.
    pub params: Value,
}

/// Reject the pending diff in `tab_name`; true when there was one.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct CloseDiff {
    /// Tab name.
    pub tab_name: String,
}

/// Reject every pending diff of a session; returns how many.
#[derive(Message)]
#[rtype(result = "usize")]
pub struct CloseSessionDiffs {
    /// The session.
    pub session_id: String,
}

/// A notification from the bridge to the editor (dropped when none is connected).
#[derive(Message)]
#[rtype(result = "bool")]
pub struct NotifyEditor {
    /// Method, e.g. `bridge/claudeConnectionChanged`.
    pub method: &'static str,
    /// Params.
    pub params: Value,
}

/// Editor status.
#[derive(Message)]
#[rtype(result = "ExtensionStatus")]
pub struct GetStatus;

/// Where diagnostics changes and saves go for automation.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SetAutomation(pub Recipient<EditorEvent>);

/// A read of the caches.
#[derive(Message)]
#[rtype(result = "Cached")]
pub enum Read {
    /// Diagnostics of one file, or all.
    Diagnostics(Option<String>),
    /// The latest selection.
    Selection,
    /// The active file.
    ActiveFile,
    /// AI comments.
    AiComments,
    /// Debug state.
    Debug,
}

/// Cache contents.
#[derive(Debug, Clone)]
pub enum Cached {
    /// Diagnostics.
    Diagnostics(Vec<FileDiagnostics>),
    /// Selection (Claude shape) if any.
    Selection(Option<Value>),
    /// Active file.
    ActiveFile(Option<String>),
    /// Any JSON.
    Json(Value),
}

/// Wait for the next diagnostics change.
#[derive(Message)]
#[rtype(result = "Result<oneshot::Receiver<Vec<FileDiagnostics>>, ExtError>")]
pub struct WatchDiagnostics;

impl Handler<EditorAttach> for ExtensionClient {
    type Result = ();
    fn handle(&mut self, msg: EditorAttach, ctx: &mut Context<Self>) {
        if let Some(old) = self.conn.take() {
            old.outbound
                .close(CloseCode::Normal, "replaced by a newer editor connection");
            self.reject_all(ctx, |m| ExtError::Disconnected(m.to_string()));
            self.listeners.clear();
        }
        self.breaker = Breaker::default();
        self.conn = Some(Connection {
            generation: msg.generation,
            outbound: msg.outbound,
            hello: None,
            connected_at: super::registry::iso_now(),
        });
        tracing::info!("editor connected");
        self.lifecycle(LifecycleEvent::EditorConnected, String::new());
        self.registry.do_send(ToolsChanged { immediate: true });
        self.registry.do_send(EditorConnected);
    }
}

impl Handler<EditorDetach> for ExtensionClient {
    type Result = ();
    fn handle(&mut self, msg: EditorDetach, ctx: &mut Context<Self>) {
        if self.conn.as_ref().map(|c| c.generation) != Some(msg.generation) {
            return;
        }
        self.conn = None;
        self.reject_all(ctx, |m| ExtError::Disconnected(m.to_string()));
        self.listeners.clear();
        self.cache.selection = None;
        self.cache.active_file = None;
        self.cache.debug = None;
        tracing::info!("editor disconnected");
        self.lifecycle(LifecycleEvent::EditorDisconnected, String::new());
        self.registry.do_send(ToolsChanged { immediate: false });
    }
}

impl Handler<EditorFrame> for ExtensionClient {
    type Result = ();
    fn handle(&mut self, msg: EditorFrame, ctx: &mut Context<Self>) {
        if self.conn.as_ref().map(|c| c.generation) != Some(msg.generation) {
            return;
        }
        let _ = guard(NAME, self, ctx, |act, ctx| match msg.message {
            Incoming::Notification { method, params } => {
                let params = params
                    .and_then(|p| serde_json::from_str(p.get()).ok())
                    .unwrap_or(Value::Null);
                act.on_notification(&method, params, ctx);
            }
            Incoming::Request(req) => {
                // The editor may send any of its notifications as a request (its hello,
                // typically), answered with `{}`; an unknown method gets -32601.
                let params = req
                    .params
                    .and_then(|p| serde_json::from_str(p.get()).ok())
                    .unwrap_or(Value::Null);
                let known = act.on_notification(&req.method, params, ctx);
                if let Some(c) = &act.conn {
                    c.outbound.send_text(if known {
                        jsonrpc::response(&req.id, &json!({}))
                    } else {
                        jsonrpc::error_response(
                            Some(&req.id),
                            &RpcError::method_not_found(&req.method),
                        )
                    });
                }
            }
            Incoming::Response { .. } | Incoming::Invalid { .. } => {}
        });
    }
}

/// Responses travel separately so that results are not re-parsed from raw text twice.
#[derive(Message)]
#[rtype(result = "()")]
pub struct EditorResponse {
    /// Identifies the transport.
    pub generation: u64,
    /// The id answered.
    pub id: RequestId,
    /// `result`.
    pub result: Option<Value>,
    /// `error`.
    pub error: Option<Value>,
}

impl Handler<EditorResponse> for ExtensionClient {
    type Result = ();
    fn handle(&mut self, msg: EditorResponse, ctx: &mut Context<Self>) {
        if self.conn.as_ref().map(|c| c.generation) != Some(msg.generation) {
            return;
        }
        let _ = guard(NAME, self, ctx, |act, ctx| {
            act.on_response(&msg.id, msg.result, msg.error, ctx)
        });
    }
}

impl Handler<Call> for ExtensionClient {
    type Result = ();
    fn handle(&mut self, msg: Call, ctx: &mut Context<Self>) {
        let Call {
            method,
            params,
            timeout,
            reply,
        } = msg;
        let timeout = Some(timeout.unwrap_or(self.timeout));
        answer_refusal(guard(NAME, self, ctx, |act, ctx| {
            act.send_request(&method, &params, timeout, None, reply, ctx)
        }));
    }
}

impl Handler<OpenDiff> for ExtensionClient {
    type Result = ResponseFuture<Result<DiffOutcome, ExtError>>;
    fn handle(&mut self, msg: OpenDiff, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, rx) = oneshot::channel();
        answer_refusal(guard(NAME, self, ctx, |act, ctx| {
            // A new diff in the same tab rejects the old one.
            close_diff(act, &msg.tab_name, ctx);
            act.send_request(
                "extension/openDiff",
                &msg.params,
                None,
                Some((msg.tab_name.clone(), msg.session_id.clone())),
                reply,
                ctx,
            )
        }));
        Box::pin(async move {
            let value = rx
                .await
                .unwrap_or(Err(ExtError::Restarted("extension/openDiff".into())))?;
            Ok(match value.get("decision").and_then(Value::as_str) {
                Some("FILE_SAVED") | Some("accepted") => DiffOutcome::Saved(
                    value
                        .get("content")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                ),
                _ => DiffOutcome::Rejected,
            })
        })
    }
}

/// Settles the pending diff in `tab` as rejected and tells the editor to close it.
fn close_diff(act: &mut ExtensionClient, tab: &str, ctx: &mut Context<ExtensionClient>) -> bool {
    let id = act
        .pending
        .iter()
        .find(|(_, p)| p.diff.as_ref().is_some_and(|(t, _)| t == tab))
        .map(|(id, _)| *id);
    let Some(p) = id.and_then(|id| act.pending.remove(&id)) else {
        return false;
    };
    if let Some(t) = p.timer {
        ctx.cancel_future(t);
    }
    let _ = p.reply.send(Ok(json!({ "decision": "DIFF_REJECTED" })));
    if let Some(c) = &act.conn {
        c.outbound.send_text(jsonrpc::notification(
            "bridge/closeDiff",
            &json!({ "tabName": tab }),
        ));
    }
    true
}

impl Handler<CloseDiff> for ExtensionClient {
    type Result = bool;
    fn handle(&mut self, msg: CloseDiff, ctx: &mut Context<Self>) -> bool {
        guard(NAME, self, ctx, |act, ctx| {
            close_diff(act, &msg.tab_name, ctx)
        })
        .unwrap_or(false)
    }
}

impl Handler<CloseSessionDiffs> for ExtensionClient {
    type Result = usize;
    fn handle(&mut self, msg: CloseSessionDiffs, ctx: &mut Context<Self>) -> usize {
        let tabs: Vec<String> = self
            .pending
            .values()
            .filter_map(|p| p.diff.as_ref())
            .filter(|(_, s)| *s == msg.session_id)
            .map(|(t, _)| t.clone())
            .collect();
        tabs.iter().filter(|t| close_diff(self, t, ctx)).count()
    }
}

impl Handler<NotifyEditor> for ExtensionClient {
    type Result = bool;
    fn handle(&mut self, msg: NotifyEditor, _: &mut Context<Self>) -> bool {
        match &self.conn {
            Some(c) => c
                .outbound
                .send_text(jsonrpc::notification(msg.method, &msg.params)),
            None => false,
        }
    }
}

impl Handler<SetAutomation> for ExtensionClient {
    type Result = ();
    fn handle(&mut self, msg: SetAutomation, _: &mut Context<Self>) {
        self.automation = Some(msg.0);
    }
}

impl Handler<GetStatus> for ExtensionClient {
    type Result = MessageResult<GetStatus>;
    fn handle(&mut self, _: GetStatus, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.status())
    }
}

impl Handler<Read> for ExtensionClient {
    type Result = MessageResult<Read>;
    fn handle(&mut self, msg: Read, _: &mut Context<Self>) -> Self::Result {
        let c = &self.cache;
        MessageResult(match msg {
            Read::Diagnostics(file) => Cached::Diagnostics(
                c.diagnostics
                    .iter()
                    .filter(|(f, _)| file.as_ref().is_none_or(|want| want == *f))
                    .map(|(f, d)| FileDiagnostics {
                        uri: file_url(std::path::Path::new(f)),
                        diagnostics: d.clone(),
                    })
                    .collect(),
            ),
            Read::Selection => Cached::Selection(
                c.selection
                    .as_ref()
                    .and_then(|s| serde_json::to_value(s.to_claude()).ok()),
            ),
            Read::ActiveFile => Cached::ActiveFile(c.active_file.clone()),
            Read::AiComments => Cached::Json(Value::Array(
                c.ai_comments.iter().flat_map(|(_, v)| v.clone()).collect(),
            )),
            Read::Debug => Cached::Json(c.debug.clone().unwrap_or(Value::Null)),
        })
    }
}

impl Handler<WatchDiagnostics> for ExtensionClient {
    type Result = Result<oneshot::Receiver<Vec<FileDiagnostics>>, ExtError>;
    fn handle(&mut self, _: WatchDiagnostics, _: &mut Context<Self>) -> Self::Result {
        if self.conn.is_none() {
            return Err(ExtError::NotConnected);
        }
        self.listeners.retain(|l| !l.is_closed());
        if self.listeners.len() >= MAX_LISTENERS {
            return Err(ExtError::Editor {
                method: "watchDiagnostics".into(),
                message: format!("too many watchers ({MAX_LISTENERS})"),
            });
        }
        let (tx, rx) = oneshot::channel();
        self.listeners.push(tx);
        Ok(rx)
    }
}

#[cfg(feature = "fault-injection")]
crate::actors::fault::fault_handlers!(ExtensionClient, NAME);
