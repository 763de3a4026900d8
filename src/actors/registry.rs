//! The session registry: the table of agent sessions, admission (max sessions,
//! reattach within the grace period), and the debounced `tools/list_changed` fan-out.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde::Serialize;

pub use super::activity_log::iso_now;
use super::activity_log::{ActivityLog, LifecycleEvent, RecordLifecycle};
use super::messages::automation::BridgeEvent;
use super::messages::changes::AgentWrote;
use super::messages::claims::{AgentGone, ClaimHolders, ClaimsLink, ClaimsMove};
use super::messages::editor::NotifyEditor;
pub use super::messages::registry::{
    AgentRef, Announce, Broadcast, Delivery, EditorConnected, ExportSessions, FileChanged,
    Identify, Mention, RegistryHandle, SessionChange, SessionEvent, TellAgent, ToolsChanged,
};
use super::messages::session::{
    AgentLog, ChangedBy, ConnectionKind, Describe, Evict, Keep, MergeInto, NotifyListChanged,
    SendNotification, SessionHandle, SessionId, SessionInfo, Shutdown,
};
use super::rate_limit::MinInterval;
use super::supervise::{guard, restarted, ActorFault};
use crate::metrics::{Metrics, Refusal};
use crate::persist::checkpoint::SessionState;
use crate::protocol::mcp::LogLevel;

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "registry";

/// Default debounce of `notifications/tools/list_changed` (`tools.list_changed_debounce_ms`).
pub const LIST_CHANGED_DEBOUNCE: Duration = Duration::from_secs(2);

/// How long a connection may hold a session slot without a handshake before a new
/// agent of a full bridge takes it (a socket that never says `initialize` is not an
/// agent).
pub const HANDSHAKE_GRACE: Duration = Duration::from_secs(10);

struct Slot {
    session: SessionHandle,
    anchor: Option<String>,
    grace_since: Option<Instant>,
    /// Since when it only listens (HTTP, nothing in flight, a GET stream open): its
    /// slot is the last resort of a full bridge.
    listening_since: Option<Instant>,
    initialized: bool,
    /// When it was admitted: one still without a handshake [`HANDSHAKE_GRACE`] later
    /// gives its slot up to a new agent.
    admitted: Instant,
    /// An IDE connection of it completed the handshake: editor events (`at_mentioned`)
    /// reach it.
    ide: bool,
    /// The agent's process as the CLI announced it (`ide_connected`).
    ide_pid: Option<u32>,
    /// What an `ide-bridge mcp` relay reported: its parent process and that one's
    /// ancestors, nearest first.
    relay_pids: Vec<u32>,
    /// The client's name, once its first connection completed the handshake
    /// (automation was then told the agent connected).
    announced: Option<String>,
}

impl Slot {
    fn new(session: SessionHandle, anchor: Option<String>) -> Self {
        Self {
            session,
            anchor,
            grace_since: None,
            listening_since: None,
            initialized: false,
            admitted: Instant::now(),
            ide: false,
            ide_pid: None,
            relay_pids: Vec::new(),
            announced: None,
        }
    }

    /// True when a relay with these ancestors serves the same client process as this
    /// slot: the CLI this slot knows is its parent or grandparent (one wrapper such as
    /// `npx` in between), or the relays share a parent. Further ancestors do not count:
    /// a `claude -p` started from a CLI's shell is an agent of its own.
    fn same_client_as_relay(&self, chain: &[u32]) -> bool {
        let near = &chain[..chain.len().min(2)];
        self.ide_pid.is_some_and(|pid| near.contains(&pid))
            || (!chain.is_empty() && self.relay_pids.first() == chain.first())
    }

    /// True when this slot serves the CLI process `pid` (its relay's parent or
    /// grandparent).
    fn serves_pid(&self, pid: u32) -> bool {
        self.ide_pid == Some(pid) || self.relay_pids.iter().take(2).any(|p| *p == pid)
    }

    /// True when `pid` is this slot's client process itself: the CLI of its IDE
    /// connection, or its relay's parent.
    fn is_client(&self, pid: u32) -> bool {
        self.ide_pid == Some(pid) || self.relay_pids.first() == Some(&pid)
    }

    /// How people and other agents see this agent.
    fn label(&self, id: &SessionId) -> String {
        format!("{} {id}", self.announced.as_deref().unwrap_or("agent"))
    }
}

/// Ask to admit a new connection. `candidate` is a fresh session used unless the
/// anchor matches an existing one.
#[derive(Message)]
#[rtype(result = "Result<Admission, AdmitError>")]
pub struct Admit {
    /// The session to register if no existing one matches.
    pub candidate: SessionHandle,
    /// The candidate's id.
    pub candidate_id: SessionId,
    /// `X-Claude-Code-Session-Id` header value, if sent.
    pub anchor: Option<String>,
    /// How the agent connects.
    pub kind: ConnectionKind,
    /// For a relay: its parent process and that one's ancestors, nearest first.
    pub client_pids: Vec<u32>,
    /// A refusal for a full bridge is final (counted and logged); otherwise the
    /// connection will ask again in a moment and only the final refusal is recorded.
    pub last_try: bool,
}

/// Where an admitted connection goes.
pub struct Admission {
    /// The session to attach the connection to.
    pub session: SessionHandle,
    pub session_id: SessionId,
    /// True when an existing session was reattached.
    pub reattached: bool,
}

/// Why a connection was refused.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AdmitError {
    /// Every slot holds a connected agent.
    #[error("Too many sessions: all {max} that sessions.max_sessions allows are connected agents or agents holding file claims")]
    TooManySessions {
        /// The configured maximum.
        max: usize,
    },
    /// The bridge is shutting down.
    #[error("ide-bridge is shutting down")]
    ShuttingDown,
    /// The registry could not answer.
    #[error(transparent)]
    Fault(#[from] ActorFault),
}

impl AdmitError {
    /// The refusal counted for it.
    pub fn refusal(&self) -> Refusal {
        match self {
            AdmitError::TooManySessions { .. } => Refusal::MaxSessions,
            AdmitError::ShuttingDown => Refusal::ShuttingDown,
            AdmitError::Fault(_) => Refusal::Fault,
        }
    }
}

/// Describe every session (a session that does not answer within 1 s is shown as
/// unresponsive).
#[derive(Message)]
#[rtype(result = "Result<RegistrySnapshot, ActorFault>")]
pub struct Snapshot;

/// Mentions kept while no agent listens.
pub const MAX_QUEUED_MENTIONS: usize = 20;
/// How long a queued mention waits for an agent.
pub const MENTION_TTL: Duration = Duration::from_secs(30);

/// Sessions restored from a checkpoint at start-up, waiting in their grace period for
/// their agents.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Restore(pub Vec<(SessionHandle, SessionState)>);

/// Refuse new connections and close every agent connection (graceful shutdown).
#[derive(Message)]
#[rtype(result = "()")]
pub struct CloseAll;

/// What the registry knows, for `/status`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistrySnapshot {
    /// Every session.
    pub sessions: Vec<SessionInfo>,
    /// Configured maximum.
    pub max_sessions: usize,
    /// Connections admitted as new sessions.
    pub connections: u64,
    /// Reattachments within the grace period.
    pub reconnects: u64,
    /// Connections refused for lack of a slot.
    pub refused: u64,
    /// Every refused connection, by reason (token, Host/Origin, burst, max sessions,
    /// shutdown).
    pub refused_connections: BTreeMap<&'static str, u64>,
    /// Sessions merged into another of the same client process.
    pub merged: u64,
    /// Sessions evicted to make room.
    pub evicted: u64,
    /// ISO time of the latest agent connection.
    pub last_connect_at: Option<String>,
    /// ISO time of the latest agent disconnection.
    pub last_disconnect_at: Option<String>,
    /// A list_changed is waiting for a listening agent.
    pub pending_list_changed: bool,
}

/// The table of agent sessions by id; one per bridge.
pub struct SessionRegistry {
    slots: BTreeMap<SessionId, Slot>,
    max_sessions: usize,
    activity: Addr<ActivityLog>,
    metrics: Arc<Metrics>,
    list_changed_timer: Option<SpawnHandle>,
    list_changed_debounce: Duration,
    pending_list_changed: bool,
    connections: u64,
    reconnects: u64,
    refused: u64,
    evicted: u64,
    last_connect_at: Option<String>,
    last_disconnect_at: Option<String>,
    mentions: Vec<(Instant, serde_json::Value)>,
    editor: Recipient<NotifyEditor>,
    connect_gate: MinInterval,
    max_connect_wait: Duration,
    merged: u64,
    closing: bool,
    /// Told when agents come and go for good.
    automation: Option<Recipient<BridgeEvent>>,
    /// Told when an agent is gone for good (its file claims end) or is found to be the
    /// same as another session (its claims follow it).
    claims: Option<ClaimsLink>,
    /// Told of every agent write, for the change sets.
    changes: Option<Recipient<AgentWrote>>,
    /// Told when the sessions change (one connects, leaves, ends), so that a crash
    /// soon after does not lose them.
    checkpoint: Option<Recipient<crate::actors::messages::checkpoint::SessionsChanged>>,
    /// The sessions holding file claims (the Claims actor says): never evicted to
    /// make room, or their claims would end under an agent that is only thinking.
    claim_holders: Vec<SessionId>,
}

impl SessionRegistry {
    /// A registry admitting `max_sessions` sessions and connections at least
    /// `min_connect_interval` apart (an early one waits at most `max_connect_wait`).
    pub fn new(
        max_sessions: usize,
        min_connect_interval: Duration,
        max_connect_wait: Duration,
        editor: Recipient<NotifyEditor>,
        activity: Addr<ActivityLog>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            connect_gate: MinInterval::new(min_connect_interval),
            max_connect_wait,
            merged: 0,
            closing: false,
            automation: None,
            claims: None,
            changes: None,
            checkpoint: None,
            claim_holders: Vec::new(),
            slots: BTreeMap::new(),
            max_sessions,
            activity,
            metrics,
            list_changed_timer: None,
            list_changed_debounce: LIST_CHANGED_DEBOUNCE,
            pending_list_changed: false,
            connections: 0,
            reconnects: 0,
            refused: 0,
            evicted: 0,
            last_connect_at: None,
            last_disconnect_at: None,
            mentions: Vec::new(),
            editor,
        }
    }

    /// Agents coming and going for good are reported to `automation`.
    pub fn reporting_to(mut self, automation: Option<Recipient<BridgeEvent>>) -> Self {
        self.automation = automation;
        self
    }

    /// Changes of the sessions are written promptly by `checkpoint` (when checkpoints
    /// are kept).
    pub fn checkpointing(
        mut self,
        checkpoint: Option<Recipient<crate::actors::messages::checkpoint::SessionsChanged>>,
    ) -> Self {
        self.checkpoint = checkpoint;
        self
    }

    /// Every agent write is recorded in the change sets.
    pub fn recording_changes(mut self, changes: Recipient<AgentWrote>) -> Self {
        self.changes = Some(changes);
        self
    }

    /// Agents gone for good end their file claims; an agent found again keeps them.
    pub fn keeping_claims(mut self, claims: ClaimsLink) -> Self {
        self.claims = Some(claims);
        self
    }

    /// The claims of `from` (a merged session) or of `pid` (an earlier session of the same
    /// client process) are `to`'s.
    fn claims_follow(&self, to: &SessionId, from: Option<&SessionId>, pid: Option<u32>) {
        let (Some(claims), Some(slot)) = (&self.claims, self.slots.get(to)) else {
            return;
        };
        claims.moved.do_send(ClaimsMove {
            from: from.cloned(),
            pid,
            to: to.clone(),
            label: slot.label(to),
        });
    }

    /// Tells the claims an agent went for good, and automation if it was told the
    /// agent came.
    fn gone(&self, id: &SessionId, slot: &Slot) {
        if let Some(claims) = &self.claims {
            claims.gone.do_send(AgentGone(id.clone()));
        }
        if let (Some(client), Some(automation)) = (&slot.announced, &self.automation) {
            automation.do_send(BridgeEvent::AgentGone {
                session: id.clone(),
                client: client.clone(),
            });
        }
    }

    /// Tool-set changes within `debounce` make one `notifications/tools/list_changed`.
    pub fn with_list_changed_debounce(mut self, debounce: Duration) -> Self {
        self.list_changed_debounce = debounce;
        self
    }

    fn listening(&self) -> impl Iterator<Item = &SessionHandle> {
        self.slots
            .values()
            .filter(|s| s.initialized && s.grace_since.is_none())
            .map(|s| &s.session)
    }

    /// The recipients the editor side sends to, for an ExtensionClient.
    pub fn handle(addr: &Addr<Self>) -> RegistryHandle {
        RegistryHandle {
            tools_changed: addr.clone().recipient(),
            editor_connected: addr.clone().recipient(),
            broadcast: addr.clone().recipient(),
            mention: addr.clone().recipient(),
        }
    }

    /// Tells the editor how many agents are connected.
    fn connection_changed(&self) {
        let connected = self
            .slots
            .values()
            .filter(|s| s.grace_since.is_none())
            .count();
        self.editor.do_send(NotifyEditor {
            method: crate::protocol::editor::BridgeNotification::ClaudeConnectionChanged,
            params: serde_json::json!({
                "connected": connected > 0,
                "agents": connected,
                "sessions": self.slots.len(),
            }),
        });
    }

    fn lifecycle(&self, event: LifecycleEvent, session_id: Option<&SessionId>, detail: String) {
        self.activity.do_send(RecordLifecycle {
            event,
            session_id: session_id.cloned(),
            detail,
        });
    }

    fn update_gauge(&self) {
        self.metrics.active_sessions.set(self.slots.len() as i64);
    }

    /// An existing session this connection belongs to: the same client process (a
    /// relay), or the anchor the client sent.
    fn existing_for(&self, msg: &Admit) -> Option<SessionId> {
        if msg.kind == ConnectionKind::Relay {
            if let Some((id, _)) = self
                .slots
                .iter()
                .find(|(_, slot)| slot.same_client_as_relay(&msg.client_pids))
            {
                return Some(id.clone());
            }
        }
        let anchor = msg.anchor.as_deref()?;
        self.slots
            .iter()
            .find(|(id, slot)| slot.anchor.as_deref() == Some(anchor) || id.as_str() == anchor)
            .map(|(id, _)| id.clone())
    }

    fn admit(&mut self, msg: Admit) -> Result<Admission, AdmitError> {
        if self.closing {
            return Err(AdmitError::ShuttingDown);
        }
        self.last_connect_at = Some(iso_now());
        if let Some(id) = self.existing_for(&msg) {
            if let Some(slot) = self.slots.get_mut(&id) {
                if slot.session.connected() {
                    self.reconnects += 1;
                    slot.grace_since = None;
                    if msg.kind == ConnectionKind::Relay {
                        slot.relay_pids = msg.client_pids;
                    }
                    return Ok(Admission {
                        session: slot.session.clone(),
                        session_id: id,
                        reattached: true,
                    });
                }
            }
            self.slots.remove(&id);
        }
        if self.slots.len() >= self.max_sessions {
            self.evict_oldest_in_grace(msg.last_try)?;
        }
        self.connections += 1;
        for slot in self.slots.values() {
            slot.session.log.do_send(AgentLog {
                level: LogLevel::Info,
                data: serde_json::json!({
                    "event": "agent_connected",
                    "sessionId": msg.candidate_id,
                    "activeSessions": self.slots.len() + 1,
                }),
            });
        }
        let mut slot = Slot::new(msg.candidate.clone(), msg.anchor);
        if msg.kind == ConnectionKind::Relay {
            slot.relay_pids = msg.client_pids;
        }
        let pid = slot.relay_pids.first().copied();
        self.slots.insert(msg.candidate_id.clone(), slot);
        if pid.is_some() {
            self.claims_follow(&msg.candidate_id, None, pid);
        }
        self.update_gauge();
        self.connection_changed();
        Ok(Admission {
            session: msg.candidate,
            session_id: msg.candidate_id,
            reattached: false,
        })
    }

    /// `session_id` serves CLI `pid`: merge it into an older session of that process.
    fn client_pid(&mut self, session_id: &SessionId, pid: u32) {
        let target = self
            .slots
            .iter()
            .find(|(id, slot)| *id != session_id && slot.serves_pid(pid))
            .map(|(id, slot)| (id.clone(), slot.session.clone()));
        let Some((target_id, target)) = target else {
            if let Some(slot) = self.slots.get_mut(session_id) {
                slot.ide_pid = Some(pid);
            }
            self.claims_follow(session_id, None, Some(pid));
            return;
        };
        let Some(merged) = self.slots.remove(session_id) else {
            return;
        };
        if let Some(slot) = self.slots.get_mut(&target_id) {
            slot.ide_pid = Some(pid);
            slot.grace_since = None;
            slot.initialized |= merged.initialized;
            if slot.announced.is_none() {
                slot.announced = merged.announced.clone();
            }
        }
        self.merged += 1;
        self.claims_follow(&target_id, Some(session_id), Some(pid));
        tracing::info!(session = %session_id, into = %target_id, pid, "one agent, two connections: sessions merged");
        merged
            .session
            .merge_into
            .do_send(MergeInto { target, target_id });
        self.update_gauge();
        self.connection_changed();
    }

    /// Makes room for a new agent: the session longest in its grace period (or idle),
    /// else the one that has only listened the longest, else the oldest connection that
    /// has not completed a handshake within [`HANDSHAKE_GRACE`]; never one holding file
    /// claims.
    fn evict_oldest_in_grace(&mut self, last_try: bool) -> Result<(), AdmitError> {
        let holders = &self.claim_holders;
        let oldest = |since: fn(&Slot) -> Option<Instant>| {
            self.slots
                .iter()
                .filter(|(id, _)| !holders.contains(id))
                .filter_map(|(id, slot)| since(slot).map(|at| (at, id.clone())))
                .min()
                .map(|(_, id)| id)
        };
        let chosen = oldest(|s| s.grace_since)
            .map(|id| {
                (
                    id,
                    "oldest session in its grace period, evicted for a new agent",
                )
            })
            .or_else(|| {
                oldest(|s| s.listening_since).map(|id| {
                    (
                        id,
                        "HTTP session that had only listened the longest, evicted for a new agent",
                    )
                })
            })
            .or_else(|| {
                oldest(|s| {
                    (!s.initialized && s.admitted.elapsed() >= HANDSHAKE_GRACE).then_some(s.admitted)
                })
                .map(|id| {
                    (
                        id,
                        "connection without a handshake (no initialize, no request of MCP 2026-07-28), evicted for a new agent",
                    )
                })
            });
        let Some((id, why)) = chosen else {
            if !last_try {
                return Err(AdmitError::TooManySessions {
                    max: self.max_sessions,
                });
            }
            self.refused += 1;
            let kept = self
                .slots
                .keys()
                .filter(|id| self.claim_holders.contains(id))
                .count();
            let why = match kept {
                0 => String::new(),
                n => format!("; {n} of them hold file claims and keep their place"),
            };
            self.lifecycle(
                LifecycleEvent::ConnectionRefused,
                None,
                format!("max sessions ({}) reached{why}", self.max_sessions),
            );
            return Err(AdmitError::TooManySessions {
                max: self.max_sessions,
            });
        };
        if let Some(slot) = self.slots.remove(&id) {
            self.gone(&id, &slot);
            slot.session.evict.do_send(Evict {
                reason: "evicted to make room for a new agent".into(),
            });
        }
        self.evicted += 1;
        self.lifecycle(LifecycleEvent::SessionEvicted, Some(&id), why.into());
        Ok(())
    }

    /// Ends the sessions in grace whose client process is known and gone: no agent can
    /// come back to them, and their claims would hold other agents back for nothing.
    fn end_sessions_of_gone_clients(&mut self) {
        let gone: Vec<(SessionId, u32)> = self
            .slots
            .iter()
            .filter(|(_, slot)| slot.grace_since.is_some())
            .filter_map(|(id, slot)| {
                let pid = slot.ide_pid.or(slot.relay_pids.first().copied())?;
                (!crate::lockfile::pid_alive(pid)).then(|| (id.clone(), pid))
            })
            .collect();
        for (id, pid) in gone {
            let Some(slot) = self.slots.remove(&id) else {
                continue;
            };
            self.gone(&id, &slot);
            slot.session.evict.do_send(Evict {
                reason: "its client process is gone".into(),
            });
            tracing::info!(session = %id, pid, "session ended: its client process is gone");
            self.lifecycle(
                LifecycleEvent::GraceExpired,
                Some(&id),
                format!("its client process (pid {pid}) is gone: no agent can come back"),
            );
        }
        self.update_gauge();
    }

    fn schedule_list_changed(&mut self, immediate: bool, ctx: &mut Context<Self>) {
        if immediate {
            if let Some(handle) = self.list_changed_timer.take() {
                ctx.cancel_future(handle);
            }
            self.fire_list_changed(ctx);
        } else if self.list_changed_timer.is_none() {
            self.list_changed_timer =
                Some(ctx.run_later(self.list_changed_debounce, |act, ctx| {
                    act.list_changed_timer = None;
                    act.fire_list_changed(ctx);
                }));
        }
    }

    fn fire_list_changed(&mut self, ctx: &mut Context<Self>) {
        let sends: Vec<_> = self
            .listening()
            .map(|s| s.notify_list_changed.send(NotifyListChanged))
            .collect();
        if sends.is_empty() {
            self.pending_list_changed = true;
            return;
        }
        let sends = futures_util::future::join_all(sends);
        ctx.spawn(sends.into_actor(self).map(|results, act, _| {
            let delivered = results.into_iter().any(|r| matches!(r, Ok(true)));
            if !delivered {
                act.pending_list_changed = true;
            }
        }));
    }
}

/// How often sessions in grace are checked for a client process that is gone.
const CLIENT_CHECK: Duration = Duration::from_secs(2);

impl Actor for SessionRegistry {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(CLIENT_CHECK, |act, ctx| {
            let _ = guard(NAME, act, ctx, |act, _| act.end_sessions_of_gone_clients());
        });
    }
}

impl Supervised for SessionRegistry {
    fn restarting(&mut self, ctx: &mut Context<Self>) {
        // The table survives in memory; drop sessions that stopped meanwhile and re-arm
        // the debounce timer that the stop cancelled.
        self.slots.retain(|_, slot| slot.session.connected());
        self.update_gauge();
        if self.list_changed_timer.take().is_some() {
            self.schedule_list_changed(false, ctx);
        }
        restarted(
            NAME,
            &self.metrics,
            &self.activity.clone().recipient(),
            "rebuilt the session table",
        );
    }
}

/// Why a connection may not proceed now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotNow {
    /// Its slot is further away than a connection may wait; retry after this long.
    Burst(Duration),
    /// The bridge is shutting down.
    ShuttingDown,
}

/// When may a new connection (agent or editor) be accepted? `Ok` says how long to hold
/// it first (connections are paced `server.min_connect_interval_ms` apart).
#[derive(Debug, Message)]
#[rtype(result = "Result<Duration, NotNow>")]
pub struct MayConnect;

impl Handler<MayConnect> for SessionRegistry {
    type Result = Result<Duration, NotNow>;
    fn handle(&mut self, _: MayConnect, ctx: &mut Context<Self>) -> Self::Result {
        // A registry that fails here lets the connection through, as one that cannot
        // answer does; admission reports the fault.
        guard(NAME, self, ctx, |act, _| {
            if act.closing {
                return Err(NotNow::ShuttingDown);
            }
            act.connect_gate
                .reserve(Instant::now(), act.max_connect_wait)
                .map_err(NotNow::Burst)
        })
        .unwrap_or(Ok(Duration::ZERO))
    }
}

impl SessionRegistry {
    fn on_session_event(&mut self, id: &SessionId, change: SessionChange) {
        // What the checkpoint keeps changed (not an HTTP agent going idle and active
        // around each request).
        let kept = !matches!(
            change,
            SessionChange::Idle | SessionChange::Listening | SessionChange::Active
        );
        if let (true, Some(checkpoint)) = (kept, &self.checkpoint) {
            checkpoint.do_send(crate::actors::messages::checkpoint::SessionsChanged);
        }
        match change {
            SessionChange::ClientPid(pid) => self.client_pid(id, pid),
            SessionChange::Detached => {
                self.last_disconnect_at = Some(iso_now());
                if let Some(slot) = self.slots.get_mut(id) {
                    // Closed by the bridge's own shutdown, the agent did not leave: the
                    // checkpoint keeps it as connected, and its grace period starts when
                    // the next bridge does.
                    if !self.closing {
                        slot.grace_since = Some(Instant::now());
                    }
                    slot.initialized = false;
                }
                self.connection_changed();
            }
            SessionChange::Attached => {
                if let Some(slot) = self.slots.get_mut(id) {
                    slot.grace_since = None;
                    slot.listening_since = None;
                    // A reconnecting agent gets its own time for the handshake.
                    slot.admitted = Instant::now();
                }
                self.connection_changed();
            }
            // An idle HTTP session holds its slot only until someone needs it.
            SessionChange::Idle => {
                if let Some(slot) = self.slots.get_mut(id) {
                    slot.grace_since.get_or_insert_with(Instant::now);
                }
            }
            SessionChange::Listening => {
                if let Some(slot) = self.slots.get_mut(id) {
                    slot.grace_since = None;
                    slot.listening_since.get_or_insert_with(Instant::now);
                }
            }
            SessionChange::Active => {
                if let Some(slot) = self.slots.get_mut(id) {
                    slot.grace_since = None;
                    slot.listening_since = None;
                }
            }
            SessionChange::Initialized { client, ide } => {
                let Some(slot) = self.slots.get_mut(id) else {
                    return;
                };
                slot.initialized = true;
                slot.ide |= ide;
                if slot.announced.is_none() {
                    let client = client.unwrap_or_default();
                    slot.announced = Some(client.clone());
                    if let Some(automation) = &self.automation {
                        automation.do_send(BridgeEvent::AgentConnected {
                            session: id.clone(),
                            client,
                        });
                    }
                }
                if std::mem::take(&mut self.pending_list_changed) {
                    slot.session.notify_list_changed.do_send(NotifyListChanged);
                }
                // Mentions waiting for an agent go to the first IDE connection.
                let fresh = Instant::now();
                let waiting = if ide {
                    std::mem::take(&mut self.mentions)
                } else {
                    Vec::new()
                };
                for (at, mention) in waiting {
                    if fresh.duration_since(at) < MENTION_TTL {
                        slot.session.send_notification.do_send(SendNotification {
                            method: crate::protocol::ide::AT_MENTIONED,
                            params: mention,
                        });
                    }
                }
            }
            SessionChange::Ended => {
                if let Some(slot) = self.slots.remove(id) {
                    // Ended while connected (an HTTP agent's DELETE, idle or not): that
                    // is its disconnection too; one that detached first was counted
                    // then (detaching clears `initialized`).
                    if slot.initialized {
                        self.last_disconnect_at = Some(iso_now());
                    }
                    self.gone(id, &slot);
                }
                self.update_gauge();
                self.connection_changed();
            }
        }
    }
}

impl Handler<SessionEvent> for SessionRegistry {
    type Result = ();
    fn handle(&mut self, msg: SessionEvent, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            act.on_session_event(&msg.session_id, msg.change)
        });
    }
}

impl Handler<ClaimHolders> for SessionRegistry {
    type Result = ();
    fn handle(&mut self, msg: ClaimHolders, _: &mut Context<Self>) {
        self.claim_holders = msg.0;
    }
}

impl Handler<Admit> for SessionRegistry {
    type Result = Result<Admission, AdmitError>;
    fn handle(&mut self, msg: Admit, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| act.admit(msg))?
    }
}

impl Handler<ToolsChanged> for SessionRegistry {
    type Result = ();
    fn handle(&mut self, msg: ToolsChanged, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| {
            act.schedule_list_changed(msg.immediate, ctx)
        });
    }
}

impl Handler<Snapshot> for SessionRegistry {
    type Result = ResponseActFuture<Self, Result<RegistrySnapshot, ActorFault>>;
    fn handle(&mut self, _: Snapshot, _: &mut Context<Self>) -> Self::Result {
        let asks = self.slots.iter().map(|(id, slot)| {
            let id = id.clone();
            let ask = slot.session.describe.send(Describe);
            async move {
                match actix::clock::timeout(Duration::from_secs(1), ask).await {
                    Ok(Ok(info)) => info,
                    _ => SessionInfo::unresponsive(id),
                }
            }
        });
        let all = futures_util::future::join_all(asks.collect::<Vec<_>>());
        Box::pin(all.into_actor(self).map(|sessions, act, _| {
            Ok(RegistrySnapshot {
                sessions,
                max_sessions: act.max_sessions,
                connections: act.connections,
                reconnects: act.reconnects,
                refused: act.refused,
                refused_connections: act
                    .metrics
                    .refused_by_reason()
                    .into_iter()
                    .map(|(r, n)| (r.as_str(), n))
                    .collect(),
                merged: act.merged,
                evicted: act.evicted,
                last_connect_at: act.last_connect_at.clone(),
                last_disconnect_at: act.last_disconnect_at.clone(),
                pending_list_changed: act.pending_list_changed,
            })
        }))
    }
}

impl Handler<ExportSessions> for SessionRegistry {
    type Result = ResponseFuture<Vec<SessionState>>;
    fn handle(&mut self, _: ExportSessions, _: &mut Context<Self>) -> Self::Result {
        let asks: Vec<_> = self
            .slots
            .iter()
            .map(|(id, slot)| {
                let (id, anchor, ask) = (
                    id.clone(),
                    slot.anchor.clone(),
                    slot.session.keep.send(Keep),
                );
                let (ide_pid, relay_pids) = (slot.ide_pid, slot.relay_pids.clone());
                let disconnected_at = slot.grace_since.map(|since| {
                    crate::actors::activity_log::now_ms()
                        .saturating_sub(since.elapsed().as_millis() as u64)
                });
                async move {
                    let kept = actix::clock::timeout(Duration::from_secs(1), ask)
                        .await
                        .ok()?
                        .ok()?;
                    Some(SessionState {
                        session_id: id.clone(),
                        opened_files: kept
                            .opened_files
                            .iter()
                            .map(|p| p.display().to_string())
                            .collect(),
                        awareness: kept.awareness,
                        client: kept.client,
                        ended_calls: kept.ended_calls,
                        created_at: Some(kept.created_at),
                        anchor,
                        ide_pid,
                        relay_pids,
                        disconnected_at,
                    })
                }
            })
            .collect();
        Box::pin(async move {
            futures_util::future::join_all(asks)
                .await
                .into_iter()
                .flatten()
                .collect()
        })
    }
}

impl Handler<Restore> for SessionRegistry {
    type Result = ();
    fn handle(&mut self, msg: Restore, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            for (session, state) in msg.0 {
                if act.slots.len() >= act.max_sessions {
                    tracing::warn!(session = %state.session_id, "not restoring a session: max sessions reached");
                    continue;
                }
                let mut slot = Slot::new(session, state.anchor);
                // In grace since its agent left (before the restart, when known), so that
                // the next checkpoint says the same and a further restart does not
                // lengthen it.
                let gone = state.disconnected_at.map_or(Duration::ZERO, |at| {
                    Duration::from_millis(crate::actors::activity_log::now_ms().saturating_sub(at))
                });
                slot.grace_since = Some(
                    Instant::now()
                        .checked_sub(gone)
                        .unwrap_or_else(Instant::now),
                );
                slot.ide_pid = state.ide_pid;
                slot.relay_pids = state.relay_pids;
                // Named as before the restart (automation heard of it then).
                slot.announced = state.client.map(|c| c.name);
                act.slots.insert(state.session_id, slot);
            }
            act.update_gauge();
        });
    }
}

impl SessionRegistry {
    fn broadcast(&self, msg: Broadcast) {
        for session in self.listening() {
            session.send_notification.do_send(SendNotification {
                method: msg.method,
                params: msg.params.clone(),
            });
        }
    }

    fn mention(&mut self, mut params: serde_json::Value) -> Delivery {
        // The editor may address one agent (`sessionId`, as /status names it); the
        // agent sees the mention without it.
        let target = params
            .as_object_mut()
            .and_then(|p| p.remove("sessionId"))
            .and_then(|v| v.as_str().map(str::to_string));
        if let Some(id) = target {
            return match self.slots.get(id.as_str()) {
                Some(slot) if !slot.ide => Delivery::Failed(format!(
                    "Agent session {id} has no IDE connection (a place reaches Claude Code \
                     through `claude --ide`)"
                )),
                Some(slot) => {
                    slot.session.send_notification.do_send(SendNotification {
                        method: crate::protocol::ide::AT_MENTIONED,
                        params,
                    });
                    Delivery::Sent(1)
                }
                None => {
                    tracing::warn!(session = %id, "dropping an at_mentioned for a session that does not exist");
                    Delivery::NoSuchSession(id)
                }
            };
        }
        let ide = || {
            self.slots
                .values()
                .filter(|s| s.ide && s.initialized && s.grace_since.is_none())
                .map(|s| &s.session)
        };
        if ide().next().is_none() {
            let now = Instant::now();
            self.mentions
                .retain(|(at, _)| now.duration_since(*at) < MENTION_TTL);
            if self.mentions.len() >= MAX_QUEUED_MENTIONS {
                tracing::warn!("dropping the oldest queued at_mentioned: no agent is listening");
                self.mentions.remove(0);
            }
            self.mentions.push((now, params));
            return Delivery::Queued;
        }
        let mut sent = 0;
        for session in ide() {
            session.send_notification.do_send(SendNotification {
                method: crate::protocol::ide::AT_MENTIONED,
                params: params.clone(),
            });
            sent += 1;
        }
        Delivery::Sent(sent)
    }

    fn close_all(&mut self) {
        self.closing = true;
        for slot in self.slots.values() {
            slot.session.shutdown.do_send(Shutdown);
        }
    }
}

impl Handler<Broadcast> for SessionRegistry {
    type Result = ();
    fn handle(&mut self, msg: Broadcast, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| act.broadcast(msg));
    }
}

impl Handler<Announce> for SessionRegistry {
    type Result = ();
    /// Every session hears it, connected or not: one whose agent is between HTTP
    /// requests or reconnecting has it waiting for its next tool call.
    fn handle(&mut self, msg: Announce, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            for session in act.slots.values().map(|s| &s.session) {
                session.log.do_send(AgentLog {
                    level: LogLevel::Notice,
                    data: msg.0.clone(),
                });
            }
        });
    }
}

impl Handler<Identify> for SessionRegistry {
    type Result = MessageResult<Identify>;
    fn handle(&mut self, msg: Identify, ctx: &mut Context<Self>) -> Self::Result {
        let found = guard(NAME, self, ctx, |act, _| {
            let slot = match &msg {
                Identify::Session(id) => act.slots.get_key_value(id),
                Identify::Anchor(anchor) => act
                    .slots
                    .iter()
                    .find(|(_, slot)| slot.anchor.as_deref() == Some(anchor.as_str())),
                Identify::Process(pids) => {
                    let near = &pids[..pids.len().min(2)];
                    // The client process itself first; a wrapper's child (a relay
                    // started through `npx`) only when nothing names it directly.
                    let strong = near
                        .iter()
                        .find_map(|pid| act.slots.iter().find(|(_, slot)| slot.is_client(*pid)));
                    strong.or_else(|| {
                        near.iter().find_map(|pid| {
                            act.slots.iter().find(|(_, slot)| slot.serves_pid(*pid))
                        })
                    })
                }
            };
            slot.map(|(id, slot)| AgentRef {
                id: id.clone(),
                label: slot.label(id),
                pid: slot.ide_pid.or(slot.relay_pids.first().copied()),
                session: slot.session.clone(),
            })
        });
        MessageResult(found.ok().flatten())
    }
}

impl Handler<FileChanged> for SessionRegistry {
    type Result = ();
    fn handle(&mut self, msg: FileChanged, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            let Some(by) = act.slots.get(&msg.by).map(|slot| slot.label(&msg.by)) else {
                return;
            };
            if let Some(changes) = &act.changes {
                changes.do_send(AgentWrote {
                    session: msg.by.clone(),
                    agent: by.clone(),
                    path: msg.path.clone(),
                    display: msg.display.clone(),
                    tool: msg.tool.clone(),
                    call: msg.call.clone(),
                });
            }
            if let Some(automation) = &act.automation {
                automation.do_send(BridgeEvent::AgentEdited {
                    session: msg.by.clone(),
                    agent: by.clone(),
                    file: msg.path.clone(),
                    tool: msg.tool,
                });
            }
            let changed = ChangedBy {
                path: msg.path,
                display: msg.display,
                by,
                at_ms: msg.at_ms,
            };
            for (_, slot) in act.slots.iter().filter(|(id, _)| **id != msg.by) {
                slot.session.changed_by.do_send(changed.clone());
            }
        });
    }
}

impl Handler<TellAgent> for SessionRegistry {
    type Result = ();
    fn handle(&mut self, msg: TellAgent, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            match act.slots.get(&msg.session) {
                Some(slot) => slot.session.log.do_send(AgentLog {
                    level: LogLevel::Notice,
                    data: serde_json::json!({
                        "event": "changes_undone", "message": msg.text, "note": msg.text,
                    }),
                }),
                None => {
                    tracing::info!(session = %msg.session, "the agent is gone: its note is dropped")
                }
            }
        });
    }
}

impl Handler<Mention> for SessionRegistry {
    type Result = MessageResult<Mention>;
    fn handle(&mut self, msg: Mention, ctx: &mut Context<Self>) -> Self::Result {
        MessageResult(
            guard(NAME, self, ctx, |act, _| act.mention(msg.0))
                .unwrap_or_else(|fault| Delivery::Failed(fault.to_string())),
        )
    }
}

impl Handler<EditorConnected> for SessionRegistry {
    type Result = ();
    fn handle(&mut self, _: EditorConnected, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| act.connection_changed());
    }
}

impl Handler<CloseAll> for SessionRegistry {
    type Result = ();
    fn handle(&mut self, _: CloseAll, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| act.close_all());
    }
}

#[cfg(feature = "fault-injection")]
crate::actors::fault::fault_handlers!(SessionRegistry, NAME);

#[cfg(feature = "fault-injection")]
impl Handler<crate::actors::fault::CutConnections> for SessionRegistry {
    type Result = bool;
    fn handle(&mut self, msg: crate::actors::fault::CutConnections, _: &mut Context<Self>) -> bool {
        match self.slots.get(msg.0.as_str()) {
            Some(slot) => {
                slot.session.shutdown.do_send(Shutdown);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;

impl Handler<crate::actors::messages::watch::WorkspaceChanged> for SessionRegistry {
    type Result = ();
    /// Passes the watcher's changes on to every session (for their subscriptions).
    fn handle(
        &mut self,
        msg: crate::actors::messages::watch::WorkspaceChanged,
        _: &mut Context<Self>,
    ) {
        for slot in self.slots.values() {
            slot.session.files_changed.do_send(msg.clone());
        }
    }
}
