//! The Automation actor: runs events (from the editor, the workspace watcher, the
//! bridge's own linters, the Orchestrator, the registry and the command tools) through
//! the policy's hooks, carries out what they decide (a Claude task on the
//! Orchestrator, a notification, an allowlisted command), keeps automation from
//! feeding on itself, and reloads the policy file when it changes.

mod deeds;
mod status;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use actix::prelude::*;

use super::activity_log::{now_ms, ActivityLog, LifecycleEvent, RecordLifecycle};
use super::clock::{Clock, SystemClock};
pub use super::messages::automation::{
    AskEditGate, AskGate, BridgeEvent, EditGate, EditGateChecked, EditorEvent, GateCheck,
    GateChecked, WorkspaceDiagnostics,
};
use super::messages::editor::NotifyEditor;
use super::messages::registry::Announce;
use super::messages::session::SessionId;
use super::messages::watch::WorkspaceChanged;
use super::orchestrator::{Enqueue, Follow};
use super::supervise::{guard, restarted};
use crate::automation::git::{self, Head, Moved};
use crate::automation::policy::Policy;
use crate::automation::{Engine, Event, Firing, Outcome, Remembered};
use crate::config::Settings;
use crate::metrics::Metrics;
use crate::orchestrator::TaskOrigin;
use crate::workspace::Workspace;
use status::{wants_file_changes, HookRecords};
pub use status::{AutomationStatus, GetAutomationStatus, HookStatus};

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "automation";
/// How often the policy file is checked for changes.
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// The largest automation state file read back.
const MAX_REMEMBERED_BYTES: u64 = 8 << 20;
/// At most this many files' diagnostics reports are held back for later.
const MAX_HELD_REPORTS: usize = 256;
/// After the last automation task or command ends, workspace events are still taken
/// as its doing this long (diagnostics of the files it edited arrive a little later).
pub const SETTLE_MS: u64 = 2_000;
/// Files remembered as the editor's (their diagnostics come from it), at most.
pub const MAX_EDITOR_FILES: usize = 10_000;
/// Agents whose done-gate holds are remembered, at most (then all are forgotten).
pub const MAX_GATED_AGENTS: usize = 1_000;

/// What Automation sends the Orchestrator.
pub struct OrchestratorLink {
    /// Starts a hook's task.
    pub enqueue: Recipient<Enqueue>,
    /// Follows it until it ends (automation stays quiet meanwhile).
    pub follow: Recipient<Follow>,
}

/// Where Automation's deeds go.
pub struct AutomationLinks {
    /// Claude tasks.
    pub orchestrator: OrchestratorLink,
    /// Notifications for every listening agent (the session registry).
    pub agents: Recipient<Announce>,
    /// Notifications for the editor.
    pub editor: Recipient<NotifyEditor>,
    /// The activity timeline.
    pub activity: Addr<ActivityLog>,
}

/// The repository as automation last read it, and whether a read is under way.
#[derive(Default)]
struct GitWatch {
    head: Option<Head>,
    reading: bool,
    /// Refs changed again during a read: read once more after it.
    again: bool,
}

/// The repository was read after its refs changed.
#[derive(Message)]
#[rtype(result = "()")]
struct HeadRead(Option<Head>);

/// Runs the policy's hooks (one per bridge, absent without a policy).
pub struct Automation {
    engine: Engine,
    clock: Box<dyn Clock>,
    path: PathBuf,
    stamp: Option<(SystemTime, u64)>,
    workspace: Workspace,
    settings: Arc<Settings>,
    /// Tasks (by id, or `starting:…` until the Orchestrator answers) and commands
    /// (`command:…`) in flight.
    in_flight: HashSet<String>,
    settle_until: u64,
    fired: u64,
    skipped: u64,
    records: HookRecords,
    /// Diagnostics reports a hook skipped while automation's own work was in flight,
    /// the latest per file (and whether the editor sent it): handled again once it
    /// settled.
    held_diagnostics: HashMap<String, (Vec<crate::diagnostics::Diagnostic>, bool)>,
    /// Files that changed while automation's own work was in flight (at most
    /// [`MAX_HELD_REPORTS`]): their held reports are taken as its doing.
    touched_while_quiet: HashSet<String>,
    /// Workspace-relative files the connected editor reports diagnostics for.
    editor_files: HashSet<String>,
    git: GitWatch,
    last_reload_error: Option<String>,
    /// How often the done-gate kept each agent working since its last prompt.
    holds: HashMap<SessionId, u32>,
    links: AutomationLinks,
    metrics: Arc<Metrics>,
    /// Where what the engine keeps across restarts is written, and the engine's
    /// revision last written there.
    remembered: Option<(PathBuf, u64)>,
}

impl Automation {
    /// An actor for a policy already loaded from `path`.
    pub fn new(
        policy: Policy,
        path: PathBuf,
        workspace: Workspace,
        settings: Arc<Settings>,
        links: AutomationLinks,
        metrics: Arc<Metrics>,
    ) -> Self {
        let stamp = stamp(&path);
        Self {
            engine: Engine::new(policy),
            // An hour in: the hourly cap's firings of a previous run are readings too.
            clock: Box::new(SystemClock::starting_at(crate::automation::gate::HOUR_MS)),
            path,
            stamp,
            workspace,
            settings,
            in_flight: HashSet::new(),
            settle_until: 0,
            fired: 0,
            skipped: 0,
            records: HookRecords::new(Arc::clone(&metrics)),
            held_diagnostics: HashMap::new(),
            touched_while_quiet: HashSet::new(),
            editor_files: HashSet::new(),
            git: GitWatch::default(),
            last_reload_error: None,
            holds: HashMap::new(),
            links,
            metrics,
            remembered: None,
        }
    }

    /// Keeps what the engine knows across restarts in `path` (read now, written at
    /// most once per [`POLL_INTERVAL`] when it changed): the errors its diagnostics
    /// hooks already reported, the firings the hourly cap counts.
    pub fn remembering(mut self, path: Option<PathBuf>) -> Self {
        let Some(path) = path else {
            return self;
        };
        use crate::private_file::{read, ReadError};
        let unread = |e: &dyn std::fmt::Display| {
            tracing::warn!(
                file = %path.display(),
                "automation state not read ({e}): errors already reported count as new, and \
                 the hourly cap starts at 0"
            );
        };
        match read(&path, MAX_REMEMBERED_BYTES) {
            Ok(text) => match serde_json::from_str::<Remembered>(&text) {
                Ok(kept) => {
                    let now = self.clock.now_ms();
                    self.engine.restore(kept, now, now_ms());
                }
                Err(e) => unread(&e),
            },
            Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => unread(&e),
        }
        self.remembered = Some((path, self.engine.revision()));
        self
    }

    /// What the engine keeps and where, when it changed since the last write (which
    /// this then counts as done).
    fn unsaved(&mut self) -> Option<(PathBuf, Remembered)> {
        let (path, written) = self.remembered.as_mut()?;
        let revision = self.engine.revision();
        if revision == *written {
            return None;
        }
        *written = revision;
        Some((
            path.clone(),
            self.engine.remember(self.clock.now_ms(), now_ms()),
        ))
    }

    /// Writes what the engine keeps when it changed since the last write (off the
    /// actor's thread).
    fn save_remembered(&mut self) {
        let Some((path, kept)) = self.unsaved() else {
            return;
        };
        actix_rt::spawn(async move {
            let saved = tokio::task::spawn_blocking(move || write_remembered(&path, &kept)).await;
            if !matches!(saved, Ok(Ok(()))) {
                tracing::warn!(?saved, "automation state not saved");
            }
        });
    }

    fn record(&self, event: LifecycleEvent, detail: String) {
        self.links.activity.do_send(RecordLifecycle {
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
        match Policy::load_checked(&self.path, &self.settings.command_policy(), &self.workspace) {
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

    /// The workspace-relative path of an absolute or editor path, or `None` outside
    /// the workspace.
    fn relative(&self, file: &str) -> Option<String> {
        self.workspace.relative(file)
    }

    /// Runs `event` through the hooks and carries out what they decide.
    fn dispatch(&mut self, event: Event, ctx: &mut Context<Self>) {
        let now = self.clock.now_ms();
        let quiet = self.quiet(now);
        if let (true, Event::FileChanged { file, .. } | Event::FileSaved { file }) = (quiet, &event)
        {
            if self.touched_while_quiet.len() < MAX_HELD_REPORTS {
                self.touched_while_quiet.insert(file.clone());
            }
        }
        for outcome in self.engine.handle(&event, now, quiet) {
            self.on_outcome(outcome, ctx);
        }
    }

    fn on_outcome(&mut self, outcome: Outcome, ctx: &mut Context<Self>) {
        match outcome {
            Outcome::Fire(firing) => self.carry_out(firing, ctx),
            Outcome::Skipped {
                hook,
                subject,
                reason,
                kind,
            } => {
                self.records.skipped(hook, &subject, kind, &reason);
                if kind == crate::automation::SkipKind::Filter {
                    return;
                }
                self.skipped += 1;
                if kind.routine() {
                    tracing::debug!(hook, subject, reason, "automation hook skipped");
                } else {
                    tracing::warn!(hook, subject, reason, "automation hook skipped");
                    self.record(
                        LifecycleEvent::AutomationFired,
                        format!("{hook} {subject}: skipped ({reason})"),
                    );
                }
            }
        }
    }

    /// A workspace or editor diagnostics report for `file` (workspace-relative). One a
    /// hook would have fired on but for automation's own work in flight is kept (the
    /// latest per file) and handled again once that work settled: no other report of
    /// the file may come.
    fn diagnostics(
        &mut self,
        file: String,
        diagnostics: Vec<crate::diagnostics::Diagnostic>,
        from_editor: bool,
        ctx: &mut Context<Self>,
    ) {
        let now = self.clock.now_ms();
        let quiet = self.quiet(now);
        let event = Event::Diagnostics { file, diagnostics };
        let mut held = false;
        for outcome in self.engine.handle(&event, now, quiet) {
            held |= matches!(
                outcome,
                Outcome::Skipped {
                    kind: crate::automation::SkipKind::LoopGuard,
                    ..
                }
            );
            self.on_outcome(outcome, ctx);
        }
        let Event::Diagnostics { file, diagnostics } = event else {
            return;
        };
        if !held {
            self.held_diagnostics.remove(&file);
        } else if self.held_diagnostics.len() < MAX_HELD_REPORTS
            || self.held_diagnostics.contains_key(&file)
        {
            self.held_diagnostics
                .insert(file, (diagnostics, from_editor));
        } else {
            tracing::debug!(
                file,
                "too many diagnostics reports held back; this one is dropped"
            );
        }
    }

    /// Once automation is quiet, the diagnostics reports its work held back: those of
    /// files that changed meanwhile are taken as its doing (seen, never fired); a
    /// linters' report of a file the editor now reports is dropped; the rest are
    /// handled as if they came now.
    fn replay_held(&mut self, ctx: &mut Context<Self>) {
        if self.quiet(self.clock.now_ms()) {
            return;
        }
        let touched = std::mem::take(&mut self.touched_while_quiet);
        for (file, (diagnostics, from_editor)) in std::mem::take(&mut self.held_diagnostics) {
            if !from_editor && self.editor_files.contains(&file) {
                continue;
            }
            if touched.contains(&file) {
                self.engine
                    .acknowledge(&Event::Diagnostics { file, diagnostics });
            } else {
                self.diagnostics(file, diagnostics, from_editor, ctx);
            }
        }
    }

    /// Git's refs changed: read the repository (one read at a time).
    fn refs_changed(&mut self, ctx: &mut Context<Self>) {
        if self.git.reading {
            self.git.again = true;
            return;
        }
        self.git.reading = true;
        let root = self.workspace.root().to_path_buf();
        ctx.spawn(
            async move { git::read_head(&root).await }
                .into_actor(self)
                .map(|head, _, ctx| ctx.notify(HeadRead(head))),
        );
    }

    fn head_read(&mut self, head: Option<Head>, ctx: &mut Context<Self>) {
        self.git.reading = false;
        let before = std::mem::replace(&mut self.git.head, head.clone());
        if std::mem::take(&mut self.git.again) {
            self.refs_changed(ctx);
        }
        let (Some(before), Some(now)) = (before, head) else {
            return;
        };
        let event = match now.moved_from(&before) {
            Moved::Commit => Event::GitCommit {
                branch: now.branch,
                commit: now.commit,
                subject: now.subject,
            },
            Moved::BranchSwitch { previous } => Event::BranchSwitched {
                branch: now.branch,
                previous,
                commit: now.commit,
            },
            Moved::Other => return,
        };
        self.dispatch(event, ctx);
    }
}

impl Automation {
    /// A stop: the non-gating hooks fire as usual; the gate's check is handed back.
    fn ask_gate(&mut self, msg: AskGate, ctx: &mut Context<Self>) -> Option<GateCheck> {
        let AskGate {
            session,
            agent,
            message,
        } = msg;
        let gate = self
            .engine
            .policy()
            .hooks
            .iter()
            .find_map(|h| h.hold.map(|max| (h.name, max)));
        let spent =
            gate.is_some_and(|(_, max)| self.holds.get(&session).copied().unwrap_or(0) >= max);
        let event = Event::AgentStopped {
            session: session.clone(),
            agent,
            message,
        };
        let now = self.clock.now_ms();
        let quiet = self.quiet(now);
        let mut check = None;
        for outcome in self.engine.handle(&event, now, quiet) {
            match outcome {
                Outcome::Fire(firing) if Some(firing.hook) == gate.map(|g| g.0) => {
                    if spent {
                        let max = gate.map(|g| g.1).unwrap_or(0);
                        self.on_outcome(
                            Outcome::Skipped {
                                hook: firing.hook,
                                subject: firing.subject,
                                reason: format!(
                                    "the gate already kept this agent working {max} times since its last prompt"
                                ),
                                kind: crate::automation::SkipKind::HoldsSpent,
                            },
                            ctx,
                        );
                        continue;
                    }
                    self.fired += 1;
                    self.records.fired(firing.hook, &firing.subject, "checking");
                    self.in_flight.insert(gate_key(&session));
                    check = Some(GateCheck {
                        hook: firing.hook,
                        action: firing.deed,
                        timeout_ms: firing.timeout_ms,
                    });
                }
                other => self.on_outcome(other, ctx),
            }
        }
        check
    }

    /// A proposed edit: the reacting hooks fire as usual; the edit gate's check is
    /// handed back.
    fn ask_edit_gate(&mut self, msg: AskEditGate, ctx: &mut Context<Self>) -> Option<EditGate> {
        let event = Event::EditProposed {
            session: msg.session.clone(),
            agent: msg.agent,
            file: msg.file,
            tool: msg.tool,
        };
        let now = self.clock.now_ms();
        let quiet = self.quiet(now);
        let mut gate = None;
        for outcome in self.engine.handle(&event, now, quiet) {
            use crate::automation::policy::Action;
            match outcome {
                Outcome::Fire(Firing {
                    hook,
                    subject,
                    deed: Action::CheckEdit { min_severity },
                    ..
                }) => {
                    // One gate checks a proposal: the first that matches the file.
                    if gate.is_none() {
                        self.fired += 1;
                        self.records.fired(hook, &subject, "checking");
                        gate = Some(EditGate { hook, min_severity });
                    }
                }
                other => self.on_outcome(other, ctx),
            }
        }
        gate
    }

    /// The gate's check ran: count a hold when it failed.
    fn gate_checked(&mut self, msg: GateChecked) -> Option<String> {
        self.settle(&gate_key(&msg.session), msg.session.as_str());
        if msg.abandoned {
            self.records.settled(
                msg.hook,
                &msg.session,
                None,
                "abandoned: the agent stopped waiting".into(),
            );
            return None;
        }
        let Some(failure) = msg.failure else {
            self.records
                .settled(msg.hook, &msg.session, None, "passed".into());
            return None;
        };
        if self.holds.len() >= MAX_GATED_AGENTS {
            self.holds.clear();
        }
        let held = self.holds.entry(msg.session.clone()).or_insert(0);
        *held += 1;
        let count = *held;
        self.records.settled(
            msg.hook,
            &msg.session,
            None,
            format!("failed; agent kept working (hold {count})"),
        );
        self.record(
            LifecycleEvent::AutomationFired,
            format!(
                "{} {}: check failed, agent kept working (hold {count})",
                msg.hook, msg.session
            ),
        );
        Some(failure)
    }
}

fn gate_key(session: &SessionId) -> String {
    format!("gate:{session}")
}

fn stamp(path: &std::path::Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// Writes what the engine keeps to `path` (atomically).
fn write_remembered(path: &std::path::Path, kept: &Remembered) -> std::io::Result<()> {
    let body = serde_json::to_vec(kept).map_err(std::io::Error::other)?;
    crate::lockfile::write_atomic(path, &body)
}

impl Actor for Automation {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(POLL_INTERVAL, |act, ctx| {
            act.poll();
            act.replay_held(ctx);
            act.save_remembered();
        });
        // Know the repository's state before its refs change.
        self.refs_changed(ctx);
    }

    /// What the last second changed is written before the bridge ends.
    fn stopped(&mut self, _: &mut Context<Self>) {
        if let Some((path, kept)) = self.unsaved() {
            if let Err(e) = write_remembered(&path, &kept) {
                tracing::warn!("automation state not saved: {e}");
            }
        }
    }
}

impl Supervised for Automation {
    fn restarting(&mut self, _: &mut Context<Self>) {
        self.git.reading = false;
        restarted(
            NAME,
            &self.metrics,
            &self.links.activity.clone().recipient(),
            "the policy and its counters are kept",
        );
    }
}

impl Handler<EditorEvent> for Automation {
    type Result = ();
    fn handle(&mut self, msg: EditorEvent, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| {
            match msg {
                EditorEvent::Diagnostics { file, diagnostics } => {
                    let file = act.relative(&file)?;
                    if act.editor_files.len() < MAX_EDITOR_FILES {
                        act.editor_files.insert(file.clone());
                    }
                    act.diagnostics(file, diagnostics, true, ctx);
                }
                EditorEvent::FileSaved { file } => {
                    let file = act.relative(&file)?;
                    act.dispatch(Event::FileSaved { file }, ctx);
                }
                EditorEvent::Disconnected => act.editor_files.clear(),
            }
            Some(())
        });
    }
}

impl Handler<WorkspaceDiagnostics> for Automation {
    type Result = ();
    fn handle(&mut self, msg: WorkspaceDiagnostics, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| {
            let file = act.relative(&msg.file.to_string_lossy())?;
            if act.editor_files.contains(&file) {
                // The editor's diagnostics win for the files it reports: the bridge's
                // linters must not fire the same hook a second time.
                for hook in act.engine.policy().hooks.clone() {
                    if matches!(
                        hook.trigger,
                        crate::automation::policy::Trigger::Diagnostics { .. }
                    ) {
                        act.records.skipped(
                            hook.name,
                            &file,
                            crate::automation::SkipKind::EditorWins,
                            "the editor reports this file's diagnostics",
                        );
                    }
                }
                return Some(());
            }
            act.diagnostics(file, msg.diagnostics, false, ctx);
            Some(())
        });
    }
}

impl Handler<WorkspaceChanged> for Automation {
    type Result = ();
    fn handle(&mut self, msg: WorkspaceChanged, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| {
            if msg.git_refs {
                act.refs_changed(ctx);
            }
            if !wants_file_changes(&act.engine.policy().hooks) {
                return;
            }
            for change in msg.changes.iter() {
                let from = match &change.kind {
                    super::messages::watch::ChangeKind::Renamed { from } => Some(from.clone()),
                    _ => None,
                };
                let event = Event::FileChanged {
                    file: change.path.clone(),
                    change: change.kind.name(),
                    from,
                };
                act.dispatch(event, ctx);
            }
            if msg.overflowed > 0 {
                tracing::warn!(
                    unlisted = msg.overflowed,
                    "file changes beyond the watcher's batch bound were not run through the hooks"
                );
            }
        });
    }
}

impl Handler<BridgeEvent> for Automation {
    type Result = ();
    fn handle(&mut self, msg: BridgeEvent, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| {
            let event = match msg {
                BridgeEvent::TaskEnded {
                    task,
                    origin,
                    status,
                    output_tail,
                } => {
                    let (hook, session) = match origin {
                        TaskOrigin::Automation { hook, .. } => (Some(hook), None),
                        TaskOrigin::Session { session_id } => (None, Some(session_id.clone())),
                    };
                    Event::TaskEnded {
                        task: task.to_string(),
                        status,
                        hook,
                        session,
                        output: output_tail,
                    }
                }
                BridgeEvent::AgentConnected { session, client } => Event::Agent {
                    connected: true,
                    session: session.clone(),
                    client,
                },
                BridgeEvent::AgentGone { session, client } => Event::Agent {
                    connected: false,
                    session: session.clone(),
                    client,
                },
                BridgeEvent::CommandFailed {
                    command,
                    exit_code,
                    timed_out,
                    output_tail,
                    session,
                } => Event::CommandFailed {
                    program: command.split(' ').next().unwrap_or_default().to_string(),
                    command,
                    exit_code,
                    timed_out,
                    output: output_tail,
                    session,
                },
                BridgeEvent::AgentEdited {
                    session,
                    agent,
                    file,
                    tool,
                } => Event::AgentEdited {
                    session: session.clone(),
                    agent,
                    file: act.relative(&file.to_string_lossy())?,
                    tool,
                },
                BridgeEvent::AgentCommandFailed {
                    session,
                    agent,
                    command,
                    error,
                } => Event::AgentCommandFailed {
                    session: session.clone(),
                    agent,
                    program: command
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                    command,
                    error,
                },
                BridgeEvent::PromptSubmitted {
                    session,
                    agent,
                    prompt,
                } => {
                    // A new prompt: the done-gate may hold the agent again.
                    act.holds.remove(&session);
                    Event::PromptSubmitted {
                        session: session.clone(),
                        agent,
                        prompt,
                    }
                }
                BridgeEvent::Policy(event) => event,
            };
            act.dispatch(event, ctx);
            Some(())
        });
    }
}

impl Handler<AskGate> for Automation {
    type Result = Option<GateCheck>;
    fn handle(&mut self, msg: AskGate, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, ctx| act.ask_gate(msg, ctx))
            .ok()
            .flatten()
    }
}

impl Handler<AskEditGate> for Automation {
    type Result = Option<EditGate>;
    fn handle(&mut self, msg: AskEditGate, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, ctx| act.ask_edit_gate(msg, ctx))
            .ok()
            .flatten()
    }
}

impl Handler<EditGateChecked> for Automation {
    type Result = ();
    fn handle(&mut self, msg: EditGateChecked, _: &mut Context<Self>) {
        self.records
            .settled(msg.hook, &msg.file, None, msg.outcome.clone());
        if msg.refused {
            self.record(
                LifecycleEvent::AutomationFired,
                format!("{} {}: {}", msg.hook, msg.file, msg.outcome),
            );
        }
    }
}

impl Handler<GateChecked> for Automation {
    type Result = Option<String>;
    fn handle(&mut self, msg: GateChecked, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| act.gate_checked(msg))
            .ok()
            .flatten()
    }
}

impl Handler<HeadRead> for Automation {
    type Result = ();
    fn handle(&mut self, msg: HeadRead, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| act.head_read(msg.0, ctx));
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
            hooks: self.records.status(&policy.hooks),
            max_tasks_per_hour: policy.max_tasks_per_hour,
            fired_last_hour: self.engine.fired_last_hour(self.clock.now_ms()),
            fired: self.fired,
            skipped: self.skipped,
            quiet: self.quiet(self.clock.now_ms()),
            in_flight,
            editor_files: self.editor_files.len(),
            git_head: self
                .git
                .head
                .as_ref()
                .map(|h| format!("{}@{}", h.branch, &h.commit[..h.commit.len().min(12)])),
            last_reload_error: self.last_reload_error.clone(),
        })
    }
}

#[cfg(feature = "fault-injection")]
crate::actors::fault::fault_handlers!(Automation, NAME);
