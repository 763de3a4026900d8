//! `getDiagnostics`: a JSON array of `{uri, diagnostics}` (empty while nothing is known).

use serde::Deserialize;
use serde_json::{json, Value};

use crate::protocol::mcp::CallToolResult;
use crate::tools::{EditorUse, Tool, ToolContext};

/// The tool.
pub struct GetDiagnostics;

/// Arguments.
#[derive(Deserialize)]
pub struct Args {
    #[allow(dead_code)]
    uri: Option<String>,
}

impl Tool for GetDiagnostics {
    type Args = Args;
    const NAME: &'static str = "getDiagnostics";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Language diagnostics (errors, warnings) for one file URI, or for every file known.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "uri": { "type": "string", "description": "file:// URI of one file; omit for all files" }
            }
        })
    }

    async fn call(_ctx: ToolContext, _args: Args) -> CallToolResult {
        // Nothing is known without an editor or a linter run: `[]`, never an error,
        // whatever uri was asked for (the CLI checks the uri it asked for).
        CallToolResult::text("[]")
    }
}
