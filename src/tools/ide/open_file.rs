//! `openFile`: records the file as opened by this session.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::actors::extension::ExtError;
use crate::protocol::editor::Method;
use crate::protocol::mcp::CallToolResult;
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
    _selection: CliSelection,
    #[serde(default = "yes")]
    make_frontmost: bool,
    #[schemars(range(min = 1))]
    start_line: Option<u64>,
}

/// What the Claude Code CLI may send to select text in the opened file (the VS Code
/// extension's `openFile` arguments). Accepted so the CLI's calls validate; the bridge
/// opens the file at `startLine` and selects nothing.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct CliSelection {
    #[serde(default)]
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

impl Tool for OpenFile {
    type Args = Args;
    const NAME: &'static str = "openFile";
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
        let mut request = json!({ "file": path });
        if let Some(line) = args.start_line {
            request["line"] = json!(line);
        }
        match call_editor(&ctx, Method::OpenFile, request).await {
            Ok(_) | Err(ExtError::NotConnected) => {}
            Err(e) => return Err(e.into()),
        }
        let shown = path.display().to_string();
        if args.make_frontmost {
            Ok(CallToolResult::text(format!("Opened file: {shown}")))
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
