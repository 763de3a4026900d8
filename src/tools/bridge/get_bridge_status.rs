//! `getBridgeStatus`: the same document as `/status`.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct GetBridgeStatus;

/// No arguments.
#[derive(Deserialize)]
pub struct Args {}

impl Tool for GetBridgeStatus {
    type Args = Args;
    const NAME: &'static str = "getBridgeStatus";
    const DESCRIPTION: &'static str =
        "Bridge health: sessions, editor connection, counters and recent activity.";

    fn schema() -> Value {
        json!({ "type": "object", "properties": {} })
    }

    async fn call(ctx: ToolContext, _args: Args) -> CallToolResult {
        match crate::status::collect(&ctx.services).await {
            Ok(status) => {
                let mut value = serde_json::to_value(status).unwrap_or(Value::Null);
                if let Some(map) = value.as_object_mut() {
                    map.insert("yourSessionId".into(), json!(ctx.session_id.as_ref()));
                }
                CallToolResult::json(&value)
            }
            Err(fault) => CallToolResult::error(fault.to_string()),
        }
    }
}
