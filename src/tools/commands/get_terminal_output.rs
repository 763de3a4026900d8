//! `getTerminalOutput`: the last output of one of this session's terminals.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::session::Terminals;
use crate::protocol::mcp::CallToolResult;
use crate::tools::editor::try_editor;
use crate::tools::{EditorUse, Tool, ToolContext};

/// The tool.
pub struct GetTerminalOutput;

/// Arguments.
#[derive(Deserialize)]
pub struct Args {
    name: Option<String>,
    lines: Option<usize>,
}

impl Tool for GetTerminalOutput {
    type Args = Args;
    const NAME: &'static str = "getTerminalOutput";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "The last lines of output of one of this session's terminals (default: the most recent).";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "minLength": 1 },
                "index": { "type": "integer", "minimum": 0 },
                "lines": { "type": "integer", "minimum": 1, "maximum": 10000, "default": 100 }
            }
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let mut request = json!({"lines": args.lines.unwrap_or(100)});
        if let Some(name) = &args.name {
            request["name"] = json!(name);
        }
        if let Some(done) = try_editor(&ctx, "getTerminalOutput", request).await {
            return done;
        }
        let terminals = ctx.session.send(Terminals).await.unwrap_or_default();
        let wanted = args.name.map(|n| {
            if n.starts_with(ctx.terminal_prefix.as_ref()) {
                n
            } else {
                format!("{}{n}", ctx.terminal_prefix)
            }
        });
        let found = match &wanted {
            Some(name) => terminals.iter().rev().find(|(n, _)| n == name),
            None => terminals.last(),
        };
        let Some((name, run)) = found else {
            return CallToolResult::json(&json!({
                "available": false,
                "terminalName": wanted,
                "terminals": terminals.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            }));
        };
        let lines: Vec<&str> = run.output.lines().collect();
        let keep = args.lines.unwrap_or(100);
        let shown = lines[lines.len().saturating_sub(keep)..].join("\n");
        CallToolResult::json(&json!({
            "available": true,
            "terminalName": name,
            "command": run.command,
            "exitCode": run.exit_code,
            "lines": shown,
            "lineCount": lines.len(),
            "finishedAt": run.finished_at,
            "source": "bridge",
        }))
    }
}
