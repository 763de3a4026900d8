//! `openFile`: records the file as opened by this session.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::actors::extension::ExtError;
use crate::protocol::editor::Method;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::editor::call_editor;
use crate::tools::{blocking, EditorUse, Tool, ToolContext, ToolError, ToolResult, WorkspacePath};
use crate::workspace::files::{read_regular, FileError};
use crate::workspace::language_id;

pub struct OpenFile;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Path of the file (absolute or workspace-relative)
    file_path: WorkspacePath,
    #[serde(flatten)]
    selection: CliSelection,
    #[serde(default = "yes")]
    make_frontmost: bool,
    #[schemars(range(min = 1))]
    start_line: Option<u64>,
}

/// What the Claude Code CLI may send to select text in the opened file (the VS Code
/// extension's `openFile` arguments): the editor selects it.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct CliSelection {
    /// Accepted; the file opens as a kept tab either way.
    #[serde(default)]
    #[allow(dead_code)]
    preview: bool,
    /// Select from the first occurrence of this text
    start_text: Option<String>,
    /// Select up to this text
    end_text: Option<String>,
    #[serde(default)]
    select_to_end_of_line: bool,
    #[schemars(range(min = 1))]
    end_line: Option<u64>,
}

fn yes() -> bool {
    true
}

/// A range of the file for the editor to select: 1-based lines and 1-based UTF-16
/// columns (the extension protocol's positions), the end exclusive.
#[derive(Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Span {
    start_line: usize,
    start_column: usize,
    end_line: usize,
    end_column: usize,
}

/// The protocol position of byte `at` of `text`.
fn position(text: &str, at: usize) -> (usize, usize) {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..at].matches('\n').count() + 1;
    (line, text[line_start..at].encode_utf16().count() + 1)
}

/// What the selection arguments select in `text`, searching from `startLine`:
/// `startText` (to the end of `endText` after it, when given), or the lines
/// `startLine..=endLine`; `selectToEndOfLine` takes the end to its line's end. `None`
/// when nothing is to be selected; an error names text that is not there.
fn select(text: &str, start_line: Option<u64>, sel: &CliSelection) -> Result<Option<Span>, String> {
    // Where line `n` starts (the text's end past its last line).
    let line_start = |n: u64| -> usize {
        match usize::try_from(n.saturating_sub(2)) {
            _ if n <= 1 => 0,
            Ok(newline) => text
                .match_indices('\n')
                .nth(newline)
                .map_or(text.len(), |(i, _)| i + 1),
            Err(_) => text.len(),
        }
    };
    let line_end = |at: usize| text[at..].find('\n').map_or(text.len(), |i| at + i);
    let from = line_start(start_line.unwrap_or(1));
    let (start, mut end) = match (&sel.start_text, sel.end_line) {
        (Some(wanted), _) if !wanted.is_empty() => {
            let start = text[from..]
                .find(wanted.as_str())
                .map(|i| from + i)
                .ok_or_else(|| format!("startText {wanted:?} is not in the file"))?;
            let after = start + wanted.len();
            let end = match sel.end_text.as_deref().filter(|e| !e.is_empty()) {
                Some(last) => text[after..]
                    .find(last)
                    .map(|i| after + i + last.len())
                    .ok_or_else(|| format!("endText {last:?} is not after startText"))?,
                None => after,
            };
            (start, end)
        }
        (_, Some(last)) => (
            from,
            line_end(line_start(last.max(start_line.unwrap_or(1)))),
        ),
        _ if sel.select_to_end_of_line && start_line.is_some() => (from, from),
        _ => return Ok(None),
    };
    if sel.select_to_end_of_line {
        end = line_end(end);
    }
    let ((start_line, start_column), (end_line, end_column)) =
        (position(text, start), position(text, end));
    Ok(Some(Span {
        start_line,
        start_column,
        end_line,
        end_column,
    }))
}

impl Tool for OpenFile {
    type Args = Args;
    const NAME: &'static str = "openFile";
    const EFFECT: Effect = Effect::Adds;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Open a file in the editor (without an editor: remember it as opened by this session). \
         makeFrontmost=false returns JSON with languageId and lineCount.";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let path = args.file_path.resolve(&ctx)?;
        // Regular files only, opened without blocking (a FIFO would hold the thread).
        let p = path.clone();
        let root = ctx.services.workspace.dir().clone();
        let text = match blocking(move || read_regular(&root, &p)).await? {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(FileError::NotFound(_)) => {
                return Err(ToolError::refused(format!(
                    "File not found: {}",
                    args.file_path
                )))
            }
            Err(e) => {
                return Err(ToolError::refused(format!(
                    "Cannot open {}: {e}",
                    args.file_path
                )))
            }
        };
        ctx.record_opened(path.clone());
        let (span, missing) = match select(&text, args.start_line, &args.selection) {
            Ok(span) => (span, None),
            Err(why) => (None, Some(why)),
        };
        let mut request = json!({ "file": path });
        if let Some(line) = span
            .as_ref()
            .map_or(args.start_line, |s| Some(s.start_line as u64))
        {
            request["line"] = json!(line);
        }
        if let Some(span) = &span {
            request["selection"] = json!(span);
        }
        if !args.make_frontmost {
            request["background"] = json!(true);
        }
        match call_editor(&ctx, Method::OpenFile, request).await {
            Ok(_) | Err(ExtError::NotConnected) => {}
            Err(e) => return Err(e.into()),
        }
        let shown = path.display().to_string();
        if args.make_frontmost {
            let note = missing
                .map(|why| format!(" ({why}: nothing selected)"))
                .unwrap_or_default();
            Ok(CallToolResult::text(format!("Opened file: {shown}{note}")))
        } else {
            Ok(CallToolResult::json(&json!({
                "success": true,
                "filePath": shown,
                "languageId": language_id(&path),
                "lineCount": text.lines().count(),
            })))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(v: serde_json::Value) -> CliSelection {
        serde_json::from_value(v).unwrap()
    }

    fn span(a: usize, b: usize, c: usize, d: usize) -> Option<Span> {
        Some(Span {
            start_line: a,
            start_column: b,
            end_line: c,
            end_column: d,
        })
    }

    #[test]
    fn the_cli_selection_arguments_select_what_they_name() {
        let text = "fn a() {}\nfn héllo() {\n    body();\n}\nfn a() {}\n";
        let none = sel(json!({}));
        assert_eq!(select(text, Some(2), &none), Ok(None));
        // startText alone: that text; from startLine on.
        assert_eq!(
            select(text, None, &sel(json!({"startText": "fn a"}))),
            Ok(span(1, 1, 1, 5))
        );
        assert_eq!(
            select(text, Some(3), &sel(json!({"startText": "fn a"}))),
            Ok(span(5, 1, 5, 5))
        );
        // To the end of endText, columns in UTF-16 units.
        assert_eq!(
            select(
                text,
                None,
                &sel(json!({"startText": "héllo", "endText": "}"}))
            ),
            Ok(span(2, 4, 4, 2))
        );
        assert_eq!(
            select(
                text,
                None,
                &sel(json!({"startText": "body", "selectToEndOfLine": true}))
            ),
            Ok(span(3, 5, 3, 12))
        );
        // Whole lines.
        assert_eq!(
            select(text, Some(2), &sel(json!({"endLine": 3}))),
            Ok(span(2, 1, 3, 12))
        );
        // Text that is not there is named.
        let missing = select(text, None, &sel(json!({"startText": "nowhere"})));
        assert!(missing.unwrap_err().contains("\"nowhere\""));
        let missing = select(
            text,
            None,
            &sel(json!({"startText": "body", "endText": "fn héllo"})),
        );
        assert!(missing.unwrap_err().contains("not after startText"));
        // Past the end: nothing there to find.
        assert!(select(text, Some(99), &sel(json!({"startText": "fn"}))).is_err());
    }
}
