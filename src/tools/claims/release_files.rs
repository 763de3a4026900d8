//! `releaseFiles`: release the calling agent's claims.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::actors::claims::{views, ReleaseFiles as Release, NAME};
use crate::coordination::claims::ClaimView;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{ask, output, Tool, ToolContext, ToolResult};

pub struct ReleaseFiles;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    /// Paths or globs: the claims naming or covering one of them end. Absent: all of
    /// yours.
    #[schemars(length(max = 64))]
    paths: Option<Vec<String>>,
}

/// `releaseFiles`' answer.
#[derive(Serialize, JsonSchema)]
pub struct Answer {
    /// The claims that ended.
    released: Vec<ClaimView>,
}

impl Tool for ReleaseFiles {
    type Args = Args;
    const NAME: &'static str = "releaseFiles";
    const EFFECT: Effect = Effect::Adds;
    const DESCRIPTION: &'static str = "Release your file claims (all of them, or those naming or covering the given paths) so that other agents may edit those files again.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let holder = super::me(&ctx).await;
        let gone = ask(
            &ctx.services.claims,
            NAME,
            Release {
                holder,
                paths: args.paths,
            },
        )
        .await?;
        let now = crate::actors::activity_log::now_ms();
        Ok(CallToolResult::structured(&Answer {
            released: views(&gone, now),
        }))
    }
}
