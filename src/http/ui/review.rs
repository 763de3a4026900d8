//! The review panel's API: the history, one review with its references followed into
//! the files as they are now, the excerpt behind a reference, "Commit with this
//! message", and the two ways back: open a place in the editor, or send it to an agent
//! as an @-mention.

use std::sync::Arc;

use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{ask, PageError};
use crate::actors::dashboard::{self, GetReview, ListReviews, PresentedReview};
use crate::actors::extension::{Call, ExtError};
use crate::actors::messages::registry::{Delivery, Mention};
use crate::actors::registry;
use crate::protocol::editor::Method;
use crate::protocol::id::SessionId;
use crate::review::anchor::{excerpt as lines_of, Fate};
use crate::review::{resolve, Resolved};
use crate::services::Services;
use crate::workspace::{files, Workspace};

/// Lines shown around a reference's own.
const CONTEXT_LINES: u32 = 3;
/// Most lines an excerpt shows.
const MAX_EXCERPT_LINES: u32 = 400;

/// The text of workspace-relative `path` now, if it is a readable text file.
fn current_text(workspace: &Workspace, path: &str) -> Option<String> {
    let abs = workspace.resolve(path).ok()?;
    files::read_text(workspace.dir(), &abs)
        .ok()
        .map(|(text, _)| text)
}

async fn review_of(services: &Services, id: u64) -> Result<Arc<PresentedReview>, PageError> {
    ask(&services.dashboard, dashboard::NAME, GetReview(id))
        .await?
        .ok_or_else(|| {
            PageError::NotFound(format!("No review {id} (the history keeps ui.max_reviews)"))
        })
}

/// Follows every reference of `review` into the files as they are now (off the worker).
async fn followed(
    services: &Services,
    review: Arc<PresentedReview>,
) -> Result<Vec<Resolved>, PageError> {
    let workspace = services.workspace.clone();
    crate::tools::blocking(move || resolve(&review.draft, |path| current_text(&workspace, path)))
        .await
        .map_err(|e| PageError::Unavailable(e.to_string()))
}

/// `GET /ui/api/reviews`: the history, newest first.
pub async fn list(services: web::Data<Services>) -> Result<HttpResponse, PageError> {
    Ok(HttpResponse::Ok().json(ask(&services.dashboard, dashboard::NAME, ListReviews).await?))
}

/// `GET /ui/api/reviews/{id}`: the review, its HTML, and each reference now.
pub async fn one(
    services: web::Data<Services>,
    id: web::Path<u64>,
) -> Result<HttpResponse, PageError> {
    let review = review_of(&services, id.into_inner()).await?;
    let refs = followed(&services, Arc::clone(&review)).await?;
    Ok(HttpResponse::Ok().json(json!({
        "id": review.id,
        "sessionId": review.session_id,
        "createdAt": review.created_at,
        "baseRef": review.base_ref,
        "title": review.draft.title,
        "html": review.draft.html,
        "markdown": review.draft.markdown,
        "commitMessage": review.draft.commit_message,
        "refs": refs,
    })))
}

#[derive(Deserialize)]
pub struct ExcerptQuery {
    #[serde(rename = "ref")]
    index: usize,
}

/// One numbered line of an excerpt.
#[derive(Serialize)]
struct Line {
    n: u32,
    text: String,
    /// One of the reference's own lines.
    hit: bool,
}

/// `GET /ui/api/reviews/{id}/excerpt?ref=N`: the lines a reference points at now, with
/// context; for a stale or gone reference, the lines as the review saw them.
pub async fn excerpt(
    services: web::Data<Services>,
    id: web::Path<u64>,
    query: web::Query<ExcerptQuery>,
) -> Result<HttpResponse, PageError> {
    let review = review_of(&services, id.into_inner()).await?;
    let index = query.index;
    let Some(written) = review.draft.refs.get(index).cloned() else {
        return Err(PageError::NotFound(format!(
            "Review {} has no reference {index}",
            review.id
        )));
    };
    let refs = followed(&services, Arc::clone(&review)).await?;
    let now = refs[index].now;
    let current = matches!(now.fate, Fate::Kept | Fate::Moved);
    let (start, end) = if current {
        (now.start, now.end)
    } else {
        (written.start, written.end)
    };
    let text = if current {
        let (ws, path) = (services.workspace.clone(), written.path.clone());
        crate::tools::blocking(move || current_text(&ws, &path))
            .await
            .map_err(|e| PageError::Unavailable(e.to_string()))?
            .unwrap_or_default()
    } else {
        review
            .draft
            .bases
            .get(&written.path)
            .map(|t| t.to_string())
            .unwrap_or_default()
    };
    let last = end.min(start.saturating_add(MAX_EXCERPT_LINES));
    let lines: Vec<Line> = lines_of(
        &text,
        start.saturating_sub(CONTEXT_LINES),
        last.saturating_add(CONTEXT_LINES),
    )
    .into_iter()
    .map(|(n, text)| Line {
        hit: (start..=end).contains(&n),
        n,
        text,
    })
    .collect();
    Ok(HttpResponse::Ok().json(json!({
        "path": written.path,
        "absolutePath": services.workspace.root().join(&written.path).display().to_string(),
        "written": { "start": written.start, "end": written.end },
        "now": now,
        "from": if current { "workspace" } else { "review" },
        "lines": lines,
    })))
}

#[derive(Deserialize)]
pub struct CommitRequest {
    message: String,
}

/// `POST /ui/api/reviews/{id}/commit` `{message}`: commits what is staged with the
/// message (the review's summary as the person left it), by gitCommit's rules.
pub async fn commit(
    services: web::Data<Services>,
    id: web::Path<u64>,
    body: web::Json<CommitRequest>,
) -> Result<HttpResponse, PageError> {
    let review = review_of(&services, id.into_inner()).await?;
    let head = crate::tools::git::git_commit::commit(&services, &body.message, false)
        .await
        .map_err(|e| PageError::BadRequest(e.to_string()))?;
    tracing::info!(review = review.id, commit = %head, "committed with a review's message from the browser page");
    Ok(HttpResponse::Ok().json(json!({ "commit": head })))
}

/// A place in the workspace: a review's reference, or a path and lines.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Place {
    review: Option<u64>,
    #[serde(rename = "ref")]
    index: Option<usize>,
    path: Option<String>,
    /// 1-based.
    start: Option<u32>,
    /// 1-based, inclusive.
    end: Option<u32>,
    /// The agent a mention goes to (all listening agents when absent).
    session_id: Option<SessionId>,
}

/// The absolute path and 1-based lines `place` names now, confined to the workspace.
async fn locate(services: &Services, place: &Place) -> Result<(String, u32, u32), PageError> {
    let (path, start, end) = match (place.review, place.index, &place.path) {
        (Some(id), Some(index), _) => {
            let review = review_of(services, id).await?;
            let written = review.draft.refs.get(index).cloned().ok_or_else(|| {
                PageError::NotFound(format!("Review {id} has no reference {index}"))
            })?;
            let now = followed(services, review).await?[index].now;
            (written.path, now.start, now.end)
        }
        (_, _, Some(path)) => {
            let start = place.start.unwrap_or(1).max(1);
            let end = place.end.unwrap_or(start);
            if end < start {
                return Err(PageError::BadRequest(format!(
                    "end ({end}) is before start ({start}): lines are 1-based and inclusive"
                )));
            }
            (path.clone(), start, end)
        }
        _ => {
            return Err(PageError::BadRequest(
                "Name a place: {review, ref} or {path, start?, end?}".into(),
            ))
        }
    };
    let abs = services
        .workspace
        .resolve(&path)
        .map_err(|e| PageError::BadRequest(e.to_string()))?;
    if !abs.is_file() {
        return Err(PageError::NotFound(format!("File not found: {path}")));
    }
    Ok((abs.display().to_string(), start, end))
}

/// `POST /ui/api/open` `{review, ref}` or `{path, start?, end?}`: opens the place in
/// the editor (`openFile` with the line) when one is connected.
pub async fn open_in_editor(
    services: web::Data<Services>,
    body: web::Json<Place>,
) -> Result<HttpResponse, PageError> {
    let (file, start, _) = locate(&services, &body).await?;
    let (reply, answer) = tokio::sync::oneshot::channel();
    services.extension.do_send(Call {
        method: Method::OpenFile,
        params: json!({ "file": file, "line": start }),
        timeout: None,
        reply,
    });
    let outcome = answer
        .await
        .unwrap_or(Err(ExtError::Restarted(Method::OpenFile.wire())));
    Ok(match outcome {
        Ok(_) => HttpResponse::Ok().json(json!({ "opened": true, "file": file, "line": start })),
        Err(ExtError::NotConnected) => HttpResponse::Ok().json(json!({
            "opened": false,
            "reason": "No editor is connected: the excerpt is shown here instead",
        })),
        Err(e) => HttpResponse::Ok().json(json!({ "opened": false, "reason": e.to_string() })),
    })
}

/// `POST /ui/api/mention` `{review, ref}` or `{path, start?, end?}`, with an optional
/// `sessionId`: the place goes to the agent(s) as `at_mentioned`, as a selection sent
/// from an editor would.
pub async fn mention(
    services: web::Data<Services>,
    body: web::Json<Place>,
) -> Result<HttpResponse, PageError> {
    let (file, start, end) = locate(&services, &body).await?;
    // at_mentioned lines are 0-based.
    let mut params = json!({
        "filePath": file,
        "lineStart": start.saturating_sub(1),
        "lineEnd": end.saturating_sub(1),
    });
    if let Some(session) = &body.session_id {
        params["sessionId"] = json!(session);
    }
    let delivery = ask(&services.registry, registry::NAME, Mention(params)).await?;
    let mut answer = json!({ "filePath": file, "lineStart": start, "lineEnd": end });
    match delivery {
        Delivery::Sent(agents) => {
            answer["sent"] = json!(true);
            answer["agents"] = json!(agents);
        }
        Delivery::Queued => {
            answer["sent"] = json!(false);
            answer["queued"] = json!(true);
            answer["reason"] = json!(format!(
                "No agent is listening: the place goes to the first that connects within {} s",
                registry::MENTION_TTL.as_secs()
            ));
        }
        Delivery::NoSuchSession(id) => {
            return Err(PageError::NotFound(format!(
                "No agent session {id:?} (the page's list of agents names them)"
            )))
        }
        Delivery::Failed(why) => return Err(PageError::Unavailable(why)),
    }
    tracing::info!(%file, start, end, ?answer, "a place sent to the agents from the browser page");
    Ok(HttpResponse::Ok().json(answer))
}
