//! Orchestrator actor: the queue and history of Claude tasks. At most
//! `orchestrator.max_concurrent` run at once, `max_queue` wait, `max_history` finished
//! ones are kept (oldest evicted); the lot is persisted and reloaded (tasks alive at a
//! stop come back `interrupted`). Output streams to subscribers (the owning agent's
//! progress notifications) and to the editor as `bridge/claudeTaskOutput`.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use serde_json::json;
use tokio::sync::mpsc;

use super::activity_log::{now_ms, ActivityLog, LifecycleEvent, RecordLifecycle};
use super::messages::automation::BridgeEvent;
use super::messages::editor::NotifyEditor;
use super::supervise::{guard, restarted, ActorFault};
use crate::actors::messages::session::SessionId;
use crate::metrics::Metrics;
use crate::orchestrator::driver::{self, DriverConfig, Event};
use crate::orchestrator::{self as tasks, Task, TaskId, TaskOrigin, TaskStatus};

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "orchestrator";

/// Limits from `[orchestrator]`.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Tasks running at once.
    pub max_concurrent: usize,
    /// Tasks waiting.
    pub max_queue: usize,
    /// Finished tasks kept.
    pub max_history: usize,
}

/// Why a task request was refused (the text is what agents read).
#[derive(Debug, Clone, thiserror::Error)]
pub enum TaskError {
    /// No task has this id (or it left the history).
    #[error("No task {0:?}")]
    NotFound(String),
    /// The task was started by another session.
    #[error("Task {0} belongs to another session")]
    OtherSession(String),
    /// `orchestrator.max_queue` tasks wait already.
    #[error("Task queue is full: {running} tasks running and {waiting} waiting (max {max}); try again when one finishes")]
    QueueFull {
        /// Tasks running.
        running: usize,
        /// Tasks waiting.
        waiting: usize,
        /// `orchestrator.max_queue`.
        max: usize,
    },
    /// `orchestrator.claude_binary` is not there: the task could not start.
    #[error("Cannot run Claude tasks: orchestrator.claude_binary {program:?} is not found{where_}; install Claude Code or set orchestrator.claude_binary")]
    NoClaude {
        /// The setting's value.
        program: String,
        /// " on PATH" for a bare name.
        where_: &'static str,
    },
    /// Cancelling a task that is over.
    #[error("Task {id} already finished ({status})")]
    Finished {
        /// The task.
        id: String,
        /// How it ended.
        status: TaskStatus,
    },
    /// The orchestrator failed while handling the request.
    #[error(transparent)]
    Fault(#[from] ActorFault),
}

/// Start (or queue) a task.
#[derive(Debug, Message)]
#[rtype(result = "Result<Task, TaskError>")]
pub struct Enqueue {
    /// The session or automation hook that asks (it owns the task).
    pub origin: TaskOrigin,
    /// The prompt, context mentions included.
    pub prompt: String,
    /// The run is killed after this many milliseconds.
    pub timeout_ms: u64,
}

/// Start (or queue) a task and follow its output from its first line: the follower is
/// registered in the same step that queues the task, so no output can slip past it
/// (as it could between an [`Enqueue`] and a later [`Follow`]).
#[derive(Debug, Message)]
#[rtype(result = "Result<(Task, mpsc::UnboundedReceiver<String>), TaskError>")]
pub struct EnqueueFollowed(pub Enqueue);

/// One task, if `session` may see it (`None`: the bridge itself).
#[derive(Debug, Message)]
#[rtype(result = "Result<Task, TaskError>")]
pub struct GetTask {
    pub task_id: TaskId,
    /// The asking session; `None` (the bridge itself) sees every task.
    pub session: Option<SessionId>,
}

/// A session's tasks, oldest first.
#[derive(Debug, Message)]
#[rtype(result = "Vec<Task>")]
pub struct ListTasks {
    /// The asking session; `None` (the bridge itself) sees every task.
    pub session: Option<SessionId>,
}

/// Cancel a pending or running task.
#[derive(Debug, Message)]
#[rtype(result = "Result<Task, TaskError>")]
pub struct CancelTask {
    pub task_id: TaskId,
    /// The asking session; `None` (the bridge itself) sees every task.
    pub session: Option<SessionId>,
}

/// Stream a task's output; the channel closes when it finishes.
#[derive(Debug, Message)]
#[rtype(result = "Option<mpsc::UnboundedReceiver<String>>")]
pub struct Follow(pub TaskId);

/// A task as it is now and, while it has not finished, its output from here on: the
/// snapshot and the follower are taken in one step, so no line falls between them.
#[derive(Debug, Message)]
#[rtype(result = "Option<(Task, Option<mpsc::UnboundedReceiver<String>>)>")]
pub struct WatchTask(pub TaskId);

#[derive(Debug, Message)]
#[rtype(result = "()")]
struct TaskEvent(TaskId, Event);

/// A task's driver returned (after every event it sent was posted).
#[derive(Message)]
#[rtype(result = "()")]
struct TaskEnded(TaskId, Result<String, driver::RunError>);

/// Graceful shutdown: write the queue and history (running tasks as they are, so they
/// come back `interrupted`), then stop every running task's process group.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct SaveTasks;

/// Output of an ended task handed to automation, at most (its end).
const OUTPUT_TAIL_BYTES: usize = 8 * 1024;

/// Holds every task (queued, running, finished) and runs them as `claude -p` processes.
pub struct Orchestrator {
    tasks: HashMap<TaskId, Task>,
    order: VecDeque<TaskId>,
    queue: VecDeque<TaskId>,
    running: HashMap<TaskId, SpawnHandle>,
    followers: HashMap<TaskId, Vec<mpsc::UnboundedSender<String>>>,
    limits: Limits,
    driver: Arc<DriverConfig>,
    path: Option<PathBuf>,
    save_timer: Option<SpawnHandle>,
    editor: Recipient<NotifyEditor>,
    /// Told when a task reaches a final state (automation's task hooks).
    events: Option<Recipient<BridgeEvent>>,
    activity: Addr<ActivityLog>,
    metrics: Arc<Metrics>,
    /// Tasks the previous bridge left alive, marked `interrupted` at start-up: reported
    /// as ended once the actor runs.
    interrupted_at_start: Vec<TaskId>,
}

impl Orchestrator {
    /// An orchestrator; with `path`, the previous tasks are loaded from it.
    pub fn new(
        limits: Limits,
        driver: DriverConfig,
        path: Option<PathBuf>,
        editor: Recipient<NotifyEditor>,
        activity: Addr<ActivityLog>,
        metrics: Arc<Metrics>,
    ) -> Self {
        let now = now_ms();
        let loaded = path
            .as_deref()
            .map(|p| tasks::load(p, now))
            .unwrap_or_default();
        // Tasks that were alive when the previous bridge stopped were just marked
        // interrupted at `now`; after a crash their processes may still run.
        let were_alive: Vec<TaskId> = loaded
            .iter()
            .filter(|t| t.status == TaskStatus::Interrupted && t.finished_at == Some(now))
            .map(|t| t.id.clone())
            .collect();
        let killed = tasks::kill_leftovers(&were_alive);
        if killed > 0 {
            tracing::warn!(
                killed,
                "killed processes left running by interrupted tasks of the previous run"
            );
        }
        let mut me = Self {
            tasks: HashMap::new(),
            order: VecDeque::new(),
            queue: VecDeque::new(),
            running: HashMap::new(),
            followers: HashMap::new(),
            limits,
            driver: Arc::new(driver),
            path,
            save_timer: None,
            editor,
            events: None,
            interrupted_at_start: were_alive,
            activity,
            metrics,
        };
        for t in loaded {
            me.order.push_back(t.id.clone());
            me.tasks.insert(t.id.clone(), t);
        }
        me
    }

    fn visible(&self, task_id: &str, session: Option<&SessionId>) -> Result<&Task, TaskError> {
        let task = self
            .tasks
            .get(task_id)
            .ok_or_else(|| TaskError::NotFound(task_id.to_string()))?;
        match (session, task.session()) {
            (Some(asker), owner) if owner != Some(asker) => {
                Err(TaskError::OtherSession(task_id.to_string()))
            }
            _ => Ok(task),
        }
    }

    fn schedule_save(&mut self, ctx: &mut Context<Self>) {
        if self.path.is_none() || self.save_timer.is_some() {
            return;
        }
        self.save_timer = Some(ctx.run_later(Duration::from_millis(100), |act, _| {
            act.save_timer = None;
            let (Some(path), snapshot) = (
                act.path.clone(),
                act.order
                    .iter()
                    .filter_map(|id| act.tasks.get(id).cloned())
                    .collect::<Vec<_>>(),
            ) else {
                return;
            };
            actix_rt::spawn(async move {
                let written =
                    tokio::task::spawn_blocking(move || tasks::save(&path, &snapshot)).await;
                if !matches!(written, Ok(Ok(()))) {
                    tracing::error!(?written, "task queue not saved");
                }
            });
        }));
    }

    /// Starts queued tasks while slots are free (and shows the counts in the metrics).
    fn start_ready(&mut self, ctx: &mut Context<Self>) {
        while self.running.len() < self.limits.max_concurrent {
            let Some(id) = self.queue.pop_front() else {
                break;
            };
            self.start(id, ctx);
        }
        self.metrics
            .set_claude_tasks(self.queue.len(), self.running.len());
    }

    fn start(&mut self, id: TaskId, ctx: &mut Context<Self>) {
        let Some(task) = self.tasks.get_mut(&id) else {
            return;
        };
        task.status = TaskStatus::Running;
        task.started_at = Some(now_ms());
        let (prompt, timeout) = (task.prompt.clone(), Duration::from_millis(task.timeout_ms));
        let driver = Arc::clone(&self.driver);
        let (tx, mut rx) = mpsc::unbounded_channel();
        let me = ctx.address();
        let task_id = id.clone();
        // The task's end is posted through the same mailbox after its last event, so
        // followers and the stored output have every line before the task is final.
        let run = async move {
            let forward = async {
                while let Some(event) = rx.recv().await {
                    me.do_send(TaskEvent(task_id.clone(), event));
                }
            };
            let (outcome, ()) = futures_util::join!(
                driver::run(&driver, &task_id, &prompt, timeout, tx),
                forward
            );
            me.do_send(TaskEnded(task_id, outcome));
        };
        let handle = ctx.spawn(run.into_actor(self));
        self.running.insert(id, handle);
    }

    fn finish(
        &mut self,
        id: &str,
        outcome: Result<String, driver::RunError>,
        ctx: &mut Context<Self>,
    ) {
        self.running.remove(id);
        let mut ended = false;
        if let Some(task) = self.tasks.get_mut(id) {
            if task.status == TaskStatus::Running {
                match outcome {
                    Ok(_) => task.status = TaskStatus::Done,
                    Err(e) => {
                        task.status = TaskStatus::Error;
                        task.error = Some(e.to_string());
                    }
                }
                task.finished_at = Some(now_ms());
                ended = true;
            }
        }
        self.followers.remove(id);
        if ended {
            self.ended(id);
        }
        self.after_change(id, ctx);
    }

    /// Tasks that end are reported to `events`.
    pub fn reporting_to(mut self, events: Option<Recipient<BridgeEvent>>) -> Self {
        self.events = events;
        self
    }

    /// Counts a task that ended `status` in the metrics.
    fn count_end(&self, status: TaskStatus) {
        self.metrics
            .claude_tasks_ended
            .get_or_create(&crate::metrics::TaskStateLabel {
                state: status.to_string(),
            })
            .inc();
    }

    /// Tells `events` that task `id` ended, when it did.
    fn report_end(&self, id: &str) {
        if let (Some(t), Some(events)) = (self.tasks.get(id), &self.events) {
            if t.status.is_final() {
                let tail = t.error.clone().unwrap_or_else(|| {
                    crate::automation::template::tail(&t.output, OUTPUT_TAIL_BYTES).to_string()
                });
                events.do_send(BridgeEvent::TaskEnded {
                    task: t.id.clone(),
                    origin: t.origin.clone(),
                    status: t.status,
                    output_tail: tail,
                });
            }
        }
    }

    /// Task `id` just ended (it was running or waiting): what it left outside its
    /// group is killed, and the metrics and automation hear of it, once.
    fn ended(&self, id: &str) {
        let Some(t) = self.tasks.get(id).filter(|t| t.status.is_final()) else {
            return;
        };
        sweep_left_behind(id);
        self.count_end(t.status);
        self.report_end(id);
    }

    fn after_change(&mut self, id: &str, ctx: &mut Context<Self>) {
        if let Some(t) = self.tasks.get(id) {
            self.editor.do_send(NotifyEditor {
                method: crate::protocol::editor::BridgeNotification::ClaudeTaskOutput,
                params: json!({ "taskId": id, "status": t.status, "error": t.error }),
            });
        }
        self.evict();
        self.start_ready(ctx);
        self.schedule_save(ctx);
    }

    /// Queues a task (starting it when a slot is free) with `follower` registered
    /// before anything can run.
    fn enqueue(
        &mut self,
        msg: Enqueue,
        follower: Option<mpsc::UnboundedSender<String>>,
        ctx: &mut Context<Self>,
    ) -> Result<Task, TaskError> {
        if driver::find_program(&self.driver.program).is_none() {
            let program = self.driver.program.clone();
            let where_ = if program.contains('/') {
                ""
            } else {
                " on PATH"
            };
            return Err(TaskError::NoClaude { program, where_ });
        }
        let slots_free = self.running.len() < self.limits.max_concurrent;
        if !slots_free && self.queue.len() >= self.limits.max_queue {
            return Err(TaskError::QueueFull {
                running: self.running.len(),
                waiting: self.queue.len(),
                max: self.limits.max_queue,
            });
        }
        let id = TaskId::new_random();
        let task = Task {
            id: id.clone(),
            origin: msg.origin,
            prompt: msg.prompt,
            status: TaskStatus::Pending,
            timeout_ms: msg.timeout_ms,
            created_at: now_ms(),
            started_at: None,
            finished_at: None,
            output: String::new(),
            error: None,
        };
        self.order.push_back(id.clone());
        self.tasks.insert(id.clone(), task);
        self.queue.push_back(id.clone());
        if let Some(follower) = follower {
            self.followers.entry(id.clone()).or_default().push(follower);
        }
        self.start_ready(ctx);
        self.schedule_save(ctx);
        Ok(self.tasks[&id].clone())
    }

    /// Keeps at most `max_history` finished tasks (the oldest go first).
    fn evict(&mut self) {
        let finished = self
            .order
            .iter()
            .filter(|id| self.tasks.get(*id).is_some_and(|t| t.status.is_final()))
            .count();
        let mut excess = finished.saturating_sub(self.limits.max_history);
        if excess == 0 {
            return;
        }
        let tasks = &mut self.tasks;
        self.order.retain(|id| {
            if excess > 0 && tasks.get(id).is_some_and(|t| t.status.is_final()) {
                tasks.remove(id);
                excess -= 1;
                false
            } else {
                true
            }
        });
    }
}

impl Actor for Orchestrator {
    type Context = Context<Self>;

    /// The tasks the previous bridge left alive ended with it: `interrupted` is a
    /// failure automation hears of (`onTaskFailed`).
    fn started(&mut self, _: &mut Context<Self>) {
        // (Their processes were killed as the actor was made.)
        for id in std::mem::take(&mut self.interrupted_at_start) {
            self.count_end(TaskStatus::Interrupted);
            self.report_end(&id);
        }
        self.metrics
            .set_claude_tasks(self.queue.len(), self.running.len());
    }
}

impl Supervised for Orchestrator {
    fn restarting(&mut self, ctx: &mut Context<Self>) {
        self.save_timer = None;
        // The running processes were dropped (and killed) with the old context.
        let now = now_ms();
        for id in std::mem::take(&mut self.running).into_keys() {
            if let Some(t) = self.tasks.get_mut(&id) {
                t.status = TaskStatus::Interrupted;
                t.finished_at = Some(now);
                t.error = Some("the orchestrator restarted during the run".into());
            }
            self.ended(&id);
        }
        self.followers.clear();
        self.start_ready(ctx);
        restarted(
            NAME,
            &self.metrics,
            &self.activity.clone().recipient(),
            "its running tasks are interrupted",
        );
    }
}

impl Handler<Enqueue> for Orchestrator {
    type Result = Result<Task, TaskError>;
    fn handle(&mut self, msg: Enqueue, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, ctx| act.enqueue(msg, None, ctx))?
    }
}

impl Handler<EnqueueFollowed> for Orchestrator {
    type Result = Result<(Task, mpsc::UnboundedReceiver<String>), TaskError>;
    fn handle(&mut self, msg: EnqueueFollowed, ctx: &mut Context<Self>) -> Self::Result {
        let (tx, rx) = mpsc::unbounded_channel();
        let task = guard(NAME, self, ctx, |act, ctx| {
            act.enqueue(msg.0, Some(tx), ctx)
        })??;
        Ok((task, rx))
    }
}

impl Orchestrator {
    fn cancel(&mut self, msg: CancelTask, ctx: &mut Context<Self>) -> Result<Task, TaskError> {
        let status = self.visible(&msg.task_id, msg.session.as_ref())?.status;
        if status.is_final() {
            return Err(TaskError::Finished {
                id: msg.task_id.to_string(),
                status,
            });
        }
        self.queue.retain(|id| id != &msg.task_id);
        if let Some(handle) = self.running.remove(&msg.task_id) {
            // Dropping the run future kills the whole process group.
            ctx.cancel_future(handle);
        }
        if let Some(t) = self.tasks.get_mut(&msg.task_id) {
            t.status = TaskStatus::Cancelled;
            t.finished_at = Some(now_ms());
        }
        self.followers.remove(&msg.task_id);
        self.ended(&msg.task_id);
        self.after_change(&msg.task_id.clone(), ctx);
        Ok(self.tasks[&msg.task_id].clone())
    }
}

/// Kills what a task that ended left running outside its process group (a daemon it
/// started with `setsid`, which the group's kill does not reach): every process still
/// carrying its marker. Off the actor's thread (it reads `/proc`).
fn sweep_left_behind(id: &str) {
    let ids = vec![TaskId::from(id)];
    actix_rt::spawn(async move {
        let task = ids[0].to_string();
        let killed = tokio::task::spawn_blocking(move || tasks::kill_leftovers(&ids)).await;
        if let Ok(n @ 1..) = killed {
            tracing::warn!(
                task,
                killed = n,
                "the task left processes running outside its process group; killed"
            );
        }
    });
}

impl Handler<GetTask> for Orchestrator {
    type Result = Result<Task, TaskError>;
    fn handle(&mut self, msg: GetTask, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            act.visible(&msg.task_id, msg.session.as_ref()).cloned()
        })?
    }
}

impl Handler<ListTasks> for Orchestrator {
    type Result = MessageResult<ListTasks>;
    fn handle(&mut self, msg: ListTasks, ctx: &mut Context<Self>) -> Self::Result {
        let listed = guard(NAME, self, ctx, |act, _| {
            act.order
                .iter()
                .filter_map(|id| act.tasks.get(id))
                .filter(|t| msg.session.is_none() || t.session() == msg.session.as_ref())
                .cloned()
                .collect()
        });
        // A fault lists nothing (the actor restarts).
        MessageResult(listed.unwrap_or_default())
    }
}

impl Handler<CancelTask> for Orchestrator {
    type Result = Result<Task, TaskError>;
    fn handle(&mut self, msg: CancelTask, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, ctx| act.cancel(msg, ctx))?
    }
}

impl Handler<Follow> for Orchestrator {
    type Result = Option<mpsc::UnboundedReceiver<String>>;
    fn handle(&mut self, msg: Follow, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| act.follow(msg.0))
            .ok()
            .flatten()
    }
}

impl Handler<WatchTask> for Orchestrator {
    type Result = Option<(Task, Option<mpsc::UnboundedReceiver<String>>)>;
    fn handle(&mut self, msg: WatchTask, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            let task = act.tasks.get(&msg.0)?.clone();
            let output = act.follow(msg.0);
            Some((task, output))
        })
        .ok()
        .flatten()
    }
}

impl Handler<SaveTasks> for Orchestrator {
    type Result = ();
    fn handle(&mut self, _: SaveTasks, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| act.save_and_stop_runs(ctx));
    }
}

impl Handler<TaskEnded> for Orchestrator {
    type Result = ();
    fn handle(&mut self, TaskEnded(id, outcome): TaskEnded, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| act.finish(&id, outcome, ctx));
    }
}

impl Handler<TaskEvent> for Orchestrator {
    type Result = ();
    fn handle(&mut self, TaskEvent(id, event): TaskEvent, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| act.task_event(id, event));
    }
}

impl Orchestrator {
    /// A receiver of the task's output from now on; `None` once it is final.
    fn follow(&mut self, id: TaskId) -> Option<mpsc::UnboundedReceiver<String>> {
        let task = self.tasks.get(&id)?;
        if task.status.is_final() {
            return None;
        }
        let (tx, rx) = mpsc::unbounded_channel();
        self.followers.entry(id).or_default().push(tx);
        Some(rx)
    }

    /// At shutdown: writes the queue and history now, then stops every run.
    fn save_and_stop_runs(&mut self, ctx: &mut Context<Self>) {
        if let Some(timer) = self.save_timer.take() {
            ctx.cancel_future(timer);
        }
        if let Some(path) = &self.path {
            let snapshot: Vec<Task> = self
                .order
                .iter()
                .filter_map(|id| self.tasks.get(id).cloned())
                .collect();
            if let Err(e) = tasks::save(path, &snapshot) {
                tracing::error!(%e, "task queue not saved at shutdown");
            }
        }
        // Process exit does not run the workers' destructors: stop the runs here.
        self.queue.clear();
        for (_, handle) in self.running.drain() {
            ctx.cancel_future(handle);
        }
    }

    /// A line of output or a permission decision from a running task.
    fn task_event(&mut self, id: TaskId, event: Event) {
        match event {
            Event::Output(text) => {
                if let Some(t) = self.tasks.get_mut(&id) {
                    t.push_output(&text);
                }
                if let Some(list) = self.followers.get_mut(&id) {
                    list.retain(|f| f.send(text.clone()).is_ok());
                }
                self.editor.do_send(NotifyEditor {
                    method: crate::protocol::editor::BridgeNotification::ClaudeTaskOutput,
                    params: json!({ "taskId": id, "chunk": text }),
                });
            }
            Event::Permission {
                tool,
                allow,
                reason,
            } => {
                self.activity.do_send(RecordLifecycle {
                    event: LifecycleEvent::PermissionDecision,
                    session_id: None,
                    detail: format!(
                        "task {id}: {tool} {} ({reason})",
                        if allow { "allowed" } else { "denied" }
                    ),
                });
            }
        }
    }
}

#[cfg(feature = "fault-injection")]
crate::actors::fault::fault_handlers!(Orchestrator, NAME);
