//! `gitPush`: only when enabled in config; never to main/master without explicit
//! config; force only as `--force-with-lease`.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{check_ref, git, text_result};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// Branches that need `git.allow_push_to_protected`.
pub const PROTECTED: &[&str] = &["main", "master"];

/// The tool.
pub struct GitPush;

/// Arguments.
#[derive(Deserialize)]
pub struct Args {
    remote: Option<String>,
    branch: Option<String>,
    #[serde(default)]
    force: bool,
}

impl Tool for GitPush {
    type Args = Args;
    const NAME: &'static str = "gitPush";
    const DESCRIPTION: &'static str =
        "Push a branch (default: the current one) when git.allow_push is enabled. \
         main/master need git.allow_push_to_protected; force means --force-with-lease.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "remote": { "type": "string", "minLength": 1 },
                "branch": { "type": "string", "minLength": 1 },
                "force": { "type": "boolean" }
            },
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let cfg = &ctx.services.settings.git;
        if !cfg.allow_push {
            return CallToolResult::error("Push is disabled: set git.allow_push = true in the bridge configuration to allow it");
        }
        let remote = match check_ref("remote", args.remote.as_deref().unwrap_or("origin")) {
            Ok(r) => r,
            Err(e) => return e,
        };
        let branch = match args.branch {
            Some(b) => b,
            None => match git(
                &ctx,
                vec!["rev-parse".into(), "--abbrev-ref".into(), "HEAD".into()],
            )
            .await
            {
                Ok(o) => o.stdout.trim().to_string(),
                Err(e) => return e,
            },
        };
        let branch = match check_ref("branch", &branch) {
            Ok(b) => b,
            Err(e) => return e,
        };
        if PROTECTED.contains(&branch.as_str()) && !cfg.allow_push_to_protected {
            return CallToolResult::error(format!(
                "Push to {branch} refused: pushing to main or master needs git.allow_push_to_protected = true"
            ));
        }
        let mut argv = vec!["push".to_string()];
        if args.force {
            argv.push("--force-with-lease".into());
        }
        argv.push(remote);
        argv.push(branch);
        match git(&ctx, argv).await {
            Ok(out) => text_result(out, "Pushed."),
            Err(e) => e,
        }
    }
}
