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
    AGENT_AUTH_HEADER, CLIENT_HEADER, EDITOR_AUTH_HEADER, RELAY_HEADER, SESSION_ANCHOR_HEADER,
    TASK_HEADER,
};

/// Registers every route.
pub fn configure(cfg: &mut web::ServiceConfig) {
    // Another method on a route of one method: 405 naming the one (not "no route").
    let only = |method: &'static str| {
        web::to(move |req: actix_web::HttpRequest| async move {
            routes::method_not_allowed(&req, method)
        })
    };
    cfg.route("/", web::get().to(upgrade::upgrade))
        .service(
            web::resource("/health")
                .route(web::get().to(routes::health))
                .default_service(only("GET")),
        )
        .service(
            web::resource("/status")
                .route(web::get().to(routes::status))
                .default_service(only("GET")),
        )
        .service(
            web::resource("/metrics")
                .route(web::get().to(routes::metrics))
                .default_service(only("GET")),
        )
        .service(
            web::resource("/activity/stream")
                .route(web::get().to(routes::activity_stream))
                .default_service(only("GET")),
        )
        .service(
            web::resource(crate::hooks::client::PATH)
                .route(web::post().to(hooks::post))
                .default_service(only("POST")),
        )
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
