//! `gitCommit`: commit what is staged (or everything tracked, with `all`).

use serde::Deserialize;
use serde_json::{json, Value};

use super::git;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct GitCommit;

/// Arguments.
#[derive(Deserialize)]
pub struct Args {
    message: String,
    #[serde(default)]
    all: bool,
}

impl Tool for GitCommit {
    type Args = Args;
    const NAME: &'static str = "gitCommit";
    const DESCRIPTION: &'static str =
        "Commit staged changes (all: true also stages tracked changes). A message is required.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "message": { "type": "string", "minLength": 1, "maxLength": 10000 },
                "all": { "type": "boolean" }
            },
            "required": ["message"],
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        if args.message.trim().is_empty() {
            return CallToolResult::error("A commit message is required");
        }
        let mut argv = vec!["commit".to_string()];
        if args.all {
            argv.push("--all".into());
        }
        argv.push(format!("--message={}", args.message));
        match git(&ctx, argv).await {
            Ok(_) => match git(&ctx, vec!["rev-parse".into(), "HEAD".into()]).await {
                Ok(head) => {
                    CallToolResult::json(&json!({ "success": true, "commit": head.stdout.trim() }))
                }
                Err(e) => e,
            },
            Err(e) => e,
        }
    }
}
