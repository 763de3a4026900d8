//! CORS for `/mcp`, for browser-based MCP clients (the MCP Inspector's page) served from
//! an origin the person listed in `server.allowed_origins`: their preflight (`OPTIONS`)
//! is answered, and the answers name the origin and expose `Mcp-Session-Id`. With no
//! origin listed (the default) a browser gets 403 before any of this, from the guard.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{web, HttpRequest, HttpResponse};

use super::guard::{check_host_and_origin, Rejection};
use crate::services::Services;

/// What a browser client may send.
const ALLOW_HEADERS: &str =
    "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id";
/// What it may read of an answer.
const EXPOSE_HEADERS: &str = "mcp-session-id, mcp-protocol-version";

/// The allowed `Origin` of a request, when it carries one.
fn allowed_origin(req: &HttpRequest, services: &Services) -> Option<HeaderValue> {
    let origin = req.headers().get("origin")?;
    let text = origin.to_str().ok()?;
    services
        .settings
        .server
        .allowed_origins
        .iter()
        .any(|o| o == text)
        .then(|| origin.clone())
}

/// `OPTIONS /mcp`: a browser's preflight, answered for an allowed origin (403 otherwise).
pub async fn preflight(
    req: HttpRequest,
    services: web::Data<Services>,
) -> Result<HttpResponse, Rejection> {
    check_host_and_origin(&req, &services.settings)?;
    let Some(origin) = allowed_origin(&req, &services) else {
        return Err(Rejection::Forbidden(
            "A preflight must come from an origin in server.allowed_origins".into(),
        ));
    };
    Ok(HttpResponse::NoContent()
        .insert_header(("Access-Control-Allow-Origin", origin))
        .insert_header(("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS"))
        .insert_header(("Access-Control-Allow-Headers", ALLOW_HEADERS))
        .insert_header(("Access-Control-Max-Age", "600"))
        .insert_header(("Vary", "Origin"))
        .finish())
}

/// Adds the CORS headers to every `/mcp` answer to an allowed origin.
pub async fn headers(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let origin = req
        .app_data::<web::Data<Services>>()
        .and_then(|s| allowed_origin(req.request(), s));
    let mut res = next.call(req).await?.map_into_boxed_body();
    if let Some(origin) = origin {
        let h = res.headers_mut();
        h.insert(
            HeaderName::from_static("access-control-allow-origin"),
            origin,
        );
        h.insert(
            HeaderName::from_static("access-control-expose-headers"),
            HeaderValue::from_static(EXPOSE_HEADERS),
        );
        h.insert(
            HeaderName::from_static("vary"),
            HeaderValue::from_static("Origin"),
        );
    }
    Ok(res)
}
