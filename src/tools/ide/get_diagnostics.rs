//! `getDiagnostics`: a JSON array of `{uri, diagnostics}`. Without an editor the
//! diagnostics come from the applicable command-line linters, merged with what the
//! bridge's running language servers publish (see `lsp.diagnostics_wait_ms`).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::actors::diagnostics::{self, GetDiagnostics as Get};
use std::path::{Path, PathBuf};

use crate::actors::extension::{Cached, GetStatus, Read};
use crate::actors::language_servers::{AllPublished, Diagnose};
use crate::diagnostics::linters::Linter;
use crate::diagnostics::{Diagnostic, FileDiagnostics};
use crate::lsp::{shapes, LspDiagnostic};
use crate::protocol::mcp::Effect;
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

/// What the bridge's running language servers publish: for `file` (its text on disk
/// given to its server, and the publication waited for), or for every file they have
/// open when `one` is false. Servers are not started for it. The second value says why
/// a server did not answer, when it did not.
async fn from_servers(
    ctx: &ToolContext,
    file: Option<&Path>,
    one: bool,
) -> (Vec<(PathBuf, Vec<Diagnostic>)>, Option<String>) {
    let lsp = &ctx.services.settings.lsp;
    if !lsp.enabled || lsp.diagnostics_wait.is_zero() {
        return (Vec::new(), None);
    }
    let convert = |found: &[serde_json::Value]| -> Vec<Diagnostic> {
        found
            .iter()
            .filter_map(|d| serde_json::from_value::<LspDiagnostic>(d.clone()).ok())
            .map(|d| shapes::diagnostic(&d))
            .collect()
    };
    let pool = &ctx.services.language_servers;
    if !one {
        let all = pool.send(AllPublished).await.unwrap_or_default();
        let listed = all
            .iter()
            .map(|(path, found)| (PathBuf::from(path), convert(found)))
            .collect();
        return (listed, None);
    }
    let Some(file) = file.filter(|f| f.is_file()) else {
        return (Vec::new(), None);
    };
    let asked = Diagnose {
        file: file.to_path_buf(),
        start: false,
        wait: lsp.diagnostics_wait,
    };
    match pool.send(asked).await {
        Ok(Ok(Some(found))) => (vec![(file.to_path_buf(), convert(&found))], None),
        Ok(Ok(None)) => (Vec::new(), None),
        Ok(Err(e)) => (Vec::new(), Some(format!("language server: {e}"))),
        Err(e) => (Vec::new(), Some(format!("language servers: {e}"))),
    }
}

#[derive(Deserialize, JsonSchema)]
pub struct Args {
    /// file:// URI of one file; omit for all files
    uri: Option<WorkspacePath>,
}

impl Tool for GetDiagnostics {
    type Args = Args;
    const NAME: &'static str = "getDiagnostics";
    const EFFECT: Effect = Effect::Reads;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Language diagnostics (errors, warnings) for one file URI, or for every file known. \
         Without an editor they come from the workspace's linters (cargo check, tsc, eslint, ruff, pyright, go vet, biome) \
         and the bridge's running language servers; for a file none of them checks, a second text says so.";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        if let Some(result) = from_editor(&ctx, args.uri.as_ref()).await {
            return Ok(result);
        }
        let report = ask(&ctx.services.diagnostics, diagnostics::NAME, Get).await?;
        let asked = args.uri.as_ref().and_then(|uri| uri.resolve(&ctx).ok());
        let (from_servers, unheard) =
            from_servers(&ctx, asked.as_deref(), args.uri.is_some()).await;
        // One file no linter covers and no running server answered for: its empty list
        // would read as "no errors".
        let unchecked = match (&args.uri, &asked) {
            (Some(_), Some(path)) if from_servers.is_empty() => {
                let rel = ctx
                    .services
                    .workspace
                    .relative(&path.to_string_lossy())
                    .unwrap_or_default();
                let covered = report
                    .linters
                    .iter()
                    .filter_map(|l| Linter::try_from(l.name.to_string()).ok())
                    .any(|l| l.watches(&rel));
                (!covered && !report.files.contains_key(path)).then(|| {
                    let run: Vec<&str> = report.linters.iter().map(|l| l.name).collect();
                    format!(
                        "Nothing checked {rel}: {} and no language server for it is running, so \
                         this empty list says nothing about its errors. A code tool about the \
                         file (getHover, getDocumentSymbols) starts its language server; ask \
                         again after that.",
                        if run.is_empty() {
                            "no linter applies to this workspace".to_string()
                        } else {
                            format!("the linters here ({}) do not cover it", run.join(", "))
                        }
                    )
                })
            }
            _ => None,
        };
        let mut known = report.files.clone();
        for (path, found) in from_servers {
            if found.is_empty() && args.uri.is_none() {
                continue; // every clean document a server has open: not news
            }
            let merged = known.entry(path).or_default();
            for d in found {
                if !merged.contains(&d) {
                    merged.push(d);
                }
            }
        }
        let files: Vec<FileDiagnostics> = match &args.uri {
            // The CLI matches the uri it asked for: echo it. Nothing known (or a path
            // outside the workspace) is `[]`, never an error.
            Some(uri) => asked
                .and_then(|path| known.remove(&path))
                .map(|d| {
                    vec![FileDiagnostics {
                        uri: uri.to_string(),
                        diagnostics: d,
                    }]
                })
                .unwrap_or_default(),
            None => known
                .into_iter()
                .map(|(path, d)| FileDiagnostics {
                    uri: file_url(&path),
                    diagnostics: d,
                })
                .collect(),
        };
        let mut result = CallToolResult::json(&files);
        let mut failed: Vec<&str> = report
            .linters
            .iter()
            .filter_map(|l| l.error.as_deref())
            .collect();
        failed.extend(unheard.as_deref());
        if !failed.is_empty() {
            result.content.push(Content::Text {
                text: format!(
                    "Some linters or language servers could not report: {}",
                    failed.join("; ")
                ),
            });
        }
        if let Some(text) = unchecked {
            result.content.push(Content::Text { text });
        }
        Ok(result)
    }
}
