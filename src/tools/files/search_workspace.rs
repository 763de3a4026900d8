//! `searchWorkspace`: full-text or regex search with ripgrep's libraries.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};

use super::Scope;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{blocking, Tool, ToolContext};
use crate::workspace::search::{search, Query};

/// The tool.
pub struct SearchWorkspace;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    query: String,
    #[serde(default)]
    regex: bool,
    #[serde(default = "yes")]
    case_sensitive: bool,
    glob: Option<String>,
    path: Option<String>,
    max_results: Option<usize>,
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
    const DESCRIPTION: &'static str =
        "Search file contents across the workspace (literal text, or a regex with regex: true), \
         honouring .gitignore and skipping binary files. Regex limits: nested counted \
         repetitions multiply to at most 1000 (a{1000}, (a{10}){100}), compiled size 1 MiB; \
         files with a line over 2 MiB are skipped and counted (longLineFilesSkipped).";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": { "type": "string", "minLength": 1 },
                "regex": { "type": "boolean" },
                "caseSensitive": { "type": "boolean" },
                "glob": { "type": "string", "description": "Only files matching this glob" },
                "path": { "type": "string", "description": "Search below this directory" },
                "maxResults": { "type": "integer", "minimum": 1 }
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let Scope { root, start, max } =
            match Scope::of(&ctx, args.path.as_deref(), args.max_results) {
                Ok(s) => s,
                Err(e) => return e,
            };
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
                },
            )
        };
        match blocking(run).await {
            Ok(Ok(hits)) => CallToolResult::json(&hits),
            Ok(Err(err)) => CallToolResult::error(err.to_string()),
            Err(e) => e,
        }
    }
}
