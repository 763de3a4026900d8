//! `openFile`: records the file as opened by this session.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::extension::ExtError;
use crate::protocol::mcp::CallToolResult;
use crate::tools::editor::call_editor;
use crate::tools::{EditorUse, Tool, ToolContext};
use crate::workspace::language_id;

/// The tool.
pub struct OpenFile;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    file_path: String,
    start_line: Option<u64>,
    #[serde(default = "yes")]
    make_frontmost: bool,
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

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "filePath": { "type": "string", "description": "Path of the file (absolute or workspace-relative)" },
                "preview": { "type": "boolean", "default": false },
                "startText": { "type": "string", "description": "Select from the first occurrence of this text" },
                "endText": { "type": "string", "description": "Select up to this text" },
                "selectToEndOfLine": { "type": "boolean", "default": false },
                "makeFrontmost": { "type": "boolean", "default": true },
                "startLine": { "type": "integer", "minimum": 1 },
                "endLine": { "type": "integer", "minimum": 1 }
            },
            "required": ["filePath"]
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let path = match super::resolve(&ctx, &args.file_path) {
            Ok(p) => p,
            Err(e) => return e,
        };
        // Regular files only, opened without blocking (a FIFO would hold the thread).
        let p = path.clone();
        let root = ctx.services.workspace.dir().clone();
        let text =
            match crate::tools::blocking(move || crate::workspace::files::read_regular(&root, &p))
                .await
            {
                Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
                Ok(Err(crate::workspace::files::FileError::NotFound(_))) => {
                    return CallToolResult::error(format!("File not found: {}", args.file_path))
                }
                Ok(Err(e)) => {
                    return CallToolResult::error(format!("Cannot open {}: {e}", args.file_path))
                }
                Err(e) => return e,
            };
        ctx.record_opened(path.clone());
        let mut request = json!({ "file": path });
        if let Some(line) = args.start_line {
            request["line"] = json!(line);
        }
        match call_editor(&ctx, "openFile", request).await {
            Ok(_) | Err(ExtError::NotConnected) => {}
            Err(e) => return CallToolResult::error(e.to_string()),
        }
        let shown = path.display().to_string();
        if args.make_frontmost {
            CallToolResult::text(format!("Opened file: {shown}"))
        } else {
            CallToolResult::json(&json!({
                "success": true,
                "filePath": shown,
                "languageId": language_id(&path),
                "lineCount": text.lines().count(),
            }))
        }
    }
}
