//! What agents changed, for review after the fact: `listChanges`, `whoChanged`,
//! `undoChanges`, `keepChanges` (the page's Changes view does the same). An undo
//! reverse-applies a hunk only where the file still holds it; the agent whose hunk was
//! undone is told at its next tool call, with the reason.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::actors::changes::{
    KeepChanges as Keep, LineRun, ListChanges as List, UndoChanges as Undo, UndoReport,
    WhoChanged as Who, NAME,
};
use crate::actors::registry::TellAgent;
use crate::changes::{Change, ChangeView, Owner, Selection};
use crate::protocol::id::SessionId;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::services::Services;
use crate::tools::path::WorkspacePath;
use crate::tools::{ask, output, Tool, ToolContext, ToolError, ToolResult};

/// Which hunks: one change (and one of its hunks), a file, an agent session.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Which {
    /// A change id (from listChanges).
    change: Option<u64>,
    /// With `change`: one of its hunks (0-based).
    hunk: Option<usize>,
    /// Every hunk of this file (workspace-relative, or absolute inside the workspace).
    file: Option<WorkspacePath>,
    /// Every hunk of this agent session.
    session: Option<SessionId>,
}

impl Which {
    /// What the arguments select; a file is named as the change sets name it.
    fn selection(self, ctx: &ToolContext) -> Result<Selection, ToolError> {
        Ok(Selection {
            change: self.change,
            hunk: self.hunk,
            file: self.file.map(|f| f.relative(ctx)).transpose()?,
            session: self.session,
        })
    }
}

/// Why `selection` selects nothing: it is empty, or names a change, hunk, file or
/// session the change sets do not have. `Ok` when it names at least one hunk.
pub async fn selects(services: &Services, selection: &Selection) -> Result<(), Unselected> {
    if !selection.is_given() {
        return Err(Unselected::Empty);
    }
    let selected = ask(&services.changes, NAME, List(selection.clone()))
        .await
        .map_err(|e| Unselected::Fault(e.to_string()))?;
    match selection.unmatched(&selected) {
        Some(why) => Err(Unselected::Nothing(why)),
        None => Ok(()),
    }
}

/// What [`selects`] found wrong.
#[derive(Debug, thiserror::Error)]
pub enum Unselected {
    #[error("Say which hunks: change (and hunk), file, or session")]
    Empty,
    #[error("{0}")]
    Nothing(String),
    #[error("{0}")]
    Fault(String),
}

impl From<Unselected> for ToolError {
    fn from(e: Unselected) -> Self {
        ToolError::refused(e.to_string())
    }
}

/// Undoes `selection` as `by` (the person, or an agent's [`Owner::Undid`]) and tells
/// each other agent whose hunks were undone, with `reason`.
pub async fn undo(
    services: &Services,
    selection: Selection,
    reason: &str,
    by: Owner,
) -> Result<UndoReport, ToolError> {
    let who = by.who().unwrap_or("the person").to_string();
    let undoer = match &by {
        Owner::Undid { session, .. } => Some(session.clone()),
        _ => None,
    };
    let report = ask(&services.changes, NAME, Undo { selection, by }).await?;
    let mut told: Vec<(&str, Vec<String>)> = Vec::new();
    for u in &report.undone {
        let lines = if u.from == u.to {
            format!("line {} of {}", u.from, u.file)
        } else {
            format!("lines {}–{} of {}", u.from, u.to, u.file)
        };
        match told.iter_mut().find(|(s, _)| *s == u.session) {
            Some((_, all)) => all.push(lines),
            None => told.push((&u.session, vec![lines])),
        }
    }
    // An agent that undid its own change knows.
    told.retain(|(session, _)| undoer.as_deref() != Some(*session));
    for (session, undone) in told {
        let why = if reason.trim().is_empty() {
            String::new()
        } else {
            format!(": {}", reason.trim())
        };
        services.registry.do_send(TellAgent {
            session: session.into(),
            text: format!(
                "ide-bridge: {who} undid your change to {}{why}. Read the file again before going on.",
                undone.join(", ")
            ),
        });
    }
    Ok(report)
}

pub struct ListChanges;

/// `listChanges`' answer.
#[derive(Serialize, JsonSchema)]
pub struct Listed {
    /// The selected changes.
    changes: Vec<ChangeView>,
}

/// `keepChanges`' answer.
#[derive(Serialize, JsonSchema)]
pub struct Kept {
    /// How many hunks were kept.
    kept: usize,
}

impl Tool for ListChanges {
    type Args = Which;
    const NAME: &'static str = "listChanges";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "What agents changed since their baseline, hunk by hunk (each with its state: open, kept, undone), filtered by change, file or agent session.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Listed>);

    async fn call(ctx: ToolContext, args: Which) -> ToolResult {
        let changes = ask(&ctx.services.changes, NAME, List(args.selection(&ctx)?)).await?;
        Ok(CallToolResult::structured(&Listed {
            changes: changes.iter().map(Change::view).collect(),
        }))
    }
}

pub struct WhoChanged;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WhoArgs {
    /// The file (workspace-relative or absolute inside the workspace).
    file: WorkspacePath,
    /// One line (1-based); all lines when absent.
    line: Option<usize>,
}

/// The file's lines, in runs with the same last writer.
#[derive(Serialize, JsonSchema)]
pub struct Owners {
    /// Workspace-relative.
    file: String,
    lines: Vec<LineRun>,
}

impl Tool for WhoChanged {
    type Args = WhoArgs;
    const NAME: &'static str = "whoChanged";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "Which agent (or the person) last changed each line of a file since the bridge followed it; null for lines nobody changed.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Owners>);

    async fn call(ctx: ToolContext, args: WhoArgs) -> ToolResult {
        let path = args.file.resolve(&ctx)?;
        let display = ctx
            .services
            .workspace
            .relative(&path.to_string_lossy())
            .unwrap_or_default();
        let who = Who {
            path,
            display: display.clone(),
        };
        let runs = ask(&ctx.services.changes, NAME, who)
            .await?
            .map_err(ToolError::refused)?;
        let runs: Vec<_> = match args.line {
            Some(line) => runs
                .into_iter()
                .filter(|r| (r.from..=r.to).contains(&line))
                .collect(),
            None => runs,
        };
        Ok(CallToolResult::structured(&Owners {
            file: display,
            lines: runs,
        }))
    }
}

pub struct UndoChanges;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UndoArgs {
    /// A change id (from listChanges).
    change: Option<u64>,
    /// With `change`: one of its hunks (0-based).
    hunk: Option<usize>,
    /// Every hunk of this file (workspace-relative, or absolute inside the workspace).
    file: Option<WorkspacePath>,
    /// Every hunk of this agent session.
    session: Option<SessionId>,
    /// Why, for the agent whose change is undone.
    reason: Option<String>,
}

impl Tool for UndoChanges {
    type Args = UndoArgs;
    const NAME: &'static str = "undoChanges";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "Undo hunks agents wrote (one hunk, a change, a file, or everything of an agent session): each is reverse-applied only where the file still holds it; hunks a later edit overlaps are declined and named. The agent is told, with the reason.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<UndoReport>);

    async fn call(ctx: ToolContext, args: UndoArgs) -> ToolResult {
        let selection = Selection {
            change: args.change,
            hunk: args.hunk,
            file: args.file.map(|f| f.relative(&ctx)).transpose()?,
            session: args.session,
        };
        selects(&ctx.services, &selection).await?;
        let by = Owner::Undid {
            session: ctx.session_id.clone(),
            agent: crate::tools::claims::my_label(&ctx).await.0,
        };
        let report = undo(
            &ctx.services,
            selection,
            args.reason.as_deref().unwrap_or(""),
            by,
        )
        .await?;
        Ok(CallToolResult::structured(&report))
    }
}

pub struct KeepChanges;

impl Tool for KeepChanges {
    type Args = Which;
    const NAME: &'static str = "keepChanges";
    const EFFECT: Effect = Effect::Adds;
    const DESCRIPTION: &'static str = "Keep hunks agents wrote (one hunk, a change, a file, or everything of an agent session): they leave the open change sets.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Kept>);

    async fn call(ctx: ToolContext, args: Which) -> ToolResult {
        let selection = args.selection(&ctx)?;
        selects(&ctx.services, &selection).await?;
        let kept = ask(&ctx.services.changes, NAME, Keep(selection)).await?;
        Ok(CallToolResult::structured(&Kept { kept }))
    }
}
