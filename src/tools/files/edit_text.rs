//! `editText`: up to 1000 line/column edits applied atomically. Edits are always saved:
//! without an editor they are written to the file, and with one the bridge asks it to
//! save (`save: true`), so both paths leave the same file on disk.

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
use crate::workspace::edit::{LineEdit, MAX_EDITS};

pub struct EditText;

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    file_path: WorkspacePath,
    /// Each {type, line, column, endLine, endColumn, text}: insert puts text at
    /// line:column; delete and replace take line:column to endLine:endColumn
    /// (exclusive), replace putting text there. 1-based; columns in UTF-16 code units.
    /// Every position refers to the file before any edit; overlapping edits are refused.
    #[schemars(length(min = 1, max = MAX_EDITS))]
    edits: Vec<LineEdit>,
}

/// The edits applied and saved.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    success: bool,
    edit_count: usize,
    saved: bool,
    /// `workspace` (written by the bridge) or `editor`.
    source: String,
}

impl Tool for EditText {
    type Args = Args;
    const NAME: &'static str = "editText";
    const EFFECT: Effect = Effect::Changes;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Apply line/column edits (1-based; insert, delete, replace) to a file, all or none. \
         Columns count UTF-16 code units, as the language-server tools report them (an emoji \
         counts two); endColumn is exclusive. \
         Fails with 'File was modified concurrently' if the file changed since this session read it.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let path = args.file_path.resolve(&ctx)?;
        check_write(&ctx, &path, Self::NAME).await?;
        let under_way = super::before_write(&ctx, &path, Self::NAME).await;
        let mut params = request(&ctx, Method::EditText, &args)?;
        params["save"] = json!(true);
        if let Some(done) = try_editor_as::<Answer>(&ctx, Method::EditText, params).await {
            return by_editor(&ctx, &path, Self::NAME, done, Some(under_way)).await;
        }
        let count = args.edits.len();
        write(
            &ctx,
            path,
            WriteOp::Edit { edits: args.edits },
            Self::NAME,
            Some(under_way),
        )
        .await?;
        Ok(CallToolResult::structured(&Answer {
            success: true,
            edit_count: count,
            saved: true,
            source: "workspace".into(),
        }))
    }
}
