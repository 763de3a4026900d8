//! `getDiagnostics`: a JSON array of `{uri, diagnostics}`. Without an editor the
//! diagnostics come from the applicable command-line linters.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::actors::diagnostics::{self, GetDiagnostics as Get};
use crate::actors::extension::{Cached, GetStatus, Read};
use crate::diagnostics::FileDiagnostics;
use crate::protocol::mcp::{CallToolResult, Content};
use crate::tools::{ask, EditorUse, Tool, ToolContext, ToolResult, WorkspacePath};
use crate::workspace::file_url;

pub struct GetDiagnostics;

/// With an editor connected: what it pushed (the uri asked for is echoed).
async fn from_editor(ctx: &ToolContext, uri: Option<&WorkspacePath>) -> Option<CallToolResult> {
    let ext = &ctx.services.extension;
    if !ext.send(GetStatus).await.ok()?.connected {
        return None;
    }
    let file = match uri {
        Some(u) => match u.resolve(ctx) {
            Ok(path) => Some(path.display().to_string()),
            Err(_) => return Some(CallToolResult::text("[]")),
        },
        None => None,
    };
    let Ok(Cached::Diagnostics(mut files)) = ext.send(Read::Diagnostics(file)).await else {
        return None;
    };
    if let Some(u) = uri {
        for f in &mut files {
            f.uri = u.to_string();
        }
    }
    Some(CallToolResult::json(&files))
}

#[derive(Deserialize, JsonSchema)]
pub struct Args {
    /// file:// URI of one file; omit for all files
    uri: Option<WorkspacePath>,
}

impl Tool for GetDiagnostics {
    type Args = Args;
    const NAME: &'static str = "getDiagnostics";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Language diagnostics (errors, warnings) for one file URI, or for every file known. \
         Without an editor they come from the workspace's linters (cargo check, tsc, eslint, ruff, pyright, go vet, biome).";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        if let Some(result) = from_editor(&ctx, args.uri.as_ref()).await {
            return Ok(result);
        }
        let report = ask(&ctx.services.diagnostics, diagnostics::NAME, Get).await?;
        let files: Vec<FileDiagnostics> = match &args.uri {
            // The CLI matches the uri it asked for: echo it. Nothing known (or a path
            // outside the workspace) is `[]`, never an error.
            Some(uri) => uri
                .resolve(&ctx)
                .ok()
                .and_then(|path| report.files.get(&path))
                .map(|d| {
                    vec![FileDiagnostics {
                        uri: uri.to_string(),
                        diagnostics: d.clone(),
                    }]
                })
                .unwrap_or_default(),
            None => report
                .files
                .iter()
                .map(|(path, d)| FileDiagnostics {
                    uri: file_url(path),
                    diagnostics: d.clone(),
                })
                .collect(),
        };
        let mut result = CallToolResult::json(&files);
        let failed: Vec<&str> = report
            .linters
            .iter()
            .filter_map(|l| l.error.as_deref())
            .collect();
        if !failed.is_empty() {
            result.content.push(Content::Text {
                text: format!("Some linters could not report: {}", failed.join("; ")),
            });
        }
        Ok(result)
    }
}
