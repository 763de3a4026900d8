//! The tasks extension of MCP 2026-07-28 (`io.modelcontextprotocol/tasks`): a
//! `tools/call` of a tool that waits (its timeout is not the default one: `openDiff`,
//! `watchDiagnostics`, `watchActivityLog`, `runClaudeTask`) from a client that declares
//! the extension is answered at once with a task; the call runs as any other (limits,
//! cancellation, activity log), and `tasks/get`, `tasks/cancel` and `tasks/update`
//! reach it from any connection of the session until its time to live has passed.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::calls::{CallKey, Caller};
use super::Session;
use crate::actors::activity_log::iso_now;
use crate::actors::messages::connection::Generation;
use crate::actors::outbound::{Frame, Outbound};
use crate::protocol::jsonrpc::{self, classify, parse_params, Incoming, RequestId, RpcError};
use crate::protocol::mcp::CallToolParams;
use crate::protocol::modern;

/// How long a task is kept from its creation (`ttlMs`).
const TTL: Duration = Duration::from_secs(10 * 60);
/// How often a client is asked to poll (`pollIntervalMs`).
const POLL_INTERVAL_MS: u64 = 500;
/// Tasks one session keeps (running and finished); beyond, calls are answered plainly.
pub(super) const MAX_TASKS: usize = 32;

/// Where a task stands.
#[derive(Debug, Clone)]
enum State {
    Working,
    /// The call's result (a `CallToolResult`).
    Completed(Value),
    /// The JSON-RPC error the call ended with.
    Failed(Value),
    Cancelled,
}

/// One task.
pub(super) struct Task {
    /// The key its call runs under while it waits (`None`: answered at once).
    call: Option<CallKey>,
    created: Instant,
    created_at: String,
    updated_at: String,
    state: State,
}

/// `tasks/get`, `tasks/update` and `tasks/cancel` params.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskParams {
    task_id: String,
}

/// The tasks of one session.
pub(super) type Tasks = HashMap<String, Task>;

impl Session {
    /// True when this `tools/call` is to be answered with a task: the client declared
    /// the extension, the tool waits, and the session has room for another task.
    pub(super) fn as_task(
        &mut self,
        meta: &modern::RequestMeta,
        params: Option<&RawValue>,
    ) -> bool {
        if !meta.declares(modern::TASKS_EXTENSION) {
            return false;
        }
        let Ok(call) = parse_params::<CallToolParams>(params) else {
            return false;
        };
        let waits = self
            .services
            .tools
            .get(&call.name)
            .is_some_and(|t| t.timeout.waits());
        self.forget_expired_tasks();
        waits && self.tasks.len() < MAX_TASKS
    }

    /// Starts the call of `params` as a task and answers `id` with the task.
    pub(super) fn start_task(
        &mut self,
        generation: Generation,
        id: &RequestId,
        params: Option<&RawValue>,
        model_facing: bool,
        reply: &Outbound,
        ctx: &mut Context<Self>,
    ) -> Result<(), RpcError> {
        let task_id = uuid::Uuid::new_v4().to_string();
        let call_id = RequestId::String(format!("task:{task_id}").into());
        let (sink, mut answers) =
            Outbound::channel(self.services.settings.server.max_outbound_bytes);
        let caller = Caller {
            reply: sink,
            model_facing,
            stateless: true,
        };
        // A call refused outright (unknown tool, bad arguments) is an error, not a task.
        let call = self.call_tool(generation, call_id, params, caller, ctx)?;
        let now = iso_now();
        self.tasks.insert(
            task_id.clone(),
            Task {
                call,
                created: Instant::now(),
                created_at: now.clone(),
                updated_at: now,
                state: State::Working,
            },
        );
        let collect = async move {
            while let Some(frame) = answers.recv().await {
                let Frame::Text(text) = frame else { continue };
                if let Incoming::Response { .. } = classify(&text) {
                    return serde_json::from_str::<Value>(&text).ok();
                }
            }
            None
        };
        let finished = task_id.clone();
        ctx.spawn(collect.into_actor(self).map(move |answer, act, _| {
            act.task_ended(&finished, answer);
        }));
        // A `CreateTaskResult`: the task, flat, with the extension's result type.
        let mut created = modern::complete(
            crate::protocol::methods::Method::ToolsCall.name(),
            self.task_view(&task_id).unwrap_or_default(),
        );
        created["resultType"] = json!("task");
        reply.send_text(jsonrpc::response(id, &created));
        Ok(())
    }

    /// The call behind a task answered (or went away without an answer: cancelled).
    fn task_ended(&mut self, task_id: &str, answer: Option<Value>) {
        let Some(task) = self.tasks.get_mut(task_id) else {
            return;
        };
        if !matches!(task.state, State::Working) {
            return;
        }
        task.state = match answer {
            Some(mut answer) => match answer.get_mut("result") {
                Some(result) => State::Completed(result.take()),
                None => State::Failed(answer.get_mut("error").map(Value::take).unwrap_or_default()),
            },
            None => State::Cancelled,
        };
        task.updated_at = iso_now();
    }

    fn forget_expired_tasks(&mut self) {
        self.tasks.retain(|_, t| t.created.elapsed() < TTL);
    }

    /// A task as `tasks/get` shows it (`DetailedTask`), before [`modern::complete`].
    fn task_view(&self, task_id: &str) -> Option<Value> {
        let task = self.tasks.get(task_id)?;
        let (status, detail) = match &task.state {
            State::Working => ("working", None),
            State::Completed(result) => ("completed", Some(("result", result.clone()))),
            State::Failed(error) => ("failed", Some(("error", error.clone()))),
            State::Cancelled => ("cancelled", None),
        };
        let left = TTL.saturating_sub(task.created.elapsed());
        let mut view = json!({
            "taskId": task_id,
            "status": status,
            "createdAt": task.created_at,
            "lastUpdatedAt": task.updated_at,
            "ttlMs": TTL.as_millis() as u64,
            "pollIntervalMs": POLL_INTERVAL_MS,
        });
        if left.is_zero() {
            view["statusMessage"] = json!("expired");
        }
        if let Some((key, value)) = detail {
            view[key] = value;
        }
        Some(view)
    }

    /// `tasks/get`, `tasks/update` and `tasks/cancel`: the task's view, or `{}`.
    /// -32021 when the request did not declare the extension, -32602 for a task that
    /// is unknown or expired.
    pub(super) fn task_request(
        &mut self,
        method: &str,
        meta: &modern::RequestMeta,
        params: Option<&RawValue>,
        ctx: &mut Context<Self>,
    ) -> Result<Value, RpcError> {
        if !meta.declares(modern::TASKS_EXTENSION) {
            return Err(modern::missing_extension(modern::TASKS_EXTENSION));
        }
        let TaskParams { task_id } = parse_params(params)?;
        self.forget_expired_tasks();
        let Some(task) = self.tasks.get(&task_id) else {
            return Err(RpcError::invalid_params(format!(
                "Unknown task {task_id:?} (tasks are kept {} minutes)",
                TTL.as_secs() / 60
            )));
        };
        match method {
            "tasks/cancel" => {
                if matches!(task.state, State::Working) {
                    if let Some(call) = task.call.clone() {
                        self.cancel_call(&call, ctx);
                    }
                    if let Some(task) = self.tasks.get_mut(&task_id) {
                        task.state = State::Cancelled;
                        task.updated_at = iso_now();
                    }
                }
                Ok(json!({}))
            }
            // The bridge never asks a client for input: nothing to take.
            "tasks/update" => Ok(json!({})),
            _ => Ok(self.task_view(&task_id).unwrap_or_default()),
        }
    }
}
