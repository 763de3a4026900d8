//! Edits a language server proposes (`renameSymbol`, `formatDocument`,
//! `applyCodeAction` answered by the bridge's own servers), applied like an agent's own
//! edits: every file confined to the workspace and checked against the claims first,
//! every new text computed before anything is written (an edit that does not apply
//! changes nothing), then each file written through the WorkspaceWriter provided it
//! still has the text the edits were computed on.

use std::path::PathBuf;

use serde::Serialize;

use super::{before_write, write_expecting};
use crate::actors::writer::WriteOp;
use crate::lsp::edits::{apply, FileEdits};
use crate::tools::claims::check_write;
use crate::tools::{blocking, ToolContext, ToolError};
use crate::workspace::files::read_text;

/// What was written.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Applied {
    /// Absolute paths of the files changed.
    pub affected_files: Vec<String>,
    /// Edits applied, over every file.
    pub total_edits: usize,
}

/// Applies `files` (from [`crate::lsp::edits::by_file`]) for `tool`.
pub(crate) async fn apply_all(
    ctx: &ToolContext,
    tool: &'static str,
    files: Vec<FileEdits>,
) -> Result<Applied, ToolError> {
    let mut paths = Vec::with_capacity(files.len());
    for file in &files {
        let path = ctx.services.workspace.resolve(&file.path).map_err(|e| {
            ToolError::refused(format!(
                "The language server's edit touches a file the bridge may not write ({e}); nothing was changed"
            ))
        })?;
        check_write(ctx, &path, tool).await?;
        paths.push(path);
    }
    let root = ctx.services.workspace.dir().clone();
    let planned: Vec<(PathBuf, String, _, usize)> = {
        let paths = paths.clone();
        blocking(move || {
            files
                .iter()
                .zip(paths)
                .map(|(file, path)| {
                    let (text, fingerprint) = read_text(&root, &path)?;
                    let new = apply(&text, &file.edits, &file.path)
                        .map_err(|e| ToolError::refused(e.to_string()))?;
                    Ok((path, new, fingerprint, file.edits.len()))
                })
                .collect::<Result<Vec<_>, ToolError>>()
        })
        .await??
    };
    let mut applied = Applied::default();
    for (path, content, fingerprint, edits) in planned {
        let under_way = before_write(ctx, &path, tool).await;
        let op = WriteOp::Create {
            content,
            directory: false,
            overwrite: true,
        };
        if let Err(e) = write_expecting(
            ctx,
            path.clone(),
            op,
            tool,
            Some(fingerprint),
            Some(under_way),
        )
        .await
        {
            if applied.affected_files.is_empty() {
                return Err(e);
            }
            return Err(ToolError::refused(format!(
                "{e}; {} was not changed, and these were: {}",
                path.display(),
                applied.affected_files.join(", ")
            )));
        }
        applied.affected_files.push(path.display().to_string());
        applied.total_edits += edits;
    }
    Ok(applied)
}
