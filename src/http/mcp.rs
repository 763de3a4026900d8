//! Streamable HTTP at `/mcp`, in both eras of MCP. Handshake revisions (2025-03-26,
//! 2025-06-18, 2025-11-25): POST carries one client message and answers with JSON or,
//! for `tools/call`, with an SSE stream that carries the call's progress and then its
//! result; GET opens the stream of server-initiated messages; DELETE ends the session.
//! The stateless revision (2026-07-28, [`modern`]): no session id, GET or DELETE; the
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers must agree with the
//! body; `subscriptions/listen` answers with an SSE stream that stays open; requests
//! are served by one session per client (its `X-Claude-Code-Session-Id`, else its
//! `clientInfo`). Every request checks `Host`, `Origin` and `Authorization: Bearer <token>`.

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
use crate::actors::registry::Identify;
use crate::actors::session::{ConnectionKind, McpState};
use crate::protocol::jsonrpc::{self, classify, Incoming, RpcError};
use crate::protocol::methods::Method;
use crate::protocol::modern;
use crate::services::Services;

/// The session header, as MCP spells it.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The protocol version header.
pub const VERSION_HEADER: &str = "mcp-protocol-version";
/// The method header (MCP 2026-07-28).
pub const METHOD_HEADER: &str = "mcp-method";
/// The header naming a request's tool, prompt or resource (MCP 2026-07-28).
pub const NAME_HEADER: &str = "mcp-name";
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

/// 400 (-32022) when the client names a protocol version the bridge does not speak.
fn check_version(req: &HttpRequest) -> Result<(), Refused> {
    match header_str(req, VERSION_HEADER).map(str::trim) {
        Some(v) if !modern::speaks(v) => Err(Box::new(
            HttpResponse::BadRequest()
                .content_type("application/json")
                .body(jsonrpc::error_response(
                    None,
                    &modern::unsupported_version(Some(v)),
                )),
        )),
        _ => Ok(()),
    }
}

/// The live transport of the request's `Mcp-Session-Id`: 400 without one, 404 for
/// one that is unknown or ended.
async fn session_of(
    req: &HttpRequest,
    services: &Arc<Services>,
) -> Result<actix::Addr<HttpTransport>, Refused> {
    let Some(id) = header_str(req, SESSION_HEADER) else {
        return Err(refuse(
            actix_web::http::StatusCode::BAD_REQUEST,
            "Missing Mcp-Session-Id header: send initialize first",
        ));
    };
    if let Ok(Some(addr)) = services.http_sessions.send(Lookup(id.to_string())).await {
        return Ok(addr);
    }
    match resume(req, services, id).await {
        Some(resumed) => resumed,
        None => Err(refuse(
            actix_web::http::StatusCode::NOT_FOUND,
            format!("Unknown or ended MCP session {id:?}: initialize a new one"),
        )),
    }
}

/// The anchor of an HTTP session whose client sent none of its own: kept in the
/// checkpoint, it lets the client carry on after a restart with the session id it has.
fn http_anchor(id: &str) -> String {
    format!("mcp-session {id}")
}

/// A session id the table does not know but a session restored after a restart does
/// (its anchor, [`http_anchor`]): the session is taken up again on a new transport,
/// initialized at the version the client names (`MCP-Protocol-Version`, else
/// 2025-03-26, as the specification says to assume), so that the client goes on
/// without initializing anew. `None` when no session has it.
async fn resume(
    req: &HttpRequest,
    services: &Arc<Services>,
    id: &str,
) -> Option<Result<actix::Addr<HttpTransport>, Refused>> {
    let anchor = http_anchor(id);
    services
        .registry
        .send(Identify::Anchor(anchor.clone()))
        .await
        .ok()
        .flatten()?;
    // Without the header, a server is to assume 2025-03-26 (the revision before it).
    let requested = header_str(req, VERSION_HEADER).map_or("2025-03-26", str::trim);
    let mcp = McpState {
        initialized: true,
        protocol_version: Some(crate::protocol::mcp::negotiate_version(Some(requested))),
        ..McpState::default()
    };
    let resumed = open_transport(services, Some(anchor), id.to_string(), mcp).await;
    if resumed.is_ok() {
        tracing::info!(mcp_session = id, "HTTP MCP session resumed after a restart");
    }
    Some(resumed)
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
            slow @ BodyError::TooSlow => refuse(
                actix_web::http::StatusCode::REQUEST_TIMEOUT,
                format!("The request's {slow}"),
            ),
        })
}

/// `POST /mcp`.
pub async fn post(
    req: HttpRequest,
    payload: web::Payload,
    services: web::Data<Services>,
) -> HttpResponse {
    if let Err(refused) = check(&req, &services) {
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
    let request_id = match &message {
        Incoming::Request(r) => Some(r.id.clone()),
        _ => None,
    };
    let bad_request = |err: &RpcError| {
        HttpResponse::BadRequest()
            .content_type("application/json")
            .body(jsonrpc::error_response(request_id.as_ref(), err))
    };
    // The era: the body's `_meta` says, or the version header. A header that names
    // another version than the body is a mismatch before either is judged.
    let header_version = header_str(&req, VERSION_HEADER).map(str::trim);
    let body_version = match &message {
        Incoming::Request(r) => modern::requested_version(r.params.as_deref()),
        _ => None,
    };
    if let (Some(h), Some(b)) = (header_version, &body_version) {
        if h != b {
            return bad_request(&modern::header_mismatch(format!(
                "Header mismatch: {VERSION_HEADER} {h:?} is not the body's protocol version {b:?}"
            )));
        }
    }
    if let Some(v) = header_version.filter(|v| !modern::speaks(v)) {
        return bad_request(&modern::unsupported_version(Some(v)));
    }
    let stateless = match &message {
        Incoming::Request(r) => match modern::classify(r.params.as_deref()) {
            Ok(meta) => meta.is_some(),
            Err(err) => return bad_request(&err),
        },
        _ => false,
    };
    let services = services.into_inner();
    if stateless || header_version == Some(modern::VERSION) {
        return match message {
            Incoming::Request(r) if stateless => match check_headers(&req, &r) {
                Err(err) => bad_request(&err),
                // What needs no session is answered without one.
                Ok(()) => match Method::parse(&r.method) {
                    None => not_found(&r.id, &RpcError::method_not_found(&r.method)),
                    Some(m) if m.handshake_only() => {
                        not_found(&r.id, &modern::not_in_revision(&r.method))
                    }
                    Some(Method::Discover) => {
                        let instructions =
                            crate::protocol::mcp::instructions(services.workspace.root(), None);
                        let result = modern::complete(
                            Method::Discover.name(),
                            modern::discover(instructions),
                        );
                        HttpResponse::Ok()
                            .content_type("application/json")
                            .body(jsonrpc::response(&r.id, &result))
                    }
                    Some(_) => stateless_post(&req, &services, r).await,
                },
            },
            Incoming::Request(_) => bad_request(&modern::missing_envelope(&format!(
                "params._meta[\"{}\"] and [\"{}\"] in a request whose {VERSION_HEADER} is {}",
                modern::VERSION_KEY,
                modern::CAPABILITIES_KEY,
                modern::VERSION,
            ))),
            // Notifications of the stateless revision: accepted, nothing to do (a
            // request ends when its stream closes).
            _ => {
                tracing::debug!("a notification POSTed in MCP 2026-07-28 was accepted and ignored");
                HttpResponse::Accepted().finish()
            }
        };
    }
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
    match deliver(
        &req,
        &services,
        &transport,
        message,
        new_id.as_deref(),
        false,
    )
    .await
    {
        Ok(response) => response,
        Err(Gone) => *refuse(
            actix_web::http::StatusCode::NOT_FOUND,
            "This MCP session has ended: initialize a new one",
        ),
    }
}

/// 404 with a JSON-RPC error: an unknown method, in the stateless revision.
fn not_found(id: &jsonrpc::RequestId, err: &RpcError) -> HttpResponse {
    HttpResponse::NotFound()
        .content_type("application/json")
        .body(jsonrpc::error_response(Some(id), err))
}

/// The transport behind a session id ended before the message reached it.
struct Gone;

/// Hands `message` to `transport` and answers the POST: 202 for a notification, JSON,
/// or an SSE stream (a `tools/call` whose client accepts one, and every
/// `subscriptions/listen`). `new_id` is a session id just minted (its header is set);
/// `stateless` requests answered with -32601 get 404, as their revision says.
async fn deliver(
    req: &HttpRequest,
    services: &Services,
    transport: &actix::Addr<HttpTransport>,
    message: Incoming,
    new_id: Option<&str>,
    stateless: bool,
) -> Result<HttpResponse, Gone> {
    let request_id = match &message {
        Incoming::Request(r) => Some(r.id.clone()),
        _ => None,
    };
    let listen = matches!(&message, Incoming::Request(r) if r.method == "subscriptions/listen");
    let streams = listen
        || matches!(&message, Incoming::Request(r) if r.method == "tools/call")
            && header_str(req, "accept").is_some_and(|a| a.contains("text/event-stream"));
    let (reply, rx) = Outbound::counted_channel(
        services.settings.server.max_outbound_bytes,
        services.metrics.outbound_overflow_drops.clone(),
    );
    let refused = match transport.send(Post { message, reply }).await {
        Ok(Ok(())) => None,
        Ok(Err(PostRefused::Limited(err))) => Some(err),
        Ok(Err(PostRefused::Gone)) | Err(_) => return Err(Gone),
    };
    let Some(id) = request_id else {
        // Notifications and responses: accepted, nothing to answer.
        return Ok(HttpResponse::Accepted().finish());
    };
    let mut response = HttpResponse::Ok();
    if let Some(new_id) = new_id {
        response.insert_header((SESSION_HEADER, new_id));
    }
    if let Some(err) = refused {
        return Ok(response
            .content_type("application/json")
            .body(jsonrpc::error_response(Some(&id), &err)));
    }
    if streams {
        return Ok(response
            .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
            .insert_header(("x-accel-buffering", "no"))
            .content_type("text/event-stream")
            .streaming(sse_until_answered(rx)));
    }
    Ok(match answer_of(rx).await {
        Answered::Response(text) => {
            if stateless && answered_method_not_found(&text) {
                response.status(actix_web::http::StatusCode::NOT_FOUND);
            }
            response.content_type("application/json").body(text)
        }
        // The client gave up on it; an answer the JSON response cannot do without.
        Answered::Cancelled => response
            .content_type("application/json")
            .body(jsonrpc::error_response(Some(&id), &RpcError::cancelled())),
        Answered::Gone => response
            .content_type("application/json")
            .body(jsonrpc::error_response(
                Some(&id),
                &RpcError::internal("the session ended before answering"),
            )),
    })
}

/// The answer is a -32601 error.
fn answered_method_not_found(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.pointer("/error/code").and_then(serde_json::Value::as_i64))
        == Some(jsonrpc::METHOD_NOT_FOUND)
}

/// The headers a request of the stateless revision repeats from its body
/// (`MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` for the methods that name
/// something): each must be there and agree, else -32020.
fn check_headers(req: &HttpRequest, request: &jsonrpc::Request) -> Result<(), RpcError> {
    let expect = |header: &str, body: &str| match header_str(req, header).map(decode_header) {
        Some(Some(value)) if value == body => Ok(()),
        Some(_) => Err(modern::header_mismatch(format!(
            "Header mismatch: {header} does not match the body's {body:?}"
        ))),
        None => Err(modern::header_mismatch(format!(
            "Missing {header} header: an MCP {} request repeats {body:?} there",
            modern::VERSION
        ))),
    };
    expect(VERSION_HEADER, modern::VERSION)?;
    expect(METHOD_HEADER, &request.method)?;
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Named {
        name: Option<String>,
        uri: Option<String>,
        task_id: Option<String>,
    }
    let field: fn(Named) -> Option<String> = match request.method.as_str() {
        "tools/call" | "prompts/get" => |p| p.name,
        "resources/read" => |p| p.uri,
        "tasks/get" | "tasks/update" | "tasks/cancel" => |p| p.task_id,
        _ => return Ok(()),
    };
    let params: Named = jsonrpc::parse_params(request.params.as_deref())?;
    match field(params) {
        Some(value) => expect(NAME_HEADER, &value),
        None => Ok(()),
    }
}

/// A header's value as sent: `=?base64?<text>?=` carries what a header cannot hold
/// (MCP 2026-07-28); `None` when that is not valid base64 UTF-8.
fn decode_header(value: &str) -> Option<String> {
    use base64::Engine as _;
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(encoded) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()
            .and_then(|b| String::from_utf8(b).ok()),
        None => Some(value.to_string()),
    }
}

/// Who sends a request of the stateless revision (it has no session id): its
/// `X-Claude-Code-Session-Id` when it sends one, else its `clientInfo`. One session
/// serves each, so attribution, limits and claims work as for the other transports.
fn stateless_identity(req: &HttpRequest, request: &jsonrpc::Request) -> String {
    if let Some(anchor) = anchor_of(req) {
        return anchor;
    }
    let client = modern::classify(request.params.as_deref())
        .ok()
        .flatten()
        .and_then(|m| m.client)
        .map_or_else(|| "an unnamed client".to_string(), |c| c.label());
    let client: String = client
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    format!("http client {client}")
}

/// A request of the stateless revision: passed to its client's session (started on
/// its first request, or again after it ended).
async fn stateless_post(
    req: &HttpRequest,
    services: &Arc<Services>,
    request: jsonrpc::Request,
) -> HttpResponse {
    let identity = stateless_identity(req, &request);
    let key = format!("stateless {identity}");
    // Once more when the transport ended between finding it and passing the request.
    for _ in 0..2 {
        let transport = match services.http_sessions.send(Lookup(key.clone())).await {
            Ok(Some(addr)) => addr,
            _ => match open_transport(
                services,
                Some(identity.clone()),
                key.clone(),
                McpState::default(),
            )
            .await
            {
                Ok(addr) => addr,
                Err(refused) => return *refused,
            },
        };
        let message = Incoming::Request(request.clone());
        if let Ok(response) = deliver(req, services, &transport, message, None, true).await {
            return response;
        }
    }
    *refuse(
        actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
        "The session serving this client ended while the request was passed on: retry it",
    )
}

/// The client's `X-Claude-Code-Session-Id`, when it sends a usable one.
fn anchor_of(req: &HttpRequest) -> Option<String> {
    header_str(req, SESSION_ANCHOR_HEADER)
        .map(str::trim)
        .filter(|v| !v.is_empty() && v.len() <= 200)
        .map(str::to_string)
}

/// Admits a new agent session for an `initialize` without `Mcp-Session-Id`.
async fn start_session(
    req: &HttpRequest,
    services: &Arc<Services>,
) -> Result<(actix::Addr<HttpTransport>, String), Refused> {
    let id = uuid::Uuid::new_v4().simple().to_string();
    let anchor = anchor_of(req).unwrap_or_else(|| http_anchor(&id));
    let transport = open_transport(services, Some(anchor), id.clone(), McpState::default()).await?;
    Ok((transport, id))
}

/// Admits an agent (a fresh session, or the one `anchor` names) and starts the HTTP
/// transport that `id` names in the table of HTTP sessions, its connection in `mcp`.
async fn open_transport(
    services: &Arc<Services>,
    anchor: Option<String>,
    id: String,
    mcp: McpState,
) -> Result<actix::Addr<HttpTransport>, Refused> {
    if let Err(e) = pace(services).await {
        return Err(Box::new(actix_web::ResponseError::error_response(
            e.as_response_error(),
        )));
    }
    let session = admit(services, anchor, ConnectionKind::Http, Vec::new())
        .await
        .map_err(|err| {
            refuse(
                actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
                err.to_string(),
            )
        })?;
    let transport = HttpTransport::new(
        id.clone(),
        session,
        services.http_sessions.clone(),
        services.settings.grace_period().max(Duration::from_secs(1)),
        (&services.settings.rate_limit, Arc::clone(&services.metrics)),
        mcp,
    )
    .start();
    services
        .http_sessions
        .do_send(Register(id, transport.clone()));
    Ok(transport)
}

/// The response among the frames (notifications are skipped: a JSON answer carries
/// only the result).
/// How a POSTed request's reply stream ended.
enum Answered {
    /// The response.
    Response(String),
    /// The request was cancelled: no response comes.
    Cancelled,
    /// The stream closed without one (the session ended).
    Gone,
}

async fn answer_of(mut rx: FrameReceiver) -> Answered {
    while let Some(frame) = rx.recv().await {
        match frame {
            Frame::Text(text) if matches!(classify(&text), Incoming::Response { .. }) => {
                return Answered::Response(text);
            }
            Frame::Close(..) => return Answered::Cancelled,
            _ => {}
        }
    }
    Answered::Gone
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
                // Cancelled: the stream ends without a response.
                Ok(Some(Frame::Close(..))) | Ok(None) => return None,
                Ok(Some(_)) => continue,
            }
        }
    })
}

/// `GET /mcp`: the stream of server-initiated messages (`list_changed`, log messages).
pub async fn get(req: HttpRequest, services: web::Data<Services>) -> HttpResponse {
    if let Err(refused) = check(&req, &services).and_then(|_| check_version(&req)) {
        return *refused;
    }
    if let Some(refused) = not_in_stateless(&req) {
        return refused;
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

/// 405 for GET and DELETE in the stateless revision, which has neither.
fn not_in_stateless(req: &HttpRequest) -> Option<HttpResponse> {
    (header_str(req, VERSION_HEADER).map(str::trim) == Some(modern::VERSION)).then(|| {
        HttpResponse::MethodNotAllowed()
            .insert_header((header::ALLOW, "POST"))
            .json(json!({ "error": format!(
                "MCP {} has no GET stream and no DELETE: POST subscriptions/listen for notifications",
                modern::VERSION
            ) }))
    })
}

/// `DELETE /mcp`: ends the session.
pub async fn delete(req: HttpRequest, services: web::Data<Services>) -> HttpResponse {
    if let Err(refused) = check(&req, &services) {
        return *refused;
    }
    if let Some(refused) = not_in_stateless(&req) {
        return refused;
    }
    match session_of(&req, &services).await {
        Ok(transport) => {
            let _ = transport.send(End).await;
            HttpResponse::Ok().finish()
        }
        Err(refused) => *refused,
    }
}
