//! File claims: `claimFiles`, `releaseFiles`, `listClaims`. A claim tells other agents
//! "I am working on these files": their writes to them are refused (the bridge's write
//! tools here, the CLI's Edit/Write/NotebookEdit through the hooks) with the holder's
//! reason, until it is released, expires, or its agent is gone for good.

pub mod claim_files;
pub mod list_claims;
pub mod release_files;

use crate::actors::claims::CheckWrite;
use crate::actors::registry::Identify;
use crate::coordination::claims::Holder;
use crate::tools::{ToolContext, ToolError};

/// The calling agent's label as other agents see it, and its process when known.
pub(crate) async fn my_label(ctx: &ToolContext) -> (String, Option<u32>) {
    let agent = ctx
        .services
        .registry
        .send(Identify::Session(ctx.session_id.clone()))
        .await
        .ok()
        .flatten();
    match agent {
        Some(a) => (a.label, a.pid),
        None => (format!("agent {}", ctx.session_id), None),
    }
}

/// The calling agent as a claim holder (its label as other agents see it).
pub(crate) async fn me(ctx: &ToolContext) -> Holder {
    let (label, pid) = my_label(ctx).await;
    Holder::Agent {
        session: ctx.session_id.clone(),
        label,
        pid,
    }
}

/// Refuses a write by the calling agent to `path` (resolved) when another holder
/// claims it; `tool` names the tool in the timeline.
pub(crate) async fn check_write(
    ctx: &ToolContext,
    path: &std::path::Path,
    tool: &str,
) -> Result<(), ToolError> {
    let Some(rel) = ctx.services.workspace.relative(&path.to_string_lossy()) else {
        return Ok(());
    };
    let agent = match me(ctx).await {
        Holder::Agent { label, .. } => label,
        Holder::Person => String::new(),
    };
    let check = CheckWrite {
        by: Some(ctx.session_id.clone()),
        agent,
        path: rel,
        tool: tool.to_string(),
    };
    match crate::tools::ask(&ctx.services.claims, crate::actors::claims::NAME, check).await? {
        Some(reason) => Err(ToolError::refused(reason)),
        None => Ok(()),
    }
}
