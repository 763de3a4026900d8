//! Running an allowlisted program the way `runCommand` does: the command policy
//! first, then the sandbox (namespaces and Landlock: writes and metadata changes only in
//! the workspace, TCP only for the programs in `commands.network`, no process
//! outliving the call), git hardened like the git tools. Shared by the
//! command tools and automation's `command` hooks.

use std::path::PathBuf;
use std::time::Duration;

use super::process::RunError;
use super::{check, run, sandbox, CommandPolicy, PolicyError, RunOutput, RunSpec};
use crate::workspace::Workspace;

/// Why a confined command did not run.
#[derive(Debug, thiserror::Error)]
pub enum ConfinedError {
    /// The command policy refused it.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The kernel cannot confine it fully and unconfined runs are not allowed.
    #[error(
        "Commands are refused: {0}, so a command could not be confined to the \
         workspace (set commands.run_unsandboxed = true to run them with what the \
         kernel has)"
    )]
    NoSandbox(&'static str),
    /// It could not be started.
    #[error(transparent)]
    Run(#[from] RunError),
}

/// What `[commands]` says about running any command (the bridge builds it from its
/// settings with `Settings::command_rules`).
#[derive(Debug, Clone)]
pub struct CommandRules {
    /// Which programs, how many arguments, how long each.
    pub policy: CommandPolicy,
    /// Run with what the kernel has when it cannot confine fully.
    pub run_unsandboxed: bool,
    /// The longest a command runs (a requested timeout is capped at it).
    pub timeout: Duration,
    /// Programs whose commands may use TCP.
    pub network: Vec<String>,
    /// Output kept per stream.
    pub max_output: usize,
}

/// One command to run confined.
#[derive(Debug, Clone)]
pub struct Confined {
    /// Bare program name from `commands.allow`.
    pub program: String,
    /// Its arguments, passed as they are.
    pub args: Vec<String>,
    /// Working directory, already confined to the workspace.
    pub cwd: PathBuf,
    /// Requested timeout, capped at `commands.timeout_ms`.
    pub timeout: Option<Duration>,
}

impl Confined {
    /// Checks the policy and runs the command.
    pub async fn run(
        self,
        rules: &CommandRules,
        workspace: &Workspace,
    ) -> Result<RunOutput, ConfinedError> {
        check(&rules.policy, workspace, &self.program, &self.args)?;
        if !rules.run_unsandboxed {
            if let Some(missing) = sandbox::status(false).missing() {
                return Err(ConfinedError::NoSandbox(missing));
            }
        }
        let limit = rules.timeout;
        let (args, env) = if self.program == "git" {
            super::git::hardened(workspace.root(), self.args)
        } else {
            (self.args, Vec::new())
        };
        let network = rules.network.contains(&self.program);
        let spec = RunSpec {
            program: self.program,
            args,
            cwd: self.cwd,
            timeout: self.timeout.map_or(limit, |t| t.min(limit)),
            max_output: rules.max_output,
            env,
            // Allowlisted programs may run code the agent wrote (npm run, cargo
            // build scripts, pytest): writes only in the workspace.
            sandbox: Some(sandbox::Sandbox {
                writable: vec![workspace.root().to_path_buf()],
                network,
            }),
        };
        Ok(run(spec).await?)
    }
}
