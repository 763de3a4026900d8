//! `gitStatus`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::git;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{output, Tool, ToolContext, ToolResult};

pub struct GitStatus;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {}

/// `gitStatus`' answer.
#[derive(Serialize, JsonSchema)]
pub struct Answer {
    /// The branch line of `git status --branch` (`main...origin/main [ahead 1]`).
    branch: Option<String>,
    /// Nothing changed.
    clean: bool,
    /// What changed.
    files: Vec<FileStatus>,
}

/// One changed file.
#[derive(Serialize, JsonSchema)]
pub struct FileStatus {
    /// The index's status letter (empty when unchanged there).
    index: String,
    /// The worktree's status letter (empty when unchanged there).
    worktree: String,
    /// Workspace-relative (`old -> new` for a rename).
    path: String,
}

impl Tool for GitStatus {
    type Args = Args;
    const NAME: &'static str = "gitStatus";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "Branch and changed files of the workspace repository.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, _args: Args) -> ToolResult {
        let argv = vec!["status".into(), "--porcelain=v1".into(), "--branch".into()];
        let out = git(&ctx, argv).await?;
        let mut branch = None;
        let mut files = Vec::new();
        for line in out.stdout.lines() {
            if let Some(b) = line.strip_prefix("## ") {
                branch = Some(b.to_string());
            } else if line.len() > 3 {
                let (code, path) = line.split_at(2);
                files.push(FileStatus {
                    index: code[..1].trim().to_string(),
                    worktree: code[1..].trim().to_string(),
                    path: path.trim_start().to_string(),
                });
            }
        }
        Ok(CallToolResult::structured(&Answer {
            branch,
            clean: files.is_empty(),
            files,
        }))
    }
}
