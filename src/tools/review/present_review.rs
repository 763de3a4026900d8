//! `presentReview` (Dialectic's `present_review`): a markdown review shown in the
//! bridge's browser page, with every `file:line` / `file:line-line` reference clickable
//! and followed through later edits.

use std::collections::HashMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::actors::dashboard::AddReview;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::review::{self, Base, MAX_BASES_BYTES, MAX_BASE_BYTES, MAX_REVIEW_BYTES};
use crate::services::Services;
use crate::tools::git::{check_ref, git_in};
use crate::tools::{blocking, Tool, ToolContext, ToolError, ToolResult};
use crate::workspace::files::read_text;

pub struct PresentReview;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Args {
    /// The review in markdown. `path:line` and `path:line-line` references (paths
    /// relative to the workspace) become links to the code.
    #[schemars(length(min = 1, max = 262_144))]
    review: String,
    /// The commit the review's line numbers refer to (default: the files as they are
    /// now). References are followed from there into the current files.
    base_ref: Option<String>,
}

/// Workspace-relative, `/`-separated form of a path the review wrote, when it names a
/// place inside the workspace.
fn relative(services: &Services, written: &str) -> Option<String> {
    services.workspace.relative(written)
}

/// The text of `rel` at `base_ref` (git) or on disk; `None` when there is none.
async fn base_text(services: &Services, rel: &str, base_ref: Option<&str>) -> Option<Arc<str>> {
    let text = match base_ref {
        Some(revision) => {
            let out = git_in(
                services,
                vec!["show".into(), format!("{revision}:{rel}")],
                MAX_BASE_BYTES,
            )
            .await
            .ok()?;
            (!out.truncated).then_some(out.stdout)?
        }
        None => {
            let workspace = services.workspace.clone();
            let abs = workspace.resolve(rel).ok()?;
            blocking(move || read_text(workspace.dir(), &abs).ok())
                .await
                .ok()
                .flatten()?
                .0
        }
    };
    (text.len() <= MAX_BASE_BYTES).then(|| Arc::from(text))
}

impl Tool for PresentReview {
    type Args = Args;
    const NAME: &'static str = "presentReview";
    const EFFECT: Effect = Effect::Adds;
    const DESCRIPTION: &'static str =
        "Present a code review (markdown) in the bridge's browser page: every path:line or \
         path:line-line reference becomes a link that shows the code (or opens it in the \
         editor), follows the lines as the files change, and can be sent back as an \
         @-mention; the user can commit the staged changes with the review's summary. \
         Optional baseRef: the commit the line numbers refer to.";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        if args.review.len() > MAX_REVIEW_BYTES {
            return Err(ToolError::refused(format!(
                "A review may be at most {MAX_REVIEW_BYTES} bytes"
            )));
        }
        if !ctx.services.settings.ui.enabled {
            return Err(ToolError::refused(
                "The bridge's browser page is off (ui.enabled = false): there is nowhere to show the review",
            ));
        }
        let base_ref = args
            .base_ref
            .as_deref()
            .map(|r| check_ref("baseRef", r))
            .transpose()?;
        let mut bases: HashMap<String, Base> = HashMap::new();
        let mut missing = Vec::new();
        let mut kept_bytes = 0usize;
        for written in review::referenced_paths(&args.review) {
            let text = match relative(&ctx.services, &written) {
                Some(rel) => base_text(&ctx.services, &rel, base_ref.as_deref())
                    .await
                    .map(|text| (rel, text)),
                None => None,
            };
            match text {
                Some(base) if kept_bytes + base.1.len() <= MAX_BASES_BYTES => {
                    kept_bytes += base.1.len();
                    bases.insert(written, base);
                }
                _ => missing.push(written),
            }
        }
        let review_text = args.review;
        let draft = blocking(move || review::draft(&review_text, &bases)).await?;
        let (refs, files) = (draft.refs.len(), draft.bases.len());
        let (id, watched) = ctx
            .services
            .dashboard
            .send(AddReview {
                session_id: ctx.session_id.clone(),
                base_ref,
                draft,
            })
            .await
            .ok()
            .flatten()
            .ok_or_else(|| ToolError::refused("The browser page's actor is restarting; retry"))?;
        let url = format!(
            "{}/ui/#review-{id}",
            ctx.services.settings.page_origin(ctx.services.port)
        );
        let mut text = format!(
            "Review {id} is in the bridge's page ({url}): {refs} references to {files} files."
        );
        if !missing.is_empty() {
            text.push_str(&format!(
                " Not found in the workspace (or too large to follow), left as plain text: {}.",
                missing.join(", ")
            ));
        }
        if !watched {
            text.push_str(" No browser is watching: the user can open it with `ide-bridge open`.");
        }
        Ok(CallToolResult::texts([
            text,
            json!({ "reviewId": id, "url": url, "references": refs, "files": files, "watched": watched })
                .to_string(),
        ]))
    }
}
