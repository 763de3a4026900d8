//! `gitBranches`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::git;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext, ToolResult};

pub struct GitBranches;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {}

impl Tool for GitBranches {
    type Args = Args;
    const NAME: &'static str = "gitBranches";
    const DESCRIPTION: &'static str = "Local and remote branches, with the current one marked.";

    async fn call(ctx: ToolContext, _args: Args) -> ToolResult {
        let argv = vec![
            "branch".into(),
            "--all".into(),
            "--format=%(HEAD)%09%(refname:short)".into(),
        ];
        let out = git(&ctx, argv).await?;
        let mut current = Value::Null;
        let branches: Vec<&str> = out
            .stdout
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(head, name)| {
                if head == "*" {
                    current = json!(name);
                }
                name
            })
            .collect();
        Ok(CallToolResult::json(
            &json!({ "current": current, "branches": branches }),
        ))
    }
}
