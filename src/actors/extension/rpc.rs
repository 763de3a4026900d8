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
        let Some(conn) = &self.conn else {
            return Err((ExtError::NotConnected, reply));
        };
        match self.breaker.admit(self.clock.now_ms()) {
            Admission::Closed | Admission::Probe => {}
            Admission::Open { retry_in_ms } => {
                let error = ExtError::CircuitOpen {
                    failures: self.breaker.failures(),
                    retry_in_ms,
                };
                return Err((error, reply));
            }
        }
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
        Ok(())
    }

    fn expire(&mut self, id: u64, after: Duration, _ctx: &mut Context<Self>) {
        let Some(p) = self.pending.remove(&id) else {
            return;
        };
        let now = self.clock.now_ms();
        let backoff = self.breaker.on_timeout(now, self.jitter.as_mut());
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
            act.send_request(&method, &params, timeout, None, reply, ctx)
        }));
    }
}
