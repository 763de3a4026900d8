//! `replaceBlock`: replace the single exact occurrence of a block, saved like
//! `editText`'s edits.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{by_editor, write};
use crate::actors::writer::WriteOp;
use crate::protocol::editor::Method;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::claims::check_write;
use crate::tools::editor::{request, try_editor_as};
use crate::tools::{output, EditorUse, Tool, ToolContext, ToolResult, WorkspacePath};

pub struct ReplaceBlock;

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    file_path: WorkspacePath,
    #[schemars(length(min = 1))]
    old_content: String,
    new_content: String,
}

/// The block replaced and saved.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    success: bool,
    saved: bool,
    /// `workspace` (written by the bridge) or `editor`.
    source: String,
}

impl Tool for ReplaceBlock {
    type Args = Args;
    const NAME: &'static str = "replaceBlock";
    const EFFECT: Effect = Effect::Changes;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Replace the one exact occurrence of oldContent with newContent in a file. \
         Fails if oldContent is absent or occurs more than once, or if the file changed since this session read it.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let path = args.file_path.resolve(&ctx)?;
        check_write(&ctx, &path, Self::NAME).await?;
        let under_way = super::before_write(&ctx, &path, Self::NAME).await;
        let mut params = request(&ctx, Method::ReplaceBlock, &args)?;
        params["save"] = json!(true);
        if let Some(done) = try_editor_as::<Answer>(&ctx, Method::ReplaceBlock, params).await {
            return by_editor(&ctx, &path, Self::NAME, done, Some(under_way)).await;
        }
        let op = WriteOp::Replace {
            old: args.old_content,
            new: args.new_content,
        };
        write(&ctx, path, op, Self::NAME, Some(under_way)).await?;
        Ok(CallToolResult::structured(&Answer {
            success: true,
            saved: true,
            source: "workspace".into(),
        }))
    }
}
