//! `gitPush`: only when enabled in config; never to main/master without explicit
//! config; force only as `--force-with-lease`.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{check_ref, git, text_result};
use crate::protocol::mcp::Effect;
use crate::tools::{Tool, ToolContext, ToolError, ToolResult};

/// Branches that need `git.allow_push_to_protected`.
pub const PROTECTED: &[&str] = &["main", "master"];

pub struct GitPush;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    #[schemars(length(min = 1))]
    remote: Option<String>,
    #[schemars(length(min = 1))]
    branch: Option<String>,
    #[serde(default)]
    force: bool,
}

impl Tool for GitPush {
    type Args = Args;
    const NAME: &'static str = "gitPush";
    const EFFECT: Effect = Effect::Runs;
    const DESCRIPTION: &'static str =
        "Push a branch (default: the current one) when git.allow_push is enabled. \
         main/master need git.allow_push_to_protected; force means --force-with-lease.";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let cfg = &ctx.services.settings.git;
        if !cfg.allow_push {
            return Err(ToolError::refused("Push is disabled: set git.allow_push = true in the bridge configuration to allow it"));
        }
        let remote = check_ref("remote", args.remote.as_deref().unwrap_or("origin"))?;
        let branch = match args.branch {
            Some(b) => b,
            None => {
                let head = vec!["rev-parse".into(), "--abbrev-ref".into(), "HEAD".into()];
                git(&ctx, head).await?.stdout.trim().to_string()
            }
        };
        let branch = check_ref("branch", &branch)?;
        if PROTECTED.contains(&branch.as_str()) && !cfg.allow_push_to_protected {
            return Err(ToolError::refused(format!(
                "Push to {branch} refused: pushing to main or master needs git.allow_push_to_protected = true"
            )));
        }
        let mut argv = vec!["push".to_string()];
        if args.force {
            argv.push("--force-with-lease".into());
        }
        argv.push(remote);
        argv.push(branch);
        Ok(text_result(git(&ctx, argv).await?, "Pushed."))
    }
}
