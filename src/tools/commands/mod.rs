//! Commands without an editor: `runCommand`, `runInTerminal` and `getTerminalOutput`.
//! Every command passes the policy in [`crate::exec::policy`] first.

pub mod get_terminal_output;
pub mod run_command;
pub mod run_in_terminal;

use std::time::Duration;

use serde::Deserialize;

use super::{resolve, ToolContext};
use crate::exec::{self, RunOutput, RunSpec};
use crate::protocol::mcp::CallToolResult;

/// The arguments every command tool takes.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandArgs {
    command: String,
    #[serde(default)]
    args: Vec<String>,
    cwd: Option<String>,
    timeout_ms: Option<u64>,
}

impl CommandArgs {
    /// The command line for display.
    pub(crate) fn line(&self) -> String {
        command_line(&self.command, &self.args)
    }

    /// Checks the policy and runs the command in `cwd` (workspace-relative).
    pub(crate) async fn execute(self, ctx: &ToolContext) -> Result<RunOutput, CallToolResult> {
        let settings = &ctx.services.settings;
        exec::check(
            &settings.command_policy(),
            &ctx.services.workspace,
            &self.command,
            &self.args,
        )
        .map_err(|e| CallToolResult::error(e.to_string()))?;
        let cwd = resolve(ctx, self.cwd.as_deref().unwrap_or("."))?;
        if !cwd.is_dir() {
            return Err(CallToolResult::error(format!(
                "Not a directory: {}",
                cwd.display()
            )));
        }
        if exec::sandbox::abi() == 0 && !settings.commands.run_unsandboxed {
            return Err(CallToolResult::error(
                "Commands are refused: this kernel has no Landlock, so a command could not be \
                 confined to the workspace (set commands.run_unsandboxed = true to run them \
                 unconfined)",
            ));
        }
        let limit = settings.commands.timeout;
        // Git gets the git tools' protections too: forced safe config, no system
        // config, no discovery above the workspace, literal pathspecs.
        let (args, env) = if self.command == "git" {
            crate::tools::git::hardened(ctx.services.workspace.root(), self.args)
        } else {
            (self.args, Vec::new())
        };
        let network = settings.commands.network.contains(&self.command);
        let spec = RunSpec {
            program: self.command,
            args,
            cwd,
            timeout: self
                .timeout_ms
                .map_or(limit, Duration::from_millis)
                .min(limit),
            max_output: settings.commands.max_output_bytes,
            env,
            // Allowlisted programs may run code the agent wrote (npm run, cargo
            // build scripts, pytest): writes only in the workspace, TCP only for the
            // programs in commands.network.
            sandbox: Some(exec::sandbox::Sandbox {
                writable: vec![ctx.services.workspace.root().to_path_buf()],
                network,
            }),
        };
        exec::run(spec)
            .await
            .map_err(|e| CallToolResult::error(e.to_string()))
    }
}

/// `program arg…` for display.
pub(crate) fn command_line(program: &str, args: &[String]) -> String {
    std::iter::once(program.to_string())
        .chain(args.iter().map(|a| {
            if a.is_empty() || a.contains(char::is_whitespace) {
                format!("{a:?}")
            } else {
                a.clone()
            }
        }))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The JSON schema shared by the command tools.
pub(crate) fn command_schema(extra: serde_json::Value) -> serde_json::Value {
    let mut schema = serde_json::json!({
        "type": "object",
        "properties": {
            "command": { "type": "string", "minLength": 1, "description": "Program name from the allowlist (no shell)" },
            "args": { "type": "array", "items": { "type": "string" }, "description": "Arguments, passed as they are" },
            "cwd": { "type": "string", "description": "Working directory inside the workspace" },
            "timeoutMs": { "type": "integer", "minimum": 100 }
        },
        "required": ["command"],
        "additionalProperties": false
    });
    if let (Some(props), Some(more)) = (schema["properties"].as_object_mut(), extra.as_object()) {
        props.extend(more.clone());
    }
    schema
}
