//! `gitLog`.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{check_ref_or_range, git, pathspec};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct GitLog;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    max_count: Option<u32>,
    #[serde(rename = "ref")]
    revision: Option<String>,
    path: Option<String>,
}

impl Tool for GitLog {
    type Args = Args;
    const NAME: &'static str = "gitLog";
    const DESCRIPTION: &'static str =
        "Recent commits (hash, author, date, subject), optionally of a ref or path.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "maxCount": { "type": "integer", "minimum": 1, "maximum": 500, "default": 20 },
                "ref": { "type": "string", "minLength": 1 },
                "path": { "type": "string" }
            },
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let mut argv = vec![
            "log".to_string(),
            format!("--max-count={}", args.max_count.unwrap_or(20)),
            "--pretty=format:%H%x1f%an%x1f%aI%x1f%s".into(),
        ];
        if let Some(r) = &args.revision {
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
            Ok(out) => {
                let commits: Vec<Value> = out
                    .stdout
                    .lines()
                    .filter_map(|l| {
                        let f: Vec<&str> = l.split('\u{1f}').collect();
                        (f.len() == 4).then(
                            || json!({"hash": f[0], "author": f[1], "date": f[2], "subject": f[3]}),
                        )
                    })
                    .collect();
                CallToolResult::json(&json!({ "commits": commits }))
            }
            Err(e) => e,
        }
    }
}
