//! `renameFile`: move a file or directory inside the workspace.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{by_editor, write};
use crate::actors::writer::WriteOp;
use crate::protocol::editor::Method;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::claims::check_write;
use crate::tools::editor::{request, try_editor_as};
use crate::tools::{output, EditorUse, Tool, ToolContext, ToolResult, WorkspacePath};

pub struct RenameFile;

/// Also the editor's params, defaults filled in.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    old_path: WorkspacePath,
    new_path: WorkspacePath,
    #[serde(default)]
    overwrite: bool,
}

/// Where it went.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    success: bool,
    /// Absolute paths.
    old_path: String,
    new_path: String,
    renamed: bool,
    /// `workspace` (moved by the bridge) or `editor`.
    source: String,
}

impl Tool for RenameFile {
    type Args = Args;
    const NAME: &'static str = "renameFile";
    const EFFECT: Effect = Effect::Changes;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Rename or move a file or directory inside the workspace (fails if the target exists unless overwrite is true).";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let from = args.old_path.resolve(&ctx)?;
        let to = args.new_path.resolve(&ctx)?;
        check_write(&ctx, &from, Self::NAME).await?;
        check_write(&ctx, &to, Self::NAME).await?;
        if let Some(done) = try_editor_as::<Answer>(
            &ctx,
            Method::RenameFile,
            request(&ctx, Method::RenameFile, &args)?,
        )
        .await
        {
            return by_editor(&ctx, &from, Self::NAME, done, None).await;
        }
        let op = WriteOp::Rename {
            to: to.clone(),
            overwrite: args.overwrite,
        };
        write(&ctx, from.clone(), op, Self::NAME, None).await?;
        // Whoever read the file it replaced is told too.
        super::announce(&ctx, &to, Self::NAME, None).await;
        ctx.record_version(from.clone(), None);
        Ok(CallToolResult::structured(&Answer {
            success: true,
            old_path: from.display().to_string(),
            new_path: to.display().to_string(),
            renamed: true,
            source: "workspace".into(),
        }))
    }
}
