//! `gitCommit`: commit what is staged (or everything tracked, with `all`).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::git;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext, ToolError, ToolResult};

pub struct GitCommit;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    #[schemars(length(min = 1, max = 10_000))]
    message: String,
    #[serde(default)]
    all: bool,
}

impl Tool for GitCommit {
    type Args = Args;
    const NAME: &'static str = "gitCommit";
    const DESCRIPTION: &'static str =
        "Commit staged changes (all: true also stages tracked changes). A message is required.";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        if args.message.trim().is_empty() {
            return Err(ToolError::refused("A commit message is required"));
        }
        let mut argv = vec!["commit".to_string()];
        if args.all {
            argv.push("--all".into());
        }
        argv.push(format!("--message={}", args.message));
        git(&ctx, argv).await?;
        let head = git(&ctx, vec!["rev-parse".into(), "HEAD".into()]).await?;
        Ok(CallToolResult::json(
            &json!({ "success": true, "commit": head.stdout.trim() }),
        ))
    }
}
