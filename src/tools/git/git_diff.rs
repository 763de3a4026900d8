//! `gitDiff`: working tree, staged, or between refs.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{check_ref_or_range, git, pathspec, text_result};
use crate::protocol::mcp::Effect;
use crate::tools::{Tool, ToolContext, ToolResult, WorkspacePath};

pub struct GitDiff;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    #[serde(default)]
    staged: bool,
    #[schemars(length(min = 1))]
    from: Option<String>,
    #[schemars(length(min = 1))]
    to: Option<String>,
    path: Option<WorkspacePath>,
}

impl Tool for GitDiff {
    type Args = Args;
    const NAME: &'static str = "gitDiff";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str =
        "Diff of the working tree (default), of staged changes (staged: true), or between refs (from, to).";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        // No diff program or textconv filter from the repository configuration.
        let mut argv = vec![
            "diff".to_string(),
            "--no-ext-diff".into(),
            "--no-textconv".into(),
        ];
        if args.staged {
            argv.push("--cached".into());
        }
        for r in [&args.from, &args.to].into_iter().flatten() {
            argv.push(check_ref_or_range(r)?);
        }
        argv.push("--".into());
        if let Some(p) = &args.path {
            argv.push(pathspec(&ctx, p)?);
        }
        Ok(text_result(git(&ctx, argv).await?, "No differences."))
    }
}
