//! `POST /hooks`: Claude Code's hooks, posted by `ide-bridge hook` (bearer token). The
//! hook joins its agent's session (found by the CLI's process), and the bridge answers:
//!
//! - before an `Edit`/`Write`/`NotebookEdit`: refused when another agent (or the
//!   person) claims the file, with the holder and its reason; before a `Bash`: the
//!   holders' notes as context when the command names claimed files;
//!   Otherwise a notice waiting for the agent (another agent changed a file it read) is
//!   added as context for the model;
//! - after any native tool (posted in the background): the call goes to the timeline
//!   and the metrics; a read marks the file as seen, a write tells the agents that saw
//!   it;
//! - a prompt, a stop, a conversation starting or ending: the timeline and automation;
//!   a stop may be held by the done-gate;
//! - a permission dialog: waits in an open page for the person.
//!
//! Malformed input, an agent the bridge cannot name, or a hook from another workspace
//! has no effect beyond a counter (`hooks_ignored`): the CLI carries on as if no hook
//! ran. One exception: a write to a claimed file is refused even for an agent the
//! bridge cannot name, since it is not the holder.

use std::path::Path;

use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::json;

use super::body::{read_limited, BodyError};
use super::guard::{check_bearer, check_host_and_origin, Rejection};
use super::{CLIENT_HEADER, TASK_HEADER};
use crate::actors::activity_log::{CallStatus, LifecycleEvent, RecordLifecycle, RecordToolCall};
use crate::actors::claims::{CheckWrite, ClaimsNamedIn};
use crate::actors::registry::{AgentRef, FileChanged, Identify};
use crate::actors::session::{Saw, SessionId, TakeNotice};
use crate::hooks::input::clip;
use crate::hooks::{HookAnswer, HookEvent, HookInput, NativeAction};
use crate::metrics::{native_tool_label, HookLabels, ReasonLabel, ToolLabels};
use crate::services::Services;

/// Why a hook had no effect (the `hooks_ignored` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ignored {
    Malformed,
    UnknownAgent,
    OtherWorkspace,
    TooLarge,
    Disabled,
}

impl Ignored {
    fn as_str(self) -> &'static str {
        match self {
            Ignored::Malformed => "malformed",
            Ignored::UnknownAgent => "unknownAgent",
            Ignored::OtherWorkspace => "otherWorkspace",
            Ignored::TooLarge => "tooLarge",
            Ignored::Disabled => "disabled",
        }
    }
}

fn ignore(services: &Services, why: Ignored) {
    services
        .metrics
        .hooks_ignored
        .get_or_create(&ReasonLabel {
            reason: why.as_str(),
        })
        .inc();
}

/// The answer's body: the hook's JSON, or nothing.
fn respond(answer: &HookAnswer) -> HttpResponse {
    match answer.to_json() {
        Some(body) => HttpResponse::Ok().json(body),
        None => HttpResponse::Ok().finish(),
    }
}

/// `POST /hooks`.
pub async fn post(
    req: HttpRequest,
    payload: web::Payload,
    services: web::Data<Services>,
) -> Result<HttpResponse, Rejection> {
    check_host_and_origin(&req, &services.settings)?;
    check_bearer(&req, &services.auth_token)?;
    let settings = &services.settings.hooks;
    let body = match read_limited(
        &req,
        payload,
        settings.max_input_bytes,
        "hooks.max_input_bytes",
    )
    .await
    {
        Ok(body) => body,
        Err(e) => {
            ignore(&services, Ignored::TooLarge);
            let status = match e {
                BodyError::TooLarge { .. } => actix_web::http::StatusCode::PAYLOAD_TOO_LARGE,
                BodyError::Unreadable(_) => actix_web::http::StatusCode::BAD_REQUEST,
            };
            return Ok(HttpResponse::build(status).json(json!({ "error": e.to_string() })));
        }
    };
    let input = match HookInput::parse(&body) {
        Ok(input) => input,
        Err(e) => {
            ignore(&services, Ignored::Malformed);
            tracing::debug!(%e, "ignoring a malformed hook");
            return Ok(HttpResponse::BadRequest()
                .json(json!({ "error": format!("not a Claude Code hook input: {e}") })));
        }
    };
    if !settings.enabled {
        ignore(&services, Ignored::Disabled);
        return Ok(respond(&HookAnswer::Nothing));
    }
    if input
        .cwd
        .as_deref()
        .is_some_and(|cwd| !within(services.workspace.root(), cwd))
    {
        ignore(&services, Ignored::OtherWorkspace);
        return Ok(respond(&HookAnswer::Nothing));
    }
    let pids: Vec<u32> = header(&req, CLIENT_HEADER)
        .map(|v| {
            v.split(',')
                .filter_map(|p| p.trim().parse().ok())
                .take(8)
                .collect()
        })
        .unwrap_or_default();
    let agent = if pids.is_empty() {
        None
    } else {
        services
            .registry
            .send(Identify::Process(pids))
            .await
            .ok()
            .flatten()
    };
    if agent.is_none() {
        ignore(&services, Ignored::UnknownAgent);
    }
    let from_task = header(&req, TASK_HEADER).is_some();
    let span = tracing::debug_span!(
        "hook",
        event = input.hook_event_name.as_str(),
        tool = input.tool(),
        agent = agent.as_ref().map(|a| a.id.as_str()).unwrap_or("?"),
    );
    let _entered = span.enter();
    let answer = answer(&services, &input, agent.as_ref(), from_task).await;
    services
        .metrics
        .hook_events
        .get_or_create(&HookLabels {
            event: input.hook_event_name.as_str(),
            outcome: answer.outcome(),
        })
        .inc();
    Ok(respond(&answer))
}

fn header<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// True when `dir` is the workspace or inside it (resolving symlinks where it exists).
fn within(root: &Path, dir: &Path) -> bool {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    dir.starts_with(root)
}

/// Decides the answer to one hook, recording what it says about the agent's work.
async fn answer(
    services: &Services,
    input: &HookInput,
    agent: Option<&AgentRef>,
    from_task: bool,
) -> HookAnswer {
    let by = agent.map(|a| a.id.clone());
    match input.hook_event_name {
        HookEvent::PreToolUse => match before_tool(services, input, by).await {
            // A notice waits for a refusal to pass; a note on claims comes first.
            HookAnswer::Nothing => match agent {
                Some(agent) => notice(services, input.hook_event_name, agent).await,
                None => HookAnswer::Nothing,
            },
            decided => decided,
        },
        HookEvent::PostToolUse | HookEvent::PostToolUseFailure => {
            // Runs in the background: the CLI does not read the answer.
            if let Some(agent) = agent {
                after_tool(services, input, agent).await;
            }
            HookAnswer::Nothing
        }
        HookEvent::UserPromptSubmit => {
            let Some(agent) = agent else {
                return HookAnswer::Nothing;
            };
            let prompt = input.prompt.as_deref().unwrap_or("");
            lifecycle(
                services,
                LifecycleEvent::PromptSubmitted,
                &agent.id,
                format!("\"{}\"", clip(prompt, 120)),
            );
            notice(services, input.hook_event_name, agent).await
        }
        HookEvent::Stop => {
            if let Some(agent) = agent {
                lifecycle(
                    services,
                    LifecycleEvent::AgentStopped,
                    &agent.id,
                    "ended its turn".into(),
                );
            }
            HookAnswer::Nothing
        }
        HookEvent::SessionStart | HookEvent::SessionEnd => {
            if let Some(agent) = agent {
                let (what, why) = match input.hook_event_name {
                    HookEvent::SessionStart => ("started", input.source.as_deref()),
                    _ => ("ended", input.reason.as_deref()),
                };
                lifecycle(
                    services,
                    LifecycleEvent::CliSession,
                    &agent.id,
                    format!(
                        "conversation {} {what} ({})",
                        clip(&input.session_id, 36),
                        clip(why.unwrap_or("-"), 40)
                    ),
                );
            }
            HookAnswer::Nothing
        }
        HookEvent::PermissionRequest => {
            let _ = from_task;
            HookAnswer::Nothing
        }
    }
}

/// Before a native tool: claims.
async fn before_tool(services: &Services, input: &HookInput, by: Option<SessionId>) -> HookAnswer {
    match input.action() {
        NativeAction::Write(path) => {
            let Some(rel) = services.workspace.relative(&path.to_string_lossy()) else {
                return HookAnswer::Nothing;
            };
            let check = CheckWrite {
                by,
                path: rel,
                tool: input.tool().to_string(),
            };
            match services.claims.send(check).await {
                Ok(Ok(Some(reason))) => HookAnswer::Deny { reason },
                _ => HookAnswer::Nothing,
            }
        }
        NativeAction::Command(command) => {
            let ask = ClaimsNamedIn {
                by,
                command: command.to_string(),
            };
            match services.claims.send(ask).await {
                Ok(Ok(Some(text))) => HookAnswer::Context {
                    event: HookEvent::PreToolUse,
                    text,
                },
                _ => HookAnswer::Nothing,
            }
        }
        NativeAction::Read(_) | NativeAction::Other => HookAnswer::Nothing,
    }
}

/// After a native tool: the timeline, the metrics, what the agent saw or changed.
async fn after_tool(services: &Services, input: &HookInput, agent: &AgentRef) {
    if input.is_mcp_tool() {
        // Calls of MCP tools are the servers' to record (the bridge records its own).
        return;
    }
    let ok = input.hook_event_name == HookEvent::PostToolUse;
    let status = if ok {
        CallStatus::Success
    } else {
        CallStatus::Error
    };
    services
        .metrics
        .native_tool_calls
        .get_or_create(&ToolLabels {
            tool: native_tool_label(input.tool()),
            status: status.as_str(),
        })
        .inc();
    let workspace = &services.workspace;
    let mut summary = input.summary(|p| {
        workspace
            .relative(&p.to_string_lossy())
            .unwrap_or_else(|| p.display().to_string())
    });
    if let Some(error) = input.error.as_deref().filter(|_| !ok) {
        summary = clip(&format!("{summary} → {error}"), 240);
    }
    services.activity.do_send(RecordToolCall {
        tool: clip(input.tool(), 64),
        session_id: agent.id.clone(),
        status,
        duration_ms: input.duration_ms.unwrap_or(0),
        summary,
        native: true,
    });
    if !ok {
        return;
    }
    let resolved = |p: &Path| workspace.resolve(&p.to_string_lossy()).ok();
    match input.action() {
        NativeAction::Read(p) => {
            if let Some(path) = resolved(p) {
                agent.session.saw.do_send(Saw(path));
            }
        }
        NativeAction::Write(p) => {
            if let (Some(path), Some(display)) =
                (resolved(p), workspace.relative(&p.to_string_lossy()))
            {
                agent.session.saw.do_send(Saw(path.clone()));
                if services.settings.hooks.notices {
                    // Awaited: the others' notices are queued before this hook answers.
                    let changed = FileChanged {
                        by: agent.id.clone(),
                        path,
                        display,
                    };
                    let _ = services.registry.send(changed).await;
                }
            }
        }
        NativeAction::Command(_) | NativeAction::Other => {}
    }
}

/// The notice waiting for the agent, as context for what the model reads next.
async fn notice(services: &Services, event: HookEvent, agent: &AgentRef) -> HookAnswer {
    if !services.settings.hooks.notices {
        return HookAnswer::Nothing;
    }
    match agent.session.take_notice.send(TakeNotice).await {
        Ok(Some(text)) => HookAnswer::Context { event, text },
        _ => HookAnswer::Nothing,
    }
}

fn lifecycle(services: &Services, event: LifecycleEvent, session: &SessionId, detail: String) {
    services.activity.do_send(RecordLifecycle {
        event,
        session_id: Some(session.clone()),
        detail,
    });
}
