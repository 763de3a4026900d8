//! `runInTerminal`: without an editor, runs like `runCommand` and keeps the output
//! under a session-prefixed terminal name for `getTerminalOutput`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::CommandArgs;
use crate::actors::messages::session::{RecordTerminal, TerminalRun};
use crate::actors::registry::iso_now;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{EditorUse, Tool, ToolContext, ToolResult};

pub struct RunInTerminal;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("additionalProperties" = false))]
pub struct Args {
    #[serde(flatten)]
    run: CommandArgs,
    /// Terminal name (prefixed with this session's id)
    #[schemars(length(min = 1, max = 64))]
    name: Option<String>,
}

impl Tool for RunInTerminal {
    type Args = Args;
    const NAME: &'static str = "runInTerminal";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Run an allowlisted command in a named terminal of this session (without an editor: \
         run it directly and keep its output for getTerminalOutput).";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let name = format!(
            "{}{}",
            ctx.terminal_prefix,
            args.name.as_deref().unwrap_or("default")
        );
        let line = args.run.line();
        let out = args.run.execute(&ctx).await?;
        let mut output = out.stdout.clone();
        if !out.stderr.is_empty() {
            if !output.is_empty() && !output.ends_with('\n') {
                output.push('\n');
            }
            output.push_str(&out.stderr);
        }
        ctx.session.record_terminal.do_send(RecordTerminal {
            name: name.clone(),
            run: TerminalRun {
                command: line.clone(),
                exit_code: out.exit_code,
                output: output.clone(),
                finished_at: iso_now(),
            },
        });
        let mut result = CallToolResult::json(&json!({
            "terminalName": name,
            "command": line,
            "exitCode": out.exit_code,
            "output": output,
            "truncated": out.truncated,
            "timedOut": out.timed_out,
            "source": "bridge",
        }));
        result.is_error = out.timed_out;
        Ok(result)
    }
}
