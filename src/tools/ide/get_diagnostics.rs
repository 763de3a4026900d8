//! `getDiagnostics`: a JSON array of `{uri, diagnostics}`. Without an editor the
//! diagnostics come from the applicable command-line linters.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::diagnostics::{self, GetDiagnostics as Get};
use crate::actors::extension::{Cached, GetStatus, Read};
use crate::actors::supervise::ActorFault;
use crate::diagnostics::FileDiagnostics;
use crate::protocol::mcp::{CallToolResult, Content};
use crate::tools::{EditorUse, Tool, ToolContext};
use crate::workspace::file_url;

/// The tool.
pub struct GetDiagnostics;

/// With an editor connected: what it pushed (the uri asked for is echoed).
async fn from_editor(ctx: &ToolContext, uri: Option<&str>) -> Option<CallToolResult> {
    let ext = &ctx.services.extension;
    if !ext.send(GetStatus).await.ok()?.connected {
        return None;
    }
    let file = match uri {
        Some(u) => match ctx.services.workspace.resolve(u) {
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

/// Arguments.
#[derive(Deserialize)]
pub struct Args {
    uri: Option<String>,
}

impl Tool for GetDiagnostics {
    type Args = Args;
    const NAME: &'static str = "getDiagnostics";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Language diagnostics (errors, warnings) for one file URI, or for every file known. \
         Without an editor they come from the workspace's linters (cargo check, tsc, eslint, ruff, pyright, go vet, biome).";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "uri": { "type": "string", "description": "file:// URI of one file; omit for all files" }
            }
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        if let Some(result) = from_editor(&ctx, args.uri.as_deref()).await {
            return result;
        }
        let report = match ctx.services.diagnostics.send(Get).await {
            Ok(Ok(report)) => report,
            Ok(Err(fault)) => return CallToolResult::error(fault.to_string()),
            Err(e) => {
                return CallToolResult::error(ActorFault::mailbox(diagnostics::NAME, e).to_string())
            }
        };
        let files: Vec<FileDiagnostics> = match &args.uri {
            // The CLI matches the uri it asked for: echo it. Nothing known (or a path
            // outside the workspace) is `[]`, never an error.
            Some(uri) => ctx
                .services
                .workspace
                .resolve(uri)
                .ok()
                .and_then(|path| report.files.get(&path))
                .map(|d| {
                    vec![FileDiagnostics {
                        uri: uri.clone(),
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
        result
    }
}
