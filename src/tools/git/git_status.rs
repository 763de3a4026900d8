//! `gitStatus`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::git;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext, ToolResult};

pub struct GitStatus;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {}

impl Tool for GitStatus {
    type Args = Args;
    const NAME: &'static str = "gitStatus";
    const DESCRIPTION: &'static str = "Branch and changed files of the workspace repository.";

    async fn call(ctx: ToolContext, _args: Args) -> ToolResult {
        let argv = vec!["status".into(), "--porcelain=v1".into(), "--branch".into()];
        let out = git(&ctx, argv).await?;
        let mut branch = Value::Null;
        let mut files = Vec::new();
        for line in out.stdout.lines() {
            if let Some(b) = line.strip_prefix("## ") {
                branch = json!(b);
            } else if line.len() > 3 {
                let (code, path) = line.split_at(2);
                files.push(json!({
                    "index": code[..1].trim(),
                    "worktree": code[1..].trim(),
                    "path": path.trim_start(),
                }));
            }
        }
        Ok(CallToolResult::json(
            &json!({ "branch": branch, "clean": files.is_empty(), "files": files }),
        ))
    }
}
