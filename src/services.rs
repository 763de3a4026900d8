//! Read-only context shared by the HTTP layer, sessions and tools: configuration and
//! the addresses of the singleton actors. Nothing in it is mutable.

use std::sync::Arc;
use std::time::Instant;

use actix::Addr;

use crate::actors::activity_log::ActivityLog;
use crate::actors::automation::Automation;
use crate::actors::checkpoint::CheckpointActor;
use crate::actors::claims::ClaimsActor;
use crate::actors::dashboard::Dashboard;
use crate::actors::diagnostics::DiagnosticsActor;
use crate::actors::extension::{EditorPresence, ExtensionClient};
use crate::actors::http_transport::HttpSessions;
use crate::actors::language_servers::LanguageServers;
use crate::actors::orchestrator::Orchestrator;
use crate::actors::registry::SessionRegistry;
use crate::actors::watcher::Watcher;
use crate::actors::writer::WorkspaceWriter;
use crate::config::Settings;
use crate::metrics::Metrics;
use crate::prompts::PromptRegistry;
use crate::tools::ToolRegistry;
use crate::workspace::Workspace;

/// Everything a request handler may need to reach.
pub struct Services {
    /// Validated configuration.
    pub settings: Settings,
    /// The workspace root.
    pub workspace: Workspace,
    /// The tool catalogue.
    pub tools: ToolRegistry,
    /// The prompt catalogue.
    pub prompts: PromptRegistry,
    /// The session registry actor.
    pub registry: Addr<SessionRegistry>,
    /// Streamable HTTP sessions by `Mcp-Session-Id`.
    pub http_sessions: Addr<HttpSessions>,
    /// The activity log actor.
    pub activity: Addr<ActivityLog>,
    /// The actor that serialises every workspace write (on its own thread).
    pub writer: Addr<WorkspaceWriter>,
    /// Linter-based diagnostics.
    pub diagnostics: Addr<DiagnosticsActor>,
    /// The workspace watcher.
    pub watcher: Addr<Watcher>,
    /// The editor connection.
    pub extension: Addr<ExtensionClient>,
    /// Whether an editor is connected (kept by `extension`).
    pub editor: EditorPresence,
    /// Claude tasks.
    pub orchestrator: Addr<Orchestrator>,
    /// The browser page's sign-ins, diffs, approvals and reviews.
    pub dashboard: Addr<Dashboard>,
    /// File claims.
    pub claims: Addr<ClaimsActor>,
    /// What each agent changed, for the person's review.
    pub changes: Addr<crate::actors::changes::ChangesActor>,
    /// The bridge's own language servers.
    pub language_servers: Addr<LanguageServers>,
    /// Automation hooks (absent without a policy).
    pub automation: Option<Addr<Automation>>,
    /// Session checkpoints (absent when disabled).
    pub checkpoint: Option<Addr<CheckpointActor>>,
    /// Prometheus metrics.
    pub metrics: Arc<Metrics>,
    /// The lock file's token.
    pub auth_token: String,
    /// The port actually bound.
    pub port: u16,
    /// Monotonic start time.
    pub started: Instant,
    /// Unix milliseconds at start.
    pub started_at_ms: u64,
}
