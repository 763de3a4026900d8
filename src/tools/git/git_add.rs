//! `gitAdd`: stage workspace paths.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{git, pathspec};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct GitAdd;

/// Arguments.
#[derive(Deserialize)]
pub struct Args {
    paths: Vec<String>,
}

impl Tool for GitAdd {
    type Args = Args;
    const NAME: &'static str = "gitAdd";
    const DESCRIPTION: &'static str = "Stage files (paths inside the workspace).";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": { "paths": { "type": "array", "items": { "type": "string" }, "minItems": 1, "maxItems": 1000 } },
            "required": ["paths"],
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let mut argv = vec!["add".to_string(), "--".into()];
        for p in &args.paths {
            match pathspec(&ctx, p) {
                Ok(p) => argv.push(p),
                Err(e) => return e,
            }
        }
        match git(&ctx, argv).await {
            Ok(_) => CallToolResult::json(&json!({ "success": true, "staged": args.paths })),
            Err(e) => e,
        }
    }
}
