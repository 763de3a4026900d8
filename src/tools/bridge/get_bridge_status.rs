//! `getBridgeStatus`: the same document as `/status`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::protocol::id::SessionId;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::status::BridgeStatus;
use crate::tools::{output, Tool, ToolContext, ToolResult};

pub struct GetBridgeStatus;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {}

/// `/status`, and which of its sessions is the caller's.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    #[serde(flatten)]
    status: BridgeStatus,
    your_session_id: SessionId,
}

impl Tool for GetBridgeStatus {
    type Args = Args;
    const NAME: &'static str = "getBridgeStatus";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str =
        "Bridge health: sessions, editor connection, counters and recent activity.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, _args: Args) -> ToolResult {
        let status = crate::status::collect(&ctx.services).await?;
        Ok(CallToolResult::structured(&Answer {
            status,
            your_session_id: ctx.session_id.clone(),
        }))
    }
}
