//! `gitLog`: recent commits as JSON.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{check_ref_or_range, git, pathspec, GitError};
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{output, Tool, ToolContext, ToolError, ToolResult, WorkspacePath};

pub struct GitLog;

/// `gitLog`' answer.
#[derive(Serialize, JsonSchema)]
pub struct Answer {
    /// Newest first.
    commits: Vec<Commit>,
}

/// One commit.
#[derive(Serialize, JsonSchema)]
pub struct Commit {
    /// Full hash.
    hash: String,
    /// Author name.
    author: String,
    /// Author date, ISO 8601.
    date: String,
    /// First line of the message.
    subject: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    #[serde(default = "default_count")]
    #[schemars(range(min = 1, max = 500))]
    max_count: u32,
    #[serde(rename = "ref")]
    #[schemars(length(min = 1))]
    revision: Option<String>,
    path: Option<WorkspacePath>,
}

fn default_count() -> u32 {
    20
}

impl Tool for GitLog {
    type Args = Args;
    const NAME: &'static str = "gitLog";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str =
        "Recent commits (hash, author, date, subject), optionally of a ref or path.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let mut argv = vec![
            "log".to_string(),
            format!("--max-count={}", args.max_count),
            "--pretty=format:%H%x1f%an%x1f%aI%x1f%s".into(),
        ];
        if let Some(r) = &args.revision {
            argv.push(check_ref_or_range(r)?);
        }
        argv.push("--".into());
        if let Some(p) = &args.path {
            argv.push(pathspec(&ctx, p)?);
        }
        let out = match git(&ctx, argv).await {
            // A repository without commits yet (and no revision asked for): none.
            Err(ToolError::Git(GitError::Failed { stderr, .. }))
                if args.revision.is_none() && stderr.contains("does not have any commits yet") =>
            {
                return Ok(CallToolResult::structured(&Answer {
                    commits: Vec::new(),
                }));
            }
            out => out?,
        };
        let commits: Vec<Commit> = out
            .stdout
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split('\u{1f}').collect();
                (f.len() == 4).then(|| Commit {
                    hash: f[0].to_string(),
                    author: f[1].to_string(),
                    date: f[2].to_string(),
                    subject: f[3].to_string(),
                })
            })
            .collect();
        Ok(CallToolResult::structured(&Answer { commits }))
    }
}
