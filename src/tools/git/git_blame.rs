//! `gitBlame`.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{git, pathspec, text_result};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct GitBlame;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    file_path: String,
    start_line: Option<u32>,
    end_line: Option<u32>,
}

impl Tool for GitBlame {
    type Args = Args;
    const NAME: &'static str = "gitBlame";
    const DESCRIPTION: &'static str =
        "Who last changed each line of a file (optionally lines startLine..endLine).";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "filePath": { "type": "string" },
                "startLine": { "type": "integer", "minimum": 1 },
                "endLine": { "type": "integer", "minimum": 1 }
            },
            "required": ["filePath"],
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let path = match pathspec(&ctx, &args.file_path) {
            Ok(p) => p,
            Err(e) => return e,
        };
        let mut argv = vec!["blame".to_string(), "--date=short".into()];
        if args.start_line.is_some() || args.end_line.is_some() {
            let start = args.start_line.unwrap_or(1);
            let end = args.end_line.map(|e| e.to_string()).unwrap_or_default();
            argv.push(format!("-L{start},{end}"));
        }
        argv.push("--".into());
        argv.push(path);
        match git(&ctx, argv).await {
            Ok(out) => text_result(out, "No lines."),
            Err(e) => e,
        }
    }
}
