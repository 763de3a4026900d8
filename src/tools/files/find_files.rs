//! `findFiles`: files matching a glob, honouring .gitignore.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::protocol::mcp::CallToolResult;
use crate::tools::{blocking, resolve, Tool, ToolContext};
use crate::workspace::tree::find_files;

/// The tool.
pub struct FindFiles;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    pattern: String,
    path: Option<String>,
    max_results: Option<usize>,
}

impl Tool for FindFiles {
    type Args = Args;
    const NAME: &'static str = "findFiles";
    const DESCRIPTION: &'static str =
        "Find files by glob (e.g. \"*.rs\" anywhere, or \"src/**/mod.rs\"), honouring .gitignore.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": { "type": "string", "minLength": 1 },
                "path": { "type": "string" },
                "maxResults": { "type": "integer", "minimum": 1 }
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let start = match resolve(&ctx, args.path.as_deref().unwrap_or(".")) {
            Ok(p) => p,
            Err(e) => return e,
        };
        let cap = ctx.services.settings.files.max_results;
        let max = args.max_results.unwrap_or(cap).min(cap);
        let root = ctx.services.workspace.root().to_path_buf();
        match blocking(move || find_files(&root, &start, &args.pattern, max)).await {
            Ok(Ok(listing)) => CallToolResult::json(&listing),
            Ok(Err(msg)) => CallToolResult::error(msg),
            Err(e) => e,
        }
    }
}
