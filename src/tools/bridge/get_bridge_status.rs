//! `getBridgeStatus`: the same document as `/status`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext, ToolResult};

pub struct GetBridgeStatus;

#[derive(Deserialize, JsonSchema)]
pub struct Args {}

impl Tool for GetBridgeStatus {
    type Args = Args;
    const NAME: &'static str = "getBridgeStatus";
    const DESCRIPTION: &'static str =
        "Bridge health: sessions, editor connection, counters and recent activity.";

    async fn call(ctx: ToolContext, _args: Args) -> ToolResult {
        let status = crate::status::collect(&ctx.services).await?;
        let mut value = serde_json::to_value(status).unwrap_or(Value::Null);
        if let Some(map) = value.as_object_mut() {
            map.insert("yourSessionId".into(), json!(ctx.session_id.as_ref()));
        }
        Ok(CallToolResult::json(&value))
    }
}
