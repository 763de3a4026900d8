//! A session's connections over time: attach (a newer IDE connection replaces the
//! older), detach (the grace period starts when the last one goes), merging into the
//! session of the same client process, eviction and shutdown.

use std::time::Duration;

use actix::prelude::*;
use actix_ws::CloseCode;

use super::connection::Connection;
use super::{Session, SessionChange};
use crate::actors::activity_log::LifecycleEvent;
use crate::actors::messages::connection::Generation;
use crate::actors::messages::editor::CloseSessionDiffs;
use crate::actors::messages::session::{
    Absorb, Activity, Adopt, Attach, ConnectionIdle, ConnectionKind, Detach, Evict, MergeInto,
    Rebind, ReplacePush, Shutdown,
};

/// How long a merged session keeps passing frames on to the session that took its
/// connections.
const MERGE_LINGER: Duration = Duration::from_secs(5);

impl Session {
    /// Starts the grace period: unless a connection comes back in time, the session
    /// ends.
    pub(super) fn start_grace(&mut self, ctx: &mut Context<Self>) {
        self.start_grace_for(self.services.settings.grace_period(), ctx);
    }

    /// Starts a grace period of `grace`.
    pub(super) fn start_grace_for(&mut self, grace: Duration, ctx: &mut Context<Self>) {
        self.cancel_grace(ctx);
        self.grace_timer = Some(ctx.run_later(grace, |act, ctx| {
            act.grace_timer = None;
            act.end(LifecycleEvent::GraceExpired, "session closed", ctx);
        }));
    }

    fn cancel_grace(&mut self, ctx: &mut Context<Self>) {
        if let Some(timer) = self.grace_timer.take() {
            ctx.cancel_future(timer);
        }
    }

    /// Forgets the session in the registry and stops.
    fn end(&mut self, event: LifecycleEvent, detail: &str, ctx: &mut Context<Self>) {
        self.lifecycle(event, detail.to_string());
        self.report(SessionChange::Ended);
        ctx.stop();
    }

    fn close_diffs(&self) {
        for to in [&self.links.diffs, &self.links.page_diffs] {
            to.do_send(CloseSessionDiffs {
                session_id: self.id.clone(),
            });
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
        self.cancel_grace(ctx);
        // A new connection is busy (the registry hears `Attached`).
        self.activity = Activity::Busy;
        let initialized = conn.mcp.initialized.then(|| SessionChange::Initialized {
            client: conn.mcp.client.as_ref().map(|c| c.name.clone()),
            ide: conn.kind == ConnectionKind::Ide,
        });
        self.conns.push(conn);
        if self.ever_attached {
            self.report(SessionChange::Attached);
            self.lifecycle(LifecycleEvent::AgentReconnected, "reattached".into());
        } else {
            self.lifecycle(LifecycleEvent::AgentConnected, "new session".into());
        }
        if let Some(initialized) = initialized {
            self.report(initialized);
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
            self.close_diffs();
        }
        if !self.conns.is_empty() {
            return;
        }
        if ended {
            self.close_diffs();
            return self.end(
                LifecycleEvent::AgentDisconnected,
                "the client ended the session",
                ctx,
            );
        }
        self.report(SessionChange::Detached);
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
        self.cancel_grace(ctx);
        for conn in std::mem::take(&mut self.conns) {
            // Adopt first, then rebind: the target learns the connection before the
            // transport's next frame can reach it.
            msg.target.adopt.do_send(Adopt {
                generation: conn.generation,
                kind: conn.kind,
                outbound: conn.outbound,
                transport: conn.transport.clone(),
                mcp: conn.mcp,
                subscriptions: conn.subscriptions,
                listeners: conn.listeners,
            });
            conn.transport.do_send(Rebind(msg.target.clone()));
        }
        msg.target.absorb.do_send(Absorb {
            opened_files: std::mem::take(&mut self.opened_files),
            read_versions: std::mem::take(&mut self.read_versions),
            awareness: std::mem::take(&mut self.awareness),
            native: std::mem::take(&mut self.native),
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
            act.stop_if_merged_and_idle(ctx);
        });
    }

    /// After a merge, stops once the linger is over and no call of its own runs.
    pub(super) fn stop_if_merged_and_idle(&mut self, ctx: &mut Context<Self>) {
        if self.merged_into.is_some() && self.lingered && self.in_flight.is_empty() {
            ctx.stop();
        }
    }
}

impl Handler<Attach> for Session {
    type Result = ();
    fn handle(&mut self, msg: Attach, ctx: &mut Context<Self>) {
        if let Some(target) = &self.merged_into {
            msg.transport.do_send(Rebind(target.clone()));
            target.attach.do_send(msg);
            return;
        }
        let conn = Connection {
            generation: msg.generation,
            kind: msg.kind,
            outbound: msg.outbound,
            transport: msg.transport,
            mcp: msg.mcp,
            activity: Activity::Busy,
            subscriptions: Default::default(),
            listeners: Vec::new(),
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
            activity: Activity::Busy,
            subscriptions: msg.subscriptions,
            listeners: msg.listeners,
        };
        self.add_connection(conn, ctx);
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
                target.detach.do_send(msg);
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
                    target.replace_push.do_send(msg);
                }
            }
        }
    }
}

impl Handler<ConnectionIdle> for Session {
    type Result = ();
    fn handle(&mut self, msg: ConnectionIdle, _: &mut Context<Self>) {
        match self.conn_mut(msg.generation) {
            Some(conn) => conn.activity = msg.activity,
            None => {
                if let Some(target) = &self.merged_into {
                    target.idle.do_send(msg);
                }
                return;
            }
        }
        // The busiest connection says what the session does.
        let activity = self
            .conns
            .iter()
            .map(|c| c.activity)
            .max()
            .unwrap_or(Activity::Busy);
        if activity != self.activity {
            self.activity = activity;
            self.report(match activity {
                Activity::Idle => SessionChange::Idle,
                Activity::Listening => SessionChange::Listening,
                Activity::Busy => SessionChange::Active,
            });
        }
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
