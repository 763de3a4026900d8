//! `gitBranches`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::git;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{output, Tool, ToolContext, ToolResult};

pub struct GitBranches;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {}

/// `gitBranches`' answer.
#[derive(Serialize, JsonSchema)]
pub struct Answer {
    /// The branch checked out (none when HEAD is detached or there is no commit).
    current: Option<String>,
    /// Every local and remote branch.
    branches: Vec<String>,
}

impl Tool for GitBranches {
    type Args = Args;
    const NAME: &'static str = "gitBranches";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "Local and remote branches, with the current one marked.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, _args: Args) -> ToolResult {
        let argv = vec![
            "branch".into(),
            "--all".into(),
            "--format=%(HEAD)%09%(refname:short)".into(),
        ];
        let out = git(&ctx, argv).await?;
        let mut current = None;
        let branches: Vec<String> = out
            .stdout
            .lines()
            .filter_map(|l| l.split_once('\t'))
            // `(HEAD detached at 827c133)`, `(no branch, rebasing x)`: git's words for
            // a HEAD on no branch, not a branch.
            .filter(|(_, name)| !name.starts_with('('))
            .map(|(head, name)| {
                if head == "*" {
                    current = Some(name.to_string());
                }
                name.to_string()
            })
            .collect();
        Ok(CallToolResult::structured(&Answer { current, branches }))
    }
}
