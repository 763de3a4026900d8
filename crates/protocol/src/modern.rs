//! MCP 2026-07-28, the stateless revision, beside the handshake revisions: a request
//! that names its protocol version in `params._meta` is served on its own, without
//! `initialize`; its result says its `resultType` and names the server in `_meta`;
//! `server/discover` tells a client what the bridge speaks; notifications that are not
//! about one request go to the client's `subscriptions/listen` streams.
//!
//! A request without that `_meta` key is of the handshake revisions (2024-11-05 to
//! 2025-11-25) and is served as before: both eras share every transport, session, limit
//! and tool (docs/decisions.md, "Two eras of MCP").

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::jsonrpc::RpcError;
use super::mcp::{Implementation, InitializeResult, SUPPORTED_PROTOCOL_VERSIONS};

/// The stateless revision's version.
pub const VERSION: &str = "2026-07-28";
/// `_meta` key: the request's protocol version (required).
pub const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities (required, `{}` for none).
pub const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: who the client is (optional).
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of a result: who the server is.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key of a notification on a `subscriptions/listen` stream: the listen
/// request's id.
pub const SUBSCRIPTION_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// The tasks extension: a tool that waits may be answered with a task to poll.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// An HTTP header disagrees with the body (`MCP-Protocol-Version`, `Mcp-Method`,
/// `Mcp-Name`).
pub const HEADER_MISMATCH: i64 = -32020;
/// The request needs a client capability (an extension) it did not declare.
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// The request names a protocol version the bridge does not speak.
pub const UNSUPPORTED_VERSION: i64 = -32022;

/// What a stateless request says about its client.
#[derive(Debug, Clone)]
pub struct RequestMeta {
    /// Always [`VERSION`] (others are refused).
    pub version: &'static str,
    /// `clientCapabilities`, as sent.
    pub capabilities: Value,
    /// `clientInfo`, when sent.
    pub client: Option<Implementation>,
}

impl RequestMeta {
    /// The client declares `extension` in `clientCapabilities.extensions`.
    pub fn declares(&self, extension: &str) -> bool {
        self.capabilities
            .get("extensions")
            .and_then(|e| e.get(extension))
            .is_some()
    }
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a RawValue>,
}

/// Whether `params` holds [`VERSION_KEY`] anywhere: most requests do not, and are spared
/// a parse. (A finder built once: `str::contains` prepares its search anew each call,
/// on every request.)
fn names_version(params: &str) -> bool {
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(VERSION_KEY));
    FINDER.find(params.as_bytes()).is_some()
}

/// The era of a request from its params: `Ok(None)` for the handshake revisions (no
/// protocol version in `_meta`), `Ok(Some)` for the stateless one, an error for a
/// `_meta` that names a version but is malformed (-32602) or names one the bridge does
/// not speak (-32022, with the versions it does).
pub fn classify(params: Option<&RawValue>) -> Result<Option<RequestMeta>, RpcError> {
    // Most requests are of the handshake era: a substring test spares them a parse.
    let Some(raw) = params.filter(|p| names_version(p.get())) else {
        return Ok(None);
    };
    let Ok(Params { meta: Some(meta) }) = serde_json::from_str::<Params>(raw.get()) else {
        return Ok(None);
    };
    let Ok(Value::Object(meta)) = serde_json::from_str::<Value>(meta.get()) else {
        return Ok(None);
    };
    let Some(requested) = meta.get(VERSION_KEY) else {
        return Ok(None);
    };
    let Some(requested) = requested.as_str() else {
        return Err(RpcError::invalid_params(format!(
            "_meta[\"{VERSION_KEY}\"] must be a string"
        )));
    };
    if requested != VERSION {
        return Err(unsupported_version(Some(requested)));
    }
    let Some(capabilities) = meta.get(CAPABILITIES_KEY).filter(|c| c.is_object()) else {
        return Err(missing_envelope(&format!(
            "_meta[\"{CAPABILITIES_KEY}\"] (an object; {{}} for none)"
        )));
    };
    let client = meta
        .get(CLIENT_INFO_KEY)
        .and_then(|c| serde_json::from_value::<Implementation>(c.clone()).ok());
    Ok(Some(RequestMeta {
        version: VERSION,
        capabilities: capabilities.clone(),
        client,
    }))
}

/// The protocol version a request's `_meta` names, as sent.
pub fn requested_version(params: Option<&RawValue>) -> Option<String> {
    let raw = params.filter(|p| names_version(p.get()))?;
    let Params { meta } = serde_json::from_str::<Params>(raw.get()).ok()?;
    let Value::Object(meta) = serde_json::from_str::<Value>(meta?.get()).ok()? else {
        return None;
    };
    match meta.get(VERSION_KEY)? {
        Value::String(v) => Some(v.clone()),
        other => Some(other.to_string()),
    }
}

/// -32601 for a method of the handshake revisions asked in this one.
pub fn not_in_revision(method: &str) -> RpcError {
    RpcError::method_not_found(&format!(
        "{method} (not part of MCP {VERSION}: no handshake, no ping, subscriptions/listen \
         instead of resources/subscribe)"
    ))
}

/// An error as this revision words it: the handshake revisions' codes for an unknown
/// tool (-32003) and a missing resource (-32002) are -32602 here.
pub fn error_of(mut err: RpcError) -> RpcError {
    if matches!(
        err.code,
        super::jsonrpc::TOOL_NOT_FOUND | super::jsonrpc::RESOURCE_NOT_FOUND
    ) {
        err.code = super::jsonrpc::INVALID_PARAMS;
    }
    err
}

/// -32021: the request needs `extension`, which its client capabilities do not name.
pub fn missing_extension(extension: &str) -> RpcError {
    let mut err = RpcError::new(
        MISSING_CLIENT_CAPABILITY,
        format!("This request needs the {extension} extension: declare it in clientCapabilities.extensions"),
    );
    err.data = Some(json!({ "requiredCapabilities": { "extensions": { extension: {} } } }));
    err
}

/// -32602 for a request of the stateless revision that lacks part of its `_meta`.
pub fn missing_envelope(what: &str) -> RpcError {
    RpcError::invalid_params(format!(
        "Missing {what}: every MCP {VERSION} request names its protocol version and the \
         client's capabilities in params._meta"
    ))
}

/// Every version the bridge speaks, the stateless one first.
pub fn supported_versions() -> Vec<&'static str> {
    std::iter::once(VERSION)
        .chain(SUPPORTED_PROTOCOL_VERSIONS.iter().rev().copied())
        .collect()
}

/// The bridge speaks `version` (either revision).
pub fn speaks(version: &str) -> bool {
    version == VERSION || SUPPORTED_PROTOCOL_VERSIONS.contains(&version)
}

/// -32022: `requested` is not spoken here; `data` lists what is.
pub fn unsupported_version(requested: Option<&str>) -> RpcError {
    let mut err = RpcError::new(
        UNSUPPORTED_VERSION,
        format!(
            "Unsupported protocol version {}: this server speaks {}",
            requested.map_or_else(|| "(none)".to_string(), |r| format!("{r:?}")),
            supported_versions().join(", ")
        ),
    );
    err.data = Some(json!({ "supported": supported_versions(), "requested": requested }));
    err
}

/// -32020: an HTTP header says something else than the body.
pub fn header_mismatch(message: impl Into<String>) -> RpcError {
    RpcError::new(HEADER_MISMATCH, message)
}

/// Methods whose results a client may cache: they carry `ttlMs` and `cacheScope`.
fn cacheable(method: &str) -> bool {
    matches!(
        method,
        "server/discover"
            | "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
    )
}

/// A result of the stateless revision: `result` with `resultType: "complete"`, the
/// server named in `_meta`, and for the lists and reads `ttlMs: 0` (the bridge's lists
/// change with the editor and the workspace) and `cacheScope: "private"`.
pub fn complete(method: &str, result: Value) -> Value {
    let mut map = match result {
        Value::Object(map) => map,
        other => {
            let mut map = Map::new();
            map.insert("value".into(), other);
            map
        }
    };
    map.insert("resultType".into(), json!("complete"));
    if cacheable(method) {
        map.insert("ttlMs".into(), json!(0));
        map.insert("cacheScope".into(), json!("private"));
    }
    let meta = map
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(SERVER_INFO_KEY.into(), json!(server_info()));
    }
    Value::Object(map)
}

/// The bridge, as `serverInfo` names it.
pub fn server_info() -> Implementation {
    Implementation {
        name: "ide-bridge".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    }
}

/// The `server/discover` result (before [`complete`]): the versions spoken, the same
/// capabilities `initialize` advertises, and the model's `instructions`.
pub fn discover(instructions: String) -> Value {
    let legacy = InitializeResult::of_bridge(VERSION, instructions);
    let mut capabilities = legacy.capabilities;
    capabilities["extensions"] = json!({ TASKS_EXTENSION: {} });
    json!({
        "supportedVersions": supported_versions(),
        "capabilities": capabilities,
        "instructions": legacy.instructions,
    })
}

/// `subscriptions/listen` params: which notifications the client wants on this stream.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListenFilter {
    #[serde(default)]
    pub tools_list_changed: bool,
    #[serde(default)]
    pub prompts_list_changed: bool,
    #[serde(default)]
    pub resources_list_changed: bool,
    /// URIs of resources to be told about when they change.
    #[serde(default)]
    pub resource_subscriptions: Vec<String>,
}

#[derive(Deserialize)]
pub struct ListenParams {
    #[serde(default)]
    pub notifications: ListenFilter,
}

/// The notification that opens a listen stream: what of `asked` is honoured. Prompts
/// and resources lists never change here, so only the tools list and resource
/// subscriptions are.
pub fn acknowledged(subscription: &Value, asked: &ListenFilter, honoured_uris: &[String]) -> Value {
    let mut notifications = Map::new();
    if asked.tools_list_changed {
        notifications.insert("toolsListChanged".into(), json!(true));
    }
    if !honoured_uris.is_empty() {
        notifications.insert("resourceSubscriptions".into(), json!(honoured_uris));
    }
    json!({
        "_meta": { SUBSCRIPTION_KEY: subscription },
        "notifications": notifications,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_string()).unwrap()
    }

    #[test]
    fn requests_are_stateless_only_when_their_meta_names_a_version() {
        let legacy = params(r#"{"name":"x","arguments":{"_meta":1}}"#);
        assert!(classify(Some(&legacy)).unwrap().is_none());
        assert!(classify(None).unwrap().is_none());
        let modern = params(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                "io.modelcontextprotocol/clientCapabilities":{},
                "io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}"#,
        );
        let meta = classify(Some(&modern)).unwrap().unwrap();
        assert_eq!(meta.client.unwrap().name, "c");
        let old = params(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01",
                "io.modelcontextprotocol/clientCapabilities":{}}}"#,
        );
        let err = classify(Some(&old)).unwrap_err();
        assert_eq!(err.code, UNSUPPORTED_VERSION);
        assert_eq!(err.data.unwrap()["requested"], "1900-01-01");
        let no_caps =
            params(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#);
        assert_eq!(classify(Some(&no_caps)).unwrap_err().code, -32602);
    }

    #[test]
    fn complete_results_name_their_type_the_server_and_cacheability() {
        let listed = complete("tools/list", json!({"tools": [], "_meta": {"k": 1}}));
        assert_eq!(listed["resultType"], "complete");
        assert_eq!(listed["ttlMs"], 0);
        assert_eq!(listed["cacheScope"], "private");
        assert_eq!(listed["_meta"]["k"], 1);
        assert_eq!(listed["_meta"][SERVER_INFO_KEY]["name"], "ide-bridge");
        let called = complete("tools/call", json!({"content": []}));
        assert!(called.get("ttlMs").is_none());
        assert_eq!(supported_versions()[0], VERSION);
    }
}
