//! Start-up and shutdown: bind, lock file, actors, HTTP server, signals.

use std::net::{IpAddr, TcpListener};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use actix::{Arbiter, Supervisor};
use actix_web::{web, App, HttpServer};
use tokio::signal::unix::{signal, SignalKind};

use crate::actors::activity_log::{now_ms, ActivityLog, LifecycleEvent, RecordLifecycle};
use crate::actors::diagnostics::{DiagnosticsActor, DiagnosticsConfig};
use crate::actors::registry::{CloseAll, SessionRegistry};
use crate::actors::writer::WorkspaceWriter;
use crate::config::Settings;
use crate::lockfile::{self, LockFile};
use crate::metrics::Metrics;
use crate::prompts::PromptRegistry;
use crate::services::Services;
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
    /// A tool schema is broken (a bug).
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// The HTTP server failed.
    #[error("server error: {0}")]
    Server(#[from] std::io::Error),
}

/// What the first worker needs to build [`Services`].
struct Seed {
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
    fn start(self) -> Arc<Services> {
        let activity = {
            let (max, m) = (
                self.settings.activity.max_entries,
                Arc::clone(&self.metrics),
            );
            Supervisor::start(move |_| ActivityLog::new(max, m))
        };
        let registry = {
            let max = self.settings.sessions.max_sessions;
            let (a, m) = (activity.clone(), Arc::clone(&self.metrics));
            Supervisor::start(move |_| SessionRegistry::new(max, a, m))
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
        let diagnostics = {
            let config = DiagnosticsConfig {
                root: self.workspace.root().to_path_buf(),
                enabled: self.settings.diagnostics.linters.clone(),
                timeout: Duration::from_millis(self.settings.diagnostics.timeout_ms),
                cache_for: Duration::from_millis(self.settings.diagnostics.cache_ms),
            };
            let (a, m) = (activity.clone(), Arc::clone(&self.metrics));
            Supervisor::start(move |_| DiagnosticsActor::new(config, a, m))
        };
        Arc::new(Services {
            writer,
            diagnostics,
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
        })
    }
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

/// Runs the bridge until SIGINT or SIGTERM.
pub fn run(settings: Settings) -> Result<(), AppError> {
    actix_rt::System::new().block_on(serve(settings))
}

async fn serve(settings: Settings) -> Result<(), AppError> {
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
    let ip: IpAddr = settings.server.bind.parse().map_err(|_| AppError::Bind {
        addr: settings.server.bind.clone(),
        source: std::io::Error::other("not an IP address"),
    })?;
    let addr = format!("{}:{}", ip, settings.server.port);
    let listener =
        TcpListener::bind((ip, settings.server.port)).map_err(|source| AppError::Bind {
            addr: addr.clone(),
            source,
        })?;
    let port = listener.local_addr()?.port();

    let ide_dir = lockfile::ide_dir();
    lockfile::ensure_private_dir(&ide_dir).map_err(|source| AppError::LockFile {
        dir: ide_dir.clone(),
        source,
    })?;
    for stale in lockfile::clean_stale(&ide_dir) {
        tracing::info!(path = %stale.display(), "removed a stale lock file (its process is gone)");
    }

    let seed = Seed {
        tools: catalog::build()?,
        prompts: PromptRegistry::default(),
        workspace,
        metrics: Arc::new(Metrics::new()),
        auth_token: uuid::Uuid::new_v4().to_string(),
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
    .tcp_nodelay(true)
    .disable_signals()
    .shutdown_timeout(2)
    .listen(listener)?
    .run();
    let handle = server.handle();
    let server_task = actix_rt::spawn(server);
    let services = wait_for_services(&cell).await?;
    let (registry, activity) = (services.registry.clone(), services.activity.clone());
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
    tracing::info!(
        url = %format!("ws://{ip}:{port}/"),
        workspace = %services.workspace.root().display(),
        lock = %lock_path.display(),
        tools = services.tools.len(),
        "ide-bridge is listening; run `claude --ide` in the workspace to connect"
    );

    let outcome = tokio::select! {
        _ = sigterm.recv() => { tracing::info!("SIGTERM received; shutting down"); Ok(()) }
        _ = sigint.recv() => { tracing::info!("SIGINT received; shutting down"); Ok(()) }
        res = server_task => match res {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(AppError::Server(e)),
            Err(e) => Err(AppError::Server(std::io::Error::other(e))),
        },
    };
    // Remove the lock first so that no client picks a bridge that is going away.
    if let Err(e) = std::fs::remove_file(&lock_path) {
        tracing::warn!(path = %lock_path.display(), %e, "could not remove the lock file");
    }
    activity.do_send(RecordLifecycle {
        event: LifecycleEvent::BridgeStopping,
        session_id: None,
        detail: String::new(),
    });
    let _ = tokio::time::timeout(Duration::from_secs(1), registry.send(CloseAll)).await;
    // Let the close frames reach the sockets before the server stops.
    tokio::time::sleep(Duration::from_millis(50)).await;
    handle.stop(true).await;
    outcome
}
