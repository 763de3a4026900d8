//! `getFileTree`: the workspace tree as git sees it (ignored files left out).

use serde::Deserialize;
use serde_json::{json, Value};

use crate::protocol::mcp::CallToolResult;
use crate::tools::{blocking, resolve, Tool, ToolContext};
use crate::workspace::tree::file_tree;

/// The tool.
pub struct GetFileTree;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    path: Option<String>,
    max_depth: Option<usize>,
    max_entries: Option<usize>,
}

impl Tool for GetFileTree {
    type Args = Args;
    const NAME: &'static str = "getFileTree";
    const DESCRIPTION: &'static str =
        "List files and directories below a workspace path (default: the root), honouring .gitignore.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string" },
                "maxDepth": { "type": "integer", "minimum": 1, "maximum": 32 },
                "maxEntries": { "type": "integer", "minimum": 1 }
            },
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let start = match resolve(&ctx, args.path.as_deref().unwrap_or(".")) {
            Ok(p) => p,
            Err(e) => return e,
        };
        let cap = ctx.services.settings.files.max_tree_entries;
        let max = args.max_entries.unwrap_or(cap).min(cap);
        let depth = args.max_depth.unwrap_or(3);
        let root = ctx.services.workspace.root().to_path_buf();
        let walk = move || {
            if start.is_dir() {
                Ok(file_tree(&root, &start, depth, max))
            } else {
                Err(format!("Not a directory: {}", start.display()))
            }
        };
        match blocking(walk).await {
            Ok(Ok(listing)) => CallToolResult::json(&listing),
            Ok(Err(msg)) => CallToolResult::error(msg),
            Err(e) => e,
        }
    }
}
