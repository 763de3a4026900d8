//! `/health` (unauthenticated liveness), `/status` and `/metrics` (bearer token).

use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::json;

use super::guard::{check_bearer, check_host_and_origin, Rejection};
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

/// Anything else: 404 with a hint.
pub async fn not_found(req: HttpRequest) -> HttpResponse {
    HttpResponse::NotFound().json(json!({
        "error": format!("No route for {} {}", req.method(), req.path()),
        "routes": ["GET / (WebSocket)", "GET /health", "GET /status", "GET /metrics"],
    }))
}
