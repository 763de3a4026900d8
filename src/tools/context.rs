//! What a running tool can reach: its session, the shared services, and a progress
//! channel when the client asked for progress.

use std::path::PathBuf;
use std::sync::Arc;

use crate::actors::messages::session::{
    KnownVersion, MemoryHandle, OpenedFiles, RecordOpened, RecordVersion, SessionId,
};
use crate::actors::outbound::Outbound;
use crate::protocol::jsonrpc;
use crate::protocol::mcp::{ProgressParams, ProgressToken};
use crate::services::Services;
use crate::workspace::files::Fingerprint;

/// Progress notifications are skipped while this many frames wait to be written.
const PROGRESS_BACKLOG_LIMIT: usize = 64;

/// Sends `notifications/progress` for one request.
pub struct ProgressReporter {
    token: ProgressToken,
    outbound: Outbound,
}

impl ProgressReporter {
    /// A reporter for `token` on `outbound`.
    pub fn new(token: ProgressToken, outbound: Outbound) -> Self {
        Self { token, outbound }
    }

    /// Best effort: skipped under backpressure, never retried.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if self.outbound.backlog() > PROGRESS_BACKLOG_LIMIT {
            tracing::debug!("progress notification skipped: connection backlog");
            return;
        }
        self.outbound.send_text(jsonrpc::notification(
            crate::protocol::methods::Notification::Progress.name(),
            &ProgressParams {
                progress_token: &self.token,
                progress,
                total,
                message,
            },
        ));
    }
}

/// Context handed to a tool handler.
pub struct ToolContext {
    /// Calling session's id.
    pub session_id: SessionId,
    /// Prefix for terminals this session creates.
    pub terminal_prefix: Arc<str>,
    /// The calling session's memory (shared by the session's calls).
    pub session: Arc<MemoryHandle>,
    /// Shared services.
    pub services: Arc<Services>,
    /// Present when the request carried a progress token.
    pub progress: Option<ProgressReporter>,
}

impl ToolContext {
    /// The same agent's context for a tool run on its behalf by another tool (without
    /// progress reports).
    pub fn sibling(&self) -> ToolContext {
        ToolContext {
            session_id: self.session_id.clone(),
            terminal_prefix: self.terminal_prefix.clone(),
            session: self.session.clone(),
            services: self.services.clone(),
            progress: None,
        }
    }

    /// Reports progress if the client asked for it.
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(p) = &self.progress {
            p.report(progress, total, message);
        }
    }

    /// Files this session has opened, oldest first.
    pub async fn opened_files(&self) -> Vec<PathBuf> {
        self.session
            .opened_files
            .send(OpenedFiles)
            .await
            .unwrap_or_default()
    }

    /// Records `path` as opened by this session.
    pub fn record_opened(&self, path: PathBuf) {
        self.session.record_opened.do_send(RecordOpened(path));
    }

    /// The version of `path` this session last read or wrote.
    pub async fn known_version(&self, path: &std::path::Path) -> Option<Fingerprint> {
        self.session
            .known_version
            .send(KnownVersion(path.to_path_buf()))
            .await
            .ok()
            .flatten()
    }

    /// Remembers (or with `None` forgets) the version of `path` this session has seen.
    pub fn record_version(&self, path: PathBuf, fingerprint: Option<Fingerprint>) {
        self.session
            .record_version
            .do_send(RecordVersion { path, fingerprint });
    }
}
