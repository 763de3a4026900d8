//! `gitShow`: one commit with its stat and patch.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{check_ref, git, text_result};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct GitShow;

/// Arguments.
#[derive(Deserialize)]
pub struct Args {
    #[serde(rename = "ref")]
    revision: String,
}

impl Tool for GitShow {
    type Args = Args;
    const NAME: &'static str = "gitShow";
    const DESCRIPTION: &'static str = "A commit's message, stat and patch.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": { "ref": { "type": "string", "minLength": 1 } },
            "required": ["ref"],
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let revision = match check_ref("revision", &args.revision) {
            Ok(r) => r,
            Err(e) => return e,
        };
        match git(
            &ctx,
            vec![
                "show".into(),
                // No diff program or textconv filter from the repository configuration.
                "--no-ext-diff".into(),
                "--no-textconv".into(),
                "--stat".into(),
                "--patch".into(),
                revision,
                "--".into(),
            ],
        )
        .await
        {
            Ok(out) => text_result(out, ""),
            Err(e) => e,
        }
    }
}
