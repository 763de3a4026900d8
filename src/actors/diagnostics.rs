//! Diagnostics actor: without an editor, diagnostics come from command-line linters.
//! It probes which linters exist and apply at start-up, runs the applicable ones
//! concurrently (callers arriving during a run share it), caches the result for
//! `diagnostics.cache_ms`, and forgets it when the bridge writes a file.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde::Serialize;
use tokio::sync::oneshot;

use super::activity_log::ActivityLog;
use super::messages::automation::WorkspaceDiagnostics;
use super::messages::watch::WorkspaceChanged;
use super::supervise::{guard, restarted, ActorFault};
use crate::diagnostics::linters::{probe, Probe};
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

/// Current diagnostics (cached or fresh).
#[derive(Message)]
#[rtype(result = "Result<Arc<Report>, ActorFault>")]
pub struct GetDiagnostics;

/// The workspace changed: the next request runs the linters again.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Invalidate;

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
    waiters: Vec<oneshot::Sender<Arc<Report>>>,
    /// Told about every file whose diagnostics changed between two runs.
    #[allow(dead_code)]
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
            waiters: Vec::new(),
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

    fn start_run(&mut self, ctx: &mut Context<Self>) {
        self.running = true;
        let invalidations = self.invalidations;
        let root = self.config.root.clone();
        let timeout = self.config.timeout;
        let jobs: Vec<_> = self
            .probes
            .iter()
            .filter(|p| p.runs())
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
                        sandbox: None,
                    };
                    let outcome = match exec::run(spec).await {
                        Ok(out) if out.timed_out => Err(format!(
                            "{}: timed out after {} ms",
                            linter.name(),
                            timeout.as_millis()
                        )),
                        Ok(out) => parse(linter, &root, &out.stdout, &out.stderr)
                            .map_err(|e| e.to_string()),
                        Err(e) => Err(format!("{}: {e}", linter.name())),
                    };
                    (linter.name(), outcome, started.elapsed())
                }
            })
            .collect();
        ctx.spawn(futures_util::future::join_all(jobs).into_actor(self).map(
            move |results, act, _| {
                let mut report = Report::default();
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
                let report = Arc::new(report);
                act.running = false;
                if act.invalidations == invalidations {
                    act.cache = Some((Instant::now(), Arc::clone(&report)));
                }
                for waiter in act.waiters.drain(..) {
                    let _ = waiter.send(Arc::clone(&report));
                }
            },
        ));
    }
}

impl Actor for DiagnosticsActor {
    type Context = Context<Self>;
}

impl Supervised for DiagnosticsActor {
    fn restarting(&mut self, _: &mut Context<Self>) {
        // The spawned run was dropped with the old context; its waiters got errors.
        self.running = false;
        self.waiters.clear();
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
            if let Some(report) = act.fresh() {
                return Ok(report);
            }
            let (tx, rx) = oneshot::channel();
            act.waiters.push(tx);
            if !act.running {
                act.start_run(ctx);
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
    fn handle(&mut self, _: WorkspaceChanged, ctx: &mut Context<Self>) {
        // SKELETON (issue 18): live re-runs are being written.
        let _ = guard(NAME, self, ctx, |act, _| {
            act.cache = None;
            act.invalidations += 1;
        });
    }
}

#[cfg(feature = "fault-injection")]
crate::actors::fault::fault_handlers!(DiagnosticsActor, NAME);
