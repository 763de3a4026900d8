//! One connection of an agent: how it arrived, where its notifications go, and its own
//! MCP handshake state. A Claude Code process reaches the bridge twice (its IDE
//! WebSocket and its `ide-bridge mcp` relay); both are connections of one Session.

use actix::Recipient;

use crate::actors::messages::connection::Generation;
use crate::actors::messages::session::{
    Activity, ConnectionInfo, ConnectionKind, Listener, McpState, Rebind,
};
use crate::actors::outbound::Outbound;
use crate::protocol::mcp::Implementation;

/// A live connection of a session.
pub struct Connection {
    /// Identifies the transport.
    pub generation: Generation,
    /// How it arrived.
    pub kind: ConnectionKind,
    /// Where notifications go (for HTTP: the GET stream, if any).
    pub outbound: Outbound,
    /// The transport, for handing the connection to another session.
    pub transport: Recipient<Rebind>,
    /// Its handshake state.
    pub mcp: McpState,
    /// What it is doing (HTTP connections report it; others are always busy).
    pub activity: Activity,
    /// Files it subscribed to (`resources/subscribe`), each with the URI it gave.
    pub subscriptions: std::collections::HashMap<std::path::PathBuf, String>,
    /// Its open `subscriptions/listen` streams (MCP 2026-07-28).
    pub listeners: Vec<Listener>,
}

/// `subscriptions/listen` streams one connection may keep open.
pub const MAX_LISTENERS: usize = 16;

impl Connection {
    /// What `/status` shows about it.
    pub fn info(&self) -> ConnectionInfo {
        ConnectionInfo {
            kind: self.kind,
            initialized: self.mcp.initialized || self.mcp.stateless,
            client: self.mcp.client.as_ref().map(Implementation::label),
            protocol_version: self.mcp.protocol_version,
        }
    }
}
