//! `close_tab`: always `TAB_CLOSED`.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::actors::dashboard::CloseDiffTab;
use crate::actors::extension::CloseDiff;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{EditorUse, Tool, ToolContext, ToolResult};

pub struct CloseTab;

#[derive(Deserialize, JsonSchema)]
pub struct Args {
    tab_name: String,
}

impl Tool for CloseTab {
    type Args = Args;
    const NAME: &'static str = "close_tab";
    const EFFECT: Effect = Effect::Changes;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Close an editor tab by name (a pending diff in it is rejected).";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        // A pending diff in this tab is rejected; the answer is always TAB_CLOSED.
        let _ = ctx
            .services
            .dashboard
            .send(CloseDiffTab {
                session: ctx.session_id.clone(),
                tab: args.tab_name.clone(),
            })
            .await;
        let _ = ctx
            .services
            .extension
            .send(CloseDiff {
                tab_name: args.tab_name,
            })
            .await;
        Ok(CallToolResult::text("TAB_CLOSED"))
    }
}
