//! `gitBranches`.

use serde::Deserialize;
use serde_json::{json, Value};

use super::git;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct GitBranches;

/// No arguments.
#[derive(Deserialize)]
pub struct Args {}

impl Tool for GitBranches {
    type Args = Args;
    const NAME: &'static str = "gitBranches";
    const DESCRIPTION: &'static str = "Local and remote branches, with the current one marked.";

    fn schema() -> Value {
        json!({ "type": "object", "properties": {}, "additionalProperties": false })
    }

    async fn call(ctx: ToolContext, _args: Args) -> CallToolResult {
        let argv = vec![
            "branch".into(),
            "--all".into(),
            "--format=%(HEAD)%09%(refname:short)".into(),
        ];
        match git(&ctx, argv).await {
            Ok(out) => {
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
                CallToolResult::json(&json!({ "current": current, "branches": branches }))
            }
            Err(e) => e,
        }
    }
}
