//! `readFile`: text of a workspace file, optionally a line range, capped in bytes.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::protocol::mcp::CallToolResult;
use crate::tools::{blocking, resolve, Tool, ToolContext};
use crate::workspace::files::{excerpt, read_text};

/// The tool.
pub struct ReadFile;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    file_path: String,
    start_line: Option<usize>,
    end_line: Option<usize>,
    max_bytes: Option<usize>,
}

impl Tool for ReadFile {
    type Args = Args;
    const NAME: &'static str = "readFile";
    const DESCRIPTION: &'static str =
        "Read a text file in the workspace, optionally lines startLine..endLine (1-based, inclusive). \
         Long output is cut with a marker telling where to continue.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "filePath": { "type": "string", "description": "Workspace-relative or absolute path" },
                "startLine": { "type": "integer", "minimum": 1 },
                "endLine": { "type": "integer", "minimum": 1 },
                "maxBytes": { "type": "integer", "minimum": 1 }
            },
            "required": ["filePath"],
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let path = match resolve(&ctx, &args.file_path) {
            Ok(p) => p,
            Err(e) => return e,
        };
        let cap = ctx.services.settings.files.max_read_bytes;
        let max = args.max_bytes.unwrap_or(cap).min(cap);
        let p = path.clone();
        let root = ctx.services.workspace.dir().clone();
        let read = match blocking(move || read_text(&root, &p)).await {
            Ok(r) => r,
            Err(e) => return e,
        };
        let (text, fingerprint) = match read {
            Ok(r) => r,
            Err(e) => return CallToolResult::error(e.to_string()),
        };
        ctx.record_version(path.clone(), Some(fingerprint));
        let ex = excerpt(&text, args.start_line, args.end_line, max);
        CallToolResult::json(&json!({
            "filePath": path.display().to_string(),
            "content": ex.content,
            "startLine": ex.start_line,
            "endLine": ex.end_line,
            "totalLines": ex.total_lines,
            "truncated": ex.truncated,
            "source": "workspace",
        }))
    }
}
