//! The tools the Claude Code CLI calls by name (protocol spec §4). Without an editor
//! they answer from the session's own state and the workspace.

pub mod check_document_dirty;
pub mod close_all_diff_tabs;
pub mod close_tab;
pub mod get_current_selection;
pub mod get_diagnostics;
pub mod get_latest_selection;
pub mod get_open_editors;
pub mod get_workspace_folders;
pub mod open_diff;
pub mod open_file;
pub mod save_document;
pub mod watch_diagnostics;

use std::path::PathBuf;

use serde_json::json;

use super::{ToolContext, WorkspacePath};
use crate::protocol::mcp::CallToolResult;

/// `{success: false, message: "Document not open: <path>"}`: the answer, not an error.
pub(crate) fn not_open(file_path: &WorkspacePath) -> CallToolResult {
    CallToolResult::json(&json!({
        "success": false,
        "message": format!("Document not open: {file_path}"),
    }))
}

/// Resolves `file_path` and checks that this session opened it; otherwise the
/// [`not_open`] answer.
pub(crate) async fn opened_document(
    ctx: &ToolContext,
    file_path: &WorkspacePath,
) -> Result<PathBuf, CallToolResult> {
    let path = file_path.resolve(ctx).map_err(|_| not_open(file_path))?;
    if ctx.opened_files().await.contains(&path) {
        Ok(path)
    } else {
        Err(not_open(file_path))
    }
}
