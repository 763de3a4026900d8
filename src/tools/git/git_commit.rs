//! `gitCommit`: commit what is staged (or everything tracked, with `all`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::git_in;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::services::Services;
use crate::tools::{output, Tool, ToolContext, ToolError, ToolResult};

/// Longest commit message, in bytes (the schema says the same in characters).
const MAX_MESSAGE_BYTES: usize = 40_000;

pub struct GitCommit;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    #[schemars(length(min = 1, max = 10_000))]
    message: String,
    #[serde(default)]
    all: bool,
}

/// `gitCommit`' answer.
#[derive(Serialize, JsonSchema)]
pub struct Answer {
    /// Always true (a failure is a tool error).
    success: bool,
    /// The new commit's hash.
    commit: String,
}

impl Tool for GitCommit {
    type Args = Args;
    const NAME: &'static str = "gitCommit";
    const EFFECT: Effect = Effect::Adds;
    const DESCRIPTION: &'static str =
        "Commit staged changes (all: true also stages tracked changes). A message is required.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let head = commit(&ctx.services, &args.message, args.all).await?;
        Ok(CallToolResult::structured(&Answer {
            success: true,
            commit: head,
        }))
    }
}

/// Commits what is staged (with `all`, every tracked change) with `message`; the new
/// commit's hash. Also what the browser page's "Commit with this message" runs.
pub(crate) async fn commit(
    services: &Services,
    message: &str,
    all: bool,
) -> Result<String, ToolError> {
    if message.trim().is_empty() {
        return Err(ToolError::refused("A commit message is required"));
    }
    if message.len() > MAX_MESSAGE_BYTES {
        return Err(ToolError::refused(format!(
            "A commit message may be at most {MAX_MESSAGE_BYTES} bytes"
        )));
    }
    let max_output = services.settings.commands.max_output_bytes;
    let mut argv = vec!["commit".to_string()];
    if all {
        argv.push("--all".into());
    }
    argv.push(format!("--message={message}"));
    git_in(services, argv, max_output).await?;
    let head = git_in(
        services,
        vec!["rev-parse".into(), "HEAD".into()],
        max_output,
    )
    .await?;
    Ok(head.stdout.trim().to_string())
}
