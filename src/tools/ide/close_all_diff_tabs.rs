//! `closeAllDiffTabs`: `CLOSED_<n>_DIFF_TABS`, counting only the bridge's own diffs.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::actors::extension::CloseSessionDiffs;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{EditorUse, Tool, ToolContext, ToolResult};

pub struct CloseAllDiffTabs;

#[derive(Deserialize, JsonSchema)]
pub struct Args {}

impl Tool for CloseAllDiffTabs {
    type Args = Args;
    const NAME: &'static str = "closeAllDiffTabs";
    const EFFECT: Effect = Effect::Changes;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Close every diff tab this bridge opened (the user's own diffs are left alone).";

    async fn call(ctx: ToolContext, _args: Args) -> ToolResult {
        // Only this session's pending diffs: other agents' diffs and the user's own
        // diff tabs are left alone.
        let session_id = ctx.session_id.clone();
        let in_editor = ctx.services.extension.send(CloseSessionDiffs {
            session_id: session_id.clone(),
        });
        let in_page = ctx
            .services
            .dashboard
            .send(CloseSessionDiffs { session_id });
        let (editor, page) = futures_util::future::join(in_editor, in_page).await;
        let closed = editor.unwrap_or(0) + page.unwrap_or(0);
        Ok(CallToolResult::text(format!("CLOSED_{closed}_DIFF_TABS")))
    }
}
