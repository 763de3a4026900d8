//! `checkEdit`: which diagnostics a proposed text would add or remove, without writing
//! it. The file's language server is given the text in memory, its diagnostics
//! collected, and the file's real text given back; the file on disk is never touched.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::actors::language_servers::{CheckEdit as Check, MAX_DOCUMENT_BYTES, NAME};
use crate::actors::messages::automation::{AskEditGate, EditGateChecked};
use crate::actors::messages::session::SessionId;
use crate::diagnostics::{Diagnostic, Severity};
use crate::lsp::{shapes, LspDiagnostic};
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::services::Services;
use crate::tools::{output, Tool, ToolContext, ToolError, ToolResult, WorkspacePath};

pub struct CheckEdit;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    /// The existing file the text is proposed for (a new file: write it, then
    /// getDiagnostics)
    file_path: WorkspacePath,
    /// The whole proposed text of the file
    new_content: String,
}

/// What the proposed text changes in the file's diagnostics.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// Absolute path.
    pub(crate) file_path: String,
    /// Diagnostics of the proposed text that the text on disk does not have (positions
    /// in the proposed text).
    pub(crate) added: Vec<Diagnostic>,
    /// Diagnostics of the text on disk that the proposed text does not have.
    pub(crate) removed: Vec<Diagnostic>,
    /// Errors in the text on disk.
    pub(crate) errors_before: usize,
    /// Errors in the proposed text.
    pub(crate) errors_after: usize,
    /// Always false: nothing was written.
    pub(crate) written: bool,
}

impl Tool for CheckEdit {
    type Args = Args;
    const NAME: &'static str = "checkEdit";
    const EFFECT: Effect = Effect::Reads;
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
        let answer = compare(&ctx.services, path, args.new_content)
            .await
            .map_err(ToolError::refused)?;
        Ok(CallToolResult::structured(&answer))
    }
}

/// What `text` proposed for `path` (confined, absolute) changes in its diagnostics, by
/// the file's language server; why not, written for an agent.
pub(crate) async fn compare(
    services: &Services,
    path: PathBuf,
    text: String,
) -> Result<Answer, String> {
    let size = text.len() as u64;
    if size > MAX_DOCUMENT_BYTES {
        return Err(format!(
            "newContent is {size} bytes; language servers are given texts up to {MAX_DOCUMENT_BYTES} bytes"
        ));
    }
    if !path.is_file() {
        return Err(format!(
            "{} is not an existing file; checkEdit compares a proposal with the file's text \
             (for a new file, write it and call getDiagnostics)",
            path.display()
        ));
    }
    let check = Check {
        file: path.clone(),
        text,
    };
    let (before, after) = services
        .language_servers
        .send(check)
        .await
        .map_err(|e| format!("the {NAME} actor is unavailable ({e})"))?
        .map_err(|e| e.to_string())?;
    let (before, after) = (converted(&before), converted(&after));
    let errors = |d: &[Diagnostic]| d.iter().filter(|d| d.severity == Severity::Error).count();
    Ok(Answer {
        file_path: path.display().to_string(),
        errors_before: errors(&before),
        errors_after: errors(&after),
        added: missing_from(&after, &before),
        removed: missing_from(&before, &after),
        written: false,
    })
}

/// How long an edit gate waits for its check; a check that takes longer (a server
/// still starting) lets the change through.
const GATE_WAIT: Duration = crate::hooks::EDIT_GATE_WAIT;

/// An agent proposes `text` for `path` with `tool` (its Edit or Write, an `openDiff`):
/// the automation policy's `onEditProposed` hooks hear of it, and when one is an edit
/// gate for the file the text is checked. `Some(reason)` (written for the model) when
/// the gate refuses it. `text` is only computed when a gate asks for it; `None` from
/// it (the proposal cannot be known) lets the change through.
pub(crate) async fn edit_gate(
    services: &Services,
    session: &SessionId,
    agent: &str,
    path: &Path,
    tool: &str,
    text: impl FnOnce() -> Option<String>,
) -> Option<String> {
    let automation = services.automation.as_ref()?;
    let file = services.workspace.relative(&path.to_string_lossy())?;
    let ask = AskEditGate {
        session: session.clone(),
        agent: agent.to_string(),
        file: file.clone(),
        tool: tool.to_string(),
    };
    let gate = automation.send(ask).await.ok().flatten()?;
    let checked = |outcome: String, refused: bool| EditGateChecked {
        hook: gate.hook,
        file: file.clone(),
        outcome,
        refused,
    };
    let proposed = if services.settings.lsp.enabled {
        text().ok_or(
            "the proposed text is not known (too large to forward, or the edit does not apply)"
                .to_string(),
        )
    } else {
        Err("lsp.enabled is false".to_string())
    };
    let compared = match proposed {
        Ok(text) => tokio::time::timeout(GATE_WAIT, compare(services, path.to_path_buf(), text))
            .await
            .unwrap_or_else(|_| Err(format!("no answer within {} s", GATE_WAIT.as_secs()))),
        Err(e) => Err(e),
    };
    let answer = match compared {
        Ok(answer) => answer,
        Err(why) => {
            tracing::info!(hook = gate.hook, file, "edit gate: not checked: {why}");
            automation.do_send(checked(format!("not checked: {why}"), false));
            return None;
        }
    };
    let added: Vec<&Diagnostic> = answer
        .added
        .iter()
        .filter(|d| d.severity <= gate.min_severity)
        .collect();
    if added.is_empty() {
        automation.do_send(checked("passed".into(), false));
        return None;
    }
    let listed: Vec<String> = added
        .iter()
        .take(20)
        .map(|d| format!("{file}:{}", described(d)))
        .collect();
    automation.do_send(checked(
        format!("refused {tool}: adds {}", added.len()),
        true,
    ));
    Some(format!(
        "ide-bridge edit gate ({}): this {tool} of {file} was not applied: the language server reports {} new problem(s) in the proposed text. Change the proposal so it adds none:\n{}",
        gate.hook,
        added.len(),
        listed.join("\n")
    ))
}

/// A diagnostic in a line: `line:column Severity: message` (1-based).
pub(crate) fn described(d: &Diagnostic) -> String {
    format!(
        "{}:{} {:?}: {}",
        d.range.start.line + 1,
        d.range.start.character + 1,
        d.severity,
        d.message
    )
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
