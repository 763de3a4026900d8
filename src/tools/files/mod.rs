//! Workspace file tools that work without an editor: read, create, delete, rename,
//! line/column edits, block replace, tree, find and search. Every write goes through
//! the WorkspaceWriter actor with the version this session last saw.

pub mod check_edit;
pub mod create_file;
pub mod delete_file;
pub mod edit_text;
pub mod find_files;
pub mod get_file_tree;
pub mod read_file;
pub mod rename_file;
pub mod replace_block;
pub mod search_workspace;
pub(crate) mod server_edits;

use std::path::{Path, PathBuf};

use super::{ToolContext, ToolError, ToolResult, WorkspacePath};
use crate::actors::diagnostics::Invalidate;
use crate::actors::registry::FileChanged;
use crate::actors::writer::{self, Write, WriteOp, Written};
use crate::workspace::files::FileError;

/// Where a listing or search runs: the workspace root, the confined start directory
/// (`path`, default the root) and the result cap (`max_results`, at most
/// `files.max_results`).
pub(crate) struct Scope {
    root: PathBuf,
    start: PathBuf,
    max: usize,
}

impl Scope {
    /// The scope of a call with these `path` and `maxResults` arguments.
    pub(crate) fn of(
        ctx: &ToolContext,
        path: Option<&WorkspacePath>,
        max_results: Option<usize>,
    ) -> Result<Self, ToolError> {
        let start = path.unwrap_or(&WorkspacePath::from(".")).resolve(ctx)?;
        // Searching where nothing is finds nothing, which would read as "no match".
        if !start.exists() {
            return Err(FileError::NotFound(start.display().to_string()).into());
        }
        let cap = ctx.services.settings.files.max_results;
        Ok(Self {
            root: ctx.services.workspace.root().to_path_buf(),
            start,
            max: max_results.unwrap_or(cap).min(cap),
        })
    }
}

/// A write a tool announced to the change sets ([`before_write`]) and has not finished:
/// its record waits for the text after it. Dropped before it was handed to the writer
/// (the call failed, or was cancelled), it is abandoned, so that the agent's next write
/// to the file is not recorded against this one's text before. Dropped after (the call
/// cancelled while the writer works), it may have happened: it is announced, and the
/// change sets read the file to see.
#[must_use = "dropped, the write is abandoned"]
pub(crate) struct WriteUnderWay {
    services: std::sync::Arc<crate::services::Services>,
    session: crate::actors::messages::session::SessionId,
    path: PathBuf,
    /// What the record and the write's announcement are matched by.
    call: String,
    /// The tool writing, for the announcement.
    tool: &'static str,
    stage: Stage,
}

/// How far a [`WriteUnderWay`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Not handed to the writer (or the writer refused it): dropped, it is abandoned.
    Before,
    /// Handed to the writer, no answer yet: dropped, it is announced.
    HandedOver,
    /// Announced.
    Finished,
}

impl WriteUnderWay {
    /// The write happened: its announcement carries this, and it is not abandoned.
    fn finished(mut self) -> String {
        self.stage = Stage::Finished;
        std::mem::take(&mut self.call)
    }
}

impl Drop for WriteUnderWay {
    fn drop(&mut self) {
        let call = Some(std::mem::take(&mut self.call));
        match self.stage {
            Stage::Finished => {}
            Stage::Before => {
                self.services
                    .changes
                    .do_send(crate::actors::changes::WriteAbandoned {
                        session: self.session.clone(),
                        path: std::mem::take(&mut self.path),
                        call,
                    })
            }
            Stage::HandedOver => {
                let path = std::mem::take(&mut self.path);
                if let Some(display) = self.services.workspace.relative(&path.to_string_lossy()) {
                    self.services.registry.do_send(FileChanged {
                        by: self.session.clone(),
                        path,
                        display,
                        tool: self.tool.to_string(),
                        call,
                        at_ms: crate::actors::activity_log::now_ms(),
                    });
                }
            }
        }
    }
}

/// Before a write tool changes `path`: its text now, for the agent's change set (see
/// [`crate::changes`]). With an editor connected, the text is the editor's (a buffer's
/// unsaved changes are the person's, and the editor's save writes them too); else the
/// file's. Awaited, so that the text is taken before the write.
pub(crate) async fn before_write(
    ctx: &ToolContext,
    path: &Path,
    tool: &'static str,
) -> WriteUnderWay {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let editor_text = crate::tools::editor::call_editor(
        ctx,
        crate::protocol::editor::Method::GetFileContent,
        serde_json::json!({ "file": path.display().to_string() }),
    )
    .await
    .ok()
    .and_then(|v| {
        v.get("content")
            .and_then(|c| c.as_str())
            .map(str::to_string)
    });
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let under_way = WriteUnderWay {
        services: std::sync::Arc::clone(&ctx.services),
        session: ctx.session_id.clone(),
        path: path.to_path_buf(),
        call: format!("bridge:{n}"),
        tool,
        stage: Stage::Before,
    };
    let before = crate::actors::changes::BeforeWrite {
        session: ctx.session_id.clone(),
        path: path.to_path_buf(),
        call: Some(under_way.call.clone()),
        baseline: editor_text.map_or(
            crate::actors::changes::Baseline::Disk,
            crate::actors::changes::Baseline::Text,
        ),
    };
    let _ = ctx.services.changes.send(before).await;
    under_way
}

/// Sends a write to the WorkspaceWriter, checking the version this session last saw,
/// and records the new version.
pub(crate) async fn write(
    ctx: &ToolContext,
    path: PathBuf,
    op: WriteOp,
    tool: &str,
    under_way: Option<WriteUnderWay>,
) -> Result<Written, ToolError> {
    let expected = ctx.known_version(&path).await;
    write_expecting(ctx, path, op, tool, expected, under_way).await
}

/// Like [`write`], provided the file still has the `expected` content (the text the
/// caller read and changed), whatever this session last saw.
pub(crate) async fn write_expecting(
    ctx: &ToolContext,
    path: PathBuf,
    op: WriteOp,
    tool: &str,
    expected: Option<crate::workspace::files::Fingerprint>,
    under_way: Option<WriteUnderWay>,
) -> Result<Written, ToolError> {
    let write = Write {
        path: path.clone(),
        expected,
        op,
    };
    let mut under_way = under_way;
    if let Some(w) = under_way.as_mut() {
        w.stage = Stage::HandedOver;
    }
    let written = match super::ask(&ctx.services.writer, writer::NAME, write).await {
        Ok(written) => written,
        Err(refused) => {
            // Refused: nothing was written.
            if let Some(w) = under_way.as_mut() {
                w.stage = Stage::Before;
            }
            return Err(refused);
        }
    };
    announce(ctx, &path, tool, under_way.map(WriteUnderWay::finished)).await;
    ctx.record_version(path, written.fingerprint);
    ctx.services.diagnostics.do_send(Invalidate);
    Ok(written)
}

/// Tells the other agents that read `path` (and automation) that this agent changed it
/// with `tool` (in the write `call` of [`before_write`], if it announced one); their
/// notices are queued before this returns, so their next call carries them.
pub(crate) async fn announce(ctx: &ToolContext, path: &Path, tool: &str, call: Option<String>) {
    if let Some(display) = ctx.services.workspace.relative(&path.to_string_lossy()) {
        let changed = FileChanged {
            by: ctx.session_id.clone(),
            path: path.to_path_buf(),
            display,
            tool: tool.to_string(),
            call,
            at_ms: crate::actors::activity_log::now_ms(),
        };
        let _ = ctx.services.registry.send(changed).await;
    }
}

/// The editor's answer to `tool`'s write, after telling the others when it succeeded.
pub(crate) async fn by_editor(
    ctx: &ToolContext,
    path: &Path,
    tool: &str,
    done: ToolResult,
    under_way: Option<WriteUnderWay>,
) -> ToolResult {
    if done.as_ref().is_ok_and(|r| !r.is_error) {
        announce(ctx, path, tool, under_way.map(WriteUnderWay::finished)).await;
    }
    done
}
