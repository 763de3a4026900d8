//! `findFiles`: files matching a glob, honouring .gitignore.

use serde::Deserialize;
use serde_json::{json, Value};

use super::Scope;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{blocking, Tool, ToolContext};
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
        let Scope { root, start, max } =
            match Scope::of(&ctx, args.path.as_deref(), args.max_results) {
                Ok(s) => s,
                Err(e) => return e,
            };
        match blocking(move || find_files(&root, &start, &args.pattern, max)).await {
            Ok(Ok(listing)) => CallToolResult::json(&listing),
            Ok(Err(e)) => CallToolResult::error(e.to_string()),
            Err(e) => e,
        }
    }
}
