//! The WebSocket upgrade at `/`: checks, pacing, admission by the registry, then a
//! Transport.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::web::Bytes;
use actix_web::{web, FromRequest, HttpRequest, HttpResponse};
use actix_ws::CloseCode;
use futures_util::Stream;

use super::conn::socket_of;
use super::guard::{check_host_and_origin, check_token, Rejection};
use super::{AGENT_AUTH_HEADER, EDITOR_AUTH_HEADER, RELAY_HEADER, SESSION_ANCHOR_HEADER};
use crate::actors::extension::ExtensionClient;
use crate::actors::frame_guard::FrameGuard;
use crate::actors::outbound::{websocket_body, WriterLimits};
use crate::actors::registry;
use crate::actors::registry::{Admit, AdmitError, MayConnect, NotNow};
use crate::actors::session::{
    AgentPeer, ConnectionKind, Session, SessionHandle, SessionId, SessionLinks,
};
use crate::actors::supervise::ActorFault;
use crate::actors::transport::Transport;
use crate::metrics::Refusal;
use crate::services::Services;
use actix::Actor;

/// Ancestors a relay may report.
const MAX_RELAY_PIDS: usize = 8;

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
        services.metrics.refuse(rejection.refusal());
        tracing::warn!(peer = ?req.peer_addr(), %rejection, "refused a WebSocket upgrade");
        return Err(rejection.into());
    }
    pace(&services).await?;
    let body = guard_frames(&req, body, services.settings.server.max_message_bytes).await?;
    if editor {
        let (response, _, stream) = actix_ws::handle(&req, body)?;
        let services: Arc<Services> = services.into_inner();
        return Ok(Transport::start(
            Box::new(ExtensionClient::peer(&services.extension)),
            response,
            stream,
            socket_of(&req),
            &services,
        ));
    }
    let header_value = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty() && v.len() <= 200)
            .map(str::to_string)
    };
    let anchor = header_value(SESSION_ANCHOR_HEADER);
    let relay = header_value(RELAY_HEADER);
    let (kind, client_pids) = match &relay {
        Some(chain) => (ConnectionKind::Relay, parse_pids(chain)),
        None => (ConnectionKind::Ide, Vec::new()),
    };
    let (response, _, stream) = actix_ws::handle_with_protocols(&req, body, &["mcp"])?;
    let services: Arc<Services> = services.into_inner();
    match admit(&services, anchor, kind, client_pids).await {
        Ok(session) => Ok(Transport::start(
            Box::new(AgentPeer { session, kind }),
            response,
            stream,
            socket_of(&req),
            &services,
        )),
        Err(err) => {
            let code = match err {
                AdmitError::TooManySessions { .. } => CloseCode::Policy,
                AdmitError::ShuttingDown => CloseCode::Away,
                AdmitError::Fault(_) => CloseCode::Error,
            };
            let (outbound, response) = websocket_body(response, WriterLimits::default());
            outbound.close(code, err.to_string());
            Ok(response)
        }
    }
}

/// How long a connection to a full bridge waits for a slot to free before it is refused.
const WAIT_FOR_SLOT: std::time::Duration = std::time::Duration::from_millis(500);
/// How often it asks again meanwhile.
const SLOT_POLL: std::time::Duration = std::time::Duration::from_millis(25);

/// Asks the registry to admit an agent connection: a fresh session, or the existing
/// one this client belongs to. Refusals are counted and logged here.
pub(crate) async fn admit(
    services: &Arc<Services>,
    anchor: Option<String>,
    kind: ConnectionKind,
    client_pids: Vec<u32>,
) -> Result<SessionHandle, AdmitError> {
    let candidate_id = SessionId::new_random();
    let candidate = SessionHandle::from(
        Session::new(
            candidate_id.clone(),
            Arc::clone(services),
            SessionLinks::of(services),
        )
        .start(),
    );
    let asked_at = tokio::time::Instant::now();
    let admitted = loop {
        let last_try = asked_at.elapsed() >= WAIT_FOR_SLOT;
        let admitted = services
            .registry
            .send(Admit {
                candidate: candidate.clone(),
                candidate_id: candidate_id.clone(),
                anchor: anchor.clone(),
                kind,
                client_pids: client_pids.clone(),
                last_try,
            })
            .await
            .map_err(|e| AdmitError::Fault(ActorFault::mailbox(registry::NAME, e)))
            .and_then(|r| r);
        // A full bridge waits a moment for a slot: a client that just went away (an
        // HTTP client that answered its last request and left) frees one within ms.
        match admitted {
            Err(AdmitError::TooManySessions { .. }) if !last_try => {
                tokio::time::sleep(SLOT_POLL).await;
            }
            admitted => break admitted,
        }
    };
    match admitted {
        Ok(admission) => {
            tracing::info!(
                session = %admission.session_id,
                reattached = admission.reattached,
                ?kind,
                "agent connected"
            );
            Ok(admission.session)
        }
        Err(err) => {
            services.metrics.refuse(err.refusal());
            tracing::warn!(%err, "refusing an agent connection");
            Err(err)
        }
    }
}

/// Holds a connection until its slot (`server.min_connect_interval_ms` after the
/// previous one); refuses it with 429 when the slot is further away than
/// `server.max_connect_wait_ms`, and with 503 while the bridge shuts down.
pub(crate) async fn pace(services: &Services) -> Result<(), actix_web::Error> {
    match services.registry.send(MayConnect).await {
        // A registry that cannot answer lets the connection through; admission reports it.
        Err(_) => Ok(()),
        Ok(Ok(wait)) => {
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            Ok(())
        }
        Ok(Err(NotNow::Burst(wait))) => {
            services.metrics.refuse(Refusal::Burst);
            tracing::warn!(
                wait_ms = wait.as_millis() as u64,
                "refused a connection with 429: more connections at once than the pacing holds"
            );
            Err(actix_web::error::InternalError::from_response(
                "too many connections at once",
                too_soon(services, wait),
            )
            .into())
        }
        Ok(Err(NotNow::ShuttingDown)) => {
            services.metrics.refuse(Refusal::ShuttingDown);
            Err(actix_web::error::InternalError::from_response(
                "shutting down",
                HttpResponse::ServiceUnavailable().body("ide-bridge is shutting down"),
            )
            .into())
        }
    }
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

/// The pids in a relay header; anything unparseable is ignored.
fn parse_pids(chain: &str) -> Vec<u32> {
    chain
        .split(',')
        .filter_map(|p| p.trim().parse::<u32>().ok())
        .filter(|p| *p > 1)
        .take(MAX_RELAY_PIDS)
        .collect()
}

/// 429 for a connection in a burst longer than the pacing holds.
fn too_soon(services: &Services, wait: Duration) -> HttpResponse {
    let retry_after = wait.as_millis().div_ceil(1000).max(1);
    HttpResponse::TooManyRequests()
        .insert_header(("Retry-After", retry_after.to_string()))
        .body(format!(
            "Too many connections at once: they are admitted one every {} ms and at most {} ms \
             of waiting is held; retry in {} ms",
            services.settings.server.min_connect_interval.as_millis(),
            services.settings.server.max_connect_wait.as_millis(),
            wait.as_millis().max(1)
        ))
}

impl Rejection {
    /// The refusal counted for it.
    pub fn refusal(&self) -> Refusal {
        match self {
            Rejection::Forbidden(_) => Refusal::Forbidden,
            Rejection::Unauthorized(_) => Refusal::Unauthorized,
        }
    }
}
