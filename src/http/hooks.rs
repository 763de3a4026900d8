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

use std::path::{Path, PathBuf};

use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::json;

use super::body::{read_limited, BodyError};
use super::guard::{check_bearer, check_host_and_origin, Rejection};
use super::{CLIENT_HEADER, IGNORED_HEADER, TASK_HEADER};
use crate::actors::activity_log::now_ms;
use crate::actors::activity_log::{
    CallStatus, LifecycleEvent, RecordLifecycle, RecordToolCall, Recorded,
};
use crate::actors::automation::{AskGate, BridgeEvent, GateCheck, GateChecked};
use crate::actors::changes::{Baseline, BeforeWrite, CommandRan, WriteAbandoned};
use crate::actors::claims::{CheckWrite, ClaimsNamedIn};
use crate::actors::dashboard::WithdrawApprovals;
use crate::actors::diagnostics::{GetDiagnostics, Invalidate};
use crate::actors::messages::dashboard::{AskApproval, Asker};
use crate::actors::registry::{AgentRef, FileChanged, Identify};
use crate::actors::session::{
    NativeCursor, NativeEnd, NativeSettle, NativeStart, NativeToRead, Saw, SessionId, TakeNotice,
};
use crate::automation::policy::Action;
use crate::automation::template::tail;
use crate::coordination::native::{Effect, Ended, Started};
use crate::exec::Confined;
use crate::hooks::input::{clip, DECLINED_BY_THE_PERSON};
use crate::hooks::transcript::{self, Before};
use crate::hooks::{HookAnswer, HookEvent, HookInput, NativeAction};
use crate::metrics::{
    native_tool_label, HookIgnored as Ignored, HookLabels, ReasonLabel, ToolLabels,
};
use crate::services::Services;
use crate::tools::files::check_edit::edit_gate;

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

/// [`respond`], saying in [`IGNORED_HEADER`] why the hook was otherwise not taken
/// notice of.
fn respond_ignored(answer: &HookAnswer, why: Ignored) -> HttpResponse {
    let mut response = respond(answer);
    let said = format!("{}: {}", why.as_str(), why.explain());
    if let Ok(value) = actix_web::http::header::HeaderValue::from_str(&said) {
        response.headers_mut().insert(
            actix_web::http::header::HeaderName::from_static(IGNORED_HEADER),
            value,
        );
    }
    response
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
            let (why, status) = match e {
                BodyError::TooLarge { .. } => (
                    Ignored::TooLarge,
                    actix_web::http::StatusCode::PAYLOAD_TOO_LARGE,
                ),
                BodyError::Unreadable(_) => {
                    (Ignored::Malformed, actix_web::http::StatusCode::BAD_REQUEST)
                }
                BodyError::TooSlow => (
                    Ignored::Malformed,
                    actix_web::http::StatusCode::REQUEST_TIMEOUT,
                ),
            };
            ignore(&services, why);
            return Ok(HttpResponse::build(status).json(json!({ "error": e.to_string() })));
        }
    };
    let input = match HookInput::parse(&body) {
        Ok(input) => input,
        // An event the bridge does not handle (`Notification`, `PreCompact`, one a newer
        // CLI adds), with a hook someone pointed at `ide-bridge hook`: nothing to do,
        // and nothing wrong with it.
        Err(_) if unhandled_event(&body) => {
            ignore(&services, Ignored::UnhandledEvent);
            return Ok(respond_ignored(
                &HookAnswer::Nothing,
                Ignored::UnhandledEvent,
            ));
        }
        Err(e) => {
            ignore(&services, Ignored::Malformed);
            tracing::debug!(%e, "ignoring a malformed hook");
            return Ok(HttpResponse::BadRequest()
                .json(json!({ "error": format!("not a Claude Code hook input: {e}") })));
        }
    };
    if !settings.enabled {
        ignore(&services, Ignored::Disabled);
        return Ok(respond_ignored(&HookAnswer::Nothing, Ignored::Disabled));
    }
    if input
        .cwd
        .as_deref()
        .is_some_and(|cwd| services.workspace.resolve(&cwd.to_string_lossy()).is_err())
    {
        ignore(&services, Ignored::OtherWorkspace);
        // A CLI working elsewhere is not an agent of this workspace; its writes to this
        // workspace's claimed files are refused all the same.
        let answer = match input.hook_event_name {
            HookEvent::PreToolUse => match input.action() {
                NativeAction::Write(_) => {
                    let from_task = header(&req, TASK_HEADER).is_some();
                    before_tool(&services, &input, None, from_task).await
                }
                _ => HookAnswer::Nothing,
            },
            _ => HookAnswer::Nothing,
        };
        return Ok(respond_ignored(&answer, Ignored::OtherWorkspace));
    }
    let pids: Vec<u32> = header(&req, CLIENT_HEADER)
        .map(|v| {
            v.split(',')
                .filter_map(|p| p.trim().parse().ok())
                .take(8)
                .collect()
        })
        .unwrap_or_default();
    let identify = |pids: Vec<u32>| {
        let registry = services.registry.clone();
        async move {
            if pids.is_empty() {
                return None;
            }
            registry.send(Identify::Process(pids)).await.ok().flatten()
        }
    };
    let mut agent = identify(pids.clone()).await;
    // A starting CLI runs its SessionStart hook (asynchronously) as it connects: the hook
    // may come before the agent's connections do. It waits for them a little.
    if agent.is_none() && input.hook_event_name == HookEvent::SessionStart && !pids.is_empty() {
        let deadline = std::time::Instant::now() + SESSION_START_WAIT;
        while agent.is_none() && std::time::Instant::now() < deadline {
            actix_rt::time::sleep(std::time::Duration::from_millis(100)).await;
            agent = identify(pids.clone()).await;
        }
    }
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
    Ok(match agent {
        Some(_) => respond(&answer),
        None => respond_ignored(&answer, Ignored::UnknownAgent),
    })
}

/// How long a `SessionStart` hook waits for its agent's connections (it is installed to
/// run asynchronously: the CLI does not wait for it).
const SESSION_START_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// True for a JSON object whose `hook_event_name` is text naming no event the bridge
/// handles.
fn unhandled_event(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Named {
        hook_event_name: String,
    }
    serde_json::from_slice::<Named>(body)
        .is_ok_and(|n| HookEvent::parse(&n.hook_event_name).is_none())
}

fn header<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Decides the answer to one hook, recording what it says about the agent's work.
async fn answer(
    services: &web::Data<Services>,
    input: &HookInput,
    agent: Option<&AgentRef>,
    from_task: bool,
) -> HookAnswer {
    // What the agent's earlier calls did, from its transcript, before this hook acts.
    let post = matches!(
        input.hook_event_name,
        HookEvent::PostToolUse | HookEvent::PostToolUseFailure
    );
    if let (Some(agent), false) = (agent, post) {
        let waiting = settle(services, agent, result_transcript(input)).await;
        let turn_over = matches!(
            input.hook_event_name,
            HookEvent::Stop | HookEvent::SessionEnd
        );
        if turn_over && waiting > 0 {
            settle_later(services.clone(), agent);
        }
    }
    if let (Some(agent), false, false) = (
        agent,
        from_task,
        input.hook_event_name == HookEvent::PermissionRequest,
    ) {
        // The agent went on working: a dialog it showed was answered in its terminal.
        services
            .dashboard
            .do_send(WithdrawApprovals(agent.id.clone()));
    }
    match input.hook_event_name {
        HookEvent::PreToolUse => {
            let decided = before_tool(services, input, agent, from_task).await;
            if let (Some(agent), Some(_), false, Some(transcript)) = (
                agent,
                &input.tool_use_id,
                input.is_mcp_tool(),
                result_transcript(input),
            ) {
                let denied = matches!(decided, HookAnswer::Deny { .. });
                start(services, input, agent, transcript, denied).await;
            }
            match decided {
                // A notice waits for a refusal to pass; a note on claims comes first.
                HookAnswer::Nothing => match agent {
                    Some(agent) => notice(services, input.hook_event_name, agent).await,
                    None => HookAnswer::Nothing,
                },
                decided => decided,
            }
        }
        HookEvent::PostToolUse | HookEvent::PostToolUseFailure => {
            // Not installed by init; when a person adds them, they end a call at once.
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
            tell_automation(
                services,
                BridgeEvent::PromptSubmitted {
                    session: agent.id.clone(),
                    agent: agent.label.clone(),
                    prompt: tail(prompt, MAX_EVENT_TEXT).to_string(),
                },
            );
            notice(services, input.hook_event_name, agent).await
        }
        HookEvent::Stop => match agent {
            Some(agent) => stop(services, input, agent, from_task).await,
            None => HookAnswer::Nothing,
        },
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
        // A task's tool requests are its permission policy's to answer.
        HookEvent::PermissionRequest => match agent {
            Some(agent) if !from_task => ask_person(services, input, agent).await,
            _ => HookAnswer::Nothing,
        },
    }
}

/// Before a native tool: claims, the edit gate, a repository's own files.
async fn before_tool(
    services: &Services,
    input: &HookInput,
    agent: Option<&AgentRef>,
    from_task: bool,
) -> HookAnswer {
    let by = agent.map(|a| a.id.clone());
    match input.action() {
        NativeAction::Write(path) => {
            // A path through a link from outside (the CLI named it so) is the file it
            // leads to.
            let Some(rel) = services
                .workspace
                .relative(&path.to_string_lossy())
                .or_else(|| {
                    let real = crate::hooks::real_path(path);
                    services.workspace.relative(&real.to_string_lossy())
                })
            else {
                return HookAnswer::Nothing;
            };
            let ask_about_git = crate::workspace::in_git_internals(Path::new(&rel)).then(|| {
                format!(
                    "{rel} is inside .git, which holds the repository's history and \
                     configuration (a hook or config written there runs code on the next git \
                     command): ide-bridge asks before an agent changes it"
                )
            });
            let check = CheckWrite {
                by,
                agent: agent.map_or_else(
                    || "an agent the bridge cannot name".into(),
                    |a| a.label.clone(),
                ),
                path: rel,
                tool: input.tool().to_string(),
            };
            if let Ok(Ok(Some(reason))) = services.claims.send(check).await {
                return HookAnswer::Deny { reason };
            }
            // The automation policy's edit gate checks the text it would write.
            let (session, label) = agent.map_or_else(
                || {
                    (
                        SessionId::from(""),
                        "an agent the bridge cannot name".to_string(),
                    )
                },
                |a| (a.id.clone(), a.label.clone()),
            );
            let root = services.workspace.dir().clone();
            let current = |p: &Path| {
                crate::workspace::files::read_text(&root, p)
                    .ok()
                    .map(|(text, _)| text)
            };
            let refused = edit_gate(services, &session, &label, path, input.tool(), || {
                input.proposed_text(current)
            })
            .await;
            match (refused, ask_about_git) {
                (Some(reason), _) => HookAnswer::Deny { reason },
                // The bridge's own tools refuse these; a person may mean it, so ask them.
                // A task has nobody to ask (its permission rules would answer).
                (None, Some(reason)) if from_task => HookAnswer::Deny {
                    reason: format!("{reason} (a Claude task may not)"),
                },
                (None, Some(reason)) => HookAnswer::Ask { reason },
                (None, None) => HookAnswer::Nothing,
            }
        }
        NativeAction::Command(command) => {
            // What the files it names hold now is not the command's doing.
            if let Some(session) = &by {
                let files = crate::coordination::claims::command_paths(
                    services.workspace.dir().path(),
                    command,
                );
                if !files.is_empty() {
                    // Awaited: caught up before the command runs (after this answer).
                    let _ = services
                        .changes
                        .send(CommandRan {
                            session: session.clone(),
                            ended_by: None,
                            files,
                        })
                        .await;
                }
            }
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
/// A native call starts: its transcript is read from here on when not yet read.
async fn start(
    services: &Services,
    input: &HookInput,
    agent: &AgentRef,
    transcript: PathBuf,
    denied: bool,
) {
    let known = agent
        .session
        .native_cursor
        .send(NativeCursor(transcript.clone()))
        .await
        .ok()
        .flatten();
    if known.is_none() {
        let path = transcript.clone();
        let length = tokio::task::spawn_blocking(move || transcript::start_of_unread(&path)).await;
        if let Ok(Ok(offset)) = length {
            let from_now = NativeSettle {
                transcript: transcript.clone(),
                offset,
                discovered: Vec::new(),
                outcomes: Vec::new(),
                now_ms: now_ms(),
            };
            let _ = agent.session.native_settle.send(from_now).await;
        }
    }
    let started = Started {
        heard: true,
        ..started_of(services, input, now_ms(), denied, transcript)
    };
    if let (Effect::Write { path, .. }, false) = (&started.effect, denied) {
        // Awaited: the file is read before the hook answers and the CLI writes it.
        let before = BeforeWrite {
            session: agent.id.clone(),
            path: path.clone(),
            call: Some(started.tool_use_id.clone()),
            baseline: Baseline::Disk,
        };
        let _ = services.changes.send(before).await;
    }
    // Its outcome may have been read before this hook came (it ran alongside others).
    if let Ok(Some(ended)) = agent.session.native_start.send(NativeStart(started)).await {
        finish(services, agent, ended).await;
    }
}

/// The call a tool hook describes (for the timeline and what it does to the workspace);
/// not [`Started::heard`] (the caller says).
fn started_of(
    services: &Services,
    input: &HookInput,
    at_ms: u64,
    denied: bool,
    transcript: PathBuf,
) -> Started {
    let workspace = &services.workspace;
    let shown = |p: &Path| {
        workspace
            .relative(&p.to_string_lossy())
            .unwrap_or_else(|| p.display().to_string())
    };
    let resolved = |p: &Path| workspace.resolve(&p.to_string_lossy()).ok();
    let effect = match input.action() {
        NativeAction::Read(p) => resolved(p).map_or(Effect::None, Effect::Read),
        NativeAction::Write(p) => match (resolved(p), workspace.relative(&p.to_string_lossy())) {
            (Some(path), Some(display)) => Effect::Write { path, display },
            _ => Effect::None,
        },
        NativeAction::Command(c) => Effect::Command(clip(c, MAX_EVENT_TEXT)),
        NativeAction::Other => Effect::None,
    };
    Started {
        tool_use_id: input.tool_use_id.clone().unwrap_or_default(),
        tool: clip(input.tool(), 64),
        summary: input.summary(shown),
        effect,
        at_ms,
        denied,
        transcript,
        heard: false,
    }
}

/// The calls of `agent` that ended since its last hook, as the transcripts they wait on
/// say (its conversation's, its sub-agents'), and those of `also` (the transcript its
/// hook names: a call no hook announced is found there). Answers how many calls still
/// wait.
async fn settle(services: &Services, agent: &AgentRef, also: Option<PathBuf>) -> usize {
    let Ok(to_read) = agent.session.native_to_read.send(NativeToRead(also)).await else {
        return 0;
    };
    if to_read.is_empty() {
        return 0;
    }
    let scans = tokio::task::spawn_blocking(move || {
        to_read
            .into_iter()
            .filter_map(|(path, from)| {
                // Not read yet: its last part (a call made in the last minute, a result
                // written before its hook came); older calls are not discovered.
                let first = from.is_none();
                let from = match from {
                    Some(from) => Ok(from),
                    None => transcript::start_of_unread(&path),
                };
                let scan = from.and_then(|from| {
                    transcript::read_outcomes(&path, from, MAX_TRANSCRIPT_READ)
                });
                match scan {
                    Ok(scan) => Some((path, scan, first)),
                    Err(e) => {
                        tracing::debug!(path = %path.display(), %e, "cannot read an agent's transcript");
                        None
                    }
                }
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    let mut waiting = 0;
    for (path, scan, first) in scans {
        if scan.skipped > 0 {
            tracing::warn!(
                agent = %agent.id,
                bytes = scan.skipped,
                "an agent's transcript grew by more than {MAX_TRANSCRIPT_READ} bytes between two hooks; the tool calls in the part skipped are not recorded"
            );
        }
        let mut discovered = discovered(services, &path, scan.used);
        // On a transcript's first read, a call the timeline holds was recorded by the
        // bridge before a restart or crash (whose checkpoint may not have known it
        // ended): not a second time. Later reads find only calls this bridge knows.
        if first && !discovered.is_empty() {
            let ids = discovered.iter().map(|s| s.tool_use_id.clone()).collect();
            if let Ok(Ok(recorded)) = services.activity.send(Recorded(ids)).await {
                discovered.retain(|s| !recorded.contains(&s.tool_use_id));
            }
        }
        let mut outcomes = scan.outcomes;
        // What the files written held before, for writes whose hook never came: kept
        // here, not sent to the session.
        let befores: Vec<(String, Before)> = outcomes
            .iter_mut()
            .filter_map(|o| Some((o.tool_use_id.clone(), o.before.take()?)))
            .collect();
        let settle = NativeSettle {
            transcript: path,
            offset: scan.offset,
            discovered,
            outcomes,
            now_ms: now_ms(),
        };
        let Ok((ended, left)) = agent.session.native_settle.send(settle).await else {
            continue;
        };
        waiting = left;
        for call in ended {
            unheard_write(services, agent, &call, &befores).await;
            finish(services, agent, call).await;
        }
    }
    waiting
}

/// A write whose hook never came, that succeeded: the changes actor learns what its file
/// held before (from its result in the transcript), so that it is told hunk by hunk as
/// an announced one is.
async fn unheard_write(
    services: &Services,
    agent: &AgentRef,
    ended: &Ended,
    befores: &[(String, Before)],
) {
    let call = &ended.call;
    let Effect::Write { path, .. } = &call.effect else {
        return;
    };
    if call.heard || ended.failed {
        return;
    }
    let Some((_, before)) = befores.iter().find(|(id, _)| *id == call.tool_use_id) else {
        return;
    };
    let baseline = match before {
        Before::Text(text) => Baseline::Text(text.clone()),
        Before::Absent => Baseline::Absent,
    };
    let _ = services
        .changes
        .send(BeforeWrite {
            session: agent.id.clone(),
            path: path.clone(),
            call: Some(call.tool_use_id.clone()),
            baseline,
        })
        .await;
}

/// Calls of the agent's own tools the transcript shows, made within the last minute
/// (older ones were seen, or belong to a conversation from before): the Session starts
/// those no hook announced, so a hook the CLI gave up on still leaves its call in the
/// timeline. The bridge's own tools (`mcp__…`) are recorded when the bridge answers them.
fn discovered(services: &Services, transcript: &Path, used: Vec<transcript::Used>) -> Vec<Started> {
    let horizon = now_ms().saturating_sub(DISCOVERY_WINDOW_MS);
    used.into_iter()
        .filter(|u| !u.name.starts_with("mcp__") && u.at_ms.is_some_and(|at| at >= horizon))
        .filter_map(|u| {
            let input = serde_json::from_value::<HookInput>(json!({
                "hook_event_name": "PreToolUse",
                "tool_name": u.name,
                "tool_input": u.input,
                "tool_use_id": u.tool_use_id,
            }))
            .ok()?;
            let at = u.at_ms.unwrap_or_else(now_ms);
            Some(started_of(
                services,
                &input,
                at,
                false,
                transcript.to_path_buf(),
            ))
        })
        .collect()
}

/// How far back a call found only in a transcript may lie.
const DISCOVERY_WINDOW_MS: u64 = 60_000;

/// The CLI writes its transcripts a little after the fact: once a turn ends, the calls
/// still waiting are looked for again in the background (never delaying the CLI), less
/// often as time passes, for about 35 s in all: a busy machine can hold the CLI's write
/// back for seconds, and the turn's last call would otherwise wait for the agent's next
/// hook to be seen.
fn settle_later(services: web::Data<Services>, agent: &AgentRef) {
    let agent = agent.clone();
    actix_rt::spawn(async move {
        for wait_ms in [100, 300, 1_000, 2_500, 5_000, 10_000, 15_000] {
            tokio::time::sleep(std::time::Duration::from_millis(wait_ms)).await;
            if settle(&services, &agent, None).await == 0 {
                return;
            }
        }
    });
}

/// Transcripts read at most this much new text per hook.
const MAX_TRANSCRIPT_READ: u64 = 32 * 1024 * 1024;

/// `<config dir>/projects`, canonical, once it exists: where the CLI keeps transcripts.
fn projects_dir() -> Option<PathBuf> {
    static PROJECTS: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    if let Some(dir) = PROJECTS.get() {
        return Some(dir.clone());
    }
    let dir = crate::lockfile::config_dir()
        .join("projects")
        .canonicalize()
        .ok()?;
    Some(PROJECTS.get_or_init(|| dir).clone())
}

/// Where the result of this hook's tool call is written: the conversation's transcript
/// (a `.jsonl` file beneath `<config dir>/projects/`, the only files the bridge reads), or
/// for a sub-agent's call its own beside it (`<conversation>/subagents/agent-<id>.jsonl`).
fn result_transcript(input: &HookInput) -> Option<PathBuf> {
    let given = input.transcript_path.as_deref()?;
    if given.extension().is_none_or(|e| e != "jsonl") {
        return None;
    }
    let conversation = given.canonicalize().ok()?;
    if !conversation.starts_with(projects_dir()?) {
        return None;
    }
    match input.agent_id.as_deref() {
        None => Some(conversation),
        Some(id)
            if !id.is_empty()
                && id.len() <= 64
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') =>
        {
            Some(
                conversation
                    .with_extension("")
                    .join("subagents")
                    .join(format!("agent-{id}.jsonl")),
            )
        }
        Some(_) => None,
    }
}

/// A `PostToolUse` hook (installed by hand; `init` does not): ends the call at once.
async fn after_tool(services: &Services, input: &HookInput, agent: &AgentRef) {
    if input.is_mcp_tool() {
        // Calls of MCP tools are the servers' to record (the bridge records its own).
        return;
    }
    let failed = input.hook_event_name == HookEvent::PostToolUseFailure;
    let error = input.error.clone().unwrap_or_default();
    let now = now_ms();
    let end = NativeEnd {
        tool_use_id: input.tool_use_id.clone().unwrap_or_default(),
        failed,
        at_ms: now,
        error: error.clone(),
    };
    let known = match input.tool_use_id {
        Some(_) => agent.session.native_end.send(end).await.ok().flatten(),
        None => None,
    };
    let call = known.unwrap_or_else(|| {
        let duration_ms = input.duration_ms.unwrap_or(0);
        Ended {
            call: started_of(
                services,
                input,
                now.saturating_sub(duration_ms),
                false,
                PathBuf::new(),
            ),
            failed,
            duration_ms,
            error,
        }
    });
    finish(services, agent, call).await;
}

/// A native call ended: the timeline, the metrics, and what it did to the workspace
/// (a read: the agent saw the file; a write: the agents that saw it are told, and
/// automation; a failed command: automation).
async fn finish(services: &Services, agent: &AgentRef, ended: Ended) {
    let Ended {
        call,
        failed,
        duration_ms,
        error,
    } = ended;
    let status = match (failed, call.denied) {
        (_, true) => CallStatus::Rejected,
        // The person said no in the CLI's permission dialog: declined, not failed.
        (true, false) if error.starts_with(DECLINED_BY_THE_PERSON) => CallStatus::Declined,
        (true, false) => CallStatus::Error,
        (false, false) => CallStatus::Success,
    };
    services
        .metrics
        .native_tool_calls
        .get_or_create(&ToolLabels {
            tool: native_tool_label(&call.tool),
            status: status.as_str(),
        })
        .inc();
    let summary = if status == CallStatus::Declined {
        format!("{} → the person declined it", call.summary)
    } else if failed && !error.is_empty() {
        clip(&format!("{} → {error}", call.summary), 240)
    } else {
        call.summary.clone()
    };
    services.activity.do_send(RecordToolCall {
        tool: call.tool.clone().into(),
        session_id: agent.id.clone(),
        status,
        duration_ms,
        summary,
        native: true,
        call_id: Some(call.tool_use_id.clone()),
    });
    // The files an agent's own command names that changed while it ran are its (`sed
    // -i`, a formatter): not the person's. It ran unless refused or declined.
    if let Effect::Command(command) = &call.effect {
        if !call.denied && status != CallStatus::Declined {
            let files = crate::coordination::claims::command_paths(
                services.workspace.dir().path(),
                command,
            );
            if !files.is_empty() {
                services.changes.do_send(CommandRan {
                    session: agent.id.clone(),
                    ended_by: Some(agent.label.clone()),
                    files,
                });
            }
        }
    }
    match call.effect {
        Effect::Command(command) if failed && !call.denied && status != CallStatus::Declined => {
            tell_automation(
                services,
                BridgeEvent::AgentCommandFailed {
                    session: agent.id.clone(),
                    agent: agent.label.clone(),
                    command,
                    error: clip(if error.is_empty() { "failed" } else { &error }, 200),
                },
            )
        }
        Effect::Write { path, .. } if failed => services.changes.do_send(WriteAbandoned {
            session: agent.id.clone(),
            path,
            call: Some(call.tool_use_id),
        }),
        _ if failed => {}
        // A read knows the file as it was when the read started; a write, as it was
        // when the write was done.
        Effect::Read(path) => agent.session.saw.do_send(Saw {
            path,
            at_ms: call.at_ms,
        }),
        Effect::Write { path, display } => {
            let done_ms = call.at_ms.saturating_add(duration_ms);
            agent.session.saw.do_send(Saw {
                path: path.clone(),
                at_ms: done_ms,
            });
            // Awaited: the others' notices are queued before this hook answers.
            let changed = FileChanged {
                by: agent.id.clone(),
                path,
                display,
                tool: call.tool,
                call: Some(call.tool_use_id),
                at_ms: done_ms,
            };
            let _ = services.registry.send(changed).await;
        }
        Effect::Command(_) | Effect::None => {}
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

/// Strings of a tool's input longer than this are shown in the page by their length.
const MAX_SHOWN_STRING: usize = 4_000;

/// A permission dialog: while a page is open, it waits there too; the person's answer
/// there answers the CLI. With no page, or when the terminal answers first, nothing is
/// decided here: the page's card goes when the agent's next hook arrives
/// ([`WithdrawApprovals`]) or when the CLI ends this hook's process.
async fn ask_person(services: &Services, input: &HookInput, agent: &AgentRef) -> HookAnswer {
    if !services.settings.ui.enabled {
        return HookAnswer::Nothing;
    }
    let mut shown = input.tool_input.clone().unwrap_or(serde_json::Value::Null);
    crate::hooks::input::shorten_strings(&mut shown, MAX_SHOWN_STRING);
    let wait = services.settings.hooks.approval_wait;
    let ask = AskApproval {
        asker: Asker::Agent {
            session: agent.id.clone(),
            agent: agent.label.clone(),
        },
        tool: clip(input.tool(), 64),
        input: shown,
        timeout: wait,
        only_if_watched: true,
    };
    let Ok(decision) = services.dashboard.send(ask).await else {
        return HookAnswer::Nothing;
    };
    let allow = match tokio::time::timeout(wait, decision).await {
        Ok(Ok(allow)) => allow,
        // No page, the page went, or nobody decided in time: the terminal asks alone.
        _ => return HookAnswer::Nothing,
    };
    lifecycle(
        services,
        LifecycleEvent::PermissionAnswered,
        &agent.id,
        format!(
            "{} {} in the page",
            clip(input.tool(), 64),
            if allow { "allowed" } else { "denied" }
        ),
    );
    HookAnswer::Permission {
        allow,
        message: "The person denied this in the ide-bridge page.".into(),
    }
}

/// Texts handed to automation are cut to this many bytes (their ends kept).
const MAX_EVENT_TEXT: usize = 4_000;

fn tell_automation(services: &Services, event: BridgeEvent) {
    if let Some(automation) = &services.automation {
        automation.do_send(event);
    }
}

/// The agent is ending its turn: the timeline, and the done-gate's check when the
/// policy has one. A failed check keeps the agent working with the failure as reason.
async fn stop(
    services: &Services,
    input: &HookInput,
    agent: &AgentRef,
    from_task: bool,
) -> HookAnswer {
    let mut answer = HookAnswer::Nothing;
    let ask = AskGate {
        session: agent.id.clone(),
        agent: agent.label.clone(),
        message: tail(
            input.last_assistant_message.as_deref().unwrap_or(""),
            MAX_EVENT_TEXT,
        )
        .to_string(),
    };
    let check = match (&services.automation, from_task) {
        // A Claude task the bridge started ends when it ends: its orchestrator decides.
        (Some(automation), false) => automation.send(ask).await.ok().flatten(),
        _ => None,
    };
    if let (Some(check), Some(automation)) = (check, &services.automation) {
        let mut pending = PendingGate {
            automation: automation.clone(),
            session: Some(agent.id.clone()),
            hook: check.hook,
        };
        let failure = run_check(services, &check).await;
        let checked = GateChecked {
            session: pending.session.take().unwrap_or_else(|| agent.id.clone()),
            hook: check.hook,
            failure,
            abandoned: false,
        };
        if let Ok(Some(reason)) = automation.send(checked).await {
            answer = HookAnswer::KeepWorking { reason };
        }
    }
    let detail = match &answer {
        HookAnswer::KeepWorking { .. } => "kept working: the done-gate's check failed",
        _ => "ended its turn",
    };
    lifecycle(
        services,
        LifecycleEvent::AgentStopped,
        &agent.id,
        detail.into(),
    );
    answer
}

/// A done-gate check under way: when the Stop hook's handler is dropped before the
/// check reports (the CLI killed its hook), the gate is settled as abandoned so the
/// agent's next stop is checked again instead of finding automation busy.
struct PendingGate {
    automation: actix::Addr<crate::actors::automation::Automation>,
    /// Taken once the check reports.
    session: Option<SessionId>,
    hook: &'static str,
}

impl Drop for PendingGate {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            tracing::info!(%session, hook = self.hook, "done-gate check abandoned");
            self.automation.do_send(GateChecked {
                session,
                hook: self.hook,
                failure: None,
                abandoned: true,
            });
        }
    }
}

/// Runs a done-gate's check: `None` when it passed, else what failed, written for the
/// model.
async fn run_check(services: &Services, check: &GateCheck) -> Option<String> {
    let intro = format!("ide-bridge done-gate ({}): ", check.hook);
    match &check.action {
        Action::Command { program, args } => {
            let line = crate::exec::command_line(program, args);
            let command = Confined {
                program: program.clone(),
                args: args.clone(),
                cwd: services.workspace.root().to_path_buf(),
                timeout: Some(std::time::Duration::from_millis(check.timeout_ms)),
            };
            match command
                .run(&services.settings.command_rules(), &services.workspace)
                .await
            {
                Ok(out) if out.exit_code == Some(0) && !out.timed_out => None,
                Ok(out) => {
                    let how = match (out.timed_out, out.exit_code) {
                        (true, _) => "timed out".to_string(),
                        (_, Some(code)) => format!("exited with {code}"),
                        (_, None) => "was killed".to_string(),
                    };
                    let output = format!("{}\n{}", out.stdout, out.stderr);
                    Some(format!(
                        "{intro}`{line}` {how}. Fix what it reports before you finish; its \
                         last output:\n{}",
                        tail(output.trim(), 3_000)
                    ))
                }
                Err(e) => {
                    // A check that cannot run does not hold the agent: it says so.
                    tracing::warn!(hook = check.hook, %e, "done-gate check not run");
                    None
                }
            }
        }
        Action::Diagnostics { min_severity } => {
            services.diagnostics.do_send(Invalidate);
            let report = services.diagnostics.send(GetDiagnostics).await.ok()?.ok()?;
            let mut found: Vec<String> = Vec::new();
            let mut total = 0;
            for (file, list) in &report.files {
                let rel = services
                    .workspace
                    .relative(&file.to_string_lossy())
                    .unwrap_or_else(|| file.display().to_string());
                for d in list.iter().filter(|d| d.severity <= *min_severity) {
                    total += 1;
                    if found.len() < 20 {
                        found.push(format!(
                            "{rel}:{}:{} {:?}: {}",
                            d.range.start.line + 1,
                            d.range.start.character + 1,
                            d.severity,
                            clip(&d.message, 300)
                        ));
                    }
                }
            }
            (total > 0).then(|| {
                format!(
                    "{intro}the workspace's linters report {total} problem(s). Fix them before \
                     you finish:\n{}",
                    found.join("\n")
                )
            })
        }
        Action::Task { .. } | Action::Notify { .. } | Action::CheckEdit { .. } => None,
    }
}

fn lifecycle(services: &Services, event: LifecycleEvent, session: &SessionId, detail: String) {
    services.activity.do_send(RecordLifecycle {
        event,
        session_id: Some(session.clone()),
        detail,
    });
}
