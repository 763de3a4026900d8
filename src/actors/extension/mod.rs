//! ExtensionClient actor: the one editor connection. The concerns live in their own
//! files: `rpc.rs` (requests with a per-request timeout and a pending map in which every
//! request settles exactly once, behind a circuit breaker), `events.rs` (what the editor
//! pushes: cached, fanned out to agents and automation), `diffs.rs` (the pending diffs
//! each session owns), [`cache`] (what tools read) and [`messages`] (everything it
//! answers).

pub mod breaker;
pub mod cache;
mod diffs;
mod events;
pub mod messages;
mod rpc;

pub use messages::*;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use actix_ws::CloseCode;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::oneshot;

use self::breaker::{Breaker, Clock, Jitter, State, SystemClock, XorShift};
use self::cache::EditorCache;
use self::rpc::Pending;
use super::activity_log::{iso_now, ActivityLog, LifecycleEvent, RecordLifecycle};
use super::messages::automation::EditorEvent;
use super::messages::connection::Generation;
use super::messages::editor::EditorPeer;
use super::messages::registry::{EditorConnected, RegistryHandle, ToolsChanged};
use super::outbound::Outbound;
use super::supervise::{guard, restarted};
use crate::diagnostics::FileDiagnostics;
use crate::metrics::Metrics;
use crate::protocol::jsonrpc;

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "extension_client";

/// Debounce of `selection_changed` to agents.
pub const SELECTION_DEBOUNCE: Duration = Duration::from_millis(100);
/// Long-poll listeners kept at once.
pub const MAX_LISTENERS: usize = 64;

struct Connection {
    generation: Generation,
    outbound: Outbound,
    /// The params of its `extension/hello`, shown in `/status`.
    hello: Option<Value>,
    connected_at: String,
}

/// What `/status` shows about the editor.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionStatus {
    /// An editor is connected.
    pub connected: bool,
    /// The params of its `extension/hello`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hello: Option<Value>,
    /// RFC 3339 time it connected.
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
    /// Per-request timeout unless a [`Call`] sets its own.
    pub request_timeout: Duration,
}

/// Where the ExtensionClient sends what the editor tells it.
pub struct ExtensionLinks {
    /// Agents, through the registry.
    pub registry: RegistryHandle,
    /// Diagnostics changes and saves, when an automation policy is loaded.
    pub automation: Option<Recipient<EditorEvent>>,
    /// The timeline.
    pub activity: Addr<ActivityLog>,
}

/// Whether an editor is connected, readable without a message to the actor: a tool
/// that can do without the editor learns it has none at once, instead of through the
/// actor's mailbox. Set by the [`ExtensionClient`] as its connection comes and goes.
#[derive(Debug, Clone, Default)]
pub struct EditorPresence(Arc<AtomicBool>);

impl EditorPresence {
    /// True while an editor connection is attached.
    pub fn connected(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    fn set(&self, connected: bool) {
        self.0.store(connected, Ordering::Release);
    }
}

/// The bridge's side of the one editor connection; one per bridge.
pub struct ExtensionClient {
    conn: Option<Connection>,
    pending: HashMap<u64, Pending>,
    next_id: u64,
    breaker: Breaker,
    /// The half-open probe under way (its request id), and the requests waiting for
    /// its answer (at most [`rpc::PROBE_HOLD`], then they fail fast).
    probe: Option<rpc::Probe>,
    clock: Box<dyn Clock>,
    jitter: Box<dyn Jitter>,
    timeout: Duration,
    cache: EditorCache,
    listeners: Vec<oneshot::Sender<Vec<FileDiagnostics>>>,
    selection_timer: Option<SpawnHandle>,
    last_selection_sent: Option<Value>,
    links: ExtensionLinks,
    metrics: Arc<Metrics>,
    presence: EditorPresence,
}

impl ExtensionClient {
    /// A client with the real clock and jitter.
    pub fn new(config: ExtensionConfig, links: ExtensionLinks, metrics: Arc<Metrics>) -> Self {
        Self {
            conn: None,
            pending: HashMap::new(),
            next_id: 1,
            breaker: Breaker::default(),
            probe: None,
            clock: Box::new(SystemClock::default()),
            jitter: Box::new(XorShift::default()),
            timeout: config.request_timeout,
            cache: EditorCache::default(),
            listeners: Vec::new(),
            selection_timer: None,
            last_selection_sent: None,
            links,
            metrics,
            presence: EditorPresence::default(),
        }
    }

    /// The flag this client keeps up to date.
    pub fn presence(&self) -> EditorPresence {
        self.presence.clone()
    }

    /// The same client with another clock and jitter (tests drive the breaker).
    pub fn with_clock(mut self, clock: Box<dyn Clock>, jitter: Box<dyn Jitter>) -> Self {
        self.clock = clock;
        self.jitter = jitter;
        self
    }

    /// The peer an editor connection's transport feeds.
    pub fn peer(addr: &Addr<Self>) -> EditorPeer {
        EditorPeer {
            attach: addr.clone().recipient(),
            frame: addr.clone().recipient(),
            detach: addr.clone().recipient(),
        }
    }

    fn lifecycle(&self, event: LifecycleEvent, detail: String) {
        self.links.activity.do_send(RecordLifecycle {
            event,
            session_id: None,
            detail,
        });
    }

    fn tools_changed(&self, immediate: bool) {
        self.links
            .registry
            .tools_changed
            .do_send(ToolsChanged { immediate });
    }

    fn is_current(&self, generation: Generation) -> bool {
        self.conn.as_ref().map(|c| c.generation) == Some(generation)
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

    fn attach(&mut self, msg: EditorAttach, ctx: &mut Context<Self>) {
        if let Some(old) = self.conn.take() {
            tracing::info!(
                connected_at = %old.connected_at,
                "a newer editor connection replaces the one before (that editor stands by)"
            );
            old.outbound
                .close(CloseCode::Normal, crate::protocol::editor::REPLACED);
            self.reject_all(ctx, |m| ExtError::Disconnected(m.to_string()));
            self.listeners.clear();
        }
        self.breaker = Breaker::default();
        self.conn = Some(Connection {
            generation: msg.generation,
            outbound: msg.outbound,
            hello: None,
            connected_at: iso_now(),
        });
        self.presence.set(true);
        tracing::info!("editor connected");
        self.lifecycle(LifecycleEvent::EditorConnected, String::new());
        self.tools_changed(true);
        self.links
            .registry
            .editor_connected
            .do_send(EditorConnected);
    }

    fn detach(&mut self, ctx: &mut Context<Self>) {
        self.conn = None;
        self.presence.set(false);
        self.reject_all(ctx, |m| ExtError::Disconnected(m.to_string()));
        self.listeners.clear();
        self.cache.selection = None;
        tracing::info!("editor disconnected");
        self.lifecycle(LifecycleEvent::EditorDisconnected, String::new());
        self.tools_changed(false);
        if let Some(automation) = &self.links.automation {
            automation.do_send(EditorEvent::Disconnected);
        }
    }
}

impl Actor for ExtensionClient {
    type Context = Context<Self>;
}

impl Supervised for ExtensionClient {
    fn restarting(&mut self, ctx: &mut Context<Self>) {
        self.selection_timer = None;
        self.reject_all(ctx, |m| ExtError::Restarted(m.to_string()));
        self.listeners.clear();
        restarted(
            NAME,
            &self.metrics,
            &self.links.activity.clone().recipient(),
            "failed the requests in flight",
        );
    }
}

impl Handler<EditorAttach> for ExtensionClient {
    type Result = ();
    fn handle(&mut self, msg: EditorAttach, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| act.attach(msg, ctx));
    }
}

impl Handler<EditorDetach> for ExtensionClient {
    type Result = ();
    fn handle(&mut self, msg: EditorDetach, ctx: &mut Context<Self>) {
        if !self.is_current(msg.generation) {
            return;
        }
        let _ = guard(NAME, self, ctx, |act, ctx| act.detach(ctx));
    }
}

impl Handler<NotifyEditor> for ExtensionClient {
    type Result = bool;
    fn handle(&mut self, msg: NotifyEditor, ctx: &mut Context<Self>) -> bool {
        guard(NAME, self, ctx, |act, _| match &act.conn {
            Some(c) => c
                .outbound
                .send_text(jsonrpc::notification(msg.method.name(), &msg.params)),
            None => false,
        })
        .unwrap_or(false)
    }
}

impl Handler<GetStatus> for ExtensionClient {
    type Result = MessageResult<GetStatus>;
    fn handle(&mut self, _: GetStatus, _: &mut Context<Self>) -> Self::Result {
        // Reads only; nothing here can leave the actor half-changed.
        MessageResult(self.status())
    }
}

#[cfg(feature = "fault-injection")]
crate::actors::fault::fault_handlers!(ExtensionClient, NAME);

#[cfg(test)]
mod tests;
