//! actix-web routes on the bridge's port: the WebSocket upgrade at `/`, streamable
//! HTTP MCP at `/mcp`, and `/health`, `/status`, `/metrics`, `/activity/stream`.

mod body;
pub mod conn;
mod cors;
pub mod guard;
mod hooks;
pub mod mcp;
mod routes;
pub mod ui;
mod upgrade;

use actix_web::web;

pub use crate::protocol::headers::{
    AGENT_AUTH_HEADER, CLIENT_HEADER, EDITOR_AUTH_HEADER, IGNORED_HEADER, RELAY_HEADER,
    SESSION_ANCHOR_HEADER, TASK_HEADER,
};

/// Registers every route.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(upgrade::upgrade))
        .service(one_method("/health", "GET", web::get().to(routes::health)))
        .service(one_method("/status", "GET", web::get().to(routes::status)))
        .service(one_method(
            "/metrics",
            "GET",
            web::get().to(routes::metrics),
        ))
        .service(one_method(
            "/activity/stream",
            "GET",
            web::get().to(routes::activity_stream),
        ))
        .service(one_method(
            crate::hooks::client::PATH,
            "POST",
            web::post().to(hooks::post),
        ))
        .service(
            web::resource("/mcp")
                .wrap(actix_web::middleware::from_fn(cors::headers))
                .route(web::post().to(mcp::post))
                .route(web::get().to(mcp::get))
                .route(web::delete().to(mcp::delete))
                .route(web::method(actix_web::http::Method::OPTIONS).to(cors::preflight))
                .default_service(web::to(routes::mcp_method_not_allowed)),
        )
        .configure(ui::configure)
        .default_service(web::to(routes::not_found));
}

/// `path` served by `route` (of the one `method`); another method is a 405 naming it,
/// not "no route".
fn one_method(path: &str, method: &'static str, route: actix_web::Route) -> actix_web::Resource {
    web::resource(path).route(route).default_service(web::to(
        move |req: actix_web::HttpRequest| async move { routes::method_not_allowed(&req, method) },
    ))
}
