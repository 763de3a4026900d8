//! The WebSocket upgrade at `/`: checks, admission by the registry, then a Transport.

use std::sync::Arc;

use actix_web::{web, HttpRequest, HttpResponse};
use actix_ws::{CloseCode, CloseReason};

use super::guard::{check_host_and_origin, check_token};
use super::{AGENT_AUTH_HEADER, EDITOR_AUTH_HEADER, SESSION_ANCHOR_HEADER};
use crate::actors::outbound::truncate_reason;
use crate::actors::registry;
use crate::actors::registry::{Admit, AdmitError};
use crate::actors::session::{new_session_id, Session};
use crate::actors::supervise::ActorFault;
use crate::actors::transport::{Peer, Transport};
use crate::services::Services;
use actix::Actor;

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
    if editor {
        let (response, ws, stream) = actix_ws::handle(&req, body)?;
        let services: Arc<Services> = services.into_inner();
        Transport::start(
            Peer::Editor(services.extension.clone()),
            ws,
            stream,
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
            Transport::start(Peer::Agent(admission.session), ws, stream, &services);
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
