//! Argument types of the forwarded tools, shared where tools take the same arguments.
//! Each serialises back to the params the extension protocol names: an optional
//! argument the agent left out stays out of the request.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tools::WorkspacePath;

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct File {
    file: WorkspacePath,
}

/// A position in a file (1-based).
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct At {
    pub(crate) file: WorkspacePath,
    #[schemars(range(min = 1))]
    pub(crate) line: u32,
    #[schemars(range(min = 1))]
    pub(crate) column: u32,
}

/// A range in a file (1-based).
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Span {
    file: WorkspacePath,
    #[schemars(range(min = 1))]
    start_line: u32,
    #[schemars(range(min = 1))]
    start_column: u32,
    #[schemars(range(min = 1))]
    end_line: u32,
    #[schemars(range(min = 1))]
    end_column: u32,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("additionalProperties" = false))]
pub struct ApplyCodeAction {
    #[serde(flatten)]
    span: Span,
    #[schemars(length(min = 1))]
    action_title: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("additionalProperties" = false))]
pub struct RenameSymbol {
    #[serde(flatten)]
    at: At,
    #[schemars(length(min = 1))]
    new_name: String,
    /// List the edits without writing anything (answered by the bridge's language
    /// servers, also with an editor connected).
    #[serde(skip_serializing_if = "Option::is_none")]
    preview: Option<bool>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchSymbols {
    #[schemars(length(min = 1))]
    query: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 200))]
    max_results: Option<u32>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CallDirection {
    Incoming,
    Outgoing,
    Both,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TypeDirection {
    Supertypes,
    Subtypes,
    Both,
}

/// Callers/callees or supertypes/subtypes of the symbol at a position.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("additionalProperties" = false))]
pub struct Hierarchy<Direction> {
    #[serde(flatten)]
    at: At,
    #[serde(skip_serializing_if = "Option::is_none")]
    direction: Option<Direction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 200))]
    max_results: Option<u32>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTerminal {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cwd: Option<WorkspacePath>,
    #[serde(skip_serializing_if = "Option::is_none")]
    env: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    show: Option<bool>,
}

/// One of the session's terminals, by name or by index (default: the active one).
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TerminalRef {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<u32>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("additionalProperties" = false))]
pub struct SendTerminalCommand {
    #[serde(flatten)]
    terminal: TerminalRef,
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    add_newline: Option<bool>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("additionalProperties" = false))]
pub struct ExecuteInTerminal {
    #[serde(flatten)]
    terminal: TerminalRef,
    #[schemars(length(min = 1))]
    command: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100, max = crate::protocol::editor::MAX_WAIT_MS))]
    timeout_ms: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    show: Option<bool>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("additionalProperties" = false))]
pub struct WaitForTerminalOutput {
    #[serde(flatten)]
    terminal: TerminalRef,
    #[schemars(length(min = 1))]
    pattern: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100, max = crate::protocol::editor::MAX_WAIT_MS))]
    timeout_ms: Option<u32>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EvalContext {
    Watch,
    Repl,
    Hover,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvaluateInDebugger {
    #[schemars(length(min = 1))]
    expression: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    frame_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<EvalContext>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Breakpoint {
    #[schemars(range(min = 1))]
    line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    condition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hit_condition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_message: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetDebugBreakpoints {
    file: WorkspacePath,
    #[schemars(length(max = 1000))]
    breakpoints: Vec<Breakpoint>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartDebugging {
    #[serde(skip_serializing_if = "Option::is_none")]
    config_name: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WatchFiles {
    #[schemars(length(min = 1))]
    id: String,
    #[schemars(length(min = 1))]
    pattern: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WatchId {
    #[schemars(length(min = 1))]
    id: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DecorationStyle {
    Info,
    Warning,
    Error,
    Focus,
    Strikethrough,
    Dim,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Decoration {
    #[schemars(range(min = 1))]
    start_line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    end_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    style: Option<DecorationStyle>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hover_message: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetDecorations {
    #[schemars(length(min = 1))]
    id: String,
    file: WorkspacePath,
    #[schemars(length(max = 1000))]
    decorations: Vec<Decoration>,
}

/// One decoration set by id, or all.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClearDecorations {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteClipboard {
    #[schemars(length(max = 1_048_576))]
    text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InlayHints {
    file: WorkspacePath,
    #[schemars(range(min = 1))]
    start_line: u32,
    #[schemars(range(min = 1))]
    end_line: u32,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceSettings {
    #[serde(skip_serializing_if = "Option::is_none")]
    section: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SettingTarget {
    Global,
    Workspace,
    WorkspaceFolder,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetWorkspaceSetting {
    #[schemars(length(min = 1))]
    key: String,
    /// Any JSON value: string, number, boolean, array, object or null
    #[schemars(extend("type" = ["string", "number", "integer", "boolean", "array", "object", "null"]))]
    value: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<SettingTarget>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecuteCommand {
    #[schemars(length(min = 1))]
    command: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<Vec<Value>>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListCommands {
    #[serde(skip_serializing_if = "Option::is_none")]
    filter: Option<String>,
}
