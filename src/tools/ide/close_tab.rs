//! `close_tab`: always `TAB_CLOSED`.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::extension::CloseDiff;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{EditorUse, Tool, ToolContext};

/// The tool.
pub struct CloseTab;

/// Arguments.
#[derive(Deserialize)]
pub struct Args {
    tab_name: String,
}

impl Tool for CloseTab {
    type Args = Args;
    const NAME: &'static str = "close_tab";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Close an editor tab by name (a pending diff in it is rejected).";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": { "tab_name": { "type": "string" } },
            "required": ["tab_name"]
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        // A pending diff in this tab is rejected; the answer is always TAB_CLOSED.
        let _ = ctx
            .services
            .extension
            .send(CloseDiff {
                tab_name: args.tab_name,
            })
            .await;
        CallToolResult::text("TAB_CLOSED")
    }
}
