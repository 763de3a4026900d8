//! `createFile`: a file with content, or a directory.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{by_editor, write};
use crate::actors::writer::{WriteOp, DIRECTORY_EXISTED, FILE_OVERWRITTEN};
use crate::protocol::editor::Method;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::claims::check_write;
use crate::tools::editor::{request, try_editor_as};
use crate::tools::{output, EditorUse, Tool, ToolContext, ToolError, ToolResult, WorkspacePath};

pub struct CreateFile;

/// Also the editor's params, defaults filled in.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    file_path: WorkspacePath,
    #[serde(default)]
    content: String,
    #[serde(default)]
    is_directory: bool,
    #[serde(default)]
    overwrite: bool,
}

/// The file or directory made.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    success: bool,
    /// Absolute path.
    file_path: String,
    /// False when it was there already (a directory asked for again, a file
    /// overwritten).
    created: bool,
    /// What the writer did (workspace only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
    /// `workspace` (written by the bridge) or `editor`.
    source: String,
}

impl Tool for CreateFile {
    type Args = Args;
    const NAME: &'static str = "createFile";
    const EFFECT: Effect = Effect::Changes;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Create a file (with content) or a directory in the workspace. Fails if it exists unless overwrite is true.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        if args.is_directory && !args.content.is_empty() {
            return Err(ToolError::refused(
                "content is for a file: a directory (isDirectory: true) has none",
            ));
        }
        let path = args.file_path.resolve(&ctx)?;
        check_write(&ctx, &path, Self::NAME).await?;
        let under_way = super::before_write(&ctx, &path, Self::NAME).await;
        if let Some(done) = try_editor_as::<Answer>(
            &ctx,
            Method::CreateFile,
            request(&ctx, Method::CreateFile, &args)?,
        )
        .await
        {
            return by_editor(&ctx, &path, Self::NAME, done, Some(under_way)).await;
        }
        let op = WriteOp::Create {
            content: args.content,
            directory: args.is_directory,
            overwrite: args.overwrite,
        };
        let written = write(&ctx, path.clone(), op, Self::NAME, Some(under_way)).await?;
        Ok(CallToolResult::structured(&Answer {
            success: true,
            file_path: path.display().to_string(),
            created: written.detail != DIRECTORY_EXISTED && written.detail != FILE_OVERWRITTEN,
            detail: Some(written.detail),
            source: "workspace".into(),
        }))
    }
}
