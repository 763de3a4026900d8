//! `findFiles`: files matching a glob, honouring .gitignore.

use schemars::JsonSchema;
use serde::Deserialize;

use super::Scope;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{blocking, output, Tool, ToolContext, ToolError, ToolResult, WorkspacePath};
use crate::workspace::tree::{find_files, Listing};

pub struct FindFiles;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    #[schemars(length(min = 1))]
    pattern: String,
    path: Option<WorkspacePath>,
    #[schemars(range(min = 1))]
    max_results: Option<usize>,
    /// Also hidden files and directories (names starting with a dot, such as .github;
    /// .git never)
    #[serde(default)]
    include_hidden: bool,
}

impl Tool for FindFiles {
    type Args = Args;
    const NAME: &'static str = "findFiles";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str =
        "Find files by glob (e.g. \"*.rs\" anywhere, or \"src/**/mod.rs\" from the workspace root \
         or from path), honouring .gitignore and skipping hidden files unless includeHidden.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Listing>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let Scope { root, start, max } = Scope::of(&ctx, args.path.as_ref(), args.max_results)?;
        let hidden = args.include_hidden;
        let listing = blocking(move || find_files(&root, &start, &args.pattern, max, hidden))
            .await?
            .map_err(|e| ToolError::Refused(e.to_string()))?;
        Ok(CallToolResult::structured(&listing))
    }
}
