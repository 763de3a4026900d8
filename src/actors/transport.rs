//! Transport actor: one per WebSocket connection. Owns framing, JSON classification,
//! the per-connection rate limits and the ping/pong heartbeat, and hands classified
//! messages to its session.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Instant;

use actix::prelude::*;
use actix_ws::{AggregatedMessage, CloseCode, ProtocolError};

use super::extension::{EditorAttach, EditorDetach, EditorFrame, EditorResponse, ExtensionClient};
use super::heartbeat::{Heartbeat, Tick};
use super::outbound::{spawn_writer, Frame, Outbound, WriterLimits};
use super::rate_limit::{ConnectionLimits, Verdict};
use super::session::{Attach, ConnectionKind, Detach, FromClient, Rebind, Session};
use crate::http::frame_guard::FrameLimit;
use crate::protocol::jsonrpc::{self, classify, Incoming, RpcError};
use crate::services::Services;

static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

/// A fresh connection generation (unique for the process's lifetime).
pub fn next_generation() -> u64 {
    NEXT_GENERATION.fetch_add(1, Ordering::Relaxed)
}

/// Who is on the other end of a connection.
#[derive(Clone)]
pub enum Peer {
    /// An agent, served by its Session (which may change when sessions merge).
    Agent(Addr<Session>, ConnectionKind),
    /// The editor extension, served by the ExtensionClient.
    Editor(Addr<ExtensionClient>),
}

/// The Transport actor.
pub struct Transport {
    generation: u64,
    peer: Peer,
    outbound: Outbound,
    limits: ConnectionLimits,
    max_message_bytes: usize,
    heartbeat: Heartbeat,
}

impl Transport {
    /// Starts a transport for an upgraded connection and attaches it to `peer`;
    /// `socket` is the connection's TCP socket, shut down if its outbound queue
    /// overflows (see [`WriterLimits`]).
    pub fn start(
        peer: Peer,
        ws: actix_ws::Session,
        stream: actix_ws::MessageStream,
        socket: Option<Weak<std::net::TcpStream>>,
        services: &Services,
    ) -> Addr<Transport> {
        let settings = &services.settings;
        let max = settings.server.max_message_bytes;
        let stream = stream
            .max_frame_size(max)
            .aggregate_continuations()
            .max_continuation_size(max);
        let outbound = spawn_writer(
            ws,
            WriterLimits {
                max_bytes: settings.server.max_outbound_bytes,
                socket,
                drops: services.metrics.outbound_overflow_drops.clone(),
            },
        );
        let transport = Transport {
            generation: next_generation(),
            peer,
            outbound,
            limits: ConnectionLimits::new(&settings.rate_limit, Arc::clone(&services.metrics)),
            max_message_bytes: max,
            heartbeat: Heartbeat::new(
                settings.server.ping_interval,
                settings.server.pong_timeout,
                Instant::now(),
            ),
        };
        Transport::create(move |ctx| {
            ctx.add_stream(stream);
            transport
        })
    }

    fn close(&self, ctx: &mut Context<Self>, code: CloseCode, reason: impl Into<String>) {
        self.outbound.close(code, reason);
        ctx.stop();
    }

    fn on_text(&mut self, text: &str) {
        let message = classify(text);
        match self.limits.check(&message, Instant::now()) {
            Verdict::Pass => {}
            Verdict::Refuse(err) => {
                if let Incoming::Request(req) = &message {
                    self.outbound
                        .send_text(jsonrpc::error_response(Some(&req.id), &err));
                }
                return;
            }
            Verdict::Drop => return,
        }
        match message {
            Incoming::Request(_) | Incoming::Notification { .. } => self.forward(message),
            Incoming::Invalid { id, error } => {
                self.outbound
                    .send_text(jsonrpc::error_response(id.as_ref(), &error));
            }
            Incoming::Response { id, result, error } => match (&self.peer, id) {
                (Peer::Editor(ext), Some(id)) => {
                    let parse = |raw: Option<Box<serde_json::value::RawValue>>| {
                        raw.and_then(|r| serde_json::from_str(r.get()).ok())
                    };
                    ext.do_send(EditorResponse {
                        generation: self.generation,
                        id,
                        result: parse(result).or(Some(serde_json::Value::Null)),
                        error: parse(error),
                    });
                }
                (_, id) => self.forward(Incoming::Response { id, result, error }),
            },
        }
    }

    fn forward(&self, message: Incoming) {
        let generation = self.generation;
        match &self.peer {
            Peer::Agent(session, _) => session.do_send(FromClient {
                generation,
                message,
                reply: None,
            }),
            Peer::Editor(ext) => ext.do_send(EditorFrame {
                generation,
                message,
            }),
        }
    }

    fn heartbeat(&mut self, ctx: &mut Context<Self>) {
        match self.heartbeat.tick(Instant::now()) {
            Tick::Ping => {
                self.outbound.send(Frame::Ping);
            }
            Tick::Slept => {
                tracing::info!(
                    "heartbeat fired late (sleep/wake?); giving the peer a fresh pong deadline"
                );
                self.outbound.send(Frame::Ping);
            }
            Tick::TimedOut => {
                tracing::info!("nothing heard within the pong timeout; closing the connection");
                self.close(ctx, CloseCode::Away, "pong timeout");
            }
        }
    }
}

impl Actor for Transport {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let (generation, outbound) = (self.generation, self.outbound.clone());
        match &self.peer {
            Peer::Agent(session, kind) => session.do_send(Attach {
                generation,
                kind: *kind,
                outbound,
                transport: ctx.address().recipient(),
            }),
            Peer::Editor(ext) => ext.do_send(EditorAttach {
                generation,
                outbound,
            }),
        }
        ctx.run_interval(self.heartbeat.interval(), |act, ctx| act.heartbeat(ctx));
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        let generation = self.generation;
        match &self.peer {
            Peer::Agent(session, _) => session.do_send(Detach {
                generation,
                ended: false,
            }),
            Peer::Editor(ext) => ext.do_send(EditorDetach { generation }),
        }
    }
}

impl Handler<Rebind> for Transport {
    type Result = ();
    fn handle(&mut self, msg: Rebind, _: &mut Context<Self>) {
        if let Peer::Agent(session, _) = &mut self.peer {
            *session = msg.0;
        }
    }
}

impl StreamHandler<Result<AggregatedMessage, ProtocolError>> for Transport {
    fn handle(&mut self, item: Result<AggregatedMessage, ProtocolError>, ctx: &mut Context<Self>) {
        self.heartbeat.seen(Instant::now());
        match item {
            Ok(AggregatedMessage::Text(text)) => self.on_text(&text),
            Ok(AggregatedMessage::Binary(_)) => {
                let err = RpcError::invalid_request(
                    "Binary frames are not supported: send one JSON-RPC message per text frame",
                );
                self.outbound.send_text(jsonrpc::error_response(None, &err));
            }
            Ok(AggregatedMessage::Ping(data)) => {
                self.outbound.send(Frame::Pong(data));
            }
            Ok(AggregatedMessage::Pong(_)) => {}
            Ok(AggregatedMessage::Close(reason)) => {
                tracing::debug!(?reason, "client closed the connection");
                self.close(ctx, CloseCode::Normal, "");
            }
            Err(err) if FrameLimit::find(&err).is_some() => {
                let limit = FrameLimit::find(&err).expect("checked");
                let reason = format!(
                    "message exceeds the {} byte limit (server.max_message_bytes)",
                    self.max_message_bytes
                );
                tracing::warn!(%limit, "closing connection before reading the frame");
                self.close(ctx, CloseCode::Policy, reason);
            }
            Err(ProtocolError::Overflow) => {
                let reason = format!(
                    "message exceeds the {} byte limit (server.max_message_bytes)",
                    self.max_message_bytes
                );
                tracing::warn!(%reason, "closing connection");
                self.close(ctx, CloseCode::Policy, reason);
            }
            Err(err) => {
                tracing::debug!(%err, "websocket protocol error");
                self.close(ctx, CloseCode::Protocol, "protocol error");
            }
        }
    }

    fn finished(&mut self, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
