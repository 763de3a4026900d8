//! `getFileTree`: the workspace tree as git sees it (ignored files left out).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{blocking, output, Tool, ToolContext, ToolError, ToolResult, WorkspacePath};
use crate::workspace::files::FileError;
use crate::workspace::tree::{file_tree, Listing};

pub struct GetFileTree;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    path: Option<WorkspacePath>,
    #[schemars(range(min = 1, max = 32))]
    max_depth: Option<usize>,
    #[schemars(range(min = 1))]
    max_entries: Option<usize>,
    /// Also hidden files and directories (names starting with a dot, such as .github;
    /// .git never)
    #[serde(default)]
    include_hidden: bool,
}

impl Tool for GetFileTree {
    type Args = Args;
    const NAME: &'static str = "getFileTree";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str =
        "List files and directories below a workspace path (default: the root), honouring \
         .gitignore and skipping hidden ones unless includeHidden.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Listing>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let start = args
            .path
            .unwrap_or_else(|| WorkspacePath::from("."))
            .resolve(&ctx)?;
        let cap = ctx.services.settings.files.max_tree_entries;
        let max = args.max_entries.unwrap_or(cap).min(cap);
        let depth = args.max_depth.unwrap_or(3);
        let root = ctx.services.workspace.root().to_path_buf();
        let hidden = args.include_hidden;
        let walk = move || {
            if start.is_dir() {
                Ok(file_tree(&root, &start, depth, max, hidden))
            } else if start.exists() {
                Err(ToolError::NotADirectory(start))
            } else {
                Err(FileError::NotFound(start.display().to_string()).into())
            }
        };
        Ok(CallToolResult::structured(&blocking(walk).await??))
    }
}
