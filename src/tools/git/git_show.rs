//! `gitShow`: one commit with its stat and patch.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{check_ref, git, text_result};
use crate::protocol::mcp::Effect;
use crate::tools::{Tool, ToolContext, ToolResult};

pub struct GitShow;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    #[serde(rename = "ref")]
    #[schemars(length(min = 1))]
    revision: String,
}

impl Tool for GitShow {
    type Args = Args;
    const NAME: &'static str = "gitShow";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "A commit's message, stat and patch.";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let revision = check_ref("revision", &args.revision)?;
        let argv = vec![
            "show".into(),
            // No diff program or textconv filter from the repository configuration.
            "--no-ext-diff".into(),
            "--no-textconv".into(),
            "--stat".into(),
            "--patch".into(),
            revision,
            "--".into(),
        ];
        Ok(text_result(git(&ctx, argv).await?, ""))
    }
}
