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

/// Header carrying the token on agent (Claude Code) connections.
pub const AGENT_AUTH_HEADER: &str = "x-claude-code-ide-authorization";
/// Header carrying the token on editor extension connections.
pub const EDITOR_AUTH_HEADER: &str = "x-claude-ide-extension";
/// Header an agent sends to reattach to its session.
pub const SESSION_ANCHOR_HEADER: &str = "x-claude-code-session-id";
/// Header an `ide-bridge mcp` relay sends: its parent process (the MCP client) and
/// that one's ancestors, nearest first, comma-separated.
pub const RELAY_HEADER: &str = "x-ide-bridge-relay";
/// Header `ide-bridge hook` sends: the agent's process (`$CLAUDE_PID` when the CLI sets
/// it) and the hook's parent chain, nearest first, comma-separated.
pub const CLIENT_HEADER: &str = "x-ide-bridge-client";
/// Header `ide-bridge hook` sends when it runs inside a Claude task the bridge started:
/// the task's id.
pub const TASK_HEADER: &str = "x-ide-bridge-task";

/// Registers every route.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(upgrade::upgrade))
        .route("/health", web::get().to(routes::health))
        .route("/status", web::get().to(routes::status))
        .route("/metrics", web::get().to(routes::metrics))
        .route("/activity/stream", web::get().to(routes::activity_stream))
        .route(crate::hooks::client::PATH, web::post().to(hooks::post))
        .service(
            web::resource("/mcp")
                .wrap(actix_web::middleware::from_fn(cors::headers))
                .route(web::post().to(mcp::post))
                .route(web::get().to(mcp::get))
                .route(web::delete().to(mcp::delete))
                .route(web::method(actix_web::http::Method::OPTIONS).to(cors::preflight)),
        )
        .configure(ui::configure)
        .default_service(web::to(routes::not_found));
}
