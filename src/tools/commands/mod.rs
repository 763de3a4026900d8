//! Commands without an editor: `runCommand`, `runInTerminal` and `getTerminalOutput`.
//! Every command passes the policy in [`crate::exec::policy`] first.

pub mod get_terminal_output;
pub mod run_command;
pub mod run_in_terminal;

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolContext, ToolError, WorkspacePath};
use crate::exec::{self, RunOutput};

/// The arguments every command tool takes.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommandArgs {
    /// Program name from the allowlist (no shell)
    #[schemars(length(min = 1))]
    command: String,
    /// Arguments, passed as they are
    #[serde(default)]
    args: Vec<String>,
    /// Working directory inside the workspace
    cwd: Option<WorkspacePath>,
    /// Milliseconds it may run before its process group is killed; at most the
    /// bridge's commands.timeout_ms (30000 unless configured), which is also the default
    #[schemars(range(min = 100))]
    timeout_ms: Option<u64>,
}

impl CommandArgs {
    /// The command line for display.
    pub(crate) fn line(&self) -> String {
        command_line(&self.command, &self.args)
    }

    /// Checks the policy and runs the command in `cwd` (workspace-relative), confined
    /// like every command ([`exec::Confined`]).
    pub(crate) async fn execute(self, ctx: &ToolContext) -> Result<RunOutput, ToolError> {
        let cwd = self
            .cwd
            .unwrap_or_else(|| WorkspacePath::from("."))
            .resolve(ctx)?;
        if !cwd.is_dir() {
            return Err(ToolError::NotADirectory(cwd));
        }
        let cap = ctx.services.settings.commands.timeout;
        let asked = self.timeout_ms.map(Duration::from_millis);
        let command = exec::Confined {
            program: self.command,
            args: self.args,
            cwd,
            timeout: asked,
        };
        let mut out = command
            .run(
                &ctx.services.settings.command_rules(),
                &ctx.services.workspace,
            )
            .await?;
        if out.timed_out && asked.is_some_and(|a| a > cap) {
            out.stderr.push_str(&format!(
                "\n[timeoutMs {} was more than the bridge allows: commands.timeout_ms is {} ms]",
                asked.unwrap_or_default().as_millis(),
                cap.as_millis()
            ));
        }
        Ok(out)
    }
}

pub(crate) use crate::exec::command_line;
