//! `gitLog`: recent commits as JSON.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{check_ref_or_range, git, pathspec};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext, ToolResult, WorkspacePath};

pub struct GitLog;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    #[serde(default = "default_count")]
    #[schemars(range(min = 1, max = 500))]
    max_count: u32,
    #[serde(rename = "ref")]
    #[schemars(length(min = 1))]
    revision: Option<String>,
    path: Option<WorkspacePath>,
}

fn default_count() -> u32 {
    20
}

impl Tool for GitLog {
    type Args = Args;
    const NAME: &'static str = "gitLog";
    const DESCRIPTION: &'static str =
        "Recent commits (hash, author, date, subject), optionally of a ref or path.";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let mut argv = vec![
            "log".to_string(),
            format!("--max-count={}", args.max_count),
            "--pretty=format:%H%x1f%an%x1f%aI%x1f%s".into(),
        ];
        if let Some(r) = &args.revision {
            argv.push(check_ref_or_range(r)?);
        }
        argv.push("--".into());
        if let Some(p) = &args.path {
            argv.push(pathspec(&ctx, p)?);
        }
        let out = git(&ctx, argv).await?;
        let commits: Vec<Value> = out
            .stdout
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split('\u{1f}').collect();
                (f.len() == 4)
                    .then(|| json!({"hash": f[0], "author": f[1], "date": f[2], "subject": f[3]}))
            })
            .collect();
        Ok(CallToolResult::json(&json!({ "commits": commits })))
    }
}
