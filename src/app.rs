//! Start-up and shutdown: bind, lock file, actors, HTTP server, signals.

use crate::actors::changes::{ChangesActor, ChangesLinks, FlushChanges};
use crate::changes::Limits as ChangeLimits;
use std::net::{IpAddr, TcpListener};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use actix::{Actor, Arbiter, Supervisor};
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
use crate::actors::messages::watch::WorkspaceChanged;
use crate::actors::orchestrator::{Limits, Orchestrator, SaveTasks};
use crate::actors::registry::{CloseAll, Restore, SessionRegistry};
use crate::actors::session::{Session, SessionHandle, SessionId, SessionLinks};
use crate::actors::supervise::start_with;
use crate::actors::watcher::Watcher;
use crate::actors::writer::WorkspaceWriter;
use crate::config::Settings;
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
            AppError::Policy(_) | AppError::Catalog(CatalogError::UnknownExpose(_))
        )
    }
}

/// What start-up checks before it writes anything (`ide-bridge config` checks the same):
/// the workspace, the tool catalogue with `tools.expose`, the automation policy.
pub struct Checked {
    workspace: Workspace,
    tools: crate::tools::ToolRegistry,
    policy: Option<(PathBuf, crate::automation::policy::Policy)>,
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
    checkpoint_path: Option<PathBuf>,
    page_sessions_path: Option<PathBuf>,
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

impl Seed {
    /// Starts the supervised singletons on the current arbiter and builds the services.
    fn start(mut self) -> Arc<Services> {
        let activity = {
            let a = &self.settings.activity;
            let log = ActivityLog::new(a.max_entries, Arc::clone(&self.metrics));
            let log = match &self.activity_path {
                Some(path) => log.persistent(
                    PersistConfig {
                        path: path.clone(),
                        max_file_bytes: a.max_file_bytes,
                        flush_every: a.flush_every,
                    },
                    a.max_stream_subscribers,
                ),
                None => log,
            };
            Supervisor::start(move |_| log)
        };
        let writer = {
            let (ws, a, m) = (
                self.workspace.clone(),
                activity.clone(),
                Arc::clone(&self.metrics),
            );
            // Blocking file I/O runs on a thread of its own, never on the worker.
            Supervisor::start_in_arbiter(&Arbiter::new().handle(), move |_| {
                WorkspaceWriter::new(ws, a, m)
            })
        };
        let dashboard = {
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
            };
            let (a, m) = (activity.clone().recipient(), Arc::clone(&self.metrics));
            Supervisor::start(move |_| Dashboard::new(config, a, m))
        };
        // The registry and the editor client message each other, and the editor
        // client feeds automation, which starts tasks on the orchestrator, which
        // notifies the editor: each is built knowing the addresses it sends to.
        let (registry, (extension, orchestrator, automation, claims, changes)) = {
            let max = self.settings.sessions.max_sessions;
            let gap = self.settings.server.min_connect_interval;
            let wait = self.settings.server.max_connect_wait;
            let debounce = self.settings.tools.list_changed_debounce;
            let config = ExtensionConfig {
                request_timeout: self.settings.editor.request_timeout,
            };
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
                    .then(|| dashboard.clone().recipient()),
                approval_timeout: o.approval_timeout,
            };
            let tasks_path = self.tasks_path.clone();
            let claims_path = self.claims_path.clone();
            let changes_path = self.changes_path.clone();
            let (changes_ws, changes_writer, changes_page) = (
                self.workspace.clone(),
                writer.clone(),
                dashboard.clone().recipient(),
            );
            let root = self.workspace.root().to_path_buf();
            let policy = self.automation.take();
            let settings = Arc::new(self.settings.clone());
            let (ws, a, m) = (
                self.workspace.clone(),
                activity.clone(),
                Arc::clone(&self.metrics),
            );
            start_with(move |registry: actix::Addr<SessionRegistry>| {
                let registry_handle = SessionRegistry::handle(&registry);
                let (a2, m2) = (a.clone(), Arc::clone(&m));
                let agents = registry.clone().recipient();
                let (extension, (orchestrator, automation)) =
                    start_with(move |extension: actix::Addr<ExtensionClient>| {
                        let (e, a3, m3) =
                            (extension.clone().recipient(), a2.clone(), Arc::clone(&m2));
                        let (a4, m4) = (a2.clone(), Arc::clone(&m2));
                        let editor = extension.clone().recipient();
                        let (orchestrator, automation) =
                            start_with(move |orchestrator: actix::Addr<Orchestrator>| {
                                let automation = policy.map(|(path, policy)| {
                                    let links = AutomationLinks {
                                        orchestrator: OrchestratorLink {
                                            enqueue: orchestrator.clone().recipient(),
                                            follow: orchestrator.clone().recipient(),
                                        },
                                        agents,
                                        editor,
                                        activity: a4,
                                    };
                                    Supervisor::start(move |_| {
                                        Automation::new(policy, path, ws, settings, links, m4)
                                    })
                                });
                                let events = automation.clone().map(|a| a.recipient());
                                let orchestrator =
                                    Orchestrator::new(limits, driver, tasks_path, e, a3, m3)
                                        .reporting_to(events);
                                (orchestrator, automation)
                            });
                        let links = ExtensionLinks {
                            registry: registry_handle,
                            automation: automation.clone().map(|a| a.recipient()),
                            activity: a2,
                        };
                        let client = ExtensionClient::new(config, links, m2);
                        (client, (orchestrator, automation))
                    });
                let claims = {
                    let links = ClaimsLinks {
                        editor: extension.clone().recipient(),
                        activity: a.clone().recipient(),
                        automation: automation.clone().map(|a| a.recipient()),
                    };
                    let m = Arc::clone(&m);
                    Supervisor::start(move |_| ClaimsActor::new(root, claims_path, links, m))
                };
                let changes = {
                    let links = ChangesLinks {
                        writer: changes_writer,
                        editor: extension.clone().recipient(),
                        page: changes_page,
                        activity: a.clone().recipient(),
                    };
                    let m = Arc::clone(&m);
                    // It reads the files agents write: a thread of its own.
                    Supervisor::start_in_arbiter(&Arbiter::new().handle(), move |_| {
                        ChangesActor::new(
                            changes_ws,
                            changes_path,
                            ChangeLimits::default(),
                            links,
                            m,
                        )
                    })
                };
                let registry =
                    SessionRegistry::new(max, gap, wait, extension.clone().recipient(), a, m)
                        .with_list_changed_debounce(debounce)
                        .recording_changes(changes.clone().recipient())
                        .reporting_to(automation.clone().map(|a| a.recipient()))
                        .keeping_claims(ClaimsLink {
                            gone: claims.clone().recipient(),
                            moved: claims.clone().recipient(),
                        });
                (
                    registry,
                    (extension, orchestrator, automation, claims, changes),
                )
            })
        };
        let diagnostics = {
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
            let to_automation = automation.clone().map(|a| a.recipient());
            let (a, m) = (activity.clone(), Arc::clone(&self.metrics));
            Supervisor::start(move |_| DiagnosticsActor::new(config, to_automation, a, m))
        };
        let watcher = {
            let mut subscribers: Vec<actix::Recipient<WorkspaceChanged>> =
                vec![diagnostics.clone().recipient()];
            subscribers.extend(automation.clone().map(|a| a.recipient()));
            subscribers.push(dashboard.clone().recipient());
            subscribers.push(registry.clone().recipient());
            let (settings, ws) = (self.settings.watch.clone(), self.workspace.clone());
            let (a, m) = (activity.clone(), Arc::clone(&self.metrics));
            // A flood of kernel events costs the watcher's own thread, never a worker's.
            Supervisor::start_in_arbiter(&Arbiter::new().handle(), move |_| {
                Watcher::new(settings, ws, subscribers, a, m)
            })
        };
        let checkpoint = self.checkpoint_path.clone().map(|path| {
            let (w, port) = (self.workspace.root().display().to_string(), self.port);
            let interval = self.settings.checkpoint.interval;
            let (r, a, m) = (
                registry.clone().recipient(),
                activity.clone(),
                Arc::clone(&self.metrics),
            );
            Supervisor::start(move |_| CheckpointActor::new(path, w, port, interval, r, a, m))
        });
        let restore = std::mem::take(&mut self.restore);
        let http_sessions = Supervisor::start(|_| HttpSessions::default());
        let services = Arc::new(Services {
            claims,
            changes,
            http_sessions,
            dashboard,
            orchestrator,
            automation,
            extension,
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
        let files: Vec<PathBuf> = state
            .opened_files
            .iter()
            .filter_map(|f| services.workspace.resolve(f).ok())
            .collect();
        let session = Session::restored(
            id.clone(),
            files,
            state.client_pid(),
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
/// that the lock file (and the agents that remember it) keep their address.
fn bind(ip: IpAddr, port: u16, previous: Option<u16>) -> Result<TcpListener, AppError> {
    if port == 0 {
        if let Some(listener) = previous.and_then(|p| TcpListener::bind((ip, p)).ok()) {
            return Ok(listener);
        }
    }
    TcpListener::bind((ip, port)).map_err(|source| AppError::Bind {
        addr: format!("{ip}:{port}"),
        source,
    })
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
    let workspace = services.workspace.root().display().to_string();
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && services.settings.log.format != crate::config::LogFormat::Json;
    if !terminal {
        let page = if services.settings.ui.enabled {
            "`ide-bridge open` prints a sign-in link"
        } else {
            "off (ui.enabled = false)"
        };
        tracing::info!(
            url = %format!("ws://{ip}:{port}/"),
            mcp = %format!("http://{ip}:{port}/mcp"),
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
         MCP:       http://{ip}:{port}/mcp   (IDE connection ws://{ip}:{port}/)\n  \
         state:     {state}\n\n  \
         Ctrl-C stops it.\n",
        state = state.display()
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

async fn serve(settings: Settings, rotate_token: bool) -> Result<(), AppError> {
    // Everything that can be refused is refused before a file is written.
    let Checked {
        workspace,
        tools,
        policy,
    } = preflight(&settings)?;
    log_command_sandbox(&crate::exec::sandbox::status(
        settings.commands.run_unsandboxed,
    ));
    if settings.binds_beyond_loopback() {
        tracing::warn!(
            bind = %settings.server.bind,
            "!!! LISTENING BEYOND LOOPBACK: anyone who can reach this address and read the token can drive your workspace. Use 127.0.0.1 unless you mean it. !!!"
        );
    }
    for program in &settings.commands.allow {
        if crate::exec::policy::is_interpreter(program) {
            tracing::warn!(
                program,
                "commands.allow lists a shell or interpreter; it will be refused anyway"
            );
        }
    }
    let ip = settings.server.bind;
    // One bridge per workspace: claiming its state directory fails, touching nothing,
    // while another live bridge holds it.
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
    let workspace_name = workspace.root().display().to_string();
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
    let listener = bind(ip, settings.server.port, previous_port)?;
    let port = listener.local_addr()?.port();
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

    let seed = Seed {
        automation: policy,
        tasks_path: Some(state.path(state_files::TASKS)),
        activity_path: settings
            .activity
            .persist
            .then(|| state.path(state_files::ACTIVITY)),
        checkpoint_path: settings
            .checkpoint
            .enabled
            .then(|| state.path(state_files::CHECKPOINT)),
        page_sessions_path: Some(state.path(state_files::PAGE_SESSIONS)),
        claims_path: Some(state.path(state_files::CLAIMS)),
        changes_path: Some(state.path(state_files::CHANGES)),
        restore: previous.map(|(_, d)| d.sessions).unwrap_or_default(),
        tools,
        prompts: PromptRegistry::default(),
        workspace,
        metrics: Arc::new(Metrics::new()),
        auth_token,
        port,
        settings,
    };
    let workers = seed.settings.server.workers;
    // The singleton actors start inside the first worker's app factory, so they share
    // its arbiter with the sessions and transports that worker accepts: the tool-call
    // path never wakes another thread. The seed is handed over exactly once.
    let seed = Arc::new(Mutex::new(Some(seed)));
    let cell: Arc<OnceLock<Arc<Services>>> = Arc::new(OnceLock::new());
    let server = HttpServer::new({
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
    .shutdown_timeout(1)
    .listen(listener)?
    .run();
    let handle = server.handle();
    let server_task = actix_rt::spawn(server);
    let services = wait_for_services(&cell).await?;
    let activity = services.activity.clone();
    // Handlers first: a signal after the lock exists must always remove it.
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sigint = signal(SignalKind::interrupt())?;

    let lock = LockFile {
        pid: std::process::id(),
        workspace_folders: vec![services.workspace.root().display().to_string()],
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
    activity.do_send(RecordLifecycle {
        event: LifecycleEvent::BridgeStarted,
        session_id: None,
        detail: format!("port {port}"),
    });
    announce(&services, ip, port, &lock_path, state.dir()).await;

    let idle = idle_stop(&services);
    let outcome = tokio::select! {
        _ = sigterm.recv() => { tracing::info!("SIGTERM received; shutting down"); Ok(()) }
        _ = sigint.recv() => { tracing::info!("SIGINT received; shutting down"); Ok(()) }
        _ = idle => Ok(()),
        res = server_task => match res {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(AppError::Server(e)),
            Err(e) => Err(AppError::Server(std::io::Error::other(e))),
        },
    };
    shut_down(&services, &handle, &lock_path).await;
    drop(state);
    outcome
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
        checkpoint_path: None,
        page_sessions_path: None,
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
