//! `listClaims`: every claim held now.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::actors::claims::{views, ListClaims as List, NAME};
use crate::coordination::claims::ClaimView;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{ask, output, Tool, ToolContext, ToolResult};

pub struct ListClaims;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {}

/// `listClaims`' answer.
#[derive(Serialize, JsonSchema)]
pub struct Answer {
    /// Every claim held now.
    claims: Vec<ClaimView>,
}

impl Tool for ListClaims {
    type Args = Args;
    const NAME: &'static str = "listClaims";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "Every file claim held now: who holds it (an agent, or the person), its paths, its reason and when it ends. Your own are marked.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, _: Args) -> ToolResult {
        let claims = ask(&ctx.services.claims, NAME, List).await?;
        let now = crate::actors::activity_log::now_ms();
        let mut claims = views(&claims, now);
        for claim in &mut claims {
            claim.yours = Some(claim.session.as_deref() == Some(ctx.session_id.as_str()));
        }
        Ok(CallToolResult::structured(&Answer { claims }))
    }
}
