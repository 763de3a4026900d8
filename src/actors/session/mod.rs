//! Session actor: one per agent. Owns the agent's connections (each with its own MCP
//! handshake state), the files it opened, its terminal prefix, its in-flight tool calls
//! (timeout, cancellation, concurrency cap) and the grace timer that keeps it alive
//! across reconnects. Two sessions found to serve the same client process merge.
//!
//! The concerns live in their own files: `lifecycle.rs` (connections, grace, merge,
//! eviction), `dispatch.rs` (MCP requests and notifications), `calls.rs` (tool calls in
//! flight), [`memory`] (what tools remember per agent) and `status.rs` (describing the
//! session, notifying its agent).

mod calls;
mod connection;
mod dispatch;
mod lifecycle;
pub mod memory;
mod status;
mod tasks;

pub use crate::actors::messages::connection::Generation;
pub use crate::actors::messages::session::*;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use actix_ws::CloseCode;

use self::calls::{CallKey, InFlight};
use self::connection::Connection;
use super::activity_log::{iso_now, LifecycleEvent, RecordLifecycle, RecordToolCall};
use super::messages::editor::CloseSessionDiffs;
use super::messages::registry::{SessionChange, SessionEvent};
use crate::protocol::mcp::Implementation;
use crate::services::Services;
use crate::workspace::files::Fingerprint;

/// Files remembered per session; the oldest is forgotten beyond this.
pub const MAX_OPENED_FILES: usize = 1000;
/// File versions remembered per session for concurrent-modification checks.
pub const MAX_READ_VERSIONS: usize = 4096;
/// Terminals whose last output a session keeps (without an editor).
pub const MAX_TERMINALS: usize = 32;

/// Where a session reports: the registry, the editor (diffs it owns) and the
/// activity log. Production sessions take these from [`Services`]; tests capture them.
#[derive(Clone)]
pub struct SessionLinks {
    /// Connection and handshake changes, client pid, end.
    pub registry: Recipient<SessionEvent>,
    /// Rejects this agent's pending diffs when its IDE connection goes: those in the
    /// editor and those in the browser page.
    pub diffs: Recipient<CloseSessionDiffs>,
    pub page_diffs: Recipient<CloseSessionDiffs>,
    /// Lifecycle entries of the timeline.
    pub lifecycle: Recipient<RecordLifecycle>,
    /// Finished tool calls.
    pub tool_calls: Recipient<RecordToolCall>,
}

impl SessionLinks {
    /// The singletons of a running bridge.
    pub fn of(services: &Services) -> Self {
        Self {
            registry: services.registry.clone().recipient(),
            diffs: services.extension.clone().recipient(),
            page_diffs: services.dashboard.clone().recipient(),
            lifecycle: services.activity.clone().recipient(),
            tool_calls: services.activity.clone().recipient(),
        }
    }
}

/// One agent, across its connections and reconnects.
pub struct Session {
    id: SessionId,
    terminal_prefix: Arc<str>,
    /// Handed to every tool call; the session itself reads the settings, the tool and
    /// prompt catalogues, the workspace root and the metrics from it.
    services: Arc<Services>,
    links: SessionLinks,
    conns: Vec<Connection>,
    client_pid: Option<u32>,
    /// The client as its IDE connection (else any connection) last introduced itself;
    /// kept while the agent is away.
    last_client: Option<LastClient>,
    opened_files: Vec<PathBuf>,
    read_versions: HashMap<PathBuf, Fingerprint>,
    terminals: Vec<(String, TerminalRun)>,
    /// The files this agent has seen and the notices other agents' changes left it.
    awareness: crate::coordination::awareness::Awareness,
    /// The agent's own tool calls between their hook and their end.
    native: crate::coordination::native::NativeCalls,
    in_flight: HashMap<CallKey, InFlight, foldhash::fast::RandomState>,
    /// Calls keyed by [`calls::CallId::Stream`] so far: the last one's number.
    stream_calls: u64,
    /// What every tool call of this agent is handed to reach its memory: built when the
    /// actor starts (six boxed recipients; building them per call cost 1 % of a cheap
    /// call's CPU), so the session holds its own address until it stops.
    memory: Option<Arc<MemoryHandle>>,
    /// Calls answered with a task (MCP 2026-07-28's tasks extension), by task id.
    tasks: tasks::Tasks,
    grace_timer: Option<SpawnHandle>,
    created_at: String,
    ever_attached: bool,
    /// What its busiest connection does (reported to the registry when it changes).
    activity: crate::actors::messages::session::Activity,
    /// Restored from a checkpoint: what is left of its grace period.
    restored: Option<Duration>,
    /// After a merge: the session that took this one's connections. Frames still
    /// addressed here are passed on; the actor stops once its own calls finished and
    /// the linger has passed (a transport may send here until it handled `Rebind`).
    merged_into: Option<SessionHandle>,
    /// The linger after a merge is over.
    lingered: bool,
}

/// How an agent last introduced itself, and on which kind of connection.
#[derive(Debug, Clone)]
struct LastClient {
    kind: ConnectionKind,
    client: Implementation,
    /// The revision it spoke (unknown for a session restored from a checkpoint).
    version: Option<&'static str>,
}

impl Session {
    /// A session with `id`, not yet attached to a connection.
    pub fn new(id: SessionId, services: Arc<Services>, links: SessionLinks) -> Self {
        let terminal_prefix: Arc<str> = Arc::from(format!("{id}-"));
        Self {
            id,
            terminal_prefix,
            services,
            links,
            conns: Vec::new(),
            client_pid: None,
            last_client: None,
            opened_files: Vec::new(),
            read_versions: HashMap::new(),
            terminals: Vec::new(),
            awareness: crate::coordination::awareness::Awareness::default(),
            native: crate::coordination::native::NativeCalls::default(),
            in_flight: HashMap::default(),
            stream_calls: 0,
            memory: None,
            tasks: HashMap::new(),
            grace_timer: None,
            created_at: iso_now(),
            ever_attached: false,
            activity: crate::actors::messages::session::Activity::Busy,
            restored: None,
            merged_into: None,
            lingered: false,
        }
    }

    /// A session restored from a checkpoint: it starts in what is left of its grace
    /// period (`grace_left`), waiting for its agent to reconnect; `client` is how the
    /// agent last introduced itself (an HTTP client resuming its session does not
    /// introduce itself again), `ended_calls` the native calls already recorded,
    /// `created_at` when the session was first made.
    #[allow(clippy::too_many_arguments)]
    pub fn restored(
        id: SessionId,
        opened_files: Vec<PathBuf>,
        awareness: crate::coordination::awareness::Awareness,
        client_pid: Option<u32>,
        client: Option<Implementation>,
        ended_calls: Vec<String>,
        created_at: Option<String>,
        grace_left: Duration,
        services: Arc<Services>,
        links: SessionLinks,
    ) -> Self {
        let mut session = Self::new(id, services, links);
        session.last_client = client.map(|client| LastClient {
            kind: ConnectionKind::Http,
            client,
            version: None,
        });
        session.native.remember_finished(ended_calls);
        if let Some(created_at) = created_at {
            session.created_at = created_at;
        }
        session.opened_files = opened_files;
        session.awareness = awareness;
        session.client_pid = client_pid;
        session.ever_attached = true;
        session.restored = Some(grace_left);
        session
    }

    fn report(&self, change: SessionChange) {
        self.links.registry.do_send(SessionEvent {
            session_id: self.id.clone(),
            change,
        });
    }

    fn lifecycle(&self, event: LifecycleEvent, detail: String) {
        self.links.lifecycle.do_send(RecordLifecycle {
            event,
            session_id: Some(self.id.clone()),
            detail,
        });
    }

    fn conn(&self, generation: Generation) -> Option<&Connection> {
        self.conns.iter().find(|c| c.generation == generation)
    }

    fn conn_mut(&mut self, generation: Generation) -> Option<&mut Connection> {
        self.conns.iter_mut().find(|c| c.generation == generation)
    }
}

impl From<Addr<Session>> for SessionHandle {
    fn from(addr: Addr<Session>) -> Self {
        SessionHandle::of(&addr)
    }
}

impl Actor for Session {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.memory = Some(Arc::new(MemoryHandle::of(&ctx.address())));
        if let Some(grace_left) = self.restored {
            self.start_grace_for(grace_left, ctx);
        }
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.memory = None;
        for conn in self.conns.drain(..) {
            conn.outbound.close(CloseCode::Away, "session closed");
        }
    }
}

#[cfg(test)]
mod tests;
