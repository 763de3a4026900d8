//! Checkpoint actor: every `checkpoint.interval_ms`, within [`PROMPTLY`] of a change of
//! the sessions (one connecting, leaving, ending) and on graceful shutdown, writes the
//! sessions (id, anchor, client pids, opened files) to `checkpoint.json` in the
//! workspace's state directory atomically, off the actor's thread. The tool-call path
//! never waits on it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;

use super::activity_log::{now_ms, ActivityLog};
use super::messages::checkpoint::SessionsChanged;
use super::messages::registry::ExportSessions;
use super::registry::NAME as REGISTRY;
use super::supervise::{restarted, ActorFault};
use crate::metrics::Metrics;
use crate::persist::checkpoint::{save, CheckpointData};

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "checkpoint";

/// How soon after the sessions changed they are written: an agent that connected just
/// before a crash finds its session again (with the interval alone, one connected less
/// than `checkpoint.interval_ms` before it came back under a new id). Changes within it
/// make one write.
pub const PROMPTLY: Duration = Duration::from_secs(1);

/// Write a checkpoint now and report when it is on disk.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), CheckpointError>")]
pub struct SaveNow;

/// Why a checkpoint was not written.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The registry did not hand over the sessions.
    #[error(transparent)]
    Registry(#[from] ActorFault),
    /// The file could not be written.
    #[error("{0}")]
    Write(#[from] std::io::Error),
    /// The blocking write task was lost (the runtime is shutting down).
    #[error("{0}")]
    Lost(#[from] tokio::task::JoinError),
}

/// Writes `checkpoint.json` on a timer and on demand (present when checkpoints are enabled).
pub struct CheckpointActor {
    path: PathBuf,
    workspace: String,
    port: u16,
    interval: Duration,
    registry: Recipient<ExportSessions>,
    activity: Addr<ActivityLog>,
    metrics: Arc<Metrics>,
    /// A write is under way: the interval skips its turn.
    saving: bool,
    /// A write after a change of the sessions is due.
    due: Option<SpawnHandle>,
}

impl CheckpointActor {
    /// A checkpointer writing `path` every `interval`.
    pub fn new(
        path: PathBuf,
        workspace: String,
        port: u16,
        interval: Duration,
        registry: Recipient<ExportSessions>,
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
            due: None,
        }
    }

    /// Collects the sessions and writes them; resolves when written (or failed).
    fn write(&mut self) -> impl ActorFuture<Self, Output = Result<(), CheckpointError>> + 'static {
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
                .map_err(|e| ActorFault::mailbox(REGISTRY, e))?;
            let data = CheckpointData {
                saved_at: now_ms(),
                workspace: Some(workspace),
                port: Some(port),
                sessions,
            };
            tokio::task::spawn_blocking(move || save(&path, &data)).await??;
            Ok::<_, CheckpointError>(())
        }
        .into_actor(self)
        .map(|result, act, _| {
            act.saving = false;
            match result {
                Ok(()) => Ok(()),
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
        self.saving = false;
        self.due = None;
        restarted(
            NAME,
            &self.metrics,
            &self.activity.clone().recipient(),
            "the next checkpoint is written on schedule",
        );
    }
}

impl Handler<SessionsChanged> for CheckpointActor {
    type Result = ();
    fn handle(&mut self, _: SessionsChanged, ctx: &mut Context<Self>) {
        if self.due.is_some() {
            return;
        }
        self.due = Some(ctx.run_later(PROMPTLY, |act, ctx| {
            act.due = None;
            if act.saving {
                // The write under way may have read the sessions before the change.
                ctx.notify(SessionsChanged);
                return;
            }
            let write = act.write().map(|_, _, _| ());
            ctx.spawn(write);
        }));
    }
}

impl Handler<SaveNow> for CheckpointActor {
    type Result = ResponseActFuture<Self, Result<(), CheckpointError>>;
    fn handle(&mut self, _: SaveNow, _: &mut Context<Self>) -> Self::Result {
        Box::pin(self.write())
    }
}

#[cfg(feature = "fault-injection")]
crate::actors::fault::fault_handlers!(CheckpointActor, NAME);
