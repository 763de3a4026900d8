//! `/health` (unauthenticated liveness), `/status` and `/metrics` (bearer token).

use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::json;

use super::guard::{check_bearer, check_host_and_origin, Rejection};
use crate::actors::activity_log::Subscribe;
use crate::services::Services;

/// `GET /health`: status, version, uptime.
pub async fn health(
    req: HttpRequest,
    services: web::Data<Services>,
) -> Result<HttpResponse, Rejection> {
    check_host_and_origin(&req, &services.settings)?;
    Ok(HttpResponse::Ok().json(json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "uptimeSeconds": services.started.elapsed().as_secs(),
    })))
}

/// `GET /status`: JSON status (bearer token).
pub async fn status(
    req: HttpRequest,
    services: web::Data<Services>,
) -> Result<HttpResponse, Rejection> {
    check_host_and_origin(&req, &services.settings)?;
    check_bearer(&req, &services.auth_token)?;
    Ok(match crate::status::collect(&services).await {
        Ok(status) => HttpResponse::Ok().json(status),
        Err(fault) => {
            HttpResponse::ServiceUnavailable().json(json!({ "error": fault.to_string() }))
        }
    })
}

/// `GET /metrics`: Prometheus text (bearer token).
pub async fn metrics(
    req: HttpRequest,
    services: web::Data<Services>,
) -> Result<HttpResponse, Rejection> {
    check_host_and_origin(&req, &services.settings)?;
    check_bearer(&req, &services.auth_token)?;
    Ok(HttpResponse::Ok()
        .content_type("application/openmetrics-text; version=1.0.0; charset=utf-8")
        .body(services.metrics.encode()))
}

/// Keep-alive comment interval on the event stream.
const STREAM_KEEPALIVE: std::time::Duration = std::time::Duration::from_secs(15);

/// `GET /activity/stream`: new timeline entries as server-sent events (bearer token).
/// Subscribers are bounded; one that does not keep up is dropped.
pub async fn activity_stream(
    req: HttpRequest,
    services: web::Data<Services>,
) -> Result<HttpResponse, Rejection> {
    check_host_and_origin(&req, &services.settings)?;
    check_bearer(&req, &services.auth_token)?;
    let rx = match services
        .activity
        .send(Subscribe {
            socket: crate::http::conn::socket_of(&req),
        })
        .await
    {
        Ok(Ok(Some(rx))) => rx,
        Ok(Ok(None)) => {
            return Ok(HttpResponse::ServiceUnavailable().json(json!({
                "error": format!(
                    "Too many activity stream subscribers (max {})",
                    services.settings.activity.max_stream_subscribers
                )
            })))
        }
        _ => {
            return Ok(HttpResponse::ServiceUnavailable()
                .json(json!({ "error": "the activity log is restarting; retry" })))
        }
    };
    let events = futures_util::stream::unfold(rx, |mut rx| async move {
        let chunk = match tokio::time::timeout(STREAM_KEEPALIVE, rx.recv()).await {
            Ok(Some(line)) => format!("data: {line}\n\n"),
            Ok(None) => return None,
            Err(_) => ": keep-alive\n\n".to_string(),
        };
        Some((Ok::<_, actix_web::Error>(web::Bytes::from(chunk)), rx))
    });
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .streaming(events))
}

/// Anything else: 404 with a hint.
pub async fn not_found(req: HttpRequest) -> HttpResponse {
    HttpResponse::NotFound().json(json!({
        "error": format!("No route for {} {}", req.method(), req.path()),
        "routes": ["GET / (WebSocket)", "POST|GET|DELETE /mcp (streamable HTTP MCP)", "GET /health", "GET /status", "GET /metrics", "GET /activity/stream", "POST /hooks", "GET /ui/ (the browser page: `ide-bridge open` signs in)"],
    }))
}

/// 405 for a method other than `allow`, the one the route takes, as JSON like every
/// error.
pub fn method_not_allowed(req: &HttpRequest, allow: &'static str) -> HttpResponse {
    HttpResponse::MethodNotAllowed()
        .insert_header(("Allow", allow))
        .json(json!({
            "error": format!("{} {} is not served: use {allow}", req.method(), req.path()),
        }))
}

/// Another method on `/mcp`: 405 naming the ones it takes, as JSON like every error.
pub async fn mcp_method_not_allowed(req: HttpRequest) -> HttpResponse {
    HttpResponse::MethodNotAllowed()
        .insert_header(("Allow", "POST, GET, DELETE, OPTIONS"))
        .json(json!({
            "error": format!("{} is not a method of /mcp: POST a JSON-RPC message, GET the server's stream, DELETE the session", req.method()),
        }))
}
