//! `listClaims`: every claim held now.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::actors::claims::{views, ListClaims as List, NAME};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{ask, Tool, ToolContext, ToolResult};

pub struct ListClaims;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {}

impl Tool for ListClaims {
    type Args = Args;
    const NAME: &'static str = "listClaims";
    const DESCRIPTION: &'static str = "Every file claim held now: who holds it (an agent, or the person), its paths, its reason and when it ends. Your own are marked.";

    async fn call(ctx: ToolContext, _: Args) -> ToolResult {
        let claims = ask(&ctx.services.claims, NAME, List).await?;
        let now = crate::actors::activity_log::now_ms();
        let mut listed = views(&claims, now);
        if let Some(items) = listed.as_array_mut() {
            for item in items {
                let mine = item["session"].as_str() == Some(ctx.session_id.as_str());
                item["yours"] = json!(mine);
            }
        }
        Ok(CallToolResult::json(&json!({ "claims": listed })))
    }
}
