//! Server-sent events for the page: one stream with new timeline entries (`activity`)
//! and what changed in the page's own state (`page`: diffs, approvals, reviews), and
//! one per Claude task with its output as it comes. Both are bounded: a page that
//! stops reading is dropped instead of making the bridge buffer for it.

use std::sync::Arc;
use std::time::Duration;

use actix_web::{web, HttpRequest, HttpResponse};
use futures_util::stream::{self, StreamExt};

use super::{ask, PageError};
use crate::actors::activity_log::{self, Subscribe};
use crate::actors::dashboard::{self, WatchPage};
use crate::actors::event_stream::{EventSender, Offered};
use crate::actors::orchestrator::{self as orchestrator_actor, WatchTask};
use crate::orchestrator::TaskId;
use crate::services::Services;

/// Keep-alive comment interval.
const KEEPALIVE: Duration = Duration::from_secs(15);
/// Output lines queued for one page's task stream; past it the stream ends.
const TASK_QUEUE: usize = 1024;

/// One event in the wire format.
fn event(name: &str, data: &str) -> web::Bytes {
    // `data` is one JSON document: it holds no raw newline.
    web::Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

fn sse(body: impl futures_util::Stream<Item = web::Bytes> + 'static) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(body.map(Ok::<_, actix_web::Error>))
}

/// What the merged page stream yields next.
enum Next {
    Activity(Arc<str>),
    /// The timeline dropped this page (it fell behind); page events go on.
    ActivityGone,
    Page(Arc<str>),
    KeepAlive,
    End,
}

/// `GET /ui/api/events`: the page's live stream. Opening it makes the page count as
/// watching (so agents' diffs and approvals wait for it).
pub async fn page_events(
    req: HttpRequest,
    services: web::Data<Services>,
) -> Result<HttpResponse, PageError> {
    // The gate in front of /ui/api checked the cookie; the stream belongs to it.
    let cookie = super::cookie(&req, &super::cookie_name(services.port)).unwrap_or_default();
    let page = ask(
        &services.dashboard,
        dashboard::NAME,
        WatchPage {
            cookie,
            socket: crate::http::conn::socket_of(&req),
        },
    )
    .await?
    .map_err(|e| PageError::Unavailable(e.to_string()))?;
    // Without room on the timeline's subscriber list the page still gets its own events.
    let activity = match ask(
        &services.activity,
        activity_log::NAME,
        // A page that falls behind on the timeline is disconnected too (it reconnects
        // and catches up, as after any drop).
        Subscribe {
            socket: crate::http::conn::socket_of(&req),
        },
    )
    .await?
    {
        Ok(Some(rx)) => Some(rx),
        _ => {
            tracing::warn!(
                "the page's timeline is not live: activity.max_stream_subscribers reached"
            );
            None
        }
    };
    let live = activity.is_some();
    let first = event(
        "hello",
        &serde_json::json!({ "liveActivity": live }).to_string(),
    );
    let rest = stream::unfold((page, activity), |(mut page, mut activity)| async move {
        let next = tokio::select! {
            line = page.recv() => line.map_or(Next::End, Next::Page),
            line = async {
                match activity.as_mut() {
                    Some(rx) => rx.recv().await,
                    None => std::future::pending().await,
                }
            } => line.map_or(Next::ActivityGone, Next::Activity),
            _ = tokio::time::sleep(KEEPALIVE) => Next::KeepAlive,
        };
        let bytes = match next {
            Next::Activity(line) => event("activity", &line),
            Next::ActivityGone => {
                activity = None;
                event("hello", "{\"liveActivity\":false}")
            }
            Next::Page(line) => event("page", &line),
            Next::KeepAlive => web::Bytes::from_static(b": keep-alive\n\n"),
            Next::End => return None,
        };
        Some((bytes, (page, activity)))
    });
    Ok(sse(stream::once(async move { first }).chain(rest)))
}

/// `GET /ui/api/tasks/{id}/output`: `task` (the task as it is, its output so far
/// included), then an `output` event per new line, then `end` when it finishes.
pub async fn task_output(
    req: HttpRequest,
    services: web::Data<Services>,
    id: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let id = TaskId::from(id.into_inner());
    let (task, follower) = ask(
        &services.orchestrator,
        orchestrator_actor::NAME,
        WatchTask(id.clone()),
    )
    .await?
    .ok_or_else(|| PageError::NotFound(format!("No task {id}")))?;
    let first = event(
        "task",
        &serde_json::to_string(&task).unwrap_or_else(|_| "{}".into()),
    );
    // The orchestrator's channel is unbounded: drain it here into a bounded one, so a
    // page that does not read costs at most TASK_QUEUE lines (and is then disconnected).
    let (tx, rx) = EventSender::channel(TASK_QUEUE, crate::http::conn::socket_of(&req));
    if let Some(mut follower) = follower {
        actix_rt::spawn(async move {
            while let Some(line) = follower.recv().await {
                match tx.offer(&Arc::from(line)) {
                    Offered::Queued => {}
                    Offered::Gone => return,
                    Offered::FellBehind => {
                        tracing::warn!(task = %id, "a page's task stream fell behind; ending it");
                        return;
                    }
                }
            }
        });
    }
    let lines = stream::unfold(rx, |mut rx| async move {
        let bytes = match tokio::time::timeout(KEEPALIVE, rx.recv()).await {
            Ok(Some(line)) => event("output", &serde_json::Value::from(&*line).to_string()),
            Ok(None) => return None,
            Err(_) => web::Bytes::from_static(b": keep-alive\n\n"),
        };
        Some((bytes, rx))
    });
    let end = stream::once(async { event("end", "{}") });
    Ok(sse(stream::once(async move { first })
        .chain(lines)
        .chain(end)))
}
