//! `runCommand`: an allowlisted program, without a shell.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{command_line, command_schema, execute};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct RunCommand;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    command: String,
    #[serde(default)]
    args: Vec<String>,
    cwd: Option<String>,
    timeout_ms: Option<u64>,
}

impl Tool for RunCommand {
    type Args = Args;
    const NAME: &'static str = "runCommand";
    const DESCRIPTION: &'static str =
        "Run an allowlisted program (git, cargo, npm, …) in the workspace without a shell. \
         Returns exit code, stdout and stderr (capped). Shells, interpreters and flags that run code are refused.";

    fn schema() -> Value {
        command_schema(json!({}))
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let line = command_line(&args.command, &args.args);
        match execute(
            &ctx,
            &args.command,
            args.args,
            args.cwd.as_deref(),
            args.timeout_ms,
        )
        .await
        {
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
