//! `runInTerminal`: without an editor, runs like `runCommand` and keeps the output
//! under a session-prefixed terminal name for `getTerminalOutput`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::CommandArgs;
use crate::actors::messages::session::{RecordTerminal, TerminalRun};
use crate::actors::registry::iso_now;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{output, EditorUse, Tool, ToolContext, ToolResult};

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

/// How the command ended, and the terminal that keeps its output.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// Full (session-prefixed) terminal name, for `getTerminalOutput`.
    terminal_name: String,
    command: String,
    /// Null when a signal or the timeout ended it.
    exit_code: Option<i32>,
    /// Standard output, then standard error.
    output: String,
    truncated: bool,
    timed_out: bool,
    /// Always `bridge`: the bridge ran it, not an editor's terminal.
    source: String,
}

impl Tool for RunInTerminal {
    type Args = Args;
    const NAME: &'static str = "runInTerminal";
    const EFFECT: Effect = Effect::Runs;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Run an allowlisted command in a named terminal of this session (without an editor: \
         run it directly and keep its output for getTerminalOutput).";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

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
        let mut result = CallToolResult::structured(&Answer {
            terminal_name: name,
            command: line,
            exit_code: out.exit_code,
            output,
            truncated: out.truncated,
            timed_out: out.timed_out,
            source: "bridge".into(),
        });
        result.is_error = out.timed_out;
        Ok(result)
    }
}
