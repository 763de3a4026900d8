//! `gitBlame`: who last changed each line.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{git, pathspec, text_result};
use crate::protocol::mcp::Effect;
use crate::tools::{Tool, ToolContext, ToolResult, WorkspacePath};

pub struct GitBlame;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    file_path: WorkspacePath,
    #[schemars(range(min = 1))]
    start_line: Option<u32>,
    #[schemars(range(min = 1))]
    end_line: Option<u32>,
}

impl Tool for GitBlame {
    type Args = Args;
    const NAME: &'static str = "gitBlame";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str =
        "Who last changed each line of a file (optionally lines startLine..endLine).";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let path = pathspec(&ctx, &args.file_path)?;
        let mut argv = vec!["blame".to_string(), "--date=short".into()];
        if args.start_line.is_some() || args.end_line.is_some() {
            let start = args.start_line.unwrap_or(1);
            let end = args.end_line.map(|e| e.to_string()).unwrap_or_default();
            argv.push(format!("-L{start},{end}"));
        }
        argv.push("--".into());
        argv.push(path);
        Ok(text_result(git(&ctx, argv).await?, "No lines."))
    }
}
