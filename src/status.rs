//! The bridge status shown by `/status`, `getBridgeStatus` and `ide-bridge status`.

use serde::Serialize;

use crate::actors::activity_log::{Entry, GetTotals, Query, Totals};
use crate::actors::registry::{RegistrySnapshot, Snapshot};
use crate::actors::supervise::ActorFault;
use crate::actors::{activity_log, registry};
use crate::services::Services;

/// Timeline entries shown in the status.
pub const RECENT_ENTRIES: usize = 50;

/// The status document.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BridgeStatus {
    /// Bridge version.
    pub version: &'static str,
    /// Process id.
    pub pid: u32,
    /// Listening port.
    pub port: u16,
    /// Workspace root.
    pub workspace: String,
    /// `ideName` from the lock file.
    pub ide_name: String,
    /// Seconds since start.
    pub uptime_seconds: u64,
    /// Unix milliseconds at start.
    pub started_at: u64,
    /// Sessions and connection counters.
    #[serde(flatten)]
    pub registry: RegistrySnapshot,
    /// Editor extension state.
    pub extension: crate::actors::extension::ExtensionStatus,
    /// Automation policy and counters (absent without a policy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub automation: Option<crate::actors::automation::AutomationStatus>,
    /// How the workspace is watched and what the watcher reported.
    pub watch: crate::actors::watcher::WatchStatus,
    /// The browser page: signed-in browsers, pages watching, what waits there.
    pub page: crate::actors::dashboard::PageStatus,
    /// File claims held now, and writes they refused.
    pub claims: serde_json::Value,
    /// What agents changed that waits for the person (hunks), and changes dropped.
    pub changes: crate::actors::changes::ChangesStatus,
    /// Claude Code hooks: answered and ignored.
    pub hooks: crate::metrics::HookCounts,
    /// Claude tasks (`claude -p`) the bridge runs: how many in each state, and the
    /// latest few.
    pub tasks: TasksStatus,
    /// A bridge started on demand stops by itself when unused (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_stop: Option<IdleStop>,
    /// Tool-call totals.
    pub activity: Totals,
    /// Requests refused by the rate limit.
    pub rate_limit_rejections: u64,
    /// Connections dropped because their peer did not read and the outbound queue
    /// passed `server.max_outbound_bytes`.
    pub outbound_overflow_drops: u64,
    /// The bridge's own language servers: which are installed, which run, their
    /// memory, restarts and breakers.
    pub language_servers: crate::actors::language_servers::LspStatus,
    /// Whether commands run under Landlock.
    pub command_sandbox: crate::exec::sandbox::SandboxStatus,
    /// The last timeline entries, oldest first.
    pub recent_activity: Vec<Entry>,
}

/// Tasks shown in the status, newest first.
pub const RECENT_TASKS: usize = 5;

/// The orchestrator's tasks, counted.
#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TasksStatus {
    pub running: usize,
    pub pending: usize,
    pub done: usize,
    pub failed: usize,
    pub cancelled: usize,
    /// Alive when the bridge last stopped.
    pub interrupted: usize,
    /// Tasks running at once at most (`orchestrator.max_concurrent`).
    pub max_concurrent: usize,
    /// The latest tasks, newest first.
    pub recent: Vec<TaskLine>,
}

/// One task in the status.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskLine {
    pub id: String,
    /// Its wire name (`running`, `done`, …).
    pub status: String,
    /// Who started it: an agent session, or automation's hook.
    pub origin: String,
    /// The start of its prompt.
    pub prompt: String,
    /// Unix ms.
    pub created_at: u64,
}

impl TasksStatus {
    fn of(tasks: &[crate::orchestrator::Task], max_concurrent: usize) -> Self {
        use crate::orchestrator::TaskStatus as S;
        let mut s = TasksStatus {
            max_concurrent,
            ..TasksStatus::default()
        };
        for t in tasks {
            let count = match t.status {
                S::Running => &mut s.running,
                S::Pending => &mut s.pending,
                S::Done => &mut s.done,
                S::Error => &mut s.failed,
                S::Cancelled => &mut s.cancelled,
                S::Interrupted => &mut s.interrupted,
            };
            *count += 1;
        }
        let mut newest: Vec<&crate::orchestrator::Task> = tasks.iter().collect();
        newest.sort_by_key(|t| std::cmp::Reverse(t.created_at));
        s.recent = newest
            .into_iter()
            .take(RECENT_TASKS)
            .map(|t| TaskLine {
                id: t.id.to_string(),
                status: t.status.to_string(),
                origin: match t.session() {
                    Some(session) => format!("session {session}"),
                    None => "automation".into(),
                },
                prompt: crate::hooks::input::clip(t.prompt.lines().next().unwrap_or(""), 80),
                created_at: t.created_at,
            })
            .collect();
        s
    }
}

/// When an on-demand bridge stops by itself.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IdleStop {
    /// It stops after this long unused.
    pub after_seconds: u64,
    /// Unused for this long now.
    pub idle_seconds: u64,
}

/// Gathers the status from the actors.
pub async fn collect(services: &Services) -> Result<BridgeStatus, ActorFault> {
    let registry = services
        .registry
        .send(Snapshot)
        .await
        .map_err(|e| ActorFault::mailbox(registry::NAME, e))??;
    let activity = services
        .activity
        .send(GetTotals)
        .await
        .map_err(|e| ActorFault::mailbox(activity_log::NAME, e))??;
    let recent_activity = services
        .activity
        .send(Query {
            include_lifecycle: true,
            limit: RECENT_ENTRIES,
            ..Query::default()
        })
        .await
        .map_err(|e| ActorFault::mailbox(activity_log::NAME, e))??;
    let extension = services
        .extension
        .send(crate::actors::extension::GetStatus)
        .await
        .map_err(|e| ActorFault::mailbox(crate::actors::extension::NAME, e))?;
    let automation = match &services.automation {
        Some(addr) => Some(
            addr.send(crate::actors::automation::GetAutomationStatus)
                .await
                .map_err(|e| ActorFault::mailbox(crate::actors::automation::NAME, e))?,
        ),
        None => None,
    };
    let watch = services
        .watcher
        .send(crate::actors::watcher::GetWatchStatus)
        .await
        .map_err(|e| ActorFault::mailbox(crate::actors::watcher::NAME, e))?;
    let page = services
        .dashboard
        .send(crate::actors::dashboard::GetPageStatus)
        .await
        .map_err(|e| ActorFault::mailbox(crate::actors::dashboard::NAME, e))?;
    let claims = services
        .claims
        .send(crate::actors::claims::GetClaimsStatus)
        .await
        .map_err(|e| ActorFault::mailbox(crate::actors::claims::NAME, e))??;
    let changes = services
        .changes
        .send(crate::actors::changes::GetChangesStatus)
        .await
        .map_err(|e| ActorFault::mailbox(crate::actors::changes::NAME, e))??;
    let language_servers = services
        .language_servers
        .send(crate::actors::language_servers::GetStatus)
        .await
        .map_err(|e| ActorFault::mailbox(crate::actors::language_servers::NAME, e))?;
    let tasks = services
        .orchestrator
        .send(crate::actors::orchestrator::ListTasks { session: None })
        .await
        .map_err(|e| ActorFault::mailbox(crate::actors::orchestrator::NAME, e))?;
    let tasks = TasksStatus::of(&tasks, services.settings.orchestrator.max_concurrent);
    Ok(BridgeStatus {
        tasks,
        language_servers,
        claims,
        changes,
        hooks: services.metrics.hook_counts(),
        idle_stop: (services.settings.server.on_demand
            && !services.settings.server.idle_stop.is_zero())
        .then(|| IdleStop {
            after_seconds: services.settings.server.idle_stop.as_secs(),
            idle_seconds: u64::try_from(services.metrics.idle_seconds.get()).unwrap_or(0),
        }),
        automation,
        watch,
        page,
        version: env!("CARGO_PKG_VERSION"),
        pid: std::process::id(),
        port: services.port,
        workspace: services.workspace.root_text().to_owned(),
        ide_name: services.settings.ide_name.clone(),
        uptime_seconds: services.started.elapsed().as_secs(),
        started_at: services.started_at_ms,
        registry,
        extension,
        activity,
        rate_limit_rejections: services.metrics.rate_limit_rejections.get(),
        outbound_overflow_drops: services.metrics.outbound_overflow_drops.get(),
        command_sandbox: crate::exec::sandbox::status(services.settings.commands.run_unsandboxed),
        recent_activity,
    })
}
