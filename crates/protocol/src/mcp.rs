//! MCP message shapes used by the bridge (server side).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::jsonrpc::RequestId;

/// Protocol versions the bridge speaks, oldest first. The newest is offered when a
/// client asks for one we do not know.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// Picks the version to answer `initialize` with: the client's when supported.
pub fn negotiate_version(requested: Option<&str>) -> &'static str {
    requested
        .and_then(|r| SUPPORTED_PROTOCOL_VERSIONS.iter().find(|v| **v == r))
        .copied()
        .unwrap_or(SUPPORTED_PROTOCOL_VERSIONS[SUPPORTED_PROTOCOL_VERSIONS.len() - 1])
}

/// `initialize` params (only the parts the bridge uses).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// Version the client would like.
    pub protocol_version: Option<String>,
    /// Client capabilities, kept for status output.
    #[serde(default)]
    pub capabilities: Value,
    /// Who the client is.
    pub client_info: Option<Implementation>,
}

/// Name and version of an MCP peer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Implementation {
    /// Peer name, e.g. `claude-code`.
    pub name: String,
    /// Peer version.
    #[serde(default)]
    pub version: String,
}

impl Implementation {
    /// `name version`, as shown in status output.
    pub fn label(&self) -> String {
        format!("{} {}", self.name, self.version).trim().to_string()
    }
}

/// `initialize` result.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// Negotiated version.
    pub protocol_version: &'static str,
    /// Advertised capabilities.
    pub capabilities: Value,
    /// The bridge itself.
    pub server_info: Implementation,
    /// Hints for the model.
    pub instructions: String,
}

impl InitializeResult {
    /// What the bridge answers `initialize` with, for `version` (negotiated) and the
    /// model's `instructions`: the Session and the relay (answering while no bridge is
    /// there) both use it, so they advertise the same capabilities.
    pub fn of_bridge(version: &'static str, instructions: String) -> Self {
        Self {
            protocol_version: version,
            capabilities: serde_json::json!({
                "tools": { "listChanged": true },
                "prompts": { "listChanged": false },
                "resources": { "subscribe": true, "listChanged": false },
                "completions": {},
                "logging": {}
            }),
            server_info: Implementation {
                name: "ide-bridge".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            instructions,
        }
    }
}

/// What the model is told about the bridge (`initialize`, `server/discover`): the
/// workspace it serves, and the agent's session when there is one.
pub fn instructions(workspace: &std::path::Path, session: Option<&str>) -> String {
    let whose = session.map_or_else(String::new, |s| format!(" (session {s})"));
    format!(
        "ide-bridge serves the workspace {} to this agent{whose}. \
         Tools that need an editor say so when none is connected.",
        workspace.display()
    )
}

/// A tool as listed by `tools/list`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    pub name: &'static str,
    pub description: &'static str,
    /// Derived from the tool's argument type.
    pub input_schema: Value,
    /// Derived from the type of the tool's `structuredContent`, for tools that answer
    /// with one ([`CallToolResult::structured`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// What calling it does, as MCP's hints ([`Effect::annotations`]).
    pub annotations: ToolAnnotations,
}

/// What a tool does to the world around it, declared once per tool. `tools/list`
/// shows it as the tool's `annotations`: Claude Code runs read-only tools side by side
/// when its model asks for several at once (others one after another).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads the workspace, the editor or the bridge's state and changes none of it.
    Reads,
    /// Adds to what is there without overwriting anything (opens a tab, claims a
    /// file, stages a change, makes a commit), or takes back what it added (releases a
    /// claim, clears a decoration).
    Adds,
    /// May overwrite or remove what is there: a file's text, a tab, a setting, a
    /// terminal, a task.
    Changes,
    /// Runs what its caller names (a command, a Claude task, an editor command, a
    /// push), which may do anything and reach beyond the workspace.
    Runs,
}

impl Effect {
    /// Every effect, in the order above.
    pub const ALL: [Effect; 4] = [Effect::Reads, Effect::Adds, Effect::Changes, Effect::Runs];

    /// What the word means, for docs/tools.md.
    pub const fn means(self) -> &'static str {
        match self {
            Effect::Reads => "changes nothing",
            Effect::Adds => "adds without overwriting (a tab, a claim, a staged change, a commit), or takes back what it added",
            Effect::Changes => "may overwrite or remove (a file's text, a tab, a setting, a task)",
            Effect::Runs => "runs what the caller names, which may do anything and reach beyond the workspace",
        }
    }

    /// The word docs/tools.md uses.
    pub const fn word(self) -> &'static str {
        match self {
            Effect::Reads => "reads",
            Effect::Adds => "adds",
            Effect::Changes => "changes",
            Effect::Runs => "runs",
        }
    }

    /// Changes nothing.
    pub const fn reads_only(self) -> bool {
        matches!(self, Effect::Reads)
    }

    /// MCP's tool annotations saying the same. A hint a client would read as its
    /// default is said anyway: `openWorldHint` defaults to true, `destructiveHint` too.
    pub const fn annotations(self) -> ToolAnnotations {
        let changes = !self.reads_only();
        ToolAnnotations {
            read_only_hint: !changes,
            destructive_hint: if changes {
                Some(matches!(self, Effect::Changes | Effect::Runs))
            } else {
                None
            },
            open_world_hint: matches!(self, Effect::Runs),
        }
    }
}

/// A tool's `annotations` (MCP 2025-03-26 on; older clients ignore them). Derived from
/// its [`Effect`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// It changes nothing.
    pub read_only_hint: bool,
    /// It may overwrite or remove (said only of a tool that changes something).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// It may reach beyond the workspace.
    pub open_world_hint: bool,
}

/// Cursor-paginated list params (`tools/list`, `prompts/list`).
#[derive(Debug, Default, Deserialize)]
pub struct ListParams {
    /// Opaque cursor from a previous page.
    pub cursor: Option<String>,
}

impl ListParams {
    /// For a list answered in one page: no cursor was ever handed out, so any is
    /// invalid.
    pub fn one_page(&self) -> Result<(), InvalidCursor> {
        self.cursor
            .as_ref()
            .map_or(Ok(()), |c| Err(InvalidCursor(c.clone())))
    }
}

/// `tools/call` params, borrowed from the request's text: arguments stay raw so their
/// size is checked before parsing.
#[derive(Debug, Deserialize)]
pub struct CallToolParams<'a> {
    /// Tool name (owned only when the client escaped a character of it).
    #[serde(borrow)]
    pub name: std::borrow::Cow<'a, str>,
    /// Raw arguments.
    #[serde(borrow)]
    pub arguments: Option<&'a RawValue>,
    /// Request metadata (progress token).
    #[serde(rename = "_meta")]
    pub meta: Option<RequestMeta>,
}

/// `_meta` of a request.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestMeta {
    /// Token to attach to `notifications/progress`.
    pub progress_token: Option<ProgressToken>,
}

/// A progress token: string or number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ProgressToken {
    /// Numeric token.
    Number(serde_json::Number),
    /// String token.
    String(String),
}

/// `notifications/progress` params.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams<'a> {
    /// Token from the request.
    pub progress_token: &'a ProgressToken,
    /// Progress so far; increases with every notification.
    pub progress: f64,
    /// Total, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// Human readable status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'a str>,
}

/// One content item of a tool result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Content {
    /// Plain text (often a JSON document).
    Text { text: String },
    Image {
        /// Base64.
        data: String,
        /// e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

/// The result of `tools/call`. Tool failures are results with `isError: true`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    pub content: Vec<Content>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// The error is the expected answer, not a failure (e.g. `openDiff` without an
    /// editor, which tells the CLI to ask in the terminal): recorded as `declined`.
    #[serde(skip)]
    pub declined: bool,
    /// The answer as a JSON object matching the tool's `outputSchema`; the text item
    /// carries the same JSON for clients that read only content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
}

impl CallToolResult {
    /// About how many bytes this result takes as JSON: its texts with room for escapes
    /// (a JSON document as text escapes every quote), twice when a structured copy
    /// rides beside them. What a response's buffer is sized to, so that it is not
    /// grown three or four times while the text is escaped into it.
    pub fn encoded_len_hint(&self) -> usize {
        let texts: usize = self
            .content
            .iter()
            .map(|c| match c {
                Content::Text { text } => text.len() + text.len() / 4 + 24,
                Content::Image { data, mime_type } => data.len() + mime_type.len() + 48,
            })
            .sum();
        let structured = if self.structured_content.is_some() {
            texts
        } else {
            0
        };
        texts + structured + 64
    }

    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::Text { text: text.into() }],
            is_error: false,
            declined: false,
            structured_content: None,
        }
    }
    /// `value` (which serialises to an object) as `structuredContent`, and as compact
    /// JSON text beside it.
    pub fn structured<T: Serialize>(value: &T) -> Self {
        match serde_json::to_value(value) {
            Ok(v @ Value::Object(_)) => {
                // A `Value` always serialises (its map keys are strings).
                let text = crate::escape::to_json(&v, 256).unwrap_or_default();
                Self {
                    structured_content: Some(v),
                    ..Self::text(text)
                }
            }
            Ok(_) => Self::error("failed to encode result: not an object"),
            Err(err) => Self::error(format!("failed to encode result: {err}")),
        }
    }
    /// One text item holding `value` as compact JSON.
    pub fn json<T: Serialize>(value: &T) -> Self {
        match crate::escape::to_json(value, 256) {
            Ok(text) => Self::text(text),
            Err(err) => Self::error(format!("failed to encode result: {err}")),
        }
    }
    pub fn texts<I: IntoIterator<Item = String>>(items: I) -> Self {
        Self {
            content: items
                .into_iter()
                .map(|text| Content::Text { text })
                .collect(),
            is_error: false,
            declined: false,
            structured_content: None,
        }
    }
    /// A tool error a model can read and act on (handlers return a
    /// the bridge's `ToolError`, which becomes this).
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            content: vec![Content::Text {
                text: message.into(),
            }],
            is_error: true,
            declined: false,
            structured_content: None,
        }
    }
    /// An error result that is the expected answer rather than a failure.
    pub fn declined(message: impl Into<String>) -> Self {
        Self {
            declined: true,
            ..Self::error(message)
        }
    }
    /// The first text item, if any.
    pub fn first_text(&self) -> Option<&str> {
        self.content.iter().find_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            Content::Image { .. } => None,
        })
    }
}

/// A prompt as listed by `prompts/list`.
#[derive(Debug, Clone, Serialize)]
pub struct PromptInfo {
    /// Prompt name.
    pub name: &'static str,
    /// What the prompt is for.
    pub description: &'static str,
    /// Declared arguments.
    pub arguments: Vec<PromptArgument>,
}

/// One declared prompt argument.
#[derive(Debug, Clone, Serialize)]
pub struct PromptArgument {
    /// Argument name.
    pub name: &'static str,
    /// What it means.
    pub description: &'static str,
    /// Whether `prompts/get` must supply it.
    pub required: bool,
}

/// `prompts/get` params.
#[derive(Debug, Deserialize)]
pub struct GetPromptParams {
    /// Prompt name.
    pub name: String,
    /// Argument values.
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

/// `prompts/get` result.
#[derive(Debug, Serialize)]
pub struct GetPromptResult {
    /// Description of the rendered prompt.
    pub description: String,
    /// Messages to insert into the conversation.
    pub messages: Vec<PromptMessage>,
}

/// One prompt message.
#[derive(Debug, Serialize)]
pub struct PromptMessage {
    /// `user` or `assistant`.
    pub role: &'static str,
    /// Content (text only).
    pub content: Content,
}

/// Syslog severities used by MCP logging, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Debug detail.
    Debug,
    /// Informational.
    Info,
    /// Normal but significant.
    Notice,
    Warning,
    Error,
    Critical,
    /// Action must be taken.
    Alert,
    /// System unusable.
    Emergency,
}

/// `logging/setLevel` params.
#[derive(Debug, Deserialize)]
pub struct SetLevelParams {
    /// The minimum level the client wants.
    pub level: LogLevel,
}

/// `notifications/message` params.
#[derive(Debug, Serialize)]
pub struct LogMessageParams<'a> {
    /// Severity.
    pub level: LogLevel,
    /// Source.
    pub logger: &'a str,
    /// Payload.
    pub data: &'a Value,
}

/// `notifications/cancelled` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledParams {
    /// The request to cancel.
    pub request_id: RequestId,
    /// Why.
    pub reason: Option<String>,
}

/// A list cursor that no page of this list handed out (JSON-RPC -32602).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid cursor: {0:?}")]
pub struct InvalidCursor(pub String);

/// The message, for `RpcError::invalid_params`.
impl From<InvalidCursor> for String {
    fn from(e: InvalidCursor) -> Self {
        e.to_string()
    }
}

/// `tools/list` and `prompts/list` page size.
pub const PAGE_SIZE: usize = 50;

/// Paginates `items` with an opaque offset cursor. Returns the page and the next cursor.
pub fn paginate<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    page_size: usize,
) -> Result<(Vec<T>, Option<String>), InvalidCursor> {
    let start = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= items.len())
            .ok_or_else(|| InvalidCursor(c.to_string()))?,
    };
    let end = (start + page_size).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((items[start..end].to_vec(), next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiates_known_versions_and_falls_back_to_newest() {
        assert_eq!(negotiate_version(Some("2024-11-05")), "2024-11-05");
        assert_eq!(negotiate_version(Some("2025-11-25")), "2025-11-25");
        assert_eq!(negotiate_version(Some("1999-01-01")), "2025-11-25");
        assert_eq!(negotiate_version(None), "2025-11-25");
    }

    #[test]
    fn paginates_in_pages_of_fifty() {
        let items: Vec<u32> = (0..120).collect();
        let (p1, c1) = paginate(&items, None, 50).unwrap();
        assert_eq!((p1.len(), c1.as_deref()), (50, Some("50")));
        let (p2, c2) = paginate(&items, c1.as_deref(), 50).unwrap();
        assert_eq!((p2[0], c2.as_deref()), (50, Some("100")));
        let (p3, c3) = paginate(&items, c2.as_deref(), 50).unwrap();
        assert_eq!((p3.len(), c3), (20, None));
        assert!(paginate(&items, Some("121"), 50).is_err());
        assert!(paginate(&items, Some("abc"), 50).is_err());
        let (exact, none) = paginate(&items[..50], None, 50).unwrap();
        assert_eq!((exact.len(), none), (50, None));
    }

    #[test]
    fn json_and_structured_results_carry_the_compact_text() {
        let value = serde_json::json!({"path": "a \"b\"\n", "n": 1, "list": [true, null]});
        let text = |r: &CallToolResult| match &r.content[..] {
            [Content::Text { text }] => text.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(text(&CallToolResult::json(&value)), value.to_string());
        let structured = CallToolResult::structured(&value);
        assert_eq!(text(&structured), value.to_string());
        assert_eq!(structured.structured_content, Some(value));
        assert!(CallToolResult::structured(&1).is_error);
    }

    #[test]
    fn error_results_carry_is_error_and_success_omits_it() {
        let ok = serde_json::to_string(&CallToolResult::text("hi")).unwrap();
        assert_eq!(ok, r#"{"content":[{"type":"text","text":"hi"}]}"#);
        let err = serde_json::to_value(CallToolResult::error("no")).unwrap();
        assert_eq!(err["isError"], true);
    }
}
