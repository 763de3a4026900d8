//! Start-up and shutdown: bind, lock file, actors, HTTP server, signals.

use crate::actors::changes::{ChangesActor, ChangesLinks, FlushChanges};
use crate::changes::Limits as ChangeLimits;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use actix::Actor;
use actix_web::{web, App, HttpServer};
use tokio::signal::unix::{signal, SignalKind};

use crate::actors::activity_log::{
    now_ms, ActivityLog, FlushNow, LifecycleEvent, PersistConfig, RecordLifecycle,
};
use crate::actors::automation::{Automation, AutomationLinks, OrchestratorLink};
use crate::actors::checkpoint::{CheckpointActor, SaveNow};
use crate::actors::claims::{ClaimsActor, ClaimsLink, ClaimsLinks};
use crate::actors::dashboard::logins::LoginLimits;
use crate::actors::dashboard::{Dashboard, DashboardConfig, FlushSessions, IssueLoginCode};
use crate::actors::diagnostics::{DiagnosticsActor, DiagnosticsConfig};
use crate::actors::extension::{ExtensionClient, ExtensionConfig, ExtensionLinks};
use crate::actors::http_transport::HttpSessions;
use crate::actors::language_servers::{LanguageServers, PoolConfig};
use crate::actors::messages::watch::WorkspaceChanged;
use crate::actors::orchestrator::{Limits, Orchestrator, SaveTasks};
use crate::actors::registry::{CloseAll, Restore, SessionRegistry};
use crate::actors::session::{Session, SessionHandle, SessionId, SessionLinks};
use crate::actors::supervise::Reserved;
use crate::actors::watcher::Watcher;
use crate::actors::writer::WorkspaceWriter;
use crate::config::Settings;
use crate::coordination::awareness::Awareness;
use crate::lockfile::{self, LockFile};
use crate::metrics::Metrics;
use crate::orchestrator::driver::DriverConfig;
use crate::orchestrator::permissions::Policy;
use crate::persist::checkpoint::{self, SessionState};
use crate::prompts::PromptRegistry;
use crate::services::Services;
use crate::state::{files as state_files, TokenSource, WorkspaceState};
use crate::tools::{catalog, CatalogError};
use crate::workspace::Workspace;

/// Why the bridge could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The workspace is missing or not a directory.
    #[error("workspace {path}: {source}")]
    Workspace {
        /// Path given.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The port could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// Address.
        addr: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The lock file could not be written.
    #[error("cannot write the lock file in {dir}: {source}")]
    LockFile {
        /// Directory.
        dir: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The workspace's state directory is unusable, or another bridge serves it.
    #[error(transparent)]
    State(#[from] crate::state::StateError),
    /// The automation policy file is missing or invalid.
    #[error(transparent)]
    Policy(#[from] crate::automation::policy::PolicyError),
    /// A tool schema is broken (a bug).
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// The HTTP server failed.
    #[error("server error: {0}")]
    Server(#[from] std::io::Error),
}

impl AppError {
    /// The configuration is at fault (a value, a policy, a name in `tools.expose`): the
    /// command line exits with 2, as for a configuration that does not load.
    pub fn is_configuration(&self) -> bool {
        matches!(
            self,
            AppError::Policy(_) | AppError::Catalog(CatalogError::UnknownExpose { .. })
        )
    }

    /// The setting at fault, when one is: its value's origin is said with the error
    /// ([`crate::config::Overrides::origin_of`]).
    pub fn setting(&self) -> Option<&'static str> {
        match self {
            AppError::Catalog(CatalogError::UnknownExpose { key, .. }) => Some(key),
            _ => None,
        }
    }
}

/// What start-up checks before it writes anything (`ide-bridge config` checks the same):
/// the workspace, the tool catalogue with `tools.expose`, the automation policy.
pub struct Checked {
    workspace: Workspace,
    tools: crate::tools::ToolRegistry,
    policy: Option<(PathBuf, crate::automation::policy::Policy)>,
}

impl Checked {
    /// What loading the automation policy warned of, each naming the policy file.
    pub fn policy_warnings(&self) -> Vec<String> {
        self.policy
            .as_ref()
            .map_or_else(Vec::new, |(path, policy)| {
                policy
                    .warnings
                    .iter()
                    .map(|w| format!("automation policy {}: {w}", path.display()))
                    .collect()
            })
    }
}

/// Checks `settings` the way start-up does, touching no file.
pub fn preflight(settings: &Settings) -> Result<Checked, AppError> {
    let root = match &settings.workspace {
        Some(path) => path.clone(),
        None => std::env::current_dir().map_err(|source| AppError::Workspace {
            path: PathBuf::from("."),
            source,
        })?,
    };
    let workspace = Workspace::open(&root).map_err(|source| AppError::Workspace {
        path: root.clone(),
        source,
    })?;
    let mut tools = catalog::build()?;
    let expose = &settings.tools.expose;
    tools.expose(&expose.include, &expose.exclude)?;
    let policy = load_policy(settings, &workspace)?;
    Ok(Checked {
        workspace,
        tools,
        policy,
    })
}

/// What the first worker needs to build [`Services`].
struct Seed {
    activity_path: Option<PathBuf>,
    tasks_path: Option<PathBuf>,
    /// What automation keeps across restarts.
    automation_state_path: Option<PathBuf>,
    checkpoint_path: Option<PathBuf>,
    page_sessions_path: Option<PathBuf>,
    reviews_path: Option<PathBuf>,
    claims_path: Option<PathBuf>,
    changes_path: Option<PathBuf>,
    automation: Option<(PathBuf, crate::automation::policy::Policy)>,
    restore: Vec<SessionState>,
    settings: Settings,
    workspace: Workspace,
    tools: crate::tools::ToolRegistry,
    prompts: PromptRegistry,
    metrics: Arc<Metrics>,
    auth_token: String,
    port: u16,
}

/// Every singleton's address, reserved before any actor is built (phase one of
/// [`Seed::start`]), so each is built knowing the addresses it sends to.
struct Reservations {
    activity: Reserved<ActivityLog>,
    writer: Reserved<WorkspaceWriter>,
    dashboard: Reserved<Dashboard>,
    registry: Reserved<SessionRegistry>,
    extension: Reserved<ExtensionClient>,
    orchestrator: Reserved<Orchestrator>,
    automation: Option<Reserved<Automation>>,
    claims: Reserved<ClaimsActor>,
    changes: Reserved<ChangesActor>,
    diagnostics: Reserved<DiagnosticsActor>,
    watcher: Reserved<Watcher>,
    checkpoint: Option<Reserved<CheckpointActor>>,
    http_sessions: Reserved<HttpSessions>,
    language_servers: Reserved<LanguageServers>,
}

impl Reservations {
    fn new(automation: bool, checkpoint: bool) -> Self {
        Self {
            activity: Reserved::new(),
            writer: Reserved::new(),
            dashboard: Reserved::new(),
            registry: Reserved::new(),
            extension: Reserved::new(),
            orchestrator: Reserved::new(),
            automation: automation.then(Reserved::new),
            claims: Reserved::new(),
            changes: Reserved::new(),
            diagnostics: Reserved::new(),
            watcher: Reserved::new(),
            checkpoint: checkpoint.then(Reserved::new),
            http_sessions: Reserved::new(),
            language_servers: Reserved::new(),
        }
    }

    /// Automation's recipient of `M`, when a policy runs.
    fn automation<M>(&self) -> Option<actix::Recipient<M>>
    where
        M: actix::Message + Send + 'static,
        M::Result: Send,
        Automation: actix::Handler<M>,
    {
        self.automation.as_ref().map(|a| a.addr().recipient())
    }
}

impl Seed {
    /// Starts the supervised singletons on the current arbiter and builds the services,
    /// in three phases: every address reserved; every actor built (each by its own
    /// method below, from the settings and the addresses it sends to) and started;
    /// the services gathered and the checkpointed sessions restored.
    fn start(mut self) -> Arc<Services> {
        let r = Reservations::new(self.automation.is_some(), self.checkpoint_path.is_some());
        let activity = r.activity.start(self.activity_log());
        let writer = {
            let (ws, a, m) = (
                self.workspace.clone(),
                r.activity.addr(),
                Arc::clone(&self.metrics),
            );
            // Blocking file I/O runs on a thread of its own, never on the worker.
            r.writer
                .start_on_own_thread(move || WorkspaceWriter::new(ws, a, m))
        };
        let dashboard = r.dashboard.start(self.dashboard(&r));
        let registry = r.registry.start(self.registry(&r));
        let (extension, editor) = {
            let client = self.extension(&r);
            let presence = client.presence();
            (r.extension.start(client), presence)
        };
        let orchestrator = r.orchestrator.start(self.orchestrator(&r));
        let automation = match (&r.automation, self.automation.take()) {
            (Some(slot), Some((path, policy))) => {
                Some(slot.start(self.automation_actor(&r, path, policy)))
            }
            _ => None,
        };
        let claims = r.claims.start(self.claims(&r));
        let changes = {
            let build = self.changes(&r);
            // It reads the files agents write: a thread of its own.
            r.changes.start_on_own_thread(build)
        };
        let diagnostics = r.diagnostics.start(self.diagnostics(&r));
        let watcher = {
            let build = self.watcher(&r);
            // A flood of kernel events costs the watcher's own thread, never a worker's.
            r.watcher.start_on_own_thread(build)
        };
        let checkpoint = r
            .checkpoint
            .as_ref()
            .zip(self.checkpoint(&r))
            .map(|(slot, actor)| slot.start(actor));
        let http_sessions = r.http_sessions.start(HttpSessions::default());
        let language_servers = r.language_servers.start(self.language_servers(&r));
        let restore = std::mem::take(&mut self.restore);
        let services = Arc::new(Services {
            language_servers,
            claims,
            changes,
            http_sessions,
            dashboard,
            orchestrator,
            automation,
            extension,
            editor,
            checkpoint,
            writer,
            diagnostics,
            watcher,
            settings: self.settings,
            workspace: self.workspace,
            tools: self.tools,
            prompts: self.prompts,
            registry,
            activity,
            metrics: self.metrics,
            auth_token: self.auth_token,
            port: self.port,
            started: Instant::now(),
            started_at_ms: now_ms(),
        });
        restore_sessions(&services, restore);
        services
    }

    fn activity_log(&self) -> ActivityLog {
        let a = &self.settings.activity;
        let log = ActivityLog::new(a.max_entries, Arc::clone(&self.metrics));
        match &self.activity_path {
            Some(path) => log.persistent(
                PersistConfig {
                    path: path.clone(),
                    max_file_bytes: a.max_file_bytes,
                    flush_every: a.flush_every,
                },
                a.max_stream_subscribers,
            ),
            None => log,
        }
    }

    fn dashboard(&self, to: &Reservations) -> Dashboard {
        let u = &self.settings.ui;
        let config = DashboardConfig {
            logins: LoginLimits {
                code_ttl: u.login_code_ttl,
                idle_ttl: u.session_idle,
                max_sessions: u.max_browser_sessions,
            },
            diff_wait: u.diff_wait,
            max_pending_diffs: u.max_pending_diffs,
            max_reviews: u.max_reviews,
            max_streams: u.max_streams,
            sessions_path: self.page_sessions_path.clone(),
            reviews_path: self.reviews_path.clone(),
        };
        let activity = to.activity.addr().recipient();
        Dashboard::new(config, activity, Arc::clone(&self.metrics))
    }

    fn registry(&self, to: &Reservations) -> SessionRegistry {
        let s = &self.settings;
        SessionRegistry::new(
            s.sessions.max_sessions,
            s.server.min_connect_interval,
            s.server.max_connect_wait,
            to.extension.addr().recipient(),
            to.activity.addr(),
            Arc::clone(&self.metrics),
        )
        .with_list_changed_debounce(s.tools.list_changed_debounce)
        .recording_changes(to.changes.addr().recipient())
        .reporting_to(to.automation())
        .checkpointing(to.checkpoint.as_ref().map(|c| c.addr().recipient()))
        .keeping_claims(ClaimsLink {
            gone: to.claims.addr().recipient(),
            moved: to.claims.addr().recipient(),
        })
    }

    fn extension(&self, to: &Reservations) -> ExtensionClient {
        let config = ExtensionConfig {
            request_timeout: self.settings.editor.request_timeout,
        };
        let links = ExtensionLinks {
            registry: SessionRegistry::handle(&to.registry.addr()),
            automation: to.automation(),
            activity: to.activity.addr(),
        };
        ExtensionClient::new(config, links, Arc::clone(&self.metrics))
    }

    fn orchestrator(&self, to: &Reservations) -> Orchestrator {
        let o = &self.settings.orchestrator;
        let limits = Limits {
            max_concurrent: o.max_concurrent,
            max_queue: o.max_queue,
            max_history: o.max_history,
        };
        let driver = DriverConfig {
            program: o.claude_binary.clone(),
            workspace: self.workspace.root().to_path_buf(),
            policy: Arc::new(Policy::compile(&o.permissions).unwrap_or_default()),
            approver: self
                .settings
                .ui
                .enabled
                .then(|| to.dashboard.addr().recipient()),
            approval_timeout: o.approval_timeout,
        };
        Orchestrator::new(
            limits,
            driver,
            self.tasks_path.clone(),
            to.extension.addr().recipient(),
            to.activity.addr(),
            Arc::clone(&self.metrics),
        )
        .reporting_to(to.automation())
    }

    fn automation_actor(
        &self,
        to: &Reservations,
        path: PathBuf,
        policy: crate::automation::policy::Policy,
    ) -> Automation {
        let links = AutomationLinks {
            orchestrator: OrchestratorLink {
                enqueue: to.orchestrator.addr().recipient(),
                follow: to.orchestrator.addr().recipient(),
            },
            agents: to.registry.addr().recipient(),
            editor: to.extension.addr().recipient(),
            activity: to.activity.addr(),
        };
        let settings = Arc::new(self.settings.clone());
        let ws = self.workspace.clone();
        Automation::new(policy, path, ws, settings, links, Arc::clone(&self.metrics))
            .remembering(self.automation_state_path.clone())
    }

    fn claims(&self, to: &Reservations) -> ClaimsActor {
        let links = ClaimsLinks {
            editor: to.extension.addr().recipient(),
            activity: to.activity.addr().recipient(),
            automation: to.automation(),
            holders: to.registry.addr().recipient(),
        };
        let root = self.workspace.root().to_path_buf();
        let path = self.claims_path.clone();
        ClaimsActor::new(root, path, links, Arc::clone(&self.metrics))
    }

    /// What builds the ChangesActor on its own thread.
    fn changes(&self, to: &Reservations) -> impl FnOnce() -> ChangesActor + Send + 'static {
        let links = ChangesLinks {
            writer: to.writer.addr(),
            editor: to.extension.addr().recipient(),
            page: to.dashboard.addr().recipient(),
            activity: to.activity.addr().recipient(),
        };
        let (ws, path, m) = (
            self.workspace.clone(),
            self.changes_path.clone(),
            Arc::clone(&self.metrics),
        );
        move || ChangesActor::new(ws, path, ChangeLimits::default(), links, m)
    }

    fn diagnostics(&self, to: &Reservations) -> DiagnosticsActor {
        let d = &self.settings.diagnostics;
        let config = DiagnosticsConfig {
            root: self.workspace.root().to_path_buf(),
            enabled: d.linters.clone(),
            timeout: d.timeout,
            cache_for: d.cache_for,
            live: d.live,
            rerun_debounce: d.rerun_debounce,
            live_after_code_change: d.live_after_code_change,
        };
        let (a, m) = (to.activity.addr(), Arc::clone(&self.metrics));
        DiagnosticsActor::new(config, to.automation(), a, m)
    }

    /// What builds the Watcher on its own thread: every actor that reacts to changes on
    /// disk subscribes here.
    fn watcher(&self, to: &Reservations) -> impl FnOnce() -> Watcher + Send + 'static {
        let mut subscribers: Vec<actix::Recipient<WorkspaceChanged>> =
            vec![to.diagnostics.addr().recipient()];
        subscribers.extend(to.automation());
        subscribers.push(to.dashboard.addr().recipient());
        subscribers.push(to.registry.addr().recipient());
        subscribers.push(to.language_servers.addr().recipient());
        let (settings, ws) = (self.settings.watch.clone(), self.workspace.clone());
        let (a, m) = (to.activity.addr(), Arc::clone(&self.metrics));
        move || Watcher::new(settings, ws, subscribers, a, m)
    }

    fn language_servers(&self, to: &Reservations) -> LanguageServers {
        let l = &self.settings.lsp;
        let config = PoolConfig {
            root: self.workspace.dir().clone(),
            servers: crate::lsp::servers::effective(&l.servers),
            request_timeout: l.request_timeout,
            start_timeout: l.start_timeout,
            idle_stop: l.idle_stop,
            max_open_documents: l.max_open_documents,
            max_memory_kib: l.max_memory_mb.saturating_mul(1024),
        };
        let activity = to.activity.addr().recipient();
        LanguageServers::new(config, activity, Arc::clone(&self.metrics))
    }

    fn checkpoint(&self, to: &Reservations) -> Option<CheckpointActor> {
        let path = self.checkpoint_path.clone()?;
        let (w, port) = (self.workspace.root_text().to_owned(), self.port);
        let interval = self.settings.checkpoint.interval;
        let (r, a, m) = (
            to.registry.addr().recipient(),
            to.activity.addr(),
            Arc::clone(&self.metrics),
        );
        Some(CheckpointActor::new(path, w, port, interval, r, a, m))
    }
}

/// The automation policy, when one is configured; it must load for the bridge to start.
fn load_policy(
    settings: &Settings,
    workspace: &Workspace,
) -> Result<Option<(PathBuf, crate::automation::policy::Policy)>, AppError> {
    if settings.automation.policy.trim().is_empty() {
        return Ok(None);
    }
    let path = workspace.root().join(&settings.automation.policy);
    let policy = crate::automation::policy::Policy::load_checked(
        &path,
        &settings.command_policy(),
        workspace,
    )?;
    for w in &policy.warnings {
        tracing::warn!(policy = %path.display(), "{w}");
    }
    let hooks: Vec<&str> = policy.hooks.iter().map(|h| h.name).collect();
    tracing::info!(policy = %path.display(), ?hooks, "automation policy loaded");
    Ok(Some((path, policy)))
}

/// Starts restored sessions (in their grace period) and hands them to the registry.
fn restore_sessions(services: &Arc<Services>, states: Vec<SessionState>) {
    let mut restored = Vec::new();
    for state in states {
        let id = SessionId::from(state.session_id.as_str());
        if !id.is_well_formed() {
            continue;
        }
        if !state.client_may_return() {
            tracing::info!(session = %state.session_id, pid = ?state.client_pid(), "not restoring a session: its client process is gone");
            continue;
        }
        // Its grace period goes on from when its agent left, not from this start.
        let grace = services.settings.grace_period();
        let gone_for = Duration::from_millis(
            state
                .disconnected_at
                .map_or(0, |at| now_ms().saturating_sub(at)),
        );
        let Some(grace_left) = grace.checked_sub(gone_for).filter(|d| !d.is_zero()) else {
            tracing::info!(session = %state.session_id, gone_ms = gone_for.as_millis() as u64, "not restoring a session: its grace period ran out while the bridge was down");
            continue;
        };
        let files: Vec<PathBuf> = state
            .opened_files
            .iter()
            .filter_map(|f| services.workspace.resolve(f).ok())
            .collect();
        let session = Session::restored(
            id.clone(),
            files,
            Awareness::restore(state.awareness.clone()),
            state.client_pid(),
            state.client.clone(),
            state.ended_calls.clone(),
            state.created_at.clone(),
            grace_left,
            Arc::clone(services),
            SessionLinks::of(services),
        )
        .start();
        services.activity.do_send(RecordLifecycle {
            event: LifecycleEvent::SessionRestored,
            session_id: Some(id),
            detail: format!("{} opened files", state.opened_files.len()),
        });
        restored.push((SessionHandle::from(session), state));
    }
    if !restored.is_empty() {
        services.registry.do_send(Restore(restored));
    }
}

/// Binds the configured port; with port 0, the previous run's port when it is free, so
/// that the lock file (and the agents that remember it) keep their address. When the
/// address does not take connections to 127.0.0.1 (`::1`, one interface's address, `::`
/// where IPv6 sockets take no IPv4), 127.0.0.1 is bound at the same port too: that is
/// where Claude Code, `ide-bridge mcp` and `ide-bridge status` connect (the lock file
/// names only the port). With port 0, a port taken on 127.0.0.1 is given up for another.
fn bind(ip: IpAddr, port: u16, previous: Option<u16>) -> Result<Vec<TcpListener>, AppError> {
    const TRIES: usize = 5;
    let loopback = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    let ports: Vec<u16> = if port == 0 {
        previous.into_iter().chain([0; TRIES]).collect()
    } else {
        vec![port]
    };
    let mut failed = None;
    for (i, try_port) in ports.iter().enumerate() {
        let first = match TcpListener::bind((ip, *try_port)) {
            Ok(listener) => listener,
            // The previous run's port is only a wish.
            Err(_) if i == 0 && port == 0 && previous.is_some() => continue,
            Err(source) => {
                failed = Some((SocketAddr::new(ip, *try_port), source));
                break;
            }
        };
        if !needs_loopback_too(ip, &first) {
            return Ok(vec![first]);
        }
        let bound = first.local_addr()?.port();
        match TcpListener::bind((loopback, bound)) {
            Ok(second) => return Ok(vec![first, second]),
            Err(source) => failed = Some((SocketAddr::new(loopback, bound), source)),
        }
    }
    let (addr, source) = failed.unwrap_or_else(|| {
        let gone = std::io::Error::from(std::io::ErrorKind::AddrInUse);
        (SocketAddr::new(ip, port), gone)
    });
    Err(AppError::Bind {
        addr: addr.to_string(),
        source,
    })
}

/// Whether a listener on `ip` leaves 127.0.0.1 unserved: any address but 127.0.0.1
/// and 0.0.0.0, and `::` on a system where IPv6 sockets take no IPv4 connections.
fn needs_loopback_too(ip: IpAddr, listener: &TcpListener) -> bool {
    match ip {
        IpAddr::V4(v4) => !(v4.is_unspecified() || v4 == std::net::Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => {
            use std::os::fd::AsRawFd;
            let mut only: libc::c_int = 0;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: a getsockopt into a c_int of its size on a socket we own.
            let asked = unsafe {
                libc::getsockopt(
                    listener.as_raw_fd(),
                    libc::IPPROTO_IPV6,
                    libc::IPV6_V6ONLY,
                    (&mut only as *mut libc::c_int).cast(),
                    &mut len,
                )
            };
            asked != 0 || only != 0
        }
        IpAddr::V6(_) => true,
    }
}

/// Says the bridge is up. For a person at a terminal: a short block with the page's
/// one-time sign-in link (as `ide-bridge open` prints it). In a file (a relay's
/// bridge.log, a service's journal): one plain log line, with no live sign-in code.
async fn announce(
    services: &Services,
    ip: std::net::IpAddr,
    port: u16,
    lock: &std::path::Path,
    state: &std::path::Path,
) {
    let workspace = services.workspace.root_text().to_owned();
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && services.settings.log.format != crate::config::LogFormat::Json;
    if !terminal {
        let page = if services.settings.ui.enabled {
            "`ide-bridge open` prints a sign-in link"
        } else {
            "off (ui.enabled = false)"
        };
        tracing::info!(
            url = %format!("ws://{}/", SocketAddr::new(ip, port)),
            mcp = %format!("http://{}/mcp", SocketAddr::new(ip, port)),
            page = %page,
            workspace = %workspace,
            lock = %lock.display(),
            state = %state.display(),
            tools = services.tools.len(),
            "ide-bridge is listening"
        );
        return;
    }
    let page = if !services.settings.ui.enabled {
        "off (ui.enabled = false)".to_string()
    } else {
        let link = services
            .dashboard
            .send(IssueLoginCode)
            .await
            .ok()
            .flatten()
            .map(|code| crate::http::ui::login_url(&services.settings, port, &code));
        match link {
            Some(link) => format!("{link}\n             (works once, for a few minutes; `ide-bridge open` gives a new one)"),
            None => "`ide-bridge open` prints a sign-in link".to_string(),
        }
    };
    tracing::info!(port, workspace = %workspace, "ide-bridge is listening");
    eprintln!(
        "\n  ide-bridge is serving {workspace}\n\n  \
         agents:    run `claude --ide` here (`ide-bridge init` once, for the model's tools)\n  \
         page:      {page}\n  \
         MCP:       http://{addr}/mcp   (IDE connection ws://{addr}/)\n  \
         state:     {state}\n\n  \
         Ctrl-C stops it.\n",
        state = state.display(),
        addr = SocketAddr::new(ip, port),
    );
}

/// Waits for the first worker to build the services (it does so as it starts).
async fn wait_for_services(cell: &OnceLock<Arc<Services>>) -> Result<Arc<Services>, AppError> {
    for _ in 0..1000 {
        if let Some(services) = cell.get() {
            return Ok(Arc::clone(services));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err(AppError::Server(std::io::Error::other(
        "the HTTP worker did not start within 10 s",
    )))
}

/// Runs the bridge until SIGINT or SIGTERM. `rotate_token` replaces the workspace's
/// stored auth token.
pub fn run(settings: Settings, rotate_token: bool) -> Result<(), AppError> {
    // Not dumpable: processes of the same user (the commands it runs among them)
    // cannot read its memory or `/proc/<pid>/environ`, and it leaves no core file.
    // SAFETY: a prctl on this process.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    let system = actix_rt::System::new();
    let outcome = system.block_on(serve(settings, rotate_token));
    // Everything durable is written and the lock file is gone: tearing the runtime
    // down would only wait for client sockets to drain. The process exits next.
    std::mem::forget(system);
    outcome
}

/// One line at start-up on how commands are confined.
fn log_command_sandbox(sandbox: &crate::exec::sandbox::SandboxStatus) {
    match sandbox.missing() {
        Some(missing) if sandbox.run_unsandboxed => tracing::warn!(
            landlock_abi = sandbox.landlock_abi,
            namespaces = sandbox.namespaces,
            "{missing}: commands run {} (commands.run_unsandboxed = true)",
            if sandbox.landlock_abi >= 1 { "PARTLY CONFINED" } else { "UNCONFINED" }
        ),
        Some(missing) => tracing::warn!(
            "{missing}: runCommand and runInTerminal are refused (set commands.run_unsandboxed = true to run them with what the kernel has)"
        ),
        None => tracing::info!(
            landlock_abi = sandbox.landlock_abi,
            network_rules = sandbox.network_rules,
            "commands run under Landlock in their own namespaces: writes and metadata changes only in the workspace and a temp dir of their own, no TCP, no process outliving its call"
        ),
    }
}

/// The bridge's life, phase by phase: check everything that can be refused; claim the
/// workspace's state (lock files, checkpoint, port, token); start the actors and the
/// HTTP server; publish the lock file; serve until a signal, idleness or a server
/// error; shut down in order.
async fn serve(settings: Settings, rotate_token: bool) -> Result<(), AppError> {
    // Everything that can be refused is refused before a file is written.
    let checked = preflight(&settings)?;
    let claimed = claim_state(&settings, &checked.workspace, rotate_token)?;
    // Only for a bridge that will run: a refused start says its one error alone.
    warn_about_settings(&settings);
    let ip = settings.server.bind;
    let port = claimed.port;
    let state_dir = claimed.state.dir().to_path_buf();
    let (seed, listeners, state) = claimed.into_seed(settings, checked);
    let running = start_server(seed, listeners).await?;
    let services = &running.services;
    // Handlers first: a signal after the lock exists must always remove it.
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sigint = signal(SignalKind::interrupt())?;
    let lock_path = publish(services, port)?;
    announce(services, ip, port, &lock_path, &state_dir).await;
    forget_start_up_later();
    let outcome = tokio::select! {
        _ = sigterm.recv() => { tracing::info!("SIGTERM received; shutting down"); Ok(()) }
        _ = sigint.recv() => { tracing::info!("SIGINT received; shutting down"); Ok(()) }
        _ = idle_stop(services) => Ok(()),
        res = running.task => match res {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(AppError::Server(e)),
            Err(e) => Err(AppError::Server(std::io::Error::other(e))),
        },
    };
    shut_down(services, &running.handle, &lock_path).await;
    drop(state);
    outcome
}

/// How long after the lock file is published start-up's own work (actors starting, the
/// watcher's first walk, a restored checkpoint) is taken to be over.
const START_UP_SETTLES: std::time::Duration = std::time::Duration::from_secs(3);

/// Once start-up has settled, gives back the pages of the binary it touched
/// ([`crate::resident::forget_start_up`]): what stays resident is what serving uses.
fn forget_start_up_later() {
    actix_rt::spawn(async {
        tokio::time::sleep(START_UP_SETTLES).await;
        let bytes = crate::resident::forget_start_up();
        tracing::debug!(bytes, "start-up's pages of the binary given back");
    });
}

/// Logs what the settings allow that a person should know about (not errors).
fn warn_about_settings(settings: &Settings) {
    log_command_sandbox(&crate::exec::sandbox::status(
        settings.commands.run_unsandboxed,
    ));
    if settings.binds_beyond_loopback() {
        tracing::warn!(
            bind = %settings.server.bind,
            "!!! LISTENING BEYOND LOOPBACK: anyone who can reach this address and read the token can drive your workspace. Use 127.0.0.1 unless you mean it. !!!"
        );
    }
    // Found when a task starts, as the task's process would find it.
    let claude = &settings.orchestrator.claude_binary;
    if crate::orchestrator::driver::find_program(claude).is_none() {
        tracing::warn!(
            claude_binary = %claude,
            "orchestrator.claude_binary is not found{}: Claude tasks (runClaudeTask, automation prompts) will fail to start",
            if claude.contains('/') { "" } else { " on PATH" }
        );
    }
    for program in &settings.commands.allow {
        if crate::exec::policy::is_interpreter(program) {
            tracing::warn!(
                program,
                "commands.allow lists a program that is never allowed (a shell, an interpreter, or one that runs other programs or reaches the network); it will be refused anyway"
            );
        }
    }
}

/// The workspace's state, claimed for this bridge: its directory (held until the bridge
/// stops), the checkpoint to restore, the bound port, the token.
struct Claimed {
    state: WorkspaceState,
    previous: Option<(PathBuf, checkpoint::CheckpointData)>,
    /// The configured address's, and 127.0.0.1's when that does not cover it.
    listeners: Vec<TcpListener>,
    port: u16,
    auth_token: String,
}

/// Claims the workspace's state directory (failing, touching nothing, while another
/// live bridge holds it), cleans stale lock files and old workspaces' state, loads the
/// latest checkpoint, binds (the checkpoint's port when it is free) and reads the token.
fn claim_state(
    settings: &Settings,
    workspace: &Workspace,
    rotate_token: bool,
) -> Result<Claimed, AppError> {
    let mut state = WorkspaceState::claim(workspace.root())?;
    let ide_dir = lockfile::ide_dir();
    lockfile::ensure_private_dir(&ide_dir).map_err(|source| AppError::LockFile {
        dir: ide_dir.clone(),
        source,
    })?;
    for stale in lockfile::clean_stale(&ide_dir) {
        tracing::info!(path = %stale.display(), "removed a stale lock file (its process is gone)");
    }
    let max_age = Duration::from_secs(settings.state.prune_after_days * 86_400);
    for gone in crate::state::prune(state.dir(), max_age) {
        tracing::info!(workspace = %gone, "removed the state of a workspace not served for {} days", settings.state.prune_after_days);
    }
    state.touch();
    let workspace_name = workspace.root_text().to_owned();
    let previous = settings
        .checkpoint
        .enabled
        .then(|| {
            checkpoint::load_latest(
                state.dir(),
                &workspace_name,
                now_ms(),
                settings.checkpoint.max_age,
            )
        })
        .flatten();
    if let Some((path, data)) = &previous {
        tracing::info!(path = %path.display(), sessions = data.sessions.len(), "restoring from the latest checkpoint");
    }
    let previous_port = previous.as_ref().and_then(|(_, d)| d.port);
    let listeners = bind(settings.server.bind, settings.server.port, previous_port)?;
    let port = listeners[0].local_addr()?.port();
    if let Err(e) = state.record_owner(port) {
        tracing::warn!(%e, "could not record this bridge in its state directory");
    }
    let (auth_token, token_source) =
        state
            .auth_token(rotate_token)
            .map_err(|source| AppError::LockFile {
                dir: state.dir().to_path_buf(),
                source,
            })?;
    match token_source {
        TokenSource::Kept => tracing::info!(
            "auth token kept from the previous run: connected clients reconnect on their own"
        ),
        TokenSource::New => tracing::info!("new auth token for this workspace"),
        TokenSource::Rotated => tracing::warn!(
            "auth token rotated (--rotate-token): clients must read the new lock file"
        ),
    }
    Ok(Claimed {
        state,
        previous,
        listeners,
        port,
        auth_token,
    })
}

impl Claimed {
    /// What the actors are built from, the listener, and the state to hold.
    fn into_seed(
        self,
        settings: Settings,
        checked: Checked,
    ) -> (Seed, Vec<TcpListener>, WorkspaceState) {
        let state = self.state;
        let seed = Seed {
            automation: checked.policy,
            tasks_path: Some(state.path(state_files::TASKS)),
            automation_state_path: Some(state.path(state_files::AUTOMATION)),
            activity_path: settings
                .activity
                .persist
                .then(|| state.path(state_files::ACTIVITY)),
            checkpoint_path: settings
                .checkpoint
                .enabled
                .then(|| state.path(state_files::CHECKPOINT)),
            page_sessions_path: Some(state.path(state_files::PAGE_SESSIONS)),
            reviews_path: Some(state.path(state_files::REVIEWS)),
            claims_path: Some(state.path(state_files::CLAIMS)),
            changes_path: Some(state.path(state_files::CHANGES)),
            restore: self.previous.map(|(_, d)| d.sessions).unwrap_or_default(),
            tools: checked.tools,
            prompts: PromptRegistry::default(),
            workspace: checked.workspace,
            metrics: Arc::new(Metrics::new()),
            auth_token: self.auth_token,
            port: self.port,
            settings,
        };
        (seed, self.listeners, state)
    }
}

/// The HTTP server, running, and the services its first worker built.
struct Running {
    services: Arc<Services>,
    handle: actix_web::dev::ServerHandle,
    task: actix_rt::task::JoinHandle<std::io::Result<()>>,
}

/// Starts the HTTP server on `listener`; the singleton actors start inside the first
/// worker's app factory, so they share its arbiter with the sessions and transports
/// that worker accepts: the tool-call path never wakes another thread.
async fn start_server(seed: Seed, listeners: Vec<TcpListener>) -> Result<Running, AppError> {
    let workers = seed.settings.server.workers;
    // The seed is handed over exactly once.
    let seed = Arc::new(Mutex::new(Some(seed)));
    let cell: Arc<OnceLock<Arc<Services>>> = Arc::new(OnceLock::new());
    let mut server = HttpServer::new({
        let (seed, cell) = (Arc::clone(&seed), Arc::clone(&cell));
        move || {
            let services = cell.get_or_init(|| {
                seed.lock()
                    .ok()
                    .and_then(|mut s| s.take())
                    .map(Seed::start)
                    .expect("services are built once, by the first worker")
            });
            App::new()
                .app_data(web::Data::from(Arc::clone(services)))
                .configure(crate::http::configure)
        }
    })
    .workers(workers)
    .on_connect(crate::http::conn::on_connect)
    .tcp_nodelay(true)
    // A client that goes away mid-request (a hook the CLI ended because the person
    // answered in the terminal) ends its handler, and what it waited for with it.
    .h1_allow_half_closed(false)
    .disable_signals()
    .shutdown_timeout(1);
    for listener in listeners {
        server = server.listen(listener)?;
    }
    let server = server.run();
    let handle = server.handle();
    let task = actix_rt::spawn(server);
    let services = wait_for_services(&cell).await?;
    Ok(Running {
        services,
        handle,
        task,
    })
}

/// Writes the lock file that tells Claude Code (and the relay and hooks) where this
/// bridge is, and records the start in the timeline.
fn publish(services: &Services, port: u16) -> Result<PathBuf, AppError> {
    let ide_dir = lockfile::ide_dir();
    let lock = LockFile {
        pid: std::process::id(),
        workspace_folders: vec![services.workspace.root_text().to_owned()],
        ide_name: services.settings.ide_name.clone(),
        transport: "ws".into(),
        auth_token: services.auth_token.clone(),
        is_bridge: true,
        started_at: Some(services.started_at_ms),
        process: lockfile::process_identity(std::process::id()),
    };
    let lock_path =
        lockfile::write(&ide_dir, port, &lock).map_err(|source| AppError::LockFile {
            dir: ide_dir.clone(),
            source,
        })?;
    services.activity.do_send(RecordLifecycle {
        event: LifecycleEvent::BridgeStarted,
        session_id: None,
        detail: format!("port {port}"),
    });
    Ok(lock_path)
}

/// True while anything uses the bridge: a connected agent, the editor, a watching page,
/// a Claude task pending or running.
async fn in_use(services: &Services) -> bool {
    let agents = services
        .registry
        .send(crate::actors::registry::Snapshot)
        .await
        .ok()
        .and_then(Result::ok)
        .is_some_and(|s| s.sessions.iter().any(|x| x.connected));
    let editor = services
        .extension
        .send(crate::actors::extension::GetStatus)
        .await
        .is_ok_and(|s| s.connected);
    let page = services
        .dashboard
        .send(crate::actors::dashboard::GetPageStatus)
        .await
        .is_ok_and(|p| p.watching > 0);
    let tasks = services
        .orchestrator
        .send(crate::actors::orchestrator::ListTasks { session: None })
        .await
        .is_ok_and(|tasks| {
            tasks.iter().any(|t| {
                matches!(
                    t.status,
                    crate::orchestrator::TaskStatus::Pending
                        | crate::orchestrator::TaskStatus::Running
                )
            })
        });
    agents || editor || page || tasks
}

/// Ends when an on-demand bridge has gone unused for `server.idle_stop_ms` (never for a
/// bridge the person started). How long it has been idle is in the metrics (and so in
/// `/status`).
async fn idle_stop(services: &Services) {
    let limit = services.settings.server.idle_stop;
    if !services.settings.server.on_demand || limit.is_zero() {
        return std::future::pending().await;
    }
    let tick = (limit / 10).clamp(Duration::from_millis(100), Duration::from_secs(30));
    let mut idle_since: Option<Instant> = None;
    loop {
        tokio::time::sleep(tick).await;
        if in_use(services).await {
            idle_since = None;
            services.metrics.idle_seconds.set(0);
            continue;
        }
        let since = *idle_since.get_or_insert_with(Instant::now);
        services
            .metrics
            .idle_seconds
            .set(i64::try_from(since.elapsed().as_secs()).unwrap_or(i64::MAX));
        if since.elapsed() >= limit {
            tracing::info!(
                idle_ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
                "stopping: started on demand, and no agent, editor, page or task has used the bridge for server.idle_stop_ms"
            );
            return;
        }
    }
}

/// Stops in order: no new connections, agents told (1001), final state written, the
/// lock file removed, then the server stopped without waiting for sockets to drain.
async fn shut_down(
    services: &Services,
    handle: &actix_web::dev::ServerHandle,
    lock_path: &std::path::Path,
) {
    let started = Instant::now();
    // The listener stops accepting; the registry refuses upgrades on open keep-alive
    // connections (503) and closes every agent connection.
    let pause = handle.pause();
    let close = services.registry.send(CloseAll);
    let _ = tokio::time::timeout(Duration::from_millis(300), async {
        pause.await;
        let _ = close.await;
    })
    .await;
    services.activity.do_send(RecordLifecycle {
        event: LifecycleEvent::BridgeStopping,
        session_id: None,
        detail: String::new(),
    });
    let bound = Duration::from_millis(500);
    let checkpoint = async {
        if let Some(c) = &services.checkpoint {
            match tokio::time::timeout(bound, c.send(SaveNow)).await {
                Ok(Ok(Ok(()))) => tracing::info!("final checkpoint written"),
                other => tracing::warn!(?other, "final checkpoint not written"),
            }
        }
    };
    let tasks = tokio::time::timeout(bound, services.orchestrator.send(SaveTasks));
    let browsers = tokio::time::timeout(bound, services.dashboard.send(FlushSessions));
    let changes = tokio::time::timeout(bound, services.changes.send(FlushChanges));
    let (_, _, _, _) = futures_util::future::join4(checkpoint, tasks, browsers, changes).await;
    let _ = tokio::time::timeout(bound, services.activity.send(FlushNow)).await;
    if let Err(e) = std::fs::remove_file(lock_path) {
        tracing::warn!(path = %lock_path.display(), %e, "could not remove the lock file");
    }
    // Close frames were queued first; the writers have had the time above to send them.
    handle.stop(false).await;
    tracing::info!(ms = started.elapsed().as_millis() as u64, "stopped");
}

/// The singletons and services of a bridge on `root`, started on the current arbiter
/// without persistence, a policy or a listener: for in-process actor tests.
#[cfg(test)]
pub(crate) fn services_for_tests(settings: Settings, root: &std::path::Path) -> Arc<Services> {
    Seed {
        activity_path: None,
        tasks_path: None,
        automation_state_path: None,
        checkpoint_path: None,
        page_sessions_path: None,
        reviews_path: None,
        claims_path: None,
        changes_path: None,
        automation: None,
        restore: Vec::new(),
        settings,
        workspace: Workspace::open(root).expect("test workspace"),
        tools: catalog::build().expect("catalog"),
        prompts: PromptRegistry::default(),
        metrics: Arc::new(Metrics::new()),
        auth_token: "test".into(),
        port: 0,
    }
    .start()
}

#[cfg(test)]
mod bind_tests {
    use super::*;

    #[test]
    fn an_address_besides_127_0_0_1_gets_a_loopback_listener_at_its_port() {
        let v6 = "::1".parse().unwrap();
        let listeners = bind(v6, 0, None).unwrap();
        let ports: Vec<SocketAddr> = listeners.iter().map(|l| l.local_addr().unwrap()).collect();
        assert_eq!(ports.len(), 2, "{ports:?}");
        assert!(
            ports[1].ip().is_loopback() && ports[1].is_ipv4() && ports[0].port() == ports[1].port()
        );
        let v4 = bind("127.0.0.1".parse().unwrap(), 0, None).unwrap();
        assert_eq!(v4.len(), 1);
    }

    #[test]
    fn a_port_taken_on_127_0_0_1_is_given_up_with_port_0_and_an_error_when_configured() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let v6: IpAddr = "::1".parse().unwrap();
        // The previous run's port is free on ::1 but not on 127.0.0.1: another is chosen.
        let listeners = bind(v6, 0, Some(port)).unwrap();
        let chosen = listeners[0].local_addr().unwrap().port();
        assert_ne!(chosen, port);
        assert_eq!(listeners[1].local_addr().unwrap().port(), chosen);
        drop(listeners);
        // A configured port is kept or refused, naming the address that failed.
        let err = bind(v6, port, None).unwrap_err().to_string();
        assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
    }
}
