//! The JSON-RPC client side of the editor connection: requests go out with ids of
//! their own and a timeout, wait in the pending map, and settle exactly once (result,
//! error, timeout, or rejection when the editor goes away). Timeouts open the circuit
//! breaker; any answer closes it. Frames from the editor arrive here too: responses
//! settle requests, notifications and requests go to [`events`](super::events).

use std::time::Duration;

use actix::prelude::*;
use serde_json::{json, Value};

use super::{Call, EditorFrame, ExtError, ExtensionClient, Reply, NAME};
use crate::actors::activity_log::LifecycleEvent;
use crate::actors::extension::breaker::Admission;
use crate::actors::messages::session::SessionId;
use crate::actors::supervise::{guard, ActorFault};
use crate::protocol::editor::Method;
use crate::protocol::jsonrpc::{self, Incoming, RequestId, RpcError};

/// A request waiting for the editor's answer.
pub(super) struct Pending {
    pub(super) reply: Reply,
    pub(super) timer: Option<SpawnHandle>,
    pub(super) method: String,
    /// For `extension/openDiff`: its tab and owning session.
    pub(super) diff: Option<(String, SessionId)>,
}

/// A request that was not sent: why, and the reply to answer with it.
pub(super) type Refused = (ExtError, Reply);

/// The request that probes a suspended editor once its backoff is over: cheap, and
/// one every editor answers. An agent's request is never the probe, so that a still
/// hung editor costs it at most [`PROBE_HOLD`], not a whole request timeout.
pub(super) const PROBE_METHOD: Method = Method::GetWorkspaceFolders;
/// How long the probe may take before it counts as a failure.
pub(super) const PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// How long requests wait for the probe's answer before they fail fast (and the tools
/// fall back where they can).
pub(super) const PROBE_HOLD: Duration = Duration::from_secs(1);

/// A probe under way and the requests waiting for it.
pub(super) struct Probe {
    id: u64,
    held: Vec<Held>,
    /// Fails what is held once [`PROBE_HOLD`] is over.
    hold_timer: Option<SpawnHandle>,
}

/// A request waiting for the probe: sent when the editor answers it.
struct Held {
    method: String,
    params: Value,
    timeout: Option<Duration>,
    diff: Option<(String, SessionId)>,
    reply: Reply,
}

/// Answers a refused request with its reason. When the send panicked, its reply was
/// dropped with it and the caller sees the restart.
pub(super) fn answer_refusal(sent: Result<Result<(), Refused>, ActorFault>) {
    if let Ok(Err((error, reply))) = sent {
        let _ = reply.send(Err(error));
    }
}

impl ExtensionClient {
    /// Settles every pending request with `error`. A diff nobody decided is not a
    /// rejection: `openDiff` tells the agent to ask in the terminal instead.
    pub(super) fn reject_all(&mut self, ctx: &mut Context<Self>, error: impl Fn(&str) -> ExtError) {
        if let Some(probe) = self.probe.take() {
            if let Some(t) = probe.hold_timer {
                ctx.cancel_future(t);
            }
            for held in probe.held {
                let _ = held.reply.send(Err(error(&held.method)));
            }
        }
        for (_, p) in std::mem::take(&mut self.pending) {
            if let Some(t) = p.timer {
                ctx.cancel_future(t);
            }
            let _ = p.reply.send(Err(error(&p.method)));
        }
    }

    /// Sends a request and parks `reply` in the pending map until it settles. A
    /// request that cannot be sent hands `reply` back with the reason.
    pub(super) fn send_request(
        &mut self,
        method: &str,
        params: &Value,
        timeout: Option<Duration>,
        diff: Option<(String, SessionId)>,
        reply: Reply,
        ctx: &mut Context<Self>,
    ) -> Result<(), Refused> {
        if self.conn.is_none() {
            return Err((ExtError::NotConnected, reply));
        }
        let admitted = self.breaker.admit(self.clock.now_ms());
        if admitted == Admission::Probe {
            let id = self.send_probe(ctx);
            let hold_timer = Some(ctx.run_later(PROBE_HOLD, |act, ctx| {
                if let Some(probe) = act.probe.as_mut() {
                    probe.hold_timer = None;
                }
                act.release_held(false, ctx);
            }));
            self.probe = Some(Probe {
                id,
                held: Vec::new(),
                hold_timer,
            });
        }
        if let (Some(probe), Admission::Probe | Admission::Open { retry_in_ms: 0 }) =
            (&mut self.probe, admitted)
        {
            if probe.hold_timer.is_some() {
                probe.held.push(Held {
                    method: method.to_string(),
                    params: params.clone(),
                    timeout,
                    diff,
                    reply,
                });
                return Ok(());
            }
        }
        if let Admission::Open { retry_in_ms } = admitted {
            let error = ExtError::CircuitOpen {
                failures: self.breaker.failures(),
                retry_in_ms,
            };
            return Err((error, reply));
        }
        self.send_now(method, params, timeout, diff, reply, ctx);
        Ok(())
    }

    /// Sends the probe ([`PROBE_METHOD`]); answers its request id.
    fn send_probe(&mut self, ctx: &mut Context<Self>) -> u64 {
        let (reply, _) = tokio::sync::oneshot::channel();
        self.send_now(
            &PROBE_METHOD.wire(),
            &json!({}),
            Some(PROBE_TIMEOUT),
            None,
            reply,
            ctx,
        )
    }

    /// Ends the wait for the probe: what waited is sent when the editor answered
    /// (`answered`: the breaker is closed), else failed fast as the breaker says. The
    /// probe itself goes on to its own answer or timeout.
    fn release_held(&mut self, answered: bool, ctx: &mut Context<Self>) {
        let Some(probe) = self.probe.as_mut() else {
            return;
        };
        if let Some(t) = probe.hold_timer.take() {
            ctx.cancel_future(t);
        }
        let held = std::mem::take(&mut probe.held);
        if answered {
            self.probe = None;
        }
        for h in held {
            if answered {
                answer_refusal(Ok(
                    self.send_request(&h.method, &h.params, h.timeout, h.diff, h.reply, ctx)
                ));
            } else {
                let error = ExtError::CircuitOpen {
                    failures: self.breaker.failures(),
                    retry_in_ms: 0,
                };
                let _ = h.reply.send(Err(error));
            }
        }
    }

    /// Sends a request the breaker admitted; answers its id.
    fn send_now(
        &mut self,
        method: &str,
        params: &Value,
        timeout: Option<Duration>,
        diff: Option<(String, SessionId)>,
        reply: Reply,
        ctx: &mut Context<Self>,
    ) -> u64 {
        let Some(conn) = &self.conn else {
            let _ = reply.send(Err(ExtError::NotConnected));
            return 0;
        };
        let id = self.next_id;
        self.next_id += 1;
        conn.outbound
            .send_text(jsonrpc::request(id, method, params));
        let timer = timeout.map(|d| ctx.run_later(d, move |act, ctx| act.expire(id, d, ctx)));
        self.pending.insert(
            id,
            Pending {
                reply,
                timer,
                method: method.to_string(),
                diff,
            },
        );
        id
    }

    fn expire(&mut self, id: u64, after: Duration, ctx: &mut Context<Self>) {
        let Some(p) = self.pending.remove(&id) else {
            return;
        };
        let now = self.clock.now_ms();
        let backoff = self.breaker.on_timeout(now, self.jitter.as_mut());
        if self.probe.as_ref().is_some_and(|probe| probe.id == id) {
            self.release_held(false, ctx);
            self.probe = None;
        }
        tracing::warn!(method = %p.method, failures = self.breaker.failures(), backoff_ms = backoff, "editor request timed out; circuit breaker open");
        self.lifecycle(
            LifecycleEvent::CircuitOpened,
            format!(
                "{} timed out; editor suspended for {backoff} ms ({} failures)",
                p.method,
                self.breaker.failures()
            ),
        );
        let _ = p.reply.send(Err(ExtError::Timeout {
            ms: after.as_millis() as u64,
            method: p.method,
        }));
    }

    fn on_response(
        &mut self,
        id: &RequestId,
        result: Option<Value>,
        error: Option<Value>,
        ctx: &mut Context<Self>,
    ) {
        let RequestId::Number(n) = id else { return };
        let Some(p) = n.as_u64().and_then(|n| self.pending.remove(&n)) else {
            tracing::debug!(%id, "late or unknown editor response ignored");
            return;
        };
        if let Some(t) = p.timer {
            ctx.cancel_future(t);
        }
        if self.breaker.failures() > 0 {
            self.lifecycle(
                LifecycleEvent::CircuitClosed,
                "the editor answered again".into(),
            );
        }
        self.breaker.on_success();
        // Any answer shows the editor alive: what waited for the probe goes now.
        if self.probe.is_some() {
            self.release_held(true, ctx);
        }
        let outcome = match error {
            Some(e) => Err(ExtError::Editor {
                method: p.method.clone(),
                message: e
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| e.to_string()),
            }),
            None => Ok(result.unwrap_or(Value::Null)),
        };
        let _ = p.reply.send(outcome);
    }

    fn on_frame(&mut self, message: Incoming, ctx: &mut Context<Self>) {
        let parse = |raw: Option<Box<serde_json::value::RawValue>>| {
            raw.and_then(|p| serde_json::from_str(p.get()).ok())
        };
        match message {
            Incoming::Notification { method, params } => {
                let params = parse(params).unwrap_or(Value::Null);
                self.on_notification(&method, params, ctx);
            }
            Incoming::Request(req) => {
                // The editor may send any of its notifications as a request (its hello,
                // typically), answered with `{}`; an unknown method gets -32601.
                let params = parse(req.params).unwrap_or(Value::Null);
                let known = self.on_notification(&req.method, params, ctx);
                if let Some(c) = &self.conn {
                    c.outbound.send_text(if known {
                        jsonrpc::response(&req.id, &json!({}))
                    } else {
                        jsonrpc::error_response(
                            Some(&req.id),
                            &RpcError::method_not_found(&req.method),
                        )
                    });
                }
            }
            Incoming::Response {
                id: Some(id),
                result,
                error,
            } => {
                let result = parse(result).or(Some(Value::Null));
                self.on_response(&id, result, parse(error), ctx);
            }
            Incoming::Response { id: None, .. } | Incoming::Invalid { .. } => {}
        }
    }
}

impl Handler<EditorFrame> for ExtensionClient {
    type Result = ();
    fn handle(&mut self, msg: EditorFrame, ctx: &mut Context<Self>) {
        if !self.is_current(msg.generation) {
            return;
        }
        let _ = guard(NAME, self, ctx, |act, ctx| act.on_frame(msg.message, ctx));
    }
}

impl Handler<Call> for ExtensionClient {
    type Result = ();
    fn handle(&mut self, msg: Call, ctx: &mut Context<Self>) {
        let Call {
            method,
            params,
            timeout,
            reply,
        } = msg;
        let timeout = Some(timeout.unwrap_or(self.timeout));
        answer_refusal(guard(NAME, self, ctx, |act, ctx| {
            act.send_request(&method.wire(), &params, timeout, None, reply, ctx)
        }));
    }
}
