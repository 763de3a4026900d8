//! `searchWorkspace`: full-text or regex search with ripgrep's libraries.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::Scope;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{blocking, output, Tool, ToolContext, ToolResult, WorkspacePath};
use crate::workspace::search::{search, Hits, Query};

pub struct SearchWorkspace;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    #[schemars(length(min = 1))]
    query: String,
    #[serde(default)]
    regex: bool,
    #[serde(default = "yes")]
    case_sensitive: bool,
    /// Only files matching this glob
    glob: Option<String>,
    /// Search below this directory
    path: Option<WorkspacePath>,
    #[schemars(range(min = 1))]
    max_results: Option<usize>,
    /// Also hidden files and directories (names starting with a dot, such as .github;
    /// .git never)
    #[serde(default)]
    include_hidden: bool,
}

/// Sets its flag when dropped.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn yes() -> bool {
    true
}

impl Tool for SearchWorkspace {
    type Args = Args;
    const NAME: &'static str = "searchWorkspace";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str =
        "Search file contents across the workspace (literal text, or a regex with regex: true), \
         honouring .gitignore and skipping binary files (and hidden ones unless includeHidden, \
         as ripgrep does). Regex limits: nested counted \
         repetitions multiply to at most 1000 (a{1000}, (a{10}){100}), compiled size 1 MiB; \
         files with a line over 2 MiB are skipped and counted (longLineFilesSkipped).";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Hits>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let Scope { root, start, max } = Scope::of(&ctx, args.path.as_ref(), args.max_results)?;
        // The call's future is dropped on timeout and on cancellation; the guard then
        // tells the blocking search to stop, which it does within one buffer read.
        let cancel = Arc::new(AtomicBool::new(false));
        let _stop_on_drop = CancelOnDrop(Arc::clone(&cancel));
        let dir = ctx.services.workspace.dir().clone();
        let run = move || {
            search(
                &root,
                &start,
                &Query {
                    pattern: &args.query,
                    regex: args.regex,
                    case_sensitive: args.case_sensitive,
                    glob: args.glob.as_deref(),
                    max_results: max,
                    cancel: Some(&cancel),
                    beneath: Some(&dir),
                    hidden: args.include_hidden,
                },
            )
        };
        Ok(CallToolResult::structured(&blocking(run).await??))
    }
}
