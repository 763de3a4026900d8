//! `checkEdit`: which diagnostics a proposed text would add or remove, without writing
//! it. The file's language server is given the text in memory, its diagnostics
//! collected, and the file's real text given back; the file on disk is never touched.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::actors::language_servers::{CheckEdit as Check, MAX_DOCUMENT_BYTES, NAME};
use crate::diagnostics::{Diagnostic, Severity};
use crate::lsp::{shapes, LspDiagnostic};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{output, Tool, ToolContext, ToolError, ToolResult, WorkspacePath};

pub struct CheckEdit;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    /// The file the text is proposed for (it need not exist yet)
    file_path: WorkspacePath,
    /// The whole proposed text of the file
    new_content: String,
}

/// What the proposed text changes in the file's diagnostics.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// Absolute path.
    file_path: String,
    /// Diagnostics of the proposed text that the text on disk does not have (positions
    /// in the proposed text).
    added: Vec<Diagnostic>,
    /// Diagnostics of the text on disk that the proposed text does not have.
    removed: Vec<Diagnostic>,
    /// Errors in the text on disk.
    errors_before: usize,
    /// Errors in the proposed text.
    errors_after: usize,
    /// Always false: nothing was written.
    written: bool,
}

impl Tool for CheckEdit {
    type Args = Args;
    const NAME: &'static str = "checkEdit";
    const DESCRIPTION: &'static str =
        "Check a proposed whole-file text before writing it: the bridge's language server for the file \
         says which diagnostics (errors, warnings) the text would add and remove. Nothing is written.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        if !ctx.services.settings.lsp.enabled {
            return Err(ToolError::refused(
                "checkEdit needs the bridge's language servers, and lsp.enabled is false",
            ));
        }
        let path = args.file_path.resolve(&ctx)?;
        let size = args.new_content.len() as u64;
        if size > MAX_DOCUMENT_BYTES {
            return Err(ToolError::refused(format!(
                "newContent is {size} bytes; language servers are given texts up to {MAX_DOCUMENT_BYTES} bytes"
            )));
        }
        if !path.is_file() {
            return Err(ToolError::refused(format!(
                "{} is not an existing file; checkEdit compares a proposal with the file's text",
                path.display()
            )));
        }
        let check = Check {
            file: path.clone(),
            text: args.new_content,
        };
        let (before, after) = ctx
            .services
            .language_servers
            .send(check)
            .await
            .map_err(|e| ToolError::refused(format!("the {NAME} actor is unavailable ({e})")))?
            .map_err(|e| ToolError::refused(e.to_string()))?;
        let (before, after) = (converted(&before), converted(&after));
        let errors = |d: &[Diagnostic]| d.iter().filter(|d| d.severity == Severity::Error).count();
        Ok(CallToolResult::structured(&Answer {
            file_path: path.display().to_string(),
            errors_before: errors(&before),
            errors_after: errors(&after),
            added: missing_from(&after, &before),
            removed: missing_from(&before, &after),
            written: false,
        }))
    }
}

fn converted(diagnostics: &[Value]) -> Vec<Diagnostic> {
    diagnostics
        .iter()
        .filter_map(|d| serde_json::from_value::<LspDiagnostic>(d.clone()).ok())
        .map(|d| shapes::diagnostic(&d))
        .collect()
}

/// The diagnostics of `these` that `those` lacks, matched by severity and message (a
/// diagnostic that only moved is the same one), each counted as often as it occurs.
fn missing_from(these: &[Diagnostic], those: &[Diagnostic]) -> Vec<Diagnostic> {
    let mut left: BTreeMap<(Severity, &str), usize> = BTreeMap::new();
    for d in those {
        *left.entry((d.severity, d.message.as_str())).or_default() += 1;
    }
    these
        .iter()
        .filter(|d| match left.get_mut(&(d.severity, d.message.as_str())) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect()
}
