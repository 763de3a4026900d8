//! Commands without an editor: `runCommand`, `runInTerminal` and `getTerminalOutput`.
//! Every command passes the policy in [`crate::exec::policy`] first.

pub mod get_terminal_output;
pub mod run_command;
pub mod run_in_terminal;

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolContext, ToolError, WorkspacePath};
use crate::exec::{self, RunOutput, RunSpec};

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
    // Capped at `commands.timeout_ms`.
    #[schemars(range(min = 100))]
    timeout_ms: Option<u64>,
}

impl CommandArgs {
    /// The command line for display.
    pub(crate) fn line(&self) -> String {
        command_line(&self.command, &self.args)
    }

    /// Checks the policy and runs the command in `cwd` (workspace-relative).
    pub(crate) async fn execute(self, ctx: &ToolContext) -> Result<RunOutput, ToolError> {
        let settings = &ctx.services.settings;
        exec::check(
            &settings.command_policy(),
            &ctx.services.workspace,
            &self.command,
            &self.args,
        )?;
        let cwd = self
            .cwd
            .unwrap_or_else(|| WorkspacePath::from("."))
            .resolve(ctx)?;
        if !cwd.is_dir() {
            return Err(ToolError::NotADirectory(cwd));
        }
        if exec::sandbox::abi() == 0 && !settings.commands.run_unsandboxed {
            return Err(ToolError::refused(
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
        Ok(exec::run(spec).await?)
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
