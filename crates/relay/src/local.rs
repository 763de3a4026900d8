//! What the relay answers by itself while no bridge is there: `initialize` (so that the
//! client starts within its timeout), empty lists, and tool errors that say why.

use std::path::PathBuf;

use serde_json::{json, Value};

use ide_bridge_protocol::mcp::{negotiate_version, InitializeResult};
use ide_bridge_protocol::methods::Method;
use ide_bridge_protocol::modern;

/// Answers in the relay's own name.
pub struct LocalAnswers {
    cwd: PathBuf,
}

pub use ide_bridge_protocol::jsonrpc::error_value as error;

/// An error response to `id` carrying `err` whole (its `data` too).
pub fn rpc_error(id: &Value, err: &ide_bridge_protocol::jsonrpc::RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": err })
}
use ide_bridge_protocol::jsonrpc::{response_value as result, METHOD_NOT_FOUND};

impl LocalAnswers {
    /// Answers for a client working in `cwd`.
    pub fn new(cwd: PathBuf) -> Self {
        Self { cwd }
    }

    /// The answer to request `method` (`msg` in full) given why no bridge is there.
    pub fn answer(&self, id: &Value, method: &str, msg: &Value, reason: &str) -> Value {
        let unknown = || {
            error(
                id,
                METHOD_NOT_FOUND,
                &format!("Method not found: {method} (no ide-bridge is connected: {reason})"),
            )
        };
        // Every method named: a new one is a decision here, not a silent -32601.
        let Some(known) = Method::parse(method) else {
            return unknown();
        };
        match known {
            Method::Initialize => {
                let asked = msg
                    .pointer("/params/protocolVersion")
                    .and_then(Value::as_str);
                let answer = InitializeResult::of_bridge(
                    negotiate_version(asked),
                    format!(
                        "ide-bridge is not serving {} yet: {reason} Its tools appear \
                         (tools/list_changed) as soon as it is.",
                        self.cwd.display()
                    ),
                );
                result(id, serde_json::to_value(answer).unwrap_or_default())
            }
            Method::Discover => result(
                id,
                modern::discover(format!(
                    "ide-bridge is not serving {} yet: {reason} Its tools appear \
                     (tools/list_changed on a subscriptions/listen stream) as soon as it is.",
                    self.cwd.display()
                )),
            ),
            Method::Ping | Method::SetLogLevel => result(id, json!({})),
            // One tool, so that a model asking for it learns why there is nothing else;
            // the bridge's real list replaces it (tools/list_changed) once it is there.
            Method::ToolsList => result(
                id,
                json!({ "tools": [{
                    "name": "getBridgeStatus",
                    "description": "Why ide-bridge's tools are not available yet, and how to start the bridge.",
                    "inputSchema": { "type": "object", "properties": {} }
                }] }),
            ),
            Method::PromptsList => result(id, json!({ "prompts": [] })),
            Method::ResourcesList => result(id, json!({ "resources": [] })),
            Method::ResourceTemplatesList => result(id, json!({ "resourceTemplates": [] })),
            Method::Complete => result(id, json!({ "completion": { "values": [] } })),
            Method::ToolsCall => result(
                id,
                json!({
                    "content": [{ "type": "text", "text": format!(
                        "No ide-bridge serves {}: {reason}",
                        self.cwd.display()
                    ) }],
                    "isError": true,
                }),
            ),
            // Nothing to get, read or subscribe to, no task or stream without a bridge.
            Method::PromptsGet
            | Method::ResourcesRead
            | Method::ResourcesSubscribe
            | Method::ResourcesUnsubscribe
            | Method::Listen
            | Method::TasksGet
            | Method::TasksUpdate
            | Method::TasksCancel => unknown(),
        }
    }
}
