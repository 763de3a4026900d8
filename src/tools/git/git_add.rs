//! `gitAdd`: stage workspace paths.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{git, pathspec};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext, ToolResult, WorkspacePath};

pub struct GitAdd;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    #[schemars(length(min = 1, max = 1000))]
    paths: Vec<WorkspacePath>,
}

impl Tool for GitAdd {
    type Args = Args;
    const NAME: &'static str = "gitAdd";
    const DESCRIPTION: &'static str = "Stage files (paths inside the workspace).";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let mut argv = vec!["add".to_string(), "--".into()];
        for p in &args.paths {
            argv.push(pathspec(&ctx, p)?);
        }
        git(&ctx, argv).await?;
        Ok(CallToolResult::json(
            &json!({ "success": true, "staged": args.paths }),
        ))
    }
}
