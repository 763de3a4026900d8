//! `gitDiff`: working tree, staged, or between refs.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{check_ref_or_range, git, pathspec, text_result};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct GitDiff;

/// Arguments.
#[derive(Deserialize)]
pub struct Args {
    #[serde(default)]
    staged: bool,
    from: Option<String>,
    to: Option<String>,
    path: Option<String>,
}

impl Tool for GitDiff {
    type Args = Args;
    const NAME: &'static str = "gitDiff";
    const DESCRIPTION: &'static str =
        "Diff of the working tree (default), of staged changes (staged: true), or between refs (from, to).";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "staged": { "type": "boolean" },
                "from": { "type": "string", "minLength": 1 },
                "to": { "type": "string", "minLength": 1 },
                "path": { "type": "string" }
            },
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
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
            match check_ref_or_range(r) {
                Ok(r) => argv.push(r),
                Err(e) => return e,
            }
        }
        argv.push("--".into());
        if let Some(p) = &args.path {
            match pathspec(&ctx, p) {
                Ok(p) => argv.push(p),
                Err(e) => return e,
            }
        }
        match git(&ctx, argv).await {
            Ok(out) => text_result(out, "No differences."),
            Err(e) => e,
        }
    }
}
