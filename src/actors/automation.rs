//! The Automation actor: runs editor events through the policy's hooks, starts the
//! tasks they ask for on the Orchestrator, keeps automation from feeding on itself,
//! and reloads the policy file when it changes.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use actix::prelude::*;
use serde::Serialize;

use super::activity_log::{ActivityLog, LifecycleEvent, RecordLifecycle};
use super::clock::{Clock, SystemClock};
pub use super::messages::automation::{BridgeEvent, EditorEvent, WorkspaceDiagnostics};
use super::messages::watch::WorkspaceChanged;
use super::orchestrator::{Enqueue, Follow, TaskError};
use super::supervise::{guard, restarted};
use crate::automation::policy::Policy;
use crate::automation::{Engine, Event, Firing, Outcome};
use crate::metrics::Metrics;
use crate::orchestrator::{TaskId, TaskOrigin};
use crate::workspace::Workspace;

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "automation";
/// How often the policy file is checked for changes.
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// After the last automation task ends, events are still taken as its doing this long
/// (diagnostics of the files it edited arrive a little later).
pub const SETTLE_MS: u64 = 2_000;

/// What `/status` shows about automation.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AutomationStatus {
    /// The policy file.
    pub policy: String,
    /// Enabled hooks.
    pub hooks: Vec<&'static str>,
    /// Cap over all hooks.
    pub max_tasks_per_hour: u32,
    /// Tasks started in the last hour.
    pub fired_last_hour: usize,
    /// Tasks started since the bridge started.
    pub fired: u64,
    /// Matches that did not start a task (cooldown, cap, task in flight, full queue).
    pub skipped: u64,
    /// Automation tasks pending or running.
    pub in_flight: Vec<String>,
    /// Editor events are not acted on now: an automation task is in flight or ended
    /// less than 2 s ago, so the events are taken as its own doing.
    pub quiet: bool,
    /// Why the last edit of the policy file was refused (the old policy stays).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_reload_error: Option<String>,
}

/// Ask for [`AutomationStatus`].
#[derive(Debug, Message)]
#[rtype(result = "AutomationStatus")]
pub struct GetAutomationStatus;

#[derive(Debug, Message)]
#[rtype(result = "()")]
struct TaskEnded {
    id: TaskId,
    file: String,
}

/// Why a hook's task did not start.
#[derive(Debug, thiserror::Error)]
enum NotStarted {
    #[error(transparent)]
    Refused(#[from] TaskError),
    #[error("orchestrator unavailable: {0}")]
    Unavailable(#[from] MailboxError),
}

/// The orchestrator answered a hook's enqueue: the task's id, or why it did not start.
#[derive(Debug, Message)]
#[rtype(result = "()")]
struct Started {
    firing: Firing,
    result: Result<TaskId, NotStarted>,
}

/// What Automation sends the Orchestrator.
pub struct OrchestratorLink {
    /// Starts a hook's task.
    pub enqueue: Recipient<Enqueue>,
    /// Follows it until it ends (automation stays quiet meanwhile).
    pub follow: Recipient<Follow>,
}

/// Runs the policy's hooks on editor events (one per bridge, absent without a policy).
pub struct Automation {
    engine: Engine,
    clock: Box<dyn Clock>,
    path: PathBuf,
    stamp: Option<(SystemTime, u64)>,
    workspace: Workspace,
    in_flight: HashSet<String>,
    settle_until: u64,
    fired: u64,
    skipped: u64,
    last_reload_error: Option<String>,
    orchestrator: OrchestratorLink,
    activity: Addr<ActivityLog>,
    metrics: Arc<Metrics>,
}

impl Automation {
    /// An actor for a policy already loaded from `path`.
    pub fn new(
        policy: Policy,
        path: PathBuf,
        workspace: Workspace,
        orchestrator: OrchestratorLink,
        activity: Addr<ActivityLog>,
        metrics: Arc<Metrics>,
    ) -> Self {
        let stamp = stamp(&path);
        Self {
            engine: Engine::new(policy),
            clock: Box::new(SystemClock::default()),
            path,
            stamp,
            workspace,
            in_flight: HashSet::new(),
            settle_until: 0,
            fired: 0,
            skipped: 0,
            last_reload_error: None,
            orchestrator,
            activity,
            metrics,
        }
    }

    fn record(&self, event: LifecycleEvent, detail: String) {
        self.activity.do_send(RecordLifecycle {
            event,
            session_id: None,
            detail,
        });
    }

    /// Reloads the policy when the file's mtime or size changed.
    fn poll(&mut self) {
        let now = stamp(&self.path);
        if now == self.stamp {
            return;
        }
        self.stamp = now;
        match Policy::load(&self.path) {
            Ok(policy) => {
                for w in &policy.warnings {
                    tracing::warn!(policy = %self.path.display(), "{w}");
                }
                let hooks: Vec<&str> = policy.hooks.iter().map(|h| h.name).collect();
                tracing::info!(policy = %self.path.display(), ?hooks, "automation policy reloaded");
                self.record(
                    LifecycleEvent::AutomationPolicy,
                    format!("reloaded: hooks {}", hooks.join(", ")),
                );
                self.engine.replace(policy);
                self.last_reload_error = None;
            }
            Err(e) => {
                tracing::warn!("{e}; keeping the previous policy");
                self.record(
                    LifecycleEvent::AutomationPolicy,
                    format!("edit refused, previous policy kept: {e}"),
                );
                self.last_reload_error = Some(e.to_string());
            }
        }
    }

    fn quiet(&self, now: u64) -> bool {
        !self.in_flight.is_empty() || now < self.settle_until
    }

    /// The workspace-relative path of an editor path, or `None` outside the workspace.
    fn relative(&self, file: &str) -> Option<String> {
        let abs = self.workspace.resolve(file).ok()?;
        let rel = abs.strip_prefix(self.workspace.root()).ok()?;
        Some(rel.to_string_lossy().into_owned())
    }

    fn on_outcome(&mut self, outcome: Outcome, ctx: &mut Context<Self>) {
        match outcome {
            Outcome::Fire(firing) => {
                let enqueue = Enqueue {
                    origin: TaskOrigin::Automation {
                        hook: firing.hook.to_string(),
                        file: firing.file.clone(),
                    },
                    prompt: firing.prompt.clone(),
                    timeout_ms: firing.timeout_ms,
                };
                // Until the orchestrator answers, count the task as in flight.
                self.in_flight.insert(placeholder(&firing));
                let ask = self.orchestrator.enqueue.send(enqueue);
                let me = ctx.address();
                actix_rt::spawn(async move {
                    let result = match ask.await {
                        Ok(r) => r.map(|t| t.id).map_err(NotStarted::from),
                        Err(e) => Err(NotStarted::from(e)),
                    };
                    me.do_send(Started { firing, result });
                });
            }
            Outcome::Skipped {
                hook,
                file,
                reason,
                routine,
            } => {
                self.skipped += 1;
                if routine {
                    tracing::debug!(hook, file, reason, "automation hook skipped");
                } else {
                    tracing::warn!(hook, file, reason, "automation hook skipped");
                    self.record(
                        LifecycleEvent::AutomationFired,
                        format!("{hook} {file}: skipped ({reason})"),
                    );
                }
            }
        }
    }
}

fn placeholder(f: &Firing) -> String {
    format!("starting:{}:{}", f.hook, f.file)
}

fn stamp(path: &std::path::Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

impl Actor for Automation {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(POLL_INTERVAL, |act, _| act.poll());
    }
}

impl Supervised for Automation {
    fn restarting(&mut self, _: &mut Context<Self>) {
        restarted(
            NAME,
            &self.metrics,
            &self.activity.clone().recipient(),
            "the policy and its counters are kept",
        );
    }
}

impl Handler<EditorEvent> for Automation {
    type Result = ();
    fn handle(&mut self, msg: EditorEvent, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| {
            let event = match msg {
                EditorEvent::Diagnostics { file, diagnostics } => Event::Diagnostics {
                    file: act.relative(&file)?,
                    diagnostics,
                },
                EditorEvent::FileSaved { file } => Event::FileSaved {
                    file: act.relative(&file)?,
                },
                EditorEvent::Disconnected => return None,
            };
            let now = act.clock.now_ms();
            let suppressed = act.quiet(now);
            for outcome in act.engine.handle(&event, now, suppressed) {
                act.on_outcome(outcome, ctx);
            }
            Some(())
        });
    }
}

impl Automation {
    /// The orchestrator answered a hook's enqueue: follow the task until it ends.
    fn started(
        &mut self,
        firing: Firing,
        result: Result<TaskId, NotStarted>,
        ctx: &mut Context<Self>,
    ) {
        self.in_flight.remove(&placeholder(&firing));
        match result {
            Ok(id) => {
                self.fired += 1;
                tracing::info!(
                    hook = firing.hook,
                    file = firing.file,
                    task = %id,
                    "automation task started"
                );
                self.record(
                    LifecycleEvent::AutomationFired,
                    format!("{} {} → task {id}", firing.hook, firing.file),
                );
                self.in_flight.insert(id.to_string());
                let follow = self.orchestrator.follow.send(Follow(id.clone()));
                let me = ctx.address();
                let file = firing.file;
                actix_rt::spawn(async move {
                    if let Ok(Some(mut output)) = follow.await {
                        while output.recv().await.is_some() {}
                    }
                    me.do_send(TaskEnded { id, file });
                });
            }
            Err(e) => {
                self.skipped += 1;
                tracing::warn!(hook = firing.hook, file = firing.file, error = %e, "automation task not started");
                self.record(
                    LifecycleEvent::AutomationFired,
                    format!("{} {}: not started ({e})", firing.hook, firing.file),
                );
            }
        }
    }

    /// A hook's task ended: events are its own doing for [`SETTLE_MS`] more.
    fn task_ended(&mut self, msg: TaskEnded) {
        self.in_flight.remove(&*msg.id);
        let now = self.clock.now_ms();
        self.settle_until = now + SETTLE_MS;
        // The task's own edits to its file must not set a hook off again.
        self.engine.touch(&msg.file, now);
        tracing::debug!(task = %msg.id, "automation task ended");
    }
}

impl Handler<Started> for Automation {
    type Result = ();
    fn handle(&mut self, msg: Started, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| {
            act.started(msg.firing, msg.result, ctx)
        });
    }
}

impl Handler<TaskEnded> for Automation {
    type Result = ();
    fn handle(&mut self, msg: TaskEnded, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| act.task_ended(msg));
    }
}

impl Handler<WorkspaceChanged> for Automation {
    type Result = ();
    fn handle(&mut self, _: WorkspaceChanged, _: &mut Context<Self>) {
        // SKELETON (issue 18).
    }
}

impl Handler<WorkspaceDiagnostics> for Automation {
    type Result = ();
    fn handle(&mut self, _: WorkspaceDiagnostics, _: &mut Context<Self>) {
        // SKELETON (issue 18).
    }
}

impl Handler<BridgeEvent> for Automation {
    type Result = ();
    fn handle(&mut self, _: BridgeEvent, _: &mut Context<Self>) {
        // SKELETON (issue 18).
    }
}

impl Handler<GetAutomationStatus> for Automation {
    type Result = MessageResult<GetAutomationStatus>;
    fn handle(&mut self, _: GetAutomationStatus, _: &mut Context<Self>) -> Self::Result {
        let policy = self.engine.policy();
        let mut in_flight: Vec<String> = self.in_flight.iter().cloned().collect();
        in_flight.sort();
        MessageResult(AutomationStatus {
            policy: self.path.display().to_string(),
            hooks: policy.hooks.iter().map(|h| h.name).collect(),
            max_tasks_per_hour: policy.max_tasks_per_hour,
            fired_last_hour: self.engine.fired_last_hour(self.clock.now_ms()),
            fired: self.fired,
            skipped: self.skipped,
            quiet: self.quiet(self.clock.now_ms()),
            in_flight,
            last_reload_error: self.last_reload_error.clone(),
        })
    }
}

#[cfg(feature = "fault-injection")]
crate::actors::fault::fault_handlers!(Automation, NAME);
