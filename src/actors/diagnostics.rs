//! Diagnostics actor: without an editor, diagnostics come from command-line linters.
//! It probes which linters exist and apply at start-up, runs the applicable ones
//! concurrently (callers arriving during a run share it), caches the result for
//! `diagnostics.cache_ms`, and forgets it when the bridge writes a file.
//!
//! Live (`diagnostics.live`): when the watcher reports a change to a file a running
//! linter looks at, the linters run again once the changes have been quiet for
//! `diagnostics.rerun_debounce_ms`; a change during a run cancels it (its processes are
//! killed) and starts the wait again. After every complete run the files whose
//! diagnostics changed are sent to Automation and to `watchDiagnostics` callers.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde::Serialize;
use tokio::sync::oneshot;

use super::activity_log::ActivityLog;
use super::messages::automation::WorkspaceDiagnostics;
use super::messages::watch::{ChangeKind, WorkspaceChanged};
use super::supervise::{guard, restarted, ActorFault};
use crate::diagnostics::changes::{bounded, changed, ByFile, Changed};
use crate::diagnostics::linters::{probe, Linter, Probe};
use crate::diagnostics::parse::parse;
use crate::diagnostics::Diagnostic;
use crate::exec::{self, RunSpec};
use crate::metrics::Metrics;
use crate::workspace::normalize_lexically;

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "diagnostics";

/// Linter output kept for parsing.
const MAX_LINTER_OUTPUT: usize = 16 * 1024 * 1024;

/// How one linter run went.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LinterRun {
    /// Linter name.
    pub name: &'static str,
    /// Output parsed.
    pub ok: bool,
    /// What went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Diagnostics found.
    pub count: usize,
    /// Wall time.
    pub duration_ms: u64,
}

/// Diagnostics of the whole workspace from one round of linter runs.
#[derive(Debug, Default)]
pub struct Report {
    /// Diagnostics by absolute path.
    pub files: BTreeMap<PathBuf, Vec<Diagnostic>>,
    /// One entry per linter run.
    pub linters: Vec<LinterRun>,
}

/// A linter that exited with a failure and reported nothing did not check anything (a
/// toolchain missing, a broken configuration): an error saying so, with the first line
/// of what it printed, instead of an empty list that reads as "no problems".
fn failed_without_findings<T>(
    linter: Linter,
    out: &exec::RunOutput,
    found: Vec<T>,
) -> Result<Vec<T>, String> {
    let failed = out.exit_code.is_none_or(|code| code != 0);
    if !failed || !found.is_empty() {
        return Ok(found);
    }
    let said = out
        .stderr
        .lines()
        .chain(out.stdout.lines())
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('{') && !l.starts_with('['))
        .map(|l| format!(": {}", crate::hooks::input::clip(l, 200)))
        .unwrap_or_default();
    Err(format!(
        "{}: exited {} without a finding{said}",
        linter.name(),
        out.exit_code
            .map_or_else(|| "on a signal".to_string(), |c| c.to_string())
    ))
}

/// Current diagnostics (cached or fresh).
#[derive(Message)]
#[rtype(result = "Result<Arc<Report>, ActorFault>")]
pub struct GetDiagnostics;

/// The workspace changed: the next request runs the linters again.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Invalidate;

/// Wait for the next run that changes some file's diagnostics: the receiver gets
/// those files (absolute path, diagnostics now; empty when they cleared).
#[derive(Message)]
#[rtype(result = "Result<oneshot::Receiver<Changed>, ActorFault>")]
pub struct WatchWorkspace;

/// Watchers of workspace diagnostics waiting at once, at most.
pub const MAX_WATCHERS: usize = 64;

/// Settings of the actor.
#[derive(Debug, Clone)]
pub struct DiagnosticsConfig {
    /// Workspace root.
    pub root: PathBuf,
    /// Enabled linter names.
    pub enabled: Vec<crate::diagnostics::linters::Linter>,
    /// Per-linter timeout.
    pub timeout: Duration,
    /// How long a result stays fresh.
    pub cache_for: Duration,
    /// Re-run the linters when workspace files change.
    pub live: bool,
    /// Quiet time after the last change before a re-run.
    pub rerun_debounce: Duration,
    /// Live re-runs also after a change to a file that makes a linter execute code.
    pub live_after_code_change: bool,
}

/// Runs the workspace's linters (at most one run at a time) and caches the report.
pub struct DiagnosticsActor {
    config: DiagnosticsConfig,
    probes: Vec<Probe>,
    cache: Option<(Instant, Arc<Report>)>,
    /// Counts `Invalidate`s: a run that started before the latest one does not fill
    /// the cache.
    invalidations: u64,
    running: bool,
    /// The run under way, so that a newer change can cancel it.
    run: Option<SpawnHandle>,
    /// The quiet-time wait before a live re-run.
    rerun_timer: Option<SpawnHandle>,
    /// What the last complete run found (bounded), to tell what changed.
    last: Option<ByFile>,
    /// Runs cancelled by a newer change.
    cancelled: u64,
    /// Linters whose automatic runs wait for a `getDiagnostics` call: a file that
    /// makes them execute code changed (with the change that did it).
    paused: BTreeMap<Linter, String>,
    waiters: Vec<oneshot::Sender<Arc<Report>>>,
    watchers: Vec<oneshot::Sender<Changed>>,
    /// Told about every file whose diagnostics changed between two runs.
    automation: Option<Recipient<WorkspaceDiagnostics>>,
    activity: Addr<ActivityLog>,
    metrics: Arc<Metrics>,
}

impl DiagnosticsActor {
    /// Probes the linters for the workspace.
    pub fn new(
        config: DiagnosticsConfig,
        automation: Option<Recipient<WorkspaceDiagnostics>>,
        activity: Addr<ActivityLog>,
        metrics: Arc<Metrics>,
    ) -> Self {
        let probes = probe(&config.root, &config.enabled);
        for p in probes.iter().filter(|p| p.runs()) {
            tracing::info!(linter = p.linter.name(), program = %p.program.as_ref().map(|p| p.display().to_string()).unwrap_or_default(), "linter will provide diagnostics without an editor");
        }
        Self {
            config,
            probes,
            cache: None,
            invalidations: 0,
            running: false,
            run: None,
            rerun_timer: None,
            last: None,
            cancelled: 0,
            paused: BTreeMap::new(),
            waiters: Vec::new(),
            watchers: Vec::new(),
            automation,
            activity,
            metrics,
        }
    }

    fn fresh(&self) -> Option<Arc<Report>> {
        self.cache
            .as_ref()
            .filter(|(at, _)| at.elapsed() < self.config.cache_for)
            .map(|(_, r)| Arc::clone(r))
    }

    /// Runs the linters; `asked`: for a caller (paused linters run too, and are
    /// paused no more), not a live re-run.
    fn start_run(&mut self, ctx: &mut Context<Self>, asked: bool) {
        self.running = true;
        let invalidations = self.invalidations;
        let root = self.config.root.clone();
        let timeout = self.config.timeout;
        if asked {
            self.paused.clear();
        }
        let paused: Vec<LinterRun> = self
            .paused
            .iter()
            .map(|(linter, why)| LinterRun {
                name: linter.name(),
                ok: false,
                error: Some(format!(
                    "not re-run by itself since {why}, which makes it execute workspace code: \
                     the next getDiagnostics call runs it (diagnostics.live_after_code_change)"
                )),
                count: 0,
                duration_ms: 0,
            })
            .collect();
        let had_paused = !paused.is_empty();
        let jobs: Vec<_> = self
            .probes
            .iter()
            .filter(|p| p.runs() && !self.paused.contains_key(&p.linter))
            .filter_map(|p| Some((p.linter, p.program.clone()?)))
            .map(|(linter, program)| {
                let root = root.clone();
                async move {
                    let started = Instant::now();
                    let spec = RunSpec {
                        program: program.display().to_string(),
                        args: linter.args(),
                        cwd: root.clone(),
                        timeout,
                        max_output: MAX_LINTER_OUTPUT,
                        env: Vec::new(),
                        // Linters may run workspace code (build scripts, configs):
                        // the command sandbox, writes only in the workspace, no TCP.
                        sandbox: Some(exec::sandbox::Sandbox {
                            writable: vec![root.clone()],
                            network: false,
                        }),
                    };
                    let outcome = match exec::run(spec).await {
                        Ok(out) if out.timed_out => Err(format!(
                            "{}: timed out after {} ms",
                            linter.name(),
                            timeout.as_millis()
                        )),
                        Ok(out) => parse(linter, &root, &out.stdout, &out.stderr)
                            .map_err(|e| e.to_string())
                            .and_then(|found| failed_without_findings(linter, &out, found)),
                        Err(e) => Err(format!("{}: {e}", linter.name())),
                    };
                    (linter.name(), outcome, started.elapsed())
                }
            })
            .collect();
        let handle = ctx.spawn(futures_util::future::join_all(jobs).into_actor(self).map(
            move |results, act, ctx| {
                let mut report = Report {
                    linters: paused,
                    ..Report::default()
                };
                for (name, outcome, took) in results {
                    let duration_ms = took.as_millis() as u64;
                    match outcome {
                        Ok(found) => {
                            report.linters.push(LinterRun {
                                name,
                                ok: true,
                                error: None,
                                count: found.len(),
                                duration_ms,
                            });
                            for (path, d) in found {
                                let path = normalize_lexically(&path).unwrap_or(path);
                                report.files.entry(path).or_default().push(d);
                            }
                        }
                        Err(error) => {
                            tracing::warn!(linter = name, %error, "linter run failed");
                            report.linters.push(LinterRun {
                                name,
                                ok: false,
                                error: Some(error),
                                count: 0,
                                duration_ms,
                            });
                        }
                    }
                }
                tracing::debug!(
                    asked,
                    linters = ?report.linters.iter().map(|l| (l.name, l.ok)).collect::<Vec<_>>(),
                    "linters ran"
                );
                let report = Arc::new(report);
                act.running = false;
                act.run = None;
                if had_paused && !act.waiters.is_empty() {
                    // A caller asked meanwhile: this live run left paused linters out,
                    // so the caller gets a run of its own with them.
                    act.compare(&report);
                    act.start_run(ctx, true);
                    return;
                }
                if act.invalidations == invalidations {
                    act.cache = Some((Instant::now(), Arc::clone(&report)));
                }
                for waiter in act.waiters.drain(..) {
                    let _ = waiter.send(Arc::clone(&report));
                }
                act.compare(&report);
            },
        ));
        self.run = Some(handle);
    }

    /// Tells Automation and the watchers which files' diagnostics changed since the
    /// last complete run.
    fn compare(&mut self, report: &Report) {
        let complete = report.linters.iter().all(|l| l.ok);
        let now = bounded(&report.files);
        if report.files.len() > now.len() {
            tracing::warn!(
                files = report.files.len(),
                tracked = now.len(),
                "more files with diagnostics than are compared between runs"
            );
        }
        let changes = changed(self.last.as_ref().unwrap_or(&ByFile::new()), &now, complete);
        if complete {
            self.last = Some(now);
        } else {
            // Keep what the failed linters' files were; take what the others said.
            let mut merged = self.last.take().unwrap_or_default();
            merged.extend(now);
            self.last = Some(bounded(&merged));
        }
        if changes.is_empty() {
            return;
        }
        tracing::debug!(files = changes.len(), "workspace diagnostics changed");
        if let Some(automation) = &self.automation {
            for (file, diagnostics) in &changes {
                automation.do_send(WorkspaceDiagnostics {
                    file: file.clone(),
                    diagnostics: diagnostics.clone(),
                });
            }
        }
        for watcher in self.watchers.drain(..) {
            let _ = watcher.send(changes.clone());
        }
    }

    /// Pauses the automatic runs of each linter that `msg` gives code to execute.
    fn pause_for_code(&mut self, running: &[Linter], msg: &WorkspaceChanged) {
        for change in msg.changes.iter() {
            if matches!(change.kind, ChangeKind::Removed) {
                continue;
            }
            for &linter in running.iter().filter(|l| l.executes(&change.path)) {
                if self.paused.contains_key(&linter) {
                    continue;
                }
                tracing::warn!(
                    linter = linter.name(),
                    file = %change.path,
                    "a file that makes this linter execute workspace code changed: its automatic runs wait for a getDiagnostics call (diagnostics.live_after_code_change = true runs it by itself)"
                );
                self.paused.insert(linter, change.path.clone());
            }
        }
    }

    /// A file a linter looks at changed: cancel a run under way and run again after
    /// the quiet time.
    fn schedule_rerun(&mut self, ctx: &mut Context<Self>) {
        if let Some(run) = self.run.take() {
            // Dropping the run's future kills its linter processes.
            ctx.cancel_future(run);
            self.running = false;
            self.cancelled += 1;
            tracing::debug!("linter run superseded by a newer change");
        }
        if let Some(timer) = self.rerun_timer.take() {
            ctx.cancel_future(timer);
        }
        self.rerun_timer = Some(ctx.run_later(self.config.rerun_debounce, |act, ctx| {
            act.rerun_timer = None;
            if !act.running {
                act.start_run(ctx, false);
            }
        }));
    }
}

impl Actor for DiagnosticsActor {
    type Context = Context<Self>;
}

impl Supervised for DiagnosticsActor {
    fn restarting(&mut self, _: &mut Context<Self>) {
        // The spawned run was dropped with the old context; its waiters got errors.
        self.running = false;
        self.run = None;
        self.rerun_timer = None;
        self.waiters.clear();
        self.watchers.clear();
        restarted(
            NAME,
            &self.metrics,
            &self.activity.clone().recipient(),
            "the next request runs the linters again",
        );
    }
}

impl Handler<GetDiagnostics> for DiagnosticsActor {
    type Result = ResponseFuture<Result<Arc<Report>, ActorFault>>;
    fn handle(&mut self, _: GetDiagnostics, ctx: &mut Context<Self>) -> Self::Result {
        let waiting = guard(NAME, self, ctx, |act, ctx| {
            if let Some(report) = act.fresh().filter(|_| act.paused.is_empty()) {
                return Ok(report);
            }
            let (tx, rx) = oneshot::channel();
            act.waiters.push(tx);
            if !act.running {
                act.start_run(ctx, true);
            }
            Err(rx)
        });
        Box::pin(async move {
            match waiting? {
                Ok(report) => Ok(report),
                Err(rx) => rx.await.map_err(|_| ActorFault::Unavailable {
                    actor: NAME,
                    reason: "it restarted while the linters ran".into(),
                }),
            }
        })
    }
}

impl Handler<Invalidate> for DiagnosticsActor {
    type Result = ();
    fn handle(&mut self, _: Invalidate, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            act.cache = None;
            act.invalidations += 1;
        });
    }
}

impl Handler<WorkspaceChanged> for DiagnosticsActor {
    type Result = ();
    fn handle(&mut self, msg: WorkspaceChanged, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| {
            let running: Vec<_> = act
                .probes
                .iter()
                .filter(|p| p.runs())
                .map(|p| p.linter)
                .collect();
            let relevant = msg.overflowed > 0
                || msg.changes.iter().any(|c| {
                    let from = match &c.kind {
                        ChangeKind::Renamed { from } => Some(from.as_str()),
                        _ => None,
                    };
                    running
                        .iter()
                        .any(|l| l.watches(&c.path) || from.is_some_and(|f| l.watches(f)))
                });
            if !act.config.live_after_code_change {
                act.pause_for_code(&running, &msg);
            }
            if !relevant {
                return;
            }
            act.cache = None;
            act.invalidations += 1;
            if act.config.live {
                act.schedule_rerun(ctx);
            }
        });
    }
}

impl Handler<WatchWorkspace> for DiagnosticsActor {
    type Result = Result<oneshot::Receiver<Changed>, ActorFault>;
    fn handle(&mut self, _: WatchWorkspace, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            act.watchers.retain(|w| !w.is_closed());
            if act.watchers.len() >= MAX_WATCHERS {
                return Err(ActorFault::Unavailable {
                    actor: NAME,
                    reason: format!(
                        "{MAX_WATCHERS} callers already watch the workspace's diagnostics"
                    ),
                });
            }
            let (tx, rx) = oneshot::channel();
            act.watchers.push(tx);
            Ok(rx)
        })?
    }
}

#[cfg(feature = "fault-injection")]
crate::actors::fault::fault_handlers!(DiagnosticsActor, NAME);
