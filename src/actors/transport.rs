//! Transport actor: one per WebSocket connection. Owns framing, JSON classification,
//! the per-connection rate limits and the ping/pong heartbeat, and hands classified
//! messages to its [`Peer`] (an agent's session or the editor client), whatever
//! protocol they speak.

use std::sync::{Arc, Weak};
use std::time::Instant;

use actix::prelude::*;
use actix_ws::{AggregatedMessage, CloseCode, ProtocolError};

use super::frame_guard::FrameLimit;
use super::heartbeat::{Heartbeat, Tick};
use super::messages::connection::Generation;
pub use super::messages::session::Peer;
use super::messages::session::Rebind;
use super::outbound::{websocket_body, Frame, Outbound, WriterLimits};
use super::rate_limit::{ConnectionLimits, Verdict};
use crate::protocol::jsonrpc::{self, classify, Incoming, RpcError};
use crate::services::Services;

/// One WebSocket connection, agent or editor.
pub struct Transport {
    generation: Generation,
    peer: Box<dyn Peer>,
    outbound: Outbound,
    limits: ConnectionLimits,
    max_message_bytes: usize,
    heartbeat: Heartbeat,
}

impl Transport {
    /// Starts a transport for an upgraded connection and attaches it to `peer`;
    /// `socket` is the connection's TCP socket, shut down if its outbound queue
    /// overflows (see [`WriterLimits`]). Returns the upgrade's response, whose body now
    /// writes what the transport's peer sends.
    pub fn start(
        peer: Box<dyn Peer>,
        response: actix_web::HttpResponse,
        stream: actix_ws::MessageStream,
        socket: Option<Weak<std::net::TcpStream>>,
        services: &Services,
    ) -> actix_web::HttpResponse {
        let settings = &services.settings;
        let max = settings.server.max_message_bytes;
        let stream = stream
            .max_frame_size(max)
            .aggregate_continuations()
            .max_continuation_size(max);
        let (outbound, response) = websocket_body(
            response,
            WriterLimits {
                max_bytes: settings.server.max_outbound_bytes,
                socket,
                drops: services.metrics.outbound_overflow_drops.clone(),
            },
        );
        let transport = Transport {
            generation: Generation::next(),
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
        });
        response
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
            Incoming::Invalid { id, error } => {
                self.outbound
                    .send_text(jsonrpc::error_response(id.as_ref(), &error));
            }
            message => self.peer.frame(self.generation, message),
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
        self.peer.attach(
            self.generation,
            self.outbound.clone(),
            ctx.address().recipient(),
        );
        ctx.run_interval(self.heartbeat.interval(), |act, ctx| act.heartbeat(ctx));
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.peer.detach(self.generation);
    }
}

impl Handler<Rebind> for Transport {
    type Result = ();
    fn handle(&mut self, msg: Rebind, _: &mut Context<Self>) {
        self.peer.rebind(msg.0);
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
