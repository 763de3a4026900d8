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

use std::time::Duration;

use super::{resolve, ToolContext};
use crate::exec::{self, RunOutput, RunSpec};
use crate::protocol::mcp::CallToolResult;

/// Runs `git args…` in the workspace root. Non-zero exits become tool errors with git's
/// own message; "not a git repository" is said plainly.
pub(crate) async fn git(ctx: &ToolContext, args: Vec<String>) -> Result<RunOutput, CallToolResult> {
    let settings = &ctx.services.settings;
    let spec = RunSpec {
        program: "git".into(),
        args,
        cwd: ctx.services.workspace.root().to_path_buf(),
        timeout: Duration::from_millis(settings.commands.timeout_ms),
        max_output: settings.commands.max_output_bytes,
        env: Vec::new(),
    };
    let out = exec::run(spec)
        .await
        .map_err(|e| CallToolResult::error(e.to_string()))?;
    if out.exit_code == Some(0) {
        return Ok(out);
    }
    if out.stderr.contains("not a git repository") {
        return Err(CallToolResult::error(format!(
            "Not a git repository: {} (run `git init` there first)",
            ctx.services.workspace.root().display()
        )));
    }
    if out.timed_out {
        return Err(CallToolResult::error(format!(
            "git timed out: {}",
            out.stderr.trim()
        )));
    }
    Err(CallToolResult::error(format!(
        "git failed (exit {}): {}",
        out.exit_code
            .map_or("signal".to_string(), |c| c.to_string()),
        out.stderr.trim()
    )))
}

/// A revision, branch or remote name that cannot be mistaken for a flag.
pub(crate) fn check_ref(what: &str, value: &str) -> Result<String, CallToolResult> {
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
        Err(CallToolResult::error(format!("Invalid {what}: {value:?}")))
    }
}

/// A ref range `a..b` / `a...b` with both ends checked.
pub(crate) fn check_ref_or_range(value: &str) -> Result<String, CallToolResult> {
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

/// A workspace path as a pathspec after `--`.
pub(crate) fn pathspec(ctx: &ToolContext, path: &str) -> Result<String, CallToolResult> {
    let resolved = resolve(ctx, path)?;
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

/// Tool result with git's output as text.
pub(crate) fn text_result(out: RunOutput, empty: &str) -> CallToolResult {
    let text = out.stdout.trim_end();
    CallToolResult::text(if text.is_empty() {
        empty.to_string()
    } else {
        text.to_string()
    })
}
