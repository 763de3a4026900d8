//! What a session tells about itself (`/status`) and what it tells its agent:
//! log messages filtered by each connection's level, editor events, list changes.

use actix::prelude::*;
use serde_json::{json, Value};

use super::connection::Connection;
use super::Session;
use crate::actors::messages::session::{
    AgentLog, ConnectionKind, Describe, NotifyListChanged, SendNotification, SessionInfo,
};
use crate::protocol::jsonrpc;
use crate::protocol::mcp::{Implementation, LogLevel, LogMessageParams};

impl Session {
    /// Sends `notifications/message` to every connection whose filter passes `level`.
    pub(super) fn log(&self, level: LogLevel, data: Value) {
        let mut text = None;
        for conn in &self.conns {
            if conn.mcp.initialized && level >= conn.mcp.log_level {
                let text = text.get_or_insert_with(|| {
                    jsonrpc::notification(
                        crate::protocol::methods::Notification::Message.name(),
                        &LogMessageParams {
                            level,
                            logger: "ide-bridge",
                            data: &data,
                        },
                    )
                });
                conn.outbound.send_text(text.clone());
            }
        }
    }

    fn describe(&self) -> SessionInfo {
        // The IDE connection names the agent when there is one.
        let main = self
            .conns
            .iter()
            .filter(|c| c.mcp.initialized)
            .min_by_key(|c| c.kind != ConnectionKind::Ide);
        SessionInfo {
            id: self.id.clone(),
            connected: !self.conns.is_empty(),
            in_grace: self.grace_timer.is_some(),
            initialized: main.is_some(),
            opened_files: self.opened_files.len(),
            active_tool_calls: self.in_flight.len(),
            client: main
                .and_then(|c| c.mcp.client.as_ref().map(Implementation::label))
                .or_else(|| self.last_client.as_ref().map(|l| l.client.label())),
            client_pid: self.client_pid,
            protocol_version: main
                .and_then(|c| c.mcp.protocol_version)
                .or_else(|| self.last_client.as_ref().and_then(|l| l.version)),
            connections: self.conns.iter().map(Connection::info).collect(),
            terminal_prefix: self.terminal_prefix.to_string(),
            created_at: self.created_at.clone(),
            unresponsive: false,
        }
    }

    /// Sends an editor event (`selection_changed`, `at_mentioned`) to the agent's IDE
    /// connections, where Claude Code listens for them.
    fn notify(&self, method: &str, params: &Value) {
        // The IDE protocol's notifications: a model-facing MCP client knows none of
        // them (its SDK would log each as an invalid message).
        let ide = |c: &&Connection| c.mcp.initialized && c.kind == ConnectionKind::Ide;
        let text = jsonrpc::notification(method, params);
        for conn in self.conns.iter().filter(ide) {
            conn.outbound.send_text(text.clone());
        }
    }
}

impl Handler<Describe> for Session {
    type Result = MessageResult<Describe>;
    fn handle(&mut self, _: Describe, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.describe())
    }
}

impl Handler<NotifyListChanged> for Session {
    type Result = bool;
    fn handle(&mut self, _: NotifyListChanged, _: &mut Context<Self>) -> bool {
        let text = jsonrpc::notification(
            crate::protocol::methods::Notification::ToolsListChanged.name(),
            &json!({}),
        );
        let mut delivered = false;
        for conn in self.conns.iter_mut() {
            if conn.mcp.initialized {
                delivered |= conn.outbound.send_text(text.clone());
            }
            conn.listeners.retain(|l| !l.outbound.is_closed());
            for listener in conn.listeners.iter().filter(|l| l.tools) {
                delivered |= listener.send(
                    crate::protocol::methods::Notification::ToolsListChanged.name(),
                    json!({}),
                );
            }
        }
        delivered
    }
}

impl Handler<AgentLog> for Session {
    type Result = ();
    fn handle(&mut self, msg: AgentLog, _: &mut Context<Self>) {
        // An automation notice also waits for the agent's next tool call, where the
        // model reads it even when the client does not show log notifications.
        if msg.data["event"] == "automation_notice" {
            self.awareness.note(format!(
                "ide-bridge automation ({}): {}",
                msg.data["hook"].as_str().unwrap_or("notify"),
                msg.data["message"].as_str().unwrap_or("")
            ));
        } else if let Some(note) = msg.data["note"].as_str() {
            self.awareness.note(note.to_string());
        }
        self.log(msg.level, msg.data);
    }
}

impl Handler<SendNotification> for Session {
    type Result = ();
    fn handle(&mut self, msg: SendNotification, _: &mut Context<Self>) {
        self.notify(msg.method, &msg.params);
    }
}

impl Handler<crate::actors::messages::watch::WorkspaceChanged> for Session {
    type Result = ();
    /// Tells each connection that subscribed to a changed file
    /// (`notifications/resources/updated`, with the URI it subscribed with).
    fn handle(
        &mut self,
        msg: crate::actors::messages::watch::WorkspaceChanged,
        _: &mut Context<Self>,
    ) {
        use crate::actors::messages::watch::ChangeKind;
        let root = self.services.workspace.root();
        let watching = |c: &&Connection| {
            !c.subscriptions.is_empty() || c.listeners.iter().any(|l| !l.files.is_empty())
        };
        for conn in self.conns.iter().filter(watching) {
            for change in msg.changes.iter() {
                let from = match &change.kind {
                    ChangeKind::Renamed { from } => Some(from.as_str()),
                    _ => None,
                };
                for path in std::iter::once(change.path.as_str()).chain(from) {
                    let path = root.join(path);
                    if let Some(uri) = conn.subscriptions.get(&path) {
                        conn.outbound.send_text(jsonrpc::notification(
                            crate::protocol::methods::Notification::ResourcesUpdated.name(),
                            &json!({ "uri": uri }),
                        ));
                    }
                    for listener in &conn.listeners {
                        if let Some(uri) = listener.files.get(&path) {
                            listener.send(
                                crate::protocol::methods::Notification::ResourcesUpdated.name(),
                                json!({ "uri": uri }),
                            );
                        }
                    }
                }
            }
        }
    }
}
