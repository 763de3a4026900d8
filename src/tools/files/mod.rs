//! Workspace file tools that work without an editor: read, create, delete, rename,
//! line/column edits, block replace, tree, find and search. Every write goes through
//! the WorkspaceWriter actor with the version this session last saw.

pub mod create_file;
pub mod delete_file;
pub mod edit_text;
pub mod find_files;
pub mod get_file_tree;
pub mod read_file;
pub mod rename_file;
pub mod replace_block;
pub mod search_workspace;

use std::path::PathBuf;

use super::{ToolContext, ToolError, WorkspacePath};
use crate::actors::diagnostics::Invalidate;
use crate::actors::writer::{self, Write, WriteOp, Written};

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
        let cap = ctx.services.settings.files.max_results;
        Ok(Self {
            root: ctx.services.workspace.root().to_path_buf(),
            start,
            max: max_results.unwrap_or(cap).min(cap),
        })
    }
}

/// Sends a write to the WorkspaceWriter, checking the version this session last saw,
/// and records the new version.
pub(crate) async fn write(
    ctx: &ToolContext,
    path: PathBuf,
    op: WriteOp,
) -> Result<Written, ToolError> {
    let expected = ctx.known_version(&path).await;
    let write = Write {
        path: path.clone(),
        expected,
        op,
    };
    let written = super::ask(&ctx.services.writer, writer::NAME, write).await?;
    ctx.record_version(path, written.fingerprint);
    ctx.services.diagnostics.do_send(Invalidate);
    Ok(written)
}
