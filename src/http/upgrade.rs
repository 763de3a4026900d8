//! The WebSocket upgrade at `/`: checks, admission by the registry, then a Transport.

use std::sync::{Arc, Weak};

use actix_web::{web, HttpRequest, HttpResponse};
use actix_ws::{CloseCode, CloseReason};

use std::pin::Pin;

use super::conn::ConnSocket;
use super::frame_guard::FrameGuard;
use super::guard::{check_host_and_origin, check_token};
use super::{AGENT_AUTH_HEADER, EDITOR_AUTH_HEADER, SESSION_ANCHOR_HEADER};
use crate::actors::outbound::truncate_reason;
use crate::actors::registry;
use crate::actors::registry::{Admit, AdmitError, MayConnect};
use crate::actors::session::{new_session_id, Session};
use crate::actors::supervise::ActorFault;
use crate::actors::transport::{Peer, Transport};
use crate::services::Services;
use actix::Actor;
use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::web::Bytes;
use actix_web::FromRequest;
use futures_util::Stream;

/// `GET /` with an upgrade: an agent connection, or the editor's when it carries
/// `x-claude-ide-extension`.
pub async fn upgrade(
    req: HttpRequest,
    body: web::Payload,
    services: web::Data<Services>,
) -> actix_web::Result<HttpResponse> {
    let editor = req.headers().contains_key(EDITOR_AUTH_HEADER);
    let header = if editor {
        EDITOR_AUTH_HEADER
    } else {
        AGENT_AUTH_HEADER
    };
    let checked = check_host_and_origin(&req, &services.settings)
        .and_then(|_| check_token(&req, header, &services.auth_token));
    if let Err(rejection) = checked {
        services.metrics.rejected_connections.inc();
        tracing::warn!(peer = ?req.peer_addr(), %rejection, "refused a WebSocket upgrade");
        return Err(rejection.into());
    }
    // A registry that cannot answer lets the connection through; admission reports it.
    if let Ok(Err(wait)) = services.registry.send(MayConnect).await {
        services.metrics.rejected_connections.inc();
        tracing::info!(
            wait_ms = wait.as_millis() as u64,
            "refused a WebSocket upgrade with 429: connections too close together"
        );
        return Ok(too_soon(&services, wait));
    }
    if editor {
        let body = guard_frames(&req, body, services.settings.server.max_message_bytes).await?;
        let (response, ws, stream) = actix_ws::handle(&req, body)?;
        let services: Arc<Services> = services.into_inner();
        Transport::start(
            Peer::Editor(services.extension.clone()),
            ws,
            stream,
            socket_of(&req),
            &services,
        );
        return Ok(response);
    }
    let anchor = req
        .headers()
        .get(SESSION_ANCHOR_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty() && v.len() <= 200)
        .map(str::to_string);
    let body = guard_frames(&req, body, services.settings.server.max_message_bytes).await?;
    let (response, ws, stream) = actix_ws::handle_with_protocols(&req, body, &["mcp"])?;
    let services: Arc<Services> = services.into_inner();
    let candidate_id = new_session_id();
    let candidate = Session::new(candidate_id.clone(), Arc::clone(&services)).start();
    let admitted = services
        .registry
        .send(Admit {
            candidate,
            candidate_id,
            anchor,
        })
        .await
        .map_err(|e| AdmitError::Fault(ActorFault::mailbox(registry::NAME, e)))
        .and_then(|r| r);
    match admitted {
        Ok(admission) => {
            tracing::info!(
                session = %admission.session_id,
                reattached = admission.reattached,
                "agent connected"
            );
            Transport::start(
                Peer::Agent(admission.session),
                ws,
                stream,
                socket_of(&req),
                &services,
            );
        }
        Err(err) => {
            tracing::warn!(%err, "refusing an agent connection");
            let code = match err {
                AdmitError::TooManySessions { .. } => CloseCode::Policy,
                AdmitError::Fault(_) => CloseCode::Error,
            };
            actix_rt::spawn(async move {
                let _ = ws
                    .close(Some(CloseReason {
                        code,
                        description: Some(truncate_reason(err.to_string())),
                    }))
                    .await;
            });
        }
    }
    Ok(response)
}

/// The connection's socket as recorded by [`crate::http::conn::on_connect`], weakly.
fn socket_of(req: &HttpRequest) -> Option<Weak<std::net::TcpStream>> {
    req.conn_data::<ConnSocket>().map(|c| Arc::downgrade(&c.0))
}

/// The connection's payload behind a [`FrameGuard`]: a frame or fragmented message
/// announced over `limit` bytes ends the stream before its payload is buffered.
async fn guard_frames(
    req: &HttpRequest,
    body: web::Payload,
    limit: usize,
) -> actix_web::Result<web::Payload> {
    let guarded: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> =
        Box::pin(FrameGuard::new(body.into_inner(), limit));
    web::Payload::from_request(req, &mut Payload::from(guarded)).await
}

/// 429 for a connection that came too soon after the previous one.
fn too_soon(services: &Services, wait: std::time::Duration) -> HttpResponse {
    let retry_after = wait.as_millis().div_ceil(1000).max(1);
    HttpResponse::TooManyRequests()
        .insert_header(("Retry-After", retry_after.to_string()))
        .body(format!(
            "Too many connections: at most one every {} ms; retry in {} ms",
            services.settings.server.min_connect_interval_ms,
            wait.as_millis().max(1)
        ))
}
