//! One connection of an agent: how it arrived, where its notifications go, and its own
//! MCP handshake state. A Claude Code process reaches the bridge twice (its IDE
//! WebSocket and its `ide-bridge mcp` relay); both are connections of one Session.

use actix::Recipient;
use serde::Serialize;

use super::messages::{Generation, Rebind};
use crate::actors::outbound::Outbound;
use crate::protocol::mcp::{Implementation, LogLevel};

/// How an agent reached the bridge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ConnectionKind {
    /// A WebSocket with the IDE token header: Claude Code's IDE connection (and any
    /// client speaking that protocol). Sees every tool.
    Ide,
    /// A WebSocket from an `ide-bridge mcp` stdio relay: a model-facing MCP server.
    Relay,
    /// Streamable HTTP at `/mcp`: a model-facing MCP server.
    Http,
}

impl ConnectionKind {
    /// True for connections whose tools a model sees directly; `tools.expose` narrows
    /// what they list and may call.
    pub fn model_facing(self) -> bool {
        !matches!(self, ConnectionKind::Ide)
    }
}

/// The MCP handshake state of one connection.
#[derive(Debug, Clone)]
pub struct McpState {
    /// `initialize` was answered.
    pub initialized: bool,
    /// Minimum level of `notifications/message` the client wants.
    pub log_level: LogLevel,
    /// Who the client is.
    pub client: Option<Implementation>,
    /// Negotiated protocol version.
    pub protocol_version: Option<&'static str>,
}

impl Default for McpState {
    fn default() -> Self {
        Self {
            initialized: false,
            log_level: LogLevel::Warning,
            client: None,
            protocol_version: None,
        }
    }
}

/// A live connection of a session.
pub struct Connection {
    /// Identifies the transport.
    pub generation: Generation,
    /// How it arrived.
    pub kind: ConnectionKind,
    /// Where notifications go.
    pub outbound: Outbound,
    /// The transport, for handing the connection to another session.
    pub transport: Recipient<Rebind>,
    /// Its handshake state.
    pub mcp: McpState,
}

impl Connection {
    /// What `/status` shows about it.
    pub fn info(&self) -> ConnectionInfo {
        ConnectionInfo {
            kind: self.kind,
            initialized: self.mcp.initialized,
            client: self.mcp.client.as_ref().map(Implementation::label),
            protocol_version: self.mcp.protocol_version,
        }
    }
}

/// What `/status` shows about one connection.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionInfo {
    /// How it arrived.
    pub kind: ConnectionKind,
    /// `initialize` answered.
    pub initialized: bool,
    /// Client name and version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Negotiated MCP version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<&'static str>,
}
