//! `getTerminalOutput`: the last output of one of this session's terminals.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::actors::messages::session::Terminals;
use crate::protocol::editor::Method;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::editor::{request, try_editor};
use crate::tools::{EditorUse, Tool, ToolContext, ToolResult};

pub struct GetTerminalOutput;

/// Also the editor's params.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    name: Option<String>,
    // The editor's terminal list position; without an editor, runs are found by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<u32>,
    #[serde(default = "default_lines")]
    #[schemars(range(min = 1, max = 10_000))]
    lines: usize,
}

fn default_lines() -> usize {
    100
}

impl Tool for GetTerminalOutput {
    type Args = Args;
    const NAME: &'static str = "getTerminalOutput";
    const EFFECT: Effect = Effect::Reads;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "The last lines of output of one of this session's terminals (default: the most recent).";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let params = request(&ctx, Method::GetTerminalOutput, &args)?;
        if let Some(done) = try_editor(&ctx, Method::GetTerminalOutput, params).await {
            return done;
        }
        let terminals = ctx
            .session
            .terminals
            .send(Terminals)
            .await
            .unwrap_or_default();
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
            return Ok(CallToolResult::json(&json!({
                "available": false,
                "terminalName": wanted,
                "terminals": terminals.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            })));
        };
        let lines: Vec<&str> = run.output.lines().collect();
        let shown = lines[lines.len().saturating_sub(args.lines)..].join("\n");
        Ok(CallToolResult::json(&json!({
            "available": true,
            "terminalName": name,
            "command": run.command,
            "exitCode": run.exit_code,
            "lines": shown,
            "lineCount": lines.len(),
            "finishedAt": run.finished_at,
            "source": "bridge",
        })))
    }
}
