//! Streamable HTTP at `/mcp` (MCP transport of protocol versions 2025-03-26,
//! 2025-06-18 and 2025-11-25): POST carries one client message and answers with JSON or,
//! for `tools/call`, with an SSE stream that carries the call's progress and then its
//! result; GET opens the stream of server-initiated messages; DELETE ends the session.
//! Every request checks `Host`, `Origin` and `Authorization: Bearer <token>`.

use std::sync::Arc;
use std::time::Duration;

use actix::Actor;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::json;

use super::body::{read_limited, BodyError};
use super::guard::{check_bearer, check_host_and_origin, Rejection};
use super::upgrade::{admit, pace};
use super::SESSION_ANCHOR_HEADER;
use crate::actors::http_transport::{
    End, HttpTransport, Lookup, OpenStream, Post, PostRefused, Register,
};
use crate::actors::outbound::{Frame, FrameReceiver, Outbound};
use crate::actors::session::ConnectionKind;
use crate::protocol::jsonrpc::{self, classify, Incoming, RpcError};
use crate::protocol::mcp::SUPPORTED_PROTOCOL_VERSIONS;
use crate::services::Services;

/// The session header, as MCP spells it.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The protocol version header.
pub const VERSION_HEADER: &str = "mcp-protocol-version";
/// Keep-alive comment interval on SSE streams.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// A refused request's response (boxed: an `HttpResponse` is large).
type Refused = Box<HttpResponse>;

/// An HTTP error with a JSON body (and, when it concerns a JSON-RPC message, a
/// JSON-RPC error inside).
fn refuse(status: actix_web::http::StatusCode, message: impl Into<String>) -> Refused {
    let message = message.into();
    Box::new(HttpResponse::build(status).json(json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": -32600, "message": message },
    })))
}

/// Host, Origin and bearer token; refusals are counted by reason.
fn check(req: &HttpRequest, services: &Services) -> Result<(), Refused> {
    check_host_and_origin(req, &services.settings)
        .and_then(|_| check_bearer(req, &services.auth_token))
        .map_err(|rejection: Rejection| {
            services.metrics.refuse(rejection.refusal());
            let mut response = actix_web::ResponseError::error_response(&rejection);
            if matches!(rejection, Rejection::Unauthorized(_)) {
                // RFC 9110: a 401 names its scheme. No OAuth here: the token is in the
                // lock file.
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(
                        "Bearer realm=\"ide-bridge\", error_description=\"the token is the authToken of the bridge's lock file\"",
                    ),
                );
            }
            Box::new(response)
        })
}

fn header_str<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// 400 when the client names a protocol version the bridge does not speak.
fn check_version(req: &HttpRequest) -> Result<(), Refused> {
    match header_str(req, VERSION_HEADER) {
        Some(v) if !SUPPORTED_PROTOCOL_VERSIONS.contains(&v.trim()) => Err(refuse(
            actix_web::http::StatusCode::BAD_REQUEST,
            format!(
                "Unsupported MCP-Protocol-Version {v:?}: this server speaks {}",
                SUPPORTED_PROTOCOL_VERSIONS.join(", ")
            ),
        )),
        _ => Ok(()),
    }
}

/// The live transport of the request's `Mcp-Session-Id`: 400 without one, 404 for
/// one that is unknown or ended.
async fn session_of(
    req: &HttpRequest,
    services: &Services,
) -> Result<actix::Addr<HttpTransport>, Refused> {
    let Some(id) = header_str(req, SESSION_HEADER) else {
        return Err(refuse(
            actix_web::http::StatusCode::BAD_REQUEST,
            "Missing Mcp-Session-Id header: send initialize first",
        ));
    };
    match services.http_sessions.send(Lookup(id.to_string())).await {
        Ok(Some(addr)) => Ok(addr),
        _ => Err(refuse(
            actix_web::http::StatusCode::NOT_FOUND,
            format!("Unknown or ended MCP session {id:?}: initialize a new one"),
        )),
    }
}

/// Reads the body, refusing (413) one over `server.max_message_bytes` before reading
/// more than the limit.
async fn read_body(
    req: &HttpRequest,
    payload: web::Payload,
    limit: usize,
) -> Result<web::BytesMut, Refused> {
    read_limited(req, payload, limit, "server.max_message_bytes")
        .await
        .map_err(|e| match e {
            BodyError::TooLarge { limit, .. } => refuse(
                actix_web::http::StatusCode::PAYLOAD_TOO_LARGE,
                format!("Message larger than {limit} bytes (server.max_message_bytes)"),
            ),
            BodyError::Unreadable(e) => refuse(
                actix_web::http::StatusCode::BAD_REQUEST,
                format!("Unreadable body: {e}"),
            ),
        })
}

/// `POST /mcp`.
pub async fn post(
    req: HttpRequest,
    payload: web::Payload,
    services: web::Data<Services>,
) -> HttpResponse {
    if let Err(refused) = check(&req, &services).and_then(|_| check_version(&req)) {
        return *refused;
    }
    let body = match read_body(&req, payload, services.settings.server.max_message_bytes).await {
        Ok(b) => b,
        Err(refused) => return *refused,
    };
    let text = match std::str::from_utf8(&body) {
        Ok(t) => t,
        Err(_) => {
            return HttpResponse::BadRequest().json(json!({
                "jsonrpc": "2.0", "id": null,
                "error": { "code": -32700, "message": "Parse error: the body is not UTF-8" }
            }))
        }
    };
    let message = classify(text);
    if let Incoming::Invalid { id, error } = &message {
        return HttpResponse::BadRequest()
            .content_type("application/json")
            .body(jsonrpc::error_response(id.as_ref(), error));
    }
    let services = services.into_inner();
    let is_initialize = matches!(&message, Incoming::Request(r) if r.method == "initialize");
    let (transport, new_id) = if is_initialize && header_str(&req, SESSION_HEADER).is_none() {
        match start_session(&req, &services).await {
            Ok((addr, id)) => (addr, Some(id)),
            Err(refused) => return *refused,
        }
    } else {
        match session_of(&req, &services).await {
            Ok(addr) => (addr, None),
            Err(refused) => return *refused,
        }
    };
    let request_id = match &message {
        Incoming::Request(r) => Some(r.id.clone()),
        _ => None,
    };
    let streams = matches!(&message, Incoming::Request(r) if r.method == "tools/call")
        && header_str(&req, "accept").is_some_and(|a| a.contains("text/event-stream"));
    let (reply, rx) = Outbound::counted_channel(
        services.settings.server.max_outbound_bytes,
        services.metrics.outbound_overflow_drops.clone(),
    );
    let posted = transport.send(Post { message, reply }).await;
    let refused = match posted {
        Ok(Ok(())) => None,
        Ok(Err(PostRefused::Limited(err))) => Some(err),
        Ok(Err(PostRefused::Gone)) | Err(_) => {
            return *refuse(
                actix_web::http::StatusCode::NOT_FOUND,
                "This MCP session has ended: initialize a new one",
            )
        }
    };
    let Some(id) = request_id else {
        // Notifications and responses: accepted, nothing to answer.
        return HttpResponse::Accepted().finish();
    };
    let mut response = HttpResponse::Ok();
    if let Some(new_id) = &new_id {
        response.insert_header((SESSION_HEADER, new_id.as_str()));
    }
    if let Some(err) = refused {
        return response
            .content_type("application/json")
            .body(jsonrpc::error_response(Some(&id), &err));
    }
    if streams {
        return response
            .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
            .content_type("text/event-stream")
            .streaming(sse_until_answered(rx));
    }
    match answer_of(rx).await {
        Some(text) => response.content_type("application/json").body(text),
        None => response
            .content_type("application/json")
            .body(jsonrpc::error_response(
                Some(&id),
                &RpcError::internal("the session ended before answering"),
            )),
    }
}

/// Admits a new agent session for an `initialize` without `Mcp-Session-Id`.
async fn start_session(
    req: &HttpRequest,
    services: &Arc<Services>,
) -> Result<(actix::Addr<HttpTransport>, String), Refused> {
    if let Err(e) = pace(services).await {
        return Err(Box::new(actix_web::ResponseError::error_response(
            e.as_response_error(),
        )));
    }
    let anchor = header_str(req, SESSION_ANCHOR_HEADER)
        .map(str::trim)
        .filter(|v| !v.is_empty() && v.len() <= 200)
        .map(str::to_string);
    let session = admit(services, anchor, ConnectionKind::Http, Vec::new())
        .await
        .map_err(|err| {
            refuse(
                actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
                err.to_string(),
            )
        })?;
    let id = uuid::Uuid::new_v4().simple().to_string();
    let transport = HttpTransport::new(
        id.clone(),
        session,
        services.http_sessions.clone(),
        services.settings.grace_period().max(Duration::from_secs(1)),
        &services.settings.rate_limit,
        Arc::clone(&services.metrics),
    )
    .start();
    services
        .http_sessions
        .do_send(Register(id.clone(), transport.clone()));
    Ok((transport, id))
}

/// The response among the frames (notifications are skipped: a JSON answer carries
/// only the result).
async fn answer_of(mut rx: FrameReceiver) -> Option<String> {
    while let Some(frame) = rx.recv().await {
        if let Frame::Text(text) = frame {
            if matches!(classify(&text), Incoming::Response { .. }) {
                return Some(text);
            }
        }
    }
    None
}

fn sse_event(text: &str) -> web::Bytes {
    web::Bytes::from(format!("event: message\ndata: {text}\n\n"))
}

/// An SSE body that carries every frame until the response, then ends.
fn sse_until_answered(
    rx: FrameReceiver,
) -> impl futures_util::Stream<Item = Result<web::Bytes, actix_web::Error>> {
    futures_util::stream::unfold(Some(rx), |rx| async move {
        let mut rx = rx?;
        loop {
            match tokio::time::timeout(KEEPALIVE, rx.recv()).await {
                Err(_) => {
                    return Some((Ok(web::Bytes::from_static(b": keep-alive\n\n")), Some(rx)))
                }
                Ok(Some(Frame::Text(text))) => {
                    let done = matches!(classify(&text), Incoming::Response { .. });
                    return Some((Ok(sse_event(&text)), (!done).then_some(rx)));
                }
                Ok(Some(_)) => continue,
                Ok(None) => return None,
            }
        }
    })
}

/// `GET /mcp`: the stream of server-initiated messages (`list_changed`, log messages).
pub async fn get(req: HttpRequest, services: web::Data<Services>) -> HttpResponse {
    if let Err(refused) = check(&req, &services).and_then(|_| check_version(&req)) {
        return *refused;
    }
    let wants_sse = header_str(&req, "accept").is_some_and(|a| a.contains("text/event-stream"));
    if !wants_sse {
        return HttpResponse::MethodNotAllowed()
            .insert_header((header::ALLOW, "POST, DELETE"))
            .json(json!({ "error": "GET /mcp serves text/event-stream only" }));
    }
    let transport = match session_of(&req, &services).await {
        Ok(t) => t,
        Err(refused) => return *refused,
    };
    let (outbound, rx) = Outbound::counted_channel(
        services.settings.server.max_outbound_bytes,
        services.metrics.outbound_overflow_drops.clone(),
    );
    transport.do_send(OpenStream(outbound));
    let events = futures_util::stream::unfold(rx, |mut rx| async move {
        loop {
            match tokio::time::timeout(KEEPALIVE, rx.recv()).await {
                Err(_) => return Some((Ok(web::Bytes::from_static(b": keep-alive\n\n")), rx)),
                Ok(Some(Frame::Text(text))) => return Some((Ok(sse_event(&text)), rx)),
                Ok(Some(Frame::Close(..))) | Ok(None) => return None,
                Ok(Some(_)) => continue,
            }
        }
    });
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
        .content_type("text/event-stream")
        .streaming::<_, actix_web::Error>(events)
}

/// `DELETE /mcp`: ends the session.
pub async fn delete(req: HttpRequest, services: web::Data<Services>) -> HttpResponse {
    if let Err(refused) = check(&req, &services) {
        return *refused;
    }
    match session_of(&req, &services).await {
        Ok(transport) => {
            let _ = transport.send(End).await;
            HttpResponse::Ok().finish()
        }
        Err(refused) => *refused,
    }
}
