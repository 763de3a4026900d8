//! Checkpoint actor: every `checkpoint.interval_ms` and on graceful shutdown, writes the
//! sessions (id, anchor, client pids, opened files) to `checkpoint.json` in the workspace's state directory atomically, off the
//! actor's thread. The tool-call path never waits on it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;

use super::activity_log::{now_ms, ActivityLog, LifecycleEvent, RecordLifecycle};
use super::registry::{ExportSessions, SessionRegistry};
use super::supervise::ActorFault;
use crate::metrics::Metrics;
use crate::persist::checkpoint::{save, CheckpointData};

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "checkpoint";

/// Write a checkpoint now and report when it is on disk.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), String>")]
pub struct SaveNow;

/// When the last checkpoint was written (Unix ms).
#[derive(Debug, Message)]
#[rtype(result = "Option<u64>")]
pub struct LastSaved;

/// The Checkpoint actor.
pub struct CheckpointActor {
    path: PathBuf,
    workspace: String,
    port: u16,
    interval: Duration,
    registry: Addr<SessionRegistry>,
    activity: Addr<ActivityLog>,
    metrics: Arc<Metrics>,
    saving: bool,
    last_saved: Option<u64>,
}

impl CheckpointActor {
    /// A checkpointer writing `path` every `interval`.
    pub fn new(
        path: PathBuf,
        workspace: String,
        port: u16,
        interval: Duration,
        registry: Addr<SessionRegistry>,
        activity: Addr<ActivityLog>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            path,
            workspace,
            port,
            interval,
            registry,
            activity,
            metrics,
            saving: false,
            last_saved: None,
        }
    }

    /// Collects the sessions and writes them; resolves when written (or failed).
    fn write(&mut self) -> impl ActorFuture<Self, Output = Result<(), String>> + 'static {
        self.saving = true;
        let (registry, path, workspace, port) = (
            self.registry.clone(),
            self.path.clone(),
            self.workspace.clone(),
            self.port,
        );
        async move {
            let sessions = registry
                .send(ExportSessions)
                .await
                .map_err(|e| ActorFault::mailbox(super::registry::NAME, e).to_string())?;
            let data = CheckpointData {
                saved_at: now_ms(),
                workspace: Some(workspace),
                port: Some(port),
                sessions,
            };
            let saved_at = data.saved_at;
            tokio::task::spawn_blocking(move || save(&path, &data))
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
            Ok(saved_at)
        }
        .into_actor(self)
        .map(|result: Result<u64, String>, act, _| {
            act.saving = false;
            match result {
                Ok(at) => {
                    act.last_saved = Some(at);
                    Ok(())
                }
                Err(e) => {
                    tracing::error!(path = %act.path.display(), error = %e, "checkpoint not written");
                    Err(e)
                }
            }
        })
    }
}

impl Actor for CheckpointActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        // Save at once: the checkpoint also records this run's port, which the next run
        // prefers, and the restored sessions.
        if !self.saving {
            let first = self.write().map(|_, _, _| ());
            ctx.spawn(first);
        }
        ctx.run_interval(self.interval, |act, ctx| {
            if !act.saving {
                let write = act.write().map(|_, _, _| ());
                ctx.spawn(write);
            }
        });
    }
}

impl Supervised for CheckpointActor {
    fn restarting(&mut self, _: &mut Context<Self>) {
        self.metrics.record_restart(NAME);
        self.saving = false;
        self.activity.do_send(RecordLifecycle {
            event: LifecycleEvent::ActorRestarted,
            session_id: None,
            detail: NAME.to_string(),
        });
    }
}

impl Handler<SaveNow> for CheckpointActor {
    type Result = ResponseActFuture<Self, Result<(), String>>;
    fn handle(&mut self, _: SaveNow, _: &mut Context<Self>) -> Self::Result {
        Box::pin(self.write())
    }
}

impl Handler<LastSaved> for CheckpointActor {
    type Result = Option<u64>;
    fn handle(&mut self, _: LastSaved, _: &mut Context<Self>) -> Option<u64> {
        self.last_saved
    }
}

#[cfg(feature = "fault-injection")]
crate::actors::fault::fault_handlers!(CheckpointActor, NAME);
