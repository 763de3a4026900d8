//! Git through the git CLI: status, diff, log, blame, show, branches, add, commit and a
//! guarded push. Refs and paths are validated so that no argument can become a flag.

pub mod git_add;
pub mod git_blame;
pub mod git_branches;
pub mod git_commit;
pub mod git_diff;
pub mod git_log;
pub mod git_push;
pub mod git_show;
pub mod git_status;

use std::path::PathBuf;

use super::{ToolContext, ToolError, WorkspacePath};
use crate::exec::{self, RunOutput, RunSpec};
use crate::protocol::mcp::CallToolResult;
use crate::services::Services;

/// Why a git tool refused an argument or git failed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// The workspace has no repository of its own.
    #[error("Not a git repository: {} (git tools do not look above the workspace; run `git init` there first)", .0.display())]
    NotARepository(PathBuf),
    /// The repository has no commit for the command to read (`git blame` of a new
    /// repository).
    #[error("The repository has no commits yet: git {0} reads the last commit; commit first (gitCommit)")]
    NoCommits(String),
    /// The command timeout fired.
    #[error("git timed out: {0}")]
    TimedOut(String),
    /// Non-zero exit (`None`: killed by a signal), with git's message.
    #[error("git failed (exit {}): {stderr}", exit.map_or("signal".to_string(), |c| c.to_string()))]
    Failed { exit: Option<i32>, stderr: String },
    /// A ref, branch or remote that could be taken for a flag or a range.
    #[error("Invalid {what}: {value:?}")]
    InvalidRef { what: &'static str, value: String },
    /// A pathspec starting with `:` (magic that reaches above the workspace).
    #[error("Pathspec magic is not allowed: {0:?} (give a plain workspace path)")]
    PathspecMagic(String),
}

pub(crate) use crate::exec::git::hardened;

/// Runs `git args…` in the workspace root, [`hardened`]. Non-zero exits become tool
/// errors with git's own message; "not a git repository" is said plainly.
pub(crate) async fn git(ctx: &ToolContext, args: Vec<String>) -> Result<RunOutput, ToolError> {
    let max_output = ctx.services.settings.commands.max_output_bytes;
    git_in(&ctx.services, args, max_output).await
}

/// [`git`] for callers without a tool context (the browser page), keeping at most
/// `max_output` bytes of each stream.
pub(crate) async fn git_in(
    services: &Services,
    args: Vec<String>,
    max_output: usize,
) -> Result<RunOutput, ToolError> {
    let settings = &services.settings;
    let root = services.workspace.root();
    // A push may write outside (a remote on a local path: git runs receive-pack for
    // it); it is off unless `git.allow_push`, and hooks are off either way.
    let command = args.first().cloned().unwrap_or_default();
    let pushing = command == "push";
    let (args, env) = hardened(root, args);
    let spec = RunSpec {
        program: "git".into(),
        args,
        cwd: root.to_path_buf(),
        timeout: settings.commands.timeout,
        max_output,
        env,
        // Writes only in the workspace (and its .git); network for fetch. A push may
        // write anywhere (a remote on a local path), yet ends with its call like
        // every sandboxed command.
        sandbox: Some(exec::sandbox::Sandbox {
            writable: vec![if pushing {
                "/".into()
            } else {
                root.to_path_buf()
            }],
            network: true,
        }),
    };
    let out = exec::run(spec).await?;
    if out.exit_code == Some(0) {
        return Ok(out);
    }
    Err(if out.stderr.contains("not a git repository") {
        GitError::NotARepository(root.to_path_buf())
    } else if out.stderr.contains("no such ref: HEAD") {
        GitError::NoCommits(command)
    } else if out.timed_out {
        GitError::TimedOut(out.stderr.trim().to_string())
    } else {
        GitError::Failed {
            exit: out.exit_code,
            // Some refusals (`nothing to commit`) are printed on stdout.
            stderr: match out.stderr.trim() {
                "" => out.stdout.trim().to_string(),
                said => said.to_string(),
            },
        }
    }
    .into())
}

/// A revision, branch or remote name that cannot be mistaken for a flag.
pub(crate) fn check_ref(what: &'static str, value: &str) -> Result<String, GitError> {
    let ok = !value.is_empty()
        && value.len() <= 256
        && !value.starts_with('-')
        && !value.contains("..")
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/~^@{}:-".contains(c));
    if ok {
        Ok(value.to_string())
    } else {
        Err(GitError::InvalidRef {
            what,
            value: value.to_string(),
        })
    }
}

/// A ref range `a..b` / `a...b` with both ends checked.
pub(crate) fn check_ref_or_range(value: &str) -> Result<String, GitError> {
    let parts: Vec<&str> = if value.contains("...") {
        value.splitn(2, "...").collect()
    } else {
        value.splitn(2, "..").collect()
    };
    for part in &parts {
        if !part.is_empty() {
            check_ref("revision", part)?;
        }
    }
    Ok(value.to_string())
}

/// A workspace path as a pathspec after `--`. A leading `:` (pathspec magic such as
/// `:(top)x` or `:/x`, which reaches above the workspace) is refused; the runner also
/// makes every pathspec literal ([`hardened`]).
pub(crate) fn pathspec(ctx: &ToolContext, path: &WorkspacePath) -> Result<String, ToolError> {
    if path.as_str().starts_with(':') {
        return Err(GitError::PathspecMagic(path.to_string()).into());
    }
    let resolved = path.resolve(ctx)?;
    let root = ctx.services.workspace.root();
    Ok(resolved
        .strip_prefix(root)
        .map(|p| {
            if p.as_os_str().is_empty() {
                ".".into()
            } else {
                p.display().to_string()
            }
        })
        .unwrap_or_else(|_| ".".into()))
}

/// Tool result with git's output as text (`empty` when there is none).
pub(crate) fn text_result(out: RunOutput, empty: &str) -> CallToolResult {
    let text = out.stdout.trim_end();
    CallToolResult::text(if text.is_empty() {
        empty.to_string()
    } else {
        text.to_string()
    })
}
