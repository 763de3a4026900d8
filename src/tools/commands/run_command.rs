//! `runCommand`: an allowlisted program, without a shell.

use serde_json::{json, Value};

use super::{command_schema, CommandArgs};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct RunCommand;

impl Tool for RunCommand {
    type Args = CommandArgs;
    const NAME: &'static str = "runCommand";
    const DESCRIPTION: &'static str =
        "Run an allowlisted program (git, cargo, npm, …) in the workspace without a shell. \
         Returns exit code, stdout and stderr (capped). Shells, interpreters and flags that run code are refused.";

    fn schema() -> Value {
        command_schema(json!({}))
    }

    async fn call(ctx: ToolContext, args: CommandArgs) -> CallToolResult {
        let line = args.line();
        match args.execute(&ctx).await {
            Ok(out) => {
                let mut result = CallToolResult::json(&json!({
                    "command": line,
                    "exitCode": out.exit_code,
                    "stdout": out.stdout,
                    "stderr": out.stderr,
                    "truncated": out.truncated,
                    "timedOut": out.timed_out,
                    "durationMs": out.duration_ms,
                }));
                result.is_error = out.timed_out;
                result
            }
            Err(e) => e,
        }
    }
}
