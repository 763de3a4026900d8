//! Tool calls: a tool that answers on its first poll is answered at once; one that
//! waits runs as a future of the session under its timeout and a panic boundary, keyed
//! by connection and request id so that a cancellation or a closed connection finds it;
//! the concurrency cap refuses calls beyond `tools.max_concurrent_per_session`. Every
//! call is recorded once, however it ends.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{self, Poll};
use std::time::{Duration, Instant};

use actix::prelude::*;
use futures_util::FutureExt;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::Session;
use crate::actors::activity_log::{CallStatus, RecordToolCall};
use crate::actors::messages::connection::Generation;
use crate::actors::messages::session::MemoryHandle;
use crate::actors::outbound::Outbound;
use crate::actors::supervise::panic_message;
use crate::metrics::ToolMeter;
use crate::protocol::jsonrpc::{self, parse_params, RequestId, RpcError};
use crate::protocol::mcp::{CallToolParams, CallToolResult, LogLevel};
use crate::tools::registry::IDE_GROUP;
use crate::tools::{summary, ProgressReporter, ToolContext, ToolTimeout};

/// A call in flight: its connection and which of that connection's calls it is.
pub(super) type CallKey = (Generation, CallId);

/// Which call of a connection: its request id, unique per connection, for a call a
/// client cancels by naming it (`notifications/cancelled`); a number of the session's
/// own for a stateless request answered on its own HTTP response stream, which the
/// client cancels by closing that stream and whose id other POSTs may repeat (MCP
/// 2026-07-28: ids are the client's per request, and instances of one client share a
/// session).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum CallId {
    Request(RequestId),
    Stream(u64),
}

impl std::fmt::Display for CallId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallId::Request(id) => id.fmt(f),
            CallId::Stream(n) => write!(f, "stream call {n}"),
        }
    }
}

pub(super) struct InFlight {
    handle: SpawnHandle,
    /// How the call is answered and recorded when it ends.
    answer: Answering,
    /// Cancels the call when its own response stream closes (an HTTP POST whose
    /// client went away); `None` when the answer goes to the connection itself.
    gone_watch: Option<SpawnHandle>,
}

/// What answering and recording a call needs, however it ends.
struct Answering {
    /// The request's id, as the answer repeats it.
    id: RequestId,
    /// The tool's name and metrics.
    tool: Arc<ToolMeter>,
    started: Instant,
    /// What the activity log shows about the arguments.
    summary: String,
    /// Where the answer goes (the connection, or the HTTP POST that asked).
    reply: Outbound,
    /// Asked in the stateless revision: the answer says its `resultType`.
    stateless: bool,
}

/// Who asks for a tool call and how it is answered.
pub(super) struct Caller {
    /// Where the answer goes (the connection, or the HTTP POST that asked).
    pub reply: Outbound,
    /// The model reads the answer (not the IDE connection, whose answers the CLI
    /// parses): only exposed tools are callable.
    pub model_facing: bool,
    /// Asked in the stateless revision (MCP 2026-07-28).
    pub stateless: bool,
}

/// The response to `tools/call` `id` carrying `result`, in the request's era.
fn call_response(id: &RequestId, result: &CallToolResult, stateless: bool) -> String {
    if stateless {
        let value = serde_json::to_value(result).unwrap_or_default();
        jsonrpc::response(
            id,
            &crate::protocol::modern::complete(
                crate::protocol::methods::Method::ToolsCall.name(),
                value,
            ),
        )
    } else {
        jsonrpc::tool_call_response(id, result)
    }
}

enum Outcome {
    Done(CallToolResult),
    Panicked(String),
    TimedOut(Duration),
}

impl Session {
    fn record_call(&self, tool: &ToolMeter, started: Instant, summary: String, status: CallStatus) {
        let elapsed = started.elapsed();
        tool.record(status, elapsed.as_secs_f64());
        self.links.tool_calls.do_send(RecordToolCall {
            tool: tool.tool().into(),
            session_id: self.id.clone(),
            status,
            duration_ms: elapsed.as_millis() as u64,
            summary,
            native: false,
            call_id: None,
        });
    }

    /// Connection `generation` negotiated MCP 2025-11-25 or later, where arguments the
    /// tool refuses are answered as a tool error, not as JSON-RPC -32602 (SEP-1303).
    fn refuses_arguments_in_results(&self, generation: Generation) -> bool {
        self.conn(generation)
            .and_then(|c| c.mcp.protocol_version)
            .is_some_and(|version| version >= "2025-11-25")
    }

    /// A stateless request whose answer goes to a response stream of its own (an HTTP
    /// POST), not to connection `generation`: its id names nothing beyond that stream.
    pub(super) fn answered_on_own_stream(
        &self,
        generation: Generation,
        stateless: bool,
        reply: &Outbound,
    ) -> bool {
        stateless
            && self
                .conn(generation)
                .is_some_and(|c| !c.outbound.same_channel(reply))
    }

    /// Cancels the call with `key`; false when none runs under that key.
    pub(super) fn cancel_call(&mut self, key: &CallKey, ctx: &mut Context<Self>) -> bool {
        let Some(flight) = self.in_flight.remove(key) else {
            return false;
        };
        ctx.cancel_future(flight.handle);
        if let Some(watch) = flight.gone_watch {
            ctx.cancel_future(watch);
        }
        let Answering {
            tool,
            started,
            summary,
            ..
        } = flight.answer;
        self.record_call(&tool, started, summary, CallStatus::Cancelled);
        self.stop_if_merged_and_idle(ctx);
        true
    }

    /// Cancels the call with `key` because its client said so (`notifications/cancelled`);
    /// false when none runs under that key. A call asked by an HTTP POST has its own
    /// response stream: it ends now, without an answer (an SSE stream just ends; a JSON
    /// response says the request was cancelled), instead of staying open.
    pub(super) fn cancel_call_by_client(&mut self, key: &CallKey, ctx: &mut Context<Self>) -> bool {
        let own_stream = self
            .in_flight
            .get(key)
            .filter(|f| f.gone_watch.is_some())
            .map(|f| f.answer.reply.clone());
        if !self.cancel_call(key, ctx) {
            return false;
        }
        if let Some(reply) = own_stream {
            reply.close(actix_ws::CloseCode::Normal, "the request was cancelled");
        }
        true
    }

    /// Cancels the calls of one connection (or of all with `None`).
    pub(super) fn cancel_calls(&mut self, generation: Option<Generation>, ctx: &mut Context<Self>) {
        let keys: Vec<CallKey> = self
            .in_flight
            .keys()
            .filter(|(g, _)| generation.is_none_or(|want| *g == want))
            .cloned()
            .collect();
        for key in keys {
            self.cancel_call(&key, ctx);
        }
    }

    /// Calls a tool for request `id`; the key the call runs under while it waits
    /// (`None` when it was answered at once).
    pub(super) fn call_tool(
        &mut self,
        generation: Generation,
        id: RequestId,
        params: Option<&RawValue>,
        caller: Caller,
        ctx: &mut Context<Self>,
    ) -> Result<Option<CallKey>, RpcError> {
        let Caller {
            reply,
            model_facing,
            stateless,
        } = caller;
        let call: CallToolParams = parse_params(params)?;
        let services = Arc::clone(&self.services);
        let Some(tool) = services
            .tools
            .get(&call.name)
            .filter(|t| !model_facing || t.exposed)
        else {
            let callable = services.tools.tools().iter();
            let names = callable
                .filter(|t| !model_facing || t.exposed)
                .map(|t| t.info.name);
            let meant = match ide_bridge_compose::likely_meant(&call.name, names).as_slice() {
                [] => String::new(),
                names => format!("; did you mean {}?", names.join(" or ")),
            };
            return Err(RpcError::new(
                jsonrpc::TOOL_NOT_FOUND,
                format!(
                    "Unknown tool: {} (call tools/list for the available tools){meant}",
                    call.name
                ),
            ));
        };
        let raw = call.arguments.map_or("{}", RawValue::get);
        // The CLI's own calls on its IDE connection carry whole files (openDiff's
        // proposed text): half a message may be theirs, or half what the editor's
        // outbound queue holds, which the call goes on to.
        let (limit, setting) = if !model_facing && tool.group == IDE_GROUP {
            let server = &services.settings.server;
            let ide = server.max_message_bytes.min(server.max_outbound_bytes) / 2;
            (
                ide.max(services.settings.tools.max_argument_bytes),
                "half of server.max_message_bytes or server.max_outbound_bytes",
            )
        } else {
            (
                services.settings.tools.max_argument_bytes,
                "tools.max_argument_bytes",
            )
        };
        // What the model can mend (arguments too large, refused by the schema, not of
        // the tool's type) is a tool error from MCP 2025-11-25 on (SEP-1303), so that
        // the model reads why; before it, and for what breaks the request's own shape,
        // a JSON-RPC error.
        let refuse = |this: &Self, message: String, summary: String| {
            // Worked out only on a refusal: the call path of valid arguments pays nothing.
            if !stateless && !this.refuses_arguments_in_results(generation) {
                return Err(RpcError::invalid_params(message));
            }
            let meter = tool.meter(&services.metrics);
            this.record_call(&meter, Instant::now(), summary, CallStatus::Rejected);
            reply.send_text(call_response(
                &id,
                &CallToolResult::error(message),
                stateless,
            ));
            Ok(None)
        };
        if raw.len() > limit {
            let message = format!(
                "Tool arguments are {} bytes; the limit is {limit} bytes",
                raw.len()
            );
            tracing::warn!(session = %self.id, tool = tool.info.name, bytes = raw.len(), limit, "tool call refused: its arguments are too large ({setting})");
            return refuse(self, message, String::new());
        }
        let args: Value = match serde_json::from_str(raw) {
            Ok(args) => args,
            // Well-formed but deeper than serde_json reads (128 levels): the model can
            // mend that, so it reads why.
            Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
                let message = format!(
                    "Invalid arguments for tool \"{}\": they nest more than 128 levels deep",
                    tool.info.name
                );
                return refuse(self, message, String::new());
            }
            Err(e) => return Err(RpcError::invalid_params(format!("Invalid arguments: {e}"))),
        };
        if !args.is_object() {
            return Err(RpcError::invalid_params(
                "Tool arguments must be a JSON object",
            ));
        }
        let summary = summary::summarize(&args);
        if let Err(refused) = tool.validate(&args) {
            return refuse(self, refused.into(), summary);
        }
        let meter = tool.meter(&services.metrics);
        let max = services.settings.tools.max_concurrent_per_session;
        if self.in_flight.len() >= max {
            self.record_call(&meter, Instant::now(), summary, CallStatus::Rejected);
            reply.send_text(call_response(
                &id,
                &CallToolResult::error(format!("Too many concurrent tool calls (max {max})")),
                stateless,
            ));
            return Ok(None);
        }
        let progress = call
            .meta
            .and_then(|m| m.progress_token)
            .map(|token| ProgressReporter::new(token, reply.clone()));
        let tool_ctx = ToolContext {
            session_id: self.id.clone(),
            terminal_prefix: Arc::clone(&self.terminal_prefix),
            session: match &self.memory {
                Some(memory) => Arc::clone(memory),
                None => Arc::new(MemoryHandle::of(&ctx.address())),
            },
            services: Arc::clone(&services),
            progress,
        };
        let mut future = match tool.invoke(tool_ctx, args) {
            Ok(future) => future,
            Err(refused) => return refuse(self, refused.into(), summary),
        };
        // Asked on an HTTP response stream of its own in the stateless revision: keyed
        // by a number of the session's, not by the id other POSTs may repeat.
        let on_own_stream = self.answered_on_own_stream(generation, stateless, &reply);
        let answer = Answering {
            id,
            tool: meter,
            started: Instant::now(),
            summary,
            reply,
            stateless,
        };
        // Most tools answer without waiting for anything: polled once here, such a call
        // is answered at once, without a task, a timer or a place among the calls in
        // flight. A tool that waits is polled again, with the session's own waker, once
        // it is spawned below: actix merges what a handler spawned into the same poll of
        // the session's context, after the rest of its mailbox.
        let mut first = task::Context::from_waker(task::Waker::noop());
        let done =
            match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut first))) {
                Ok(Poll::Ready(result)) => Some(Outcome::Done(result)),
                Ok(Poll::Pending) => None,
                Err(payload) => Some(Outcome::Panicked(panic_message(payload.as_ref()))),
            };
        if let Some(outcome) = done {
            self.answer_call(generation, answer, outcome);
            self.stop_if_merged_and_idle(ctx);
            return Ok(None);
        }
        let timeout = match tool.timeout {
            ToolTimeout::Default => Some(services.settings.tool_timeout()),
            ToolTimeout::Unbounded => None,
            ToolTimeout::Fixed(d) => Some(d),
        };
        let run = async move {
            let guarded = AssertUnwindSafe(future).catch_unwind();
            let finished = match timeout {
                Some(limit) => match actix::clock::timeout(limit, guarded).await {
                    Ok(done) => done,
                    Err(_) => return Outcome::TimedOut(limit),
                },
                None => guarded.await,
            };
            match finished {
                Ok(result) => Outcome::Done(result),
                Err(payload) => Outcome::Panicked(panic_message(payload.as_ref())),
            }
        };
        let key = if on_own_stream {
            self.stream_calls += 1;
            (generation, CallId::Stream(self.stream_calls))
        } else {
            (generation, CallId::Request(answer.id.clone()))
        };
        let handle = ctx.spawn(run.into_actor(self).map({
            let key = key.clone();
            move |outcome, act, ctx| act.finish_call(key, outcome, ctx)
        }));
        // An HTTP client that drops its request's response gives the call up (MCP
        // 2026-07-28 says so; a client of the older revisions cannot read the answer).
        let own_stream = self
            .conn(generation)
            .is_some_and(|c| c.outbound.same_channel(&answer.reply));
        let gone_watch = (!own_stream).then(|| {
            let key = key.clone();
            ctx.spawn(answer.reply.closed().into_actor(self).map(move |(), act, ctx| {
                if act.cancel_call(&key, ctx) {
                    tracing::debug!(session = %act.id, id = %key.1, "tool call given up: its response stream closed");
                }
            }))
        });
        self.in_flight.insert(
            key.clone(),
            InFlight {
                handle,
                answer,
                gone_watch,
            },
        );
        Ok(Some(key))
    }

    fn finish_call(&mut self, key: CallKey, outcome: Outcome, ctx: &mut Context<Self>) {
        let Some(flight) = self.in_flight.remove(&key) else {
            return;
        };
        if let Some(watch) = flight.gone_watch {
            ctx.cancel_future(watch);
        }
        self.answer_call(key.0, flight.answer, outcome);
        self.stop_if_merged_and_idle(ctx);
    }

    /// Answers a call of connection `generation` with how it ended, and records it.
    fn answer_call(&mut self, generation: Generation, answer: Answering, outcome: Outcome) {
        let (result, status) = match outcome {
            Outcome::Done(result) => {
                let status = if !result.is_error {
                    CallStatus::Success
                } else if result.declined {
                    CallStatus::Declined
                } else {
                    CallStatus::Error
                };
                (result, status)
            }
            Outcome::Panicked(message) => {
                tracing::error!(session = %self.id, tool = answer.tool.tool(), %message, "tool handler panicked");
                (
                    CallToolResult::error(format!(
                        "Tool \"{}\" failed with an internal error: {message}",
                        answer.tool.tool()
                    )),
                    CallStatus::Error,
                )
            }
            Outcome::TimedOut(limit) => {
                let text = format!(
                    "Tool \"{}\" timed out after {}ms",
                    answer.tool.tool(),
                    limit.as_millis()
                );
                self.log(
                    LogLevel::Warning,
                    json!({ "event": "tool_timeout", "message": text }),
                );
                (CallToolResult::error(text), CallStatus::Timeout)
            }
        };
        let mut result = result;
        // A notice about files other agents changed rides on the next answer a model
        // reads (never on the IDE connection, whose answers the CLI itself parses).
        let model_facing = self.conn(generation).is_some_and(|c| c.kind.model_facing());
        if model_facing && self.services.settings.hooks.notices {
            if let Some(notice) = self.awareness.take_notice() {
                result
                    .content
                    .push(crate::protocol::mcp::Content::Text { text: notice });
            }
        }
        answer
            .reply
            .send_text(call_response(&answer.id, &result, answer.stateless));
        self.record_call(&answer.tool, answer.started, answer.summary, status);
    }
}
