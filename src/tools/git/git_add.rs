//! `gitAdd`: stage workspace paths.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{git, pathspec};
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{output, Tool, ToolContext, ToolResult, WorkspacePath};

pub struct GitAdd;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    #[schemars(length(min = 1, max = 1000))]
    paths: Vec<WorkspacePath>,
}

/// `gitAdd`' answer.
#[derive(Serialize, JsonSchema)]
pub struct Answer {
    /// Always true (a failure is a tool error).
    success: bool,
    /// The paths staged, as given.
    staged: Vec<String>,
}

impl Tool for GitAdd {
    type Args = Args;
    const NAME: &'static str = "gitAdd";
    const EFFECT: Effect = Effect::Adds;
    const DESCRIPTION: &'static str = "Stage files (paths inside the workspace).";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let mut argv = vec!["add".to_string(), "--".into()];
        for p in &args.paths {
            argv.push(pathspec(&ctx, p)?);
        }
        git(&ctx, argv).await?;
        Ok(CallToolResult::structured(&Answer {
            success: true,
            staged: args.paths.iter().map(|p| p.as_str().to_string()).collect(),
        }))
    }
}
