//! `deleteFile`: a file, or a directory (non-empty only with `recursive`).

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

pub struct DeleteFile;

/// Also the editor's params, defaults filled in.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    file_path: WorkspacePath,
    #[serde(default)]
    recursive: bool,
}

/// The file or directory removed.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    success: bool,
    /// Absolute path.
    file_path: String,
    deleted: bool,
    /// `workspace` (removed by the bridge) or `editor`.
    source: String,
}

impl Tool for DeleteFile {
    type Args = Args;
    const NAME: &'static str = "deleteFile";
    const EFFECT: Effect = Effect::Changes;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Delete a file or directory in the workspace (a non-empty directory needs recursive: true).";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let path = args.file_path.resolve(&ctx)?;
        check_write(&ctx, &path, Self::NAME).await?;
        let under_way = super::before_write(&ctx, &path, Self::NAME).await;
        if let Some(done) = try_editor_as::<Answer>(
            &ctx,
            Method::DeleteFile,
            request(&ctx, Method::DeleteFile, &args)?,
        )
        .await
        {
            return by_editor(&ctx, &path, Self::NAME, done, Some(under_way)).await;
        }
        let op = WriteOp::Delete {
            recursive: args.recursive,
        };
        write(&ctx, path.clone(), op, Self::NAME, Some(under_way)).await?;
        Ok(CallToolResult::structured(&Answer {
            success: true,
            file_path: path.display().to_string(),
            deleted: true,
            source: "workspace".into(),
        }))
    }
}
