//! One MCP tool per extension handler method (seed 000's 52, of which the nine that
//! overlap with other tools route to the editor from their own modules). Arguments are
//! validated against the schema before anything is sent; paths are confined to the
//! workspace; terminal names are prefixed with the calling session's prefix; positions
//! are 1-based as the extension protocol says. Without an editor the tools answer at
//! once with instructions to connect one (`getFileContent` falls back to the workspace).

mod tools;

pub use tools::register;

use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::ToolContext;
use crate::actors::extension::{Call, ExtError};
use crate::protocol::mcp::{CallToolResult, Content};

/// Argument keys that hold a workspace path.
const PATH_KEYS: &[&str] = &["file", "filePath", "oldPath", "newPath", "cwd"];

/// Terminal methods whose `name` is prefixed per session.
const TERMINAL_METHODS: &[&str] = &[
    "createTerminal",
    "disposeTerminal",
    "sendTerminalCommand",
    "executeInTerminal",
    "waitForTerminalOutput",
    "getTerminalOutput",
];

/// How much longer than its own `timeoutMs` a waiting editor request may take.
const EDITOR_WAIT_MARGIN: Duration = Duration::from_secs(2);

/// Sends `extension/<method>` with `params` and waits for the answer. The reply
/// channel goes with the message, so the answer comes straight back to this tool.
pub(crate) async fn call_editor(
    ctx: &ToolContext,
    method: &str,
    params: Value,
) -> Result<Value, ExtError> {
    let (reply, answer) = oneshot::channel();
    // A request that itself waits (`timeoutMs`: executeInTerminal, waitForTerminalOutput)
    // gets that long plus a margin from the editor, not the default request timeout, so
    // a long wait is not taken for a stuck editor (which would open the breaker).
    let timeout = params
        .get("timeoutMs")
        .and_then(Value::as_u64)
        .map(|ms| Duration::from_millis(ms) + EDITOR_WAIT_MARGIN)
        .filter(|t| *t > ctx.services.settings.editor.request_timeout);
    ctx.services.extension.do_send(Call {
        method: format!("extension/{method}"),
        params,
        timeout,
        reply,
    });
    answer
        .await
        .unwrap_or_else(|_| Err(ExtError::Restarted(format!("extension/{method}"))))
}

/// Confines path arguments and prefixes terminal names; the error is the tool result.
pub(crate) fn prepare(
    ctx: &ToolContext,
    method: &str,
    mut args: Map<String, Value>,
) -> Result<Value, CallToolResult> {
    for key in PATH_KEYS {
        if let Some(Value::String(p)) = args.get(*key) {
            let resolved = super::resolve(ctx, p)?;
            args.insert(
                (*key).to_string(),
                Value::String(resolved.display().to_string()),
            );
        }
    }
    if TERMINAL_METHODS.contains(&method) {
        let prefix = ctx.terminal_prefix.as_ref();
        let name = match args.get("name").and_then(Value::as_str) {
            Some(n) if n.starts_with(prefix) => Some(n.to_string()),
            Some(n) => Some(format!("{prefix}{n}")),
            None if method == "createTerminal" => Some(format!("{prefix}terminal")),
            None => None,
        };
        if let Some(name) = name {
            args.insert("name".into(), Value::String(name));
        }
    }
    Ok(Value::Object(args))
}

/// The editor's answer as a tool result.
pub(crate) fn editor_result(method: &str, result: Result<Value, ExtError>) -> CallToolResult {
    match result {
        Ok(value) if method == "captureScreenshot" => {
            match value.get("base64").and_then(Value::as_str) {
                Some(data) => CallToolResult {
                    content: vec![Content::Image {
                        data: data.to_string(),
                        mime_type: value
                            .get("mimeType")
                            .and_then(Value::as_str)
                            .unwrap_or("image/png")
                            .to_string(),
                    }],
                    is_error: false,
                    declined: false,
                },
                None => CallToolResult::error("The editor returned no screenshot"),
            }
        }
        Ok(value) => CallToolResult::json(&value),
        Err(e) => CallToolResult::error(e.to_string()),
    }
}

/// Forwards a validated call.
pub(crate) async fn forward(
    ctx: ToolContext,
    method: &str,
    args: Map<String, Value>,
) -> CallToolResult {
    let params = match prepare(&ctx, method, args) {
        Ok(p) => p,
        Err(e) => return e,
    };
    // Only getFileContent needs its params again (to read the file without an editor).
    let fallback = (method == "getFileContent").then(|| params.clone());
    let answer = call_editor(&ctx, method, params).await;
    match (fallback, answer) {
        (Some(params), Err(ExtError::NotConnected)) => file_content_from_disk(&ctx, &params).await,
        (_, answer) => editor_result(method, answer),
    }
}

/// Tries the editor; `None` when none is connected (the caller falls back to the
/// workspace). `args` must be a JSON object.
pub(crate) async fn try_editor(
    ctx: &ToolContext,
    method: &str,
    args: Value,
) -> Option<CallToolResult> {
    let Value::Object(args) = args else {
        return None;
    };
    let params = match prepare(ctx, method, args) {
        Ok(p) => p,
        Err(e) => return Some(e),
    };
    match call_editor(ctx, method, params).await {
        Err(ExtError::NotConnected) => None,
        other => Some(with_source(editor_result(method, other), "editor")),
    }
}

/// Adds `"source"` to a JSON object result.
fn with_source(mut result: CallToolResult, source: &str) -> CallToolResult {
    if let Some(Content::Text { text }) = result.content.first_mut() {
        if let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(text) {
            map.insert("source".into(), Value::String(source.into()));
            *text = Value::Object(map).to_string();
        }
    }
    result
}

/// `getFileContent` without an editor: the file on disk.
async fn file_content_from_disk(ctx: &ToolContext, params: &Value) -> CallToolResult {
    let Some(path) = params
        .get("file")
        .and_then(Value::as_str)
        .map(std::path::PathBuf::from)
    else {
        return CallToolResult::error("file is required");
    };
    let p = path.clone();
    let root = ctx.services.workspace.dir().clone();
    let read = match super::blocking(move || crate::workspace::files::read_text(&root, &p)).await {
        Ok(r) => r,
        Err(e) => return e,
    };
    match read {
        Ok((text, _)) => CallToolResult::json(&serde_json::json!({
            "content": text,
            "isDirty": false,
            "languageId": crate::workspace::language_id(&path),
            "lineCount": text.lines().count(),
            "source": "workspace",
        })),
        Err(e) => CallToolResult::error(e.to_string()),
    }
}
