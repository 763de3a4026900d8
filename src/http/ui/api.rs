//! The page's JSON API: status, timeline, tasks, samples for the charts, diffs to
//! decide, tool requests to approve, file claims, and what agents changed. The gate in front of `/ui/api` (see
//! [`super::configure`]) has checked the sign-in before any handler here runs.

use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{ask, PageError};
use crate::actors::activity_log::{self, Query};
use crate::actors::changes::{self as changes_actor, KeepChanges, ListChanges};
use crate::actors::claims::{self, ClaimFiles, ListClaims, ReleaseClaim};
use crate::actors::dashboard::diffs::DiffView;
use crate::actors::dashboard::{
    self, DecideApproval, DecideDiff, GetSamples, ListApprovals, ListDiffs,
};
use crate::actors::orchestrator::{self as orchestrator_actor, CancelTask, ListTasks, TaskError};
use crate::automation::template::tail;
use crate::changes::Selection;
use crate::coordination::claims::{ClaimError, Holder};
use crate::orchestrator::{Task, TaskId};
use crate::protocol::id::SessionId;
use crate::review::anchor::{line_ops, LineOp};
use crate::services::Services;
use crate::tools::changes::Unselected;
use crate::tools::claims::claim_files::ClaimFiles as ClaimFilesTool;

/// Largest request body the page sends (an accepted diff's text is the largest).
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// Timeline entries the page loads at first, at most.
const MAX_ACTIVITY: usize = 5_000;

/// Bytes of a task's output listed with it (the end; the rest streams on demand).
const OUTPUT_TAIL_BYTES: usize = 2 * 1024;

/// `GET /ui/api/status`: the `/status` document.
pub async fn status(services: web::Data<Services>) -> Result<HttpResponse, PageError> {
    Ok(HttpResponse::Ok().json(crate::status::collect(&services).await?))
}

#[derive(Deserialize)]
pub struct ActivityQuery {
    limit: Option<usize>,
    after: Option<u64>,
}

/// `GET /ui/api/activity?limit=&after=`: timeline entries, oldest first: the newest,
/// or with `after` the first ones after that id (the page catches up over its polls).
pub async fn activity(
    services: web::Data<Services>,
    query: web::Query<ActivityQuery>,
) -> Result<HttpResponse, PageError> {
    let entries = ask(
        &services.activity,
        activity_log::NAME,
        Query {
            include_lifecycle: true,
            after_id: query.after,
            limit: query.limit.unwrap_or(1_000).min(MAX_ACTIVITY),
            ..Query::default()
        },
    )
    .await??;
    Ok(HttpResponse::Ok().json(entries))
}

/// A task as the list shows it: everything but the whole output.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TaskRow {
    #[serde(flatten)]
    task: Task,
    output_bytes: usize,
}

/// `GET /ui/api/tasks`: every task (agents' and automation's), oldest first, with the
/// end of its output.
pub async fn tasks(services: web::Data<Services>) -> Result<HttpResponse, PageError> {
    let tasks = ask(
        &services.orchestrator,
        orchestrator_actor::NAME,
        ListTasks { session: None },
    )
    .await?;
    let rows: Vec<TaskRow> = tasks
        .into_iter()
        .map(|mut task| {
            let output_bytes = task.output.len();
            task.output = tail(&task.output, OUTPUT_TAIL_BYTES).to_string();
            TaskRow { task, output_bytes }
        })
        .collect();
    Ok(HttpResponse::Ok().json(rows))
}

/// `POST /ui/api/tasks/{id}/cancel`.
pub async fn cancel_task(
    services: web::Data<Services>,
    id: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let task = ask(
        &services.orchestrator,
        orchestrator_actor::NAME,
        CancelTask {
            task_id: TaskId::from(id.into_inner()),
            session: None,
        },
    )
    .await?
    .map_err(|e| match e {
        // As the task's output stream says of an unknown id: 404.
        TaskError::NotFound(_) => PageError::NotFound(e.to_string()),
        TaskError::Fault(fault) => PageError::Fault(fault),
        // Over already: 409.
        _ => PageError::Gone(e.to_string()),
    })?;
    tracing::info!(task = %task.id, "task cancelled from the browser page");
    Ok(HttpResponse::Ok().json(json!({ "id": task.id, "status": task.status })))
}

/// `GET /ui/api/samples`: tool calls per interval, for the charts.
pub async fn samples(services: web::Data<Services>) -> Result<HttpResponse, PageError> {
    let samples = ask(&services.dashboard, dashboard::NAME, GetSamples).await?;
    Ok(HttpResponse::Ok().json(json!({
        "intervalMs": dashboard::SAMPLE_INTERVAL.as_millis() as u64,
        "samples": samples,
    })))
}

/// A diff with its line diff, for the side-by-side view.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DiffShown {
    #[serde(flatten)]
    diff: DiffView,
    ops: Vec<LineOp>,
}

/// `GET /ui/api/diffs`: the diffs waiting for a decision, oldest first.
pub async fn diffs(services: web::Data<Services>) -> Result<HttpResponse, PageError> {
    let diffs = ask(&services.dashboard, dashboard::NAME, ListDiffs).await?;
    let shown = crate::tools::blocking(move || {
        diffs
            .into_iter()
            .map(|diff| DiffShown {
                ops: line_ops(&diff.original, &diff.proposed),
                diff,
            })
            .collect::<Vec<_>>()
    })
    .await
    .map_err(|e| PageError::Unavailable(e.to_string()))?;
    Ok(HttpResponse::Ok().json(shown))
}

#[derive(Deserialize)]
pub struct DiffDecision {
    accept: bool,
    /// The final text (the proposal, or the person's edit of it).
    content: Option<String>,
}

/// `POST /ui/api/diffs/{id}` `{accept, content?}`: the agent gets `FILE_SAVED` with
/// `content` (the proposal when absent) or `DIFF_REJECTED`.
pub async fn decide_diff(
    services: web::Data<Services>,
    id: web::Path<u64>,
    body: web::Json<DiffDecision>,
) -> Result<HttpResponse, PageError> {
    let id = id.into_inner();
    let DiffDecision { accept, content } = body.into_inner();
    let decision = DecideDiff {
        id,
        accept,
        content,
    };
    if !ask(&services.dashboard, dashboard::NAME, decision).await? {
        return Err(PageError::Gone(format!(
            "Diff {id} no longer waits: it was decided, replaced or withdrawn by its agent"
        )));
    }
    tracing::info!(diff = id, accept, "diff decided in the browser page");
    Ok(HttpResponse::Ok().json(json!({ "id": id, "accepted": accept })))
}

/// `GET /ui/api/approvals`: tool requests of Claude tasks waiting for the person.
pub async fn approvals(services: web::Data<Services>) -> Result<HttpResponse, PageError> {
    let waiting = ask(&services.dashboard, dashboard::NAME, ListApprovals).await?;
    Ok(HttpResponse::Ok().json(waiting))
}

#[derive(Deserialize)]
pub struct ApprovalDecision {
    allow: bool,
}

/// `POST /ui/api/approvals/{id}` `{allow}`.
pub async fn decide_approval(
    services: web::Data<Services>,
    id: web::Path<u64>,
    body: web::Json<ApprovalDecision>,
) -> Result<HttpResponse, PageError> {
    let (id, allow) = (id.into_inner(), body.allow);
    if !ask(
        &services.dashboard,
        dashboard::NAME,
        DecideApproval { id, allow },
    )
    .await?
    {
        return Err(PageError::Gone(format!(
            "Request {id} no longer waits: it was decided, timed out, or its task ended"
        )));
    }
    tracing::info!(
        request = id,
        allow,
        "tool request decided in the browser page"
    );
    Ok(HttpResponse::Ok().json(json!({ "id": id, "allowed": allow })))
}

/// `GET /ui/api/claims`: every file claim held now.
pub async fn claims(services: web::Data<Services>) -> Result<HttpResponse, PageError> {
    let held = ask(&services.claims, claims::NAME, ListClaims).await??;
    Ok(HttpResponse::Ok().json(claims::views(&held, activity_log::now_ms())))
}

/// What the person claims in the page.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PersonClaim {
    paths: Vec<String>,
    #[serde(default)]
    reason: String,
    ttl_minutes: Option<u64>,
}

/// `POST /ui/api/claims`: the person claims files (agents' writes to them are refused
/// with "the person is editing …"). The body is `claimFiles`' arguments, checked
/// against that tool's schema.
pub async fn claim(
    services: web::Data<Services>,
    body: web::Json<serde_json::Value>,
) -> Result<HttpResponse, PageError> {
    let body = body.into_inner();
    if let Some(tool) = services
        .tools
        .get(<ClaimFilesTool as crate::tools::Tool>::NAME)
    {
        tool.validate(&body)
            .map_err(|e| PageError::BadRequest(e.to_string()))?;
    }
    let body: PersonClaim =
        serde_json::from_value(body).map_err(|e| PageError::BadRequest(e.to_string()))?;
    let ttl = services.settings.claims.ttl(body.ttl_minutes);
    let made = ask(
        &services.claims,
        claims::NAME,
        ClaimFiles {
            holder: Holder::Person,
            patterns: body.paths,
            reason: body.reason,
            ttl,
        },
    )
    .await??
    .map_err(|e| match e {
        // Someone else holds them, or there is no room for another claim now: 409.
        ClaimError::Taken { .. } | ClaimError::Full => PageError::Gone(e.to_string()),
        // What was asked for cannot be claimed at all: 400.
        ClaimError::Empty
        | ClaimError::TooManyPatterns
        | ClaimError::BadPattern(..)
        | ClaimError::Outside(_) => PageError::BadRequest(e.to_string()),
    })?;
    Ok(HttpResponse::Ok().json(&claims::views(&[made], activity_log::now_ms())[0]))
}

/// `POST /ui/api/claims/{id}/release`: the person ends any claim.
pub async fn release_claim(
    services: web::Data<Services>,
    id: web::Path<u64>,
) -> Result<HttpResponse, PageError> {
    let id = id.into_inner();
    match ask(&services.claims, claims::NAME, ReleaseClaim(id)).await?? {
        Some(_) => Ok(HttpResponse::Ok().json(json!({ "id": id, "released": true }))),
        None => Err(PageError::Gone(format!(
            "Claim {id} is no longer held: it was released or expired"
        ))),
    }
}

/// `GET /ui/api/changes`: every agent's change set, hunk by hunk.
pub async fn changes(services: web::Data<Services>) -> Result<HttpResponse, PageError> {
    let all = ask(
        &services.changes,
        changes_actor::NAME,
        ListChanges(Selection::default()),
    )
    .await??;
    Ok(HttpResponse::Ok().json(
        all.iter()
            .map(crate::changes::Change::view)
            .collect::<Vec<_>>(),
    ))
}

/// What the person keeps or undoes in the page, and why (told to the agent).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Decision {
    change: Option<u64>,
    hunk: Option<usize>,
    file: Option<String>,
    session: Option<SessionId>,
    #[serde(default)]
    reason: String,
}

impl Decision {
    /// The hunks it names, when it names any that exist.
    async fn selection(&self, services: &Services) -> Result<Selection, PageError> {
        let s = Selection {
            change: self.change,
            hunk: self.hunk,
            file: self.file.clone(),
            session: self.session.clone(),
        };
        match crate::tools::changes::selects(services, &s).await {
            Ok(()) => Ok(s),
            Err(e @ Unselected::Empty) => Err(PageError::BadRequest(e.to_string())),
            Err(e @ Unselected::Nothing(_)) => Err(PageError::NotFound(e.to_string())),
            Err(Unselected::Fault(e)) => Err(PageError::Unavailable(e)),
        }
    }
}

/// `POST /ui/api/changes/keep`.
pub async fn keep_changes(
    services: web::Data<Services>,
    body: web::Json<Decision>,
) -> Result<HttpResponse, PageError> {
    let selection = body.selection(&services).await?;
    let kept = ask(
        &services.changes,
        changes_actor::NAME,
        KeepChanges(selection),
    )
    .await??;
    Ok(HttpResponse::Ok().json(json!({ "kept": kept })))
}

/// `POST /ui/api/changes/undo`: the undone hunks and those declined, with why.
pub async fn undo_changes(
    services: web::Data<Services>,
    body: web::Json<Decision>,
) -> Result<HttpResponse, PageError> {
    let selection = body.selection(&services).await?;
    let by = crate::changes::Owner::Person;
    let report = crate::tools::changes::undo(&services, selection, &body.reason, by)
        .await
        .map_err(|e| PageError::Unavailable(e.to_string()))?;
    Ok(HttpResponse::Ok().json(report))
}
