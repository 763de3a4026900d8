//! `runCommand`: an allowlisted program, without a shell.

use schemars::JsonSchema;
use serde::Serialize;

use super::CommandArgs;
use crate::actors::automation::BridgeEvent;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{output, Tool, ToolContext, ToolResult};

pub struct RunCommand;

/// How the command ended (a timed-out one is an error result with the same fields).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// The command line as run.
    command: String,
    /// Null when a signal or the timeout ended it.
    exit_code: Option<i32>,
    stdout: String,
    stderr: String,
    /// A stream went over `commands.max_output_bytes`: its first and last halves are
    /// kept, around a marker.
    truncated: bool,
    timed_out: bool,
    duration_ms: u64,
}

impl Tool for RunCommand {
    type Args = CommandArgs;
    const NAME: &'static str = "runCommand";
    const EFFECT: Effect = Effect::Runs;
    const DESCRIPTION: &'static str =
        "Run an allowlisted program (git, cargo, npm, …) in the workspace without a shell. \
         Returns exit code, stdout and stderr (capped). Shells, interpreters and flags that run code are refused.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: CommandArgs) -> ToolResult {
        let line = args.line();
        let out = args.execute(&ctx).await?;
        if out.timed_out || out.exit_code != Some(0) {
            if let Some(automation) = &ctx.services.automation {
                automation.do_send(BridgeEvent::CommandFailed {
                    command: line.clone(),
                    exit_code: out.exit_code,
                    timed_out: out.timed_out,
                    output_tail: crate::automation::template::tail(
                        &format!("{}{}", out.stdout, out.stderr),
                        TAIL_BYTES,
                    )
                    .to_string(),
                    session: Some(ctx.session_id.clone()),
                });
            }
        }
        let mut result = CallToolResult::structured(&Answer {
            command: line,
            exit_code: out.exit_code,
            stdout: out.stdout,
            stderr: out.stderr,
            truncated: out.truncated,
            timed_out: out.timed_out,
            duration_ms: out.duration_ms,
        });
        result.is_error = out.timed_out;
        Ok(result)
    }
}

/// Output handed to automation when a command fails, at most (its end).
const TAIL_BYTES: usize = 8 * 1024;
