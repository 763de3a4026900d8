//! `claimFiles`: claim files for the calling agent.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::actors::claims::{ClaimFiles as Claim, NAME};
use crate::coordination::claims::ClaimView;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{ask, output, Tool, ToolContext, ToolError, ToolResult};

pub struct ClaimFiles;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    /// Workspace-relative paths or globs (`src/parser/**`, `*.py`); a directory path
    /// also covers what is beneath it.
    #[schemars(length(min = 1, max = 64))]
    paths: Vec<String>,
    /// Why: shown to the agents whose writes are refused (at most 500 characters).
    #[serde(default)]
    reason: String,
    /// How long the claim lasts (default `claims.default_ttl_minutes`, at most
    /// `claims.max_ttl_minutes`); claiming the same paths again renews it.
    #[schemars(range(min = 1))]
    ttl_minutes: Option<u64>,
}

/// `claimFiles`' answer.
#[derive(Serialize, JsonSchema)]
pub struct Answer {
    /// The claim made (or renewed).
    claimed: ClaimView,
    /// How long it lasts.
    minutes: u64,
}

impl Tool for ClaimFiles {
    type Args = Args;
    const NAME: &'static str = "claimFiles";
    const EFFECT: Effect = Effect::Adds;
    const DESCRIPTION: &'static str = "Claim files you are about to change so that other agents sharing this bridge do not edit them meanwhile: their writes (through this bridge and through Claude Code's own Edit/Write) are refused with your reason until you release them (releaseFiles), the claim expires, or you disconnect for good. Claim only what you need, and release when done. Fails, naming the holder, when another agent already claims some of the files.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let ttl = ctx.services.settings.claims.ttl(args.ttl_minutes);
        let holder = super::me(&ctx).await;
        let claim = ask(
            &ctx.services.claims,
            NAME,
            Claim {
                holder,
                patterns: args.paths,
                reason: args.reason,
                ttl,
            },
        )
        .await?
        .map_err(|e| ToolError::refused(e.to_string()))?;
        let now = crate::actors::activity_log::now_ms();
        Ok(CallToolResult::structured(&Answer {
            claimed: claim.view(now),
            minutes: ttl.as_secs() / 60,
        }))
    }
}
