//! JSON-RPC 2.0 envelope: classification of incoming frames and serialisation of
//! outgoing responses, errors and notifications.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// Batch, not initialized, duplicate in-flight id, or not a JSON-RPC object.
pub const INVALID_REQUEST: i64 = -32600;
/// Unknown method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Arguments not an object, too large, or failing the tool's JSON Schema.
pub const INVALID_PARAMS: i64 = -32602;
/// A failure inside the bridge that is not the caller's fault.
pub const INTERNAL_ERROR: i64 = -32603;
/// A resource that does not exist (MCP 2025-11-25; the stateless revision says -32602).
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// `tools/call` named a tool that is not registered.
pub const TOOL_NOT_FOUND: i64 = -32003;
/// The per-connection request rate limit was exceeded.
pub const RATE_LIMITED: i64 = -32004;
/// The client cancelled the request (`notifications/cancelled`); only answered where a
/// transport needs an answer to end the request (a JSON response to an HTTP POST).
pub const REQUEST_CANCELLED: i64 = -32800;

/// A request id: echoed back exactly as the client sent it. Both kinds share their
/// text, so a clone (the in-flight map's key, the answer's id) allocates nothing.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// Numeric id (the Claude Code CLI counts from 0), kept as the JSON text sent.
    Number(NumberId),
    /// String id.
    String(Arc<str>),
}

/// A numeric request id as the exact JSON text sent: `1e2`, `-0` and
/// `18446744073709551616` come back unchanged, where a parsed number would be
/// re-encoded (`100.0`, `-0.0`, `1.8446744073709552e19`). Two ids are the same when
/// their text is (`1` and `1.0` are different ids). A plain unsigned integer (JSON has
/// one text for it: no sign, leading zero, fraction or exponent), what clients send
/// nearly always, is kept as the number, without an allocation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NumberId(NumberText);

#[derive(Debug, Clone)]
enum NumberText {
    Plain(u64),
    /// Any other number, as sent (its text is never a plain integer's, so the two
    /// kinds never hold the same id).
    Raw(Arc<RawValue>),
}

impl NumberId {
    /// The id in a JSON number's text.
    fn of(raw: &RawValue) -> Self {
        let text = raw.get();
        match text.parse::<u64>() {
            Ok(n) if text.bytes().all(|b| b.is_ascii_digit()) => NumberId(NumberText::Plain(n)),
            _ => NumberId(NumberText::Raw(Arc::from(raw.to_owned()))),
        }
    }

    /// The id as an unsigned integer, when its text is one (ids the bridge sends).
    pub fn as_u64(&self) -> Option<u64> {
        match &self.0 {
            NumberText::Plain(n) => Some(*n),
            NumberText::Raw(_) => None,
        }
    }
}

impl From<u64> for NumberId {
    fn from(n: u64) -> Self {
        NumberId(NumberText::Plain(n))
    }
}

impl PartialEq for NumberText {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (NumberText::Plain(a), NumberText::Plain(b)) => a == b,
            (NumberText::Raw(a), NumberText::Raw(b)) => a.get() == b.get(),
            _ => false,
        }
    }
}

impl Eq for NumberText {}

impl std::hash::Hash for NumberText {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            NumberText::Plain(n) => n.hash(state),
            NumberText::Raw(raw) => raw.get().hash(state),
        }
    }
}

impl fmt::Display for NumberId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            NumberText::Plain(n) => write!(f, "{n}"),
            NumberText::Raw(raw) => f.write_str(raw.get()),
        }
    }
}

impl Serialize for NumberId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            NumberText::Plain(n) => s.serialize_u64(*n),
            NumberText::Raw(raw) => raw.serialize(s),
        }
    }
}

/// Why a raw `id` is not a request id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Request id must be a string or a number")]
pub struct BadId;

impl RequestId {
    /// Appends the id's JSON text to `out`, as its `Serialize` writes it.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            RequestId::String(text) => crate::escape::write_str(out, text),
            RequestId::Number(NumberId(NumberText::Plain(n))) => crate::escape::write_u64(out, *n),
            RequestId::Number(NumberId(NumberText::Raw(raw))) => {
                out.extend_from_slice(raw.get().as_bytes())
            }
        }
    }

    /// The id in `raw` (any JSON value): a string or a number (kept as sent), `None`
    /// for `null`, [`BadId`] for anything else.
    pub fn from_raw(raw: &RawValue) -> Result<Option<RequestId>, BadId> {
        match raw.get().as_bytes().first() {
            Some(b'"') => serde_json::from_str::<std::borrow::Cow<str>>(raw.get())
                .map(|s| Some(RequestId::String(Arc::from(s))))
                .map_err(|_| BadId),
            Some(b'-' | b'0'..=b'9') => Ok(Some(RequestId::Number(NumberId::of(raw)))),
            Some(b'n') => Ok(None),
            _ => Err(BadId),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => n.serialize(s),
            RequestId::String(text) => text.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        match RequestId::from_raw(&raw) {
            Ok(Some(id)) => Ok(id),
            Ok(None) | Err(_) => Err(serde::de::Error::custom(BadId)),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => fmt::Display::fmt(n, f),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// One of the error code constants in this module.
    pub code: i64,
    /// Human readable description.
    pub message: String,
    /// Optional structured detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// Builds an error with a code and message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }
    /// -32700.
    pub fn parse(detail: impl fmt::Display) -> Self {
        Self::new(PARSE_ERROR, format!("Parse error: {detail}"))
    }
    /// -32600.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(INVALID_REQUEST, message)
    }
    /// -32601.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }
    /// -32602.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }
    /// -32603.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }
    /// -32800.
    pub fn cancelled() -> Self {
        Self::new(REQUEST_CANCELLED, "Request cancelled by the client")
    }
}

/// The envelope as received, before classification. Params stay raw so that their
/// size can be checked before they are parsed.
#[derive(Deserialize)]
struct Envelope<'a> {
    /// Borrowed from the frame: only compared.
    #[serde(borrow)]
    jsonrpc: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    method: Option<String>,
    params: Option<Box<RawValue>>,
    /// `"result": null` (an editor's "nothing here") is a result, not a missing one.
    #[serde(default, deserialize_with = "present_boxed")]
    result: Option<Box<RawValue>>,
    error: Option<Box<RawValue>>,
}

/// Distinguishes `"id": null` (Some(raw `null`)) from a missing id (None), and keeps
/// the id's text so that numbers are echoed exactly.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// A member that is there, whatever its value (`null` included); `None` when missing.
fn present_boxed<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Box<RawValue>>, D::Error> {
    Box::<RawValue>::deserialize(d).map(Some)
}

/// One classified incoming frame.
#[derive(Debug)]
pub enum Incoming {
    /// A request that expects a response.
    Request(Request),
    /// A notification (no id).
    Notification {
        /// Method name.
        method: String,
        /// Raw params, if any.
        params: Option<Box<RawValue>>,
    },
    /// A response to a request the bridge sent (to the editor).
    Response {
        /// The id being answered.
        id: Option<RequestId>,
        /// `result`, raw.
        result: Option<Box<RawValue>>,
        /// `error`, raw.
        error: Option<Box<RawValue>>,
    },
    /// A frame that must be answered with an error and otherwise ignored.
    Invalid {
        /// The id to answer with (null when unknown).
        id: Option<RequestId>,
        /// The error to send.
        error: RpcError,
    },
}

/// A JSON-RPC request.
#[derive(Debug, Clone)]
pub struct Request {
    /// The id to echo.
    pub id: RequestId,
    /// Method name.
    pub method: String,
    /// Raw params, if any.
    pub params: Option<Box<RawValue>>,
}

/// Classifies one text frame. Never fails: malformed input becomes [`Incoming::Invalid`].
pub fn classify(text: &str) -> Incoming {
    let env: Envelope = match serde_json::from_str(text) {
        Ok(env) => env,
        Err(err) => return classify_failure(text, err),
    };
    let id = match env.id.map(RequestId::from_raw) {
        None => None,
        Some(Ok(Some(id))) => Some(id),
        Some(Ok(None)) if env.method.is_none() => None,
        Some(Ok(None) | Err(BadId)) => {
            return Incoming::Invalid {
                id: None,
                error: RpcError::invalid_request(BadId.to_string()),
            }
        }
    };
    if env.jsonrpc.as_deref() != Some("2.0") {
        return Incoming::Invalid {
            id,
            error: RpcError::invalid_request("Invalid Request: \"jsonrpc\" must be \"2.0\""),
        };
    }
    match (env.method, id) {
        (Some(method), Some(id)) => Incoming::Request(Request {
            id,
            method,
            params: env.params,
        }),
        (Some(method), None) => Incoming::Notification {
            method,
            params: env.params,
        },
        (None, id) if env.result.is_some() || env.error.is_some() => Incoming::Response {
            id,
            result: env.result,
            error: env.error,
        },
        (None, id) => Incoming::Invalid {
            id,
            error: RpcError::invalid_request("Invalid Request: missing \"method\""),
        },
    }
}

fn classify_failure(text: &str, err: serde_json::Error) -> Incoming {
    match serde_json::from_str::<Value>(text) {
        Err(parse) => Incoming::Invalid {
            id: None,
            error: RpcError::parse(parse),
        },
        Ok(Value::Array(_)) => Incoming::Invalid {
            id: None,
            error: RpcError::invalid_request(
                "Batch requests are not supported: send one JSON-RPC message per frame",
            ),
        },
        Ok(Value::Object(_)) => Incoming::Invalid {
            id: None,
            error: RpcError::invalid_request(format!("Invalid Request: {err}")),
        },
        Ok(_) => Incoming::Invalid {
            id: None,
            error: RpcError::invalid_request("Invalid Request: expected a JSON object"),
        },
    }
}

#[derive(Serialize)]
struct ResponseOut<'a, T: Serialize> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a T,
}

#[derive(Serialize)]
struct ErrorOut<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RequestId>,
    error: &'a RpcError,
}

#[derive(Serialize)]
struct NotificationOut<'a, T: Serialize> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a T,
}

/// Serialises a success response.
pub fn response<T: Serialize>(id: &RequestId, result: &T) -> String {
    to_string(&ResponseOut {
        jsonrpc: "2.0",
        id,
        result,
    })
}

/// Serialises the response to a `tools/call`: the text [`response`] gives, written
/// directly — escaping a tool's text is the costliest step of a cheap call, and
/// [`crate::escape::write_str`] finds what to escape a word at a time where
/// `serde_json` looks at every byte — into a buffer sized from the result (not grown
/// several times while the text is escaped into it). Not generic, so that it is
/// compiled with this crate's optimisation (level 3 in release builds, where the rest
/// of the bridge is optimised for size). The field order is `CallToolResult`'s
/// declaration's; a test holds the two texts equal.
pub fn tool_call_response(id: &RequestId, result: &crate::mcp::CallToolResult) -> String {
    use crate::escape::write_str;
    use crate::mcp::Content;
    let mut out = Vec::with_capacity(result.encoded_len_hint());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    id.write_json(&mut out);
    out.extend_from_slice(br#","result":{"content":["#);
    for (i, item) in result.content.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match item {
            Content::Text { text } => {
                out.extend_from_slice(br#"{"type":"text","text":"#);
                write_str(&mut out, text);
            }
            Content::Image { data, mime_type } => {
                out.extend_from_slice(br#"{"type":"image","data":"#);
                write_str(&mut out, data);
                out.extend_from_slice(br#","mimeType":"#);
                write_str(&mut out, mime_type);
            }
        }
        out.push(b'}');
    }
    out.push(b']');
    if result.is_error {
        out.extend_from_slice(br#","isError":true"#);
    }
    if let Some(structured) = &result.structured_content {
        out.extend_from_slice(br#","structuredContent":"#);
        // A `Value` always serialises (its map keys are strings).
        let _ = serde_json::to_writer(&mut out, structured);
    }
    out.extend_from_slice(b"}}");
    debug_assert!(std::str::from_utf8(&out).is_ok());
    // SAFETY: every piece above is UTF-8: ASCII literals, `write_str`'s escaped copies
    // of `str`s, the id's JSON text and `serde_json`'s text of a `Value`.
    unsafe { String::from_utf8_unchecked(out) }
}

/// Serialises an error response (`id: null` when the id is unknown).
pub fn error_response(id: Option<&RequestId>, error: &RpcError) -> String {
    to_string(&ErrorOut {
        jsonrpc: "2.0",
        id,
        error,
    })
}

#[derive(Serialize)]
struct RequestOut<'a, T: Serialize> {
    jsonrpc: &'static str,
    id: u64,
    method: &'a str,
    params: &'a T,
}

/// Serialises a request the bridge sends (to the editor).
pub fn request<T: Serialize>(id: u64, method: &str, params: &T) -> String {
    to_string(&RequestOut {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
}

/// Serialises a notification.
pub fn notification<T: Serialize>(method: &str, params: &T) -> String {
    to_string(&NotificationOut {
        jsonrpc: "2.0",
        method,
        params,
    })
}

fn to_string<T: Serialize>(value: &T) -> String {
    // Serialising these types cannot fail: every map key is a string.
    crate::escape::to_json(value, 256).unwrap_or_else(|err| {
        tracing::error!(%err, "failed to serialise an outgoing message");
        String::from(
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"serialisation failed"}}"#,
        )
    })
}

/// A success response for a peer whose id is held as a JSON value (the relay, which
/// passes messages through without classifying them).
pub fn response_value(id: &Value, result: Value) -> Value {
    serde_json::json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// An error response for a peer whose id is held as a JSON value (`null` when unknown).
pub fn error_value(id: &Value, code: i64, message: &str) -> Value {
    serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// Parses optional raw params into `T`, treating absent params as `{}`.
pub fn parse_params<'a, T: Deserialize<'a>>(params: Option<&'a RawValue>) -> Result<T, RpcError> {
    let text = params.map(RawValue::get).unwrap_or("{}");
    serde_json::from_str(text).map_err(|e| RpcError::invalid_params(format!("Invalid params: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_call_response_is_the_plain_response_whatever_the_text() {
        for id in [
            RequestId::String("a\"b".into()),
            RequestId::Number(7.into()),
            RequestId::Number(u64::MAX.into()),
            RequestId::from_raw(&RawValue::from_string("-1.5e3".into()).unwrap())
                .unwrap()
                .unwrap(),
        ] {
            for text in [String::new(), "{\"k\": \"v\u{e9}\"}\n".repeat(50)] {
                let result = crate::mcp::CallToolResult::text(text);
                assert_eq!(tool_call_response(&id, &result), response(&id, &result));
            }
            // Every shape a result takes: several items, an image, an error, a
            // structured copy.
            let mut result = crate::mcp::CallToolResult::error("no \u{1} such\tfile");
            result.content.push(crate::mcp::Content::Image {
                data: "aGk=".into(),
                mime_type: "image/png".into(),
            });
            result.structured_content = Some(serde_json::json!({"a": [1, "b\"c"], "d": null}));
            assert_eq!(tool_call_response(&id, &result), response(&id, &result));
            result.content.clear();
            result.is_error = false;
            assert_eq!(tool_call_response(&id, &result), response(&id, &result));
        }
    }

    fn invalid_code(text: &str) -> i64 {
        match classify(text) {
            Incoming::Invalid { error, .. } => error.code,
            other => panic!("expected invalid, got {other:?}"),
        }
    }

    #[test]
    fn classifies_requests_notifications_and_responses() {
        match classify(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#) {
            Incoming::Request(r) => {
                assert_eq!(r.method, "ping");
                assert_eq!(r.id, RequestId::Number(0.into()));
                assert_eq!(r.id.to_string(), "0");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Incoming::Notification { .. }
        ));
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#),
            Incoming::Response { .. }
        ));
        // A null result is an answer ("nothing here"), kept as the raw `null`.
        match classify(r#"{"jsonrpc":"2.0","id":7,"result":null}"#) {
            Incoming::Response {
                id: Some(id),
                result: Some(raw),
                error: None,
            } => assert_eq!((id.to_string(), raw.get()), ("7".into(), "null")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_frames_get_the_documented_codes() {
        assert_eq!(invalid_code("{not json"), PARSE_ERROR);
        assert_eq!(
            invalid_code(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            INVALID_REQUEST
        );
        assert_eq!(invalid_code("42"), INVALID_REQUEST);
        assert_eq!(
            invalid_code(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
            INVALID_REQUEST
        );
        assert_eq!(
            invalid_code(r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#),
            INVALID_REQUEST
        );
        assert_eq!(invalid_code(r#"{"jsonrpc":"2.0","id":1}"#), INVALID_REQUEST);
        assert_eq!(
            invalid_code(r#"{"jsonrpc":"2.0","id":1,"method":5}"#),
            INVALID_REQUEST
        );
    }

    #[test]
    fn ids_are_echoed_exactly() {
        let id = RequestId::String("x-1".into());
        assert_eq!(
            response(&id, &serde_json::json!({})),
            r#"{"jsonrpc":"2.0","id":"x-1","result":{}}"#
        );
        let err = error_response(None, &RpcError::parse("eof"));
        assert!(err.starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700"#));
        for raw in [
            "1e2",
            "-0",
            "18446744073709551616",
            "1.50",
            "-1.5E+3",
            "0",
            "17",
            "18446744073709551615",
            "123456789012345678901234567890",
        ] {
            let Incoming::Request(req) = classify(&format!(
                r#"{{"jsonrpc":"2.0","id": {raw} ,"method":"ping"}}"#
            )) else {
                panic!("{raw}")
            };
            assert_eq!(
                response(&req.id, &serde_json::json!({})),
                format!(r#"{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}"#)
            );
            assert_eq!(
                error_response(Some(&req.id), &RpcError::method_not_found("x")),
                format!(
                    r#"{{"jsonrpc":"2.0","id":{raw},"error":{{"code":-32601,"message":"Method not found: x"}}}}"#
                )
            );
        }
        // Ids compare by their text; cancellation params find them the same way.
        let parsed: crate::mcp::CancelledParams =
            serde_json::from_str(r#"{"requestId": 1e2}"#).unwrap();
        let Incoming::Request(req) = classify(r#"{"jsonrpc":"2.0","id":1e2,"method":"x"}"#) else {
            panic!()
        };
        assert_eq!(parsed.request_id, req.id);
        assert_ne!(
            RequestId::Number(NumberId::from(100)),
            req.id,
            "100 is not 1e2"
        );
        assert_eq!(RequestId::Number(NumberId::from(7)).to_string(), "7");
        // A plain integer as sent is the id the bridge makes of the number.
        let Incoming::Request(seven) = classify(r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#) else {
            panic!()
        };
        let ids: std::collections::HashSet<RequestId> =
            [seven.id, RequestId::Number(NumberId::from(7))].into();
        assert_eq!(ids.len(), 1);
        assert_eq!(
            ids.iter().next().and_then(|id| match id {
                RequestId::Number(n) => n.as_u64(),
                RequestId::String(_) => None,
            }),
            Some(7)
        );
        assert!(
            serde_json::from_str::<crate::mcp::CancelledParams>(r#"{"requestId": null}"#).is_err()
        );
    }
}
