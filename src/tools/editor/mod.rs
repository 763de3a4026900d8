//! One MCP tool per extension handler method (the 52 of docs/protocol.md, of which the
//! nine that overlap with other tools route to the editor from their own modules).
//! Arguments are validated against the schema derived from their type before anything is
//! sent; every workspace path the type marks
//! ([`WorkspacePath`](crate::tools::WorkspacePath)) is confined, whatever its key;
//! terminal names are prefixed with the calling session's prefix; positions are 1-based
//! as the extension protocol says. Without an editor the tools answer at once with
//! instructions to connect one (`getFileContent` falls back to the workspace).

pub(crate) mod args;
pub(crate) mod pool;
pub mod signature_help;
mod tools;

pub use tools::register;

use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::oneshot;

use super::schema::PathMarks;
use super::{blocking, ToolContext, ToolError, ToolResult};
use crate::actors::extension::{Call, ExtError};
use crate::protocol::editor::{self, Method};
use crate::protocol::mcp::{CallToolResult, Content};
use crate::workspace::Workspace;

/// A forwarded method the bridge answers itself without an editor: `getFileContent`
/// from disk, the language methods from its own servers ([`pool::answers`]; while
/// `lsp.enabled`).
pub(crate) const fn answers_without_editor(method: Method) -> bool {
    pool::answers(method) || matches!(method, Method::GetFileContent)
}

/// Sends `extension/<method>` with `params` and waits for the answer. The reply
/// channel goes with the message, so the answer comes straight back to this tool.
pub(crate) async fn call_editor(
    ctx: &ToolContext,
    method: Method,
    params: Value,
) -> Result<Value, ExtError> {
    if !ctx.services.editor.connected() {
        return Err(ExtError::NotConnected);
    }
    let (reply, answer) = oneshot::channel();
    // A request that itself waits (`Method::waits`) gets its `timeoutMs` plus a margin
    // from the editor, not the default request timeout, so a long wait is not taken
    // for a stuck editor (which would open the breaker).
    let timeout = params
        .get("timeoutMs")
        .and_then(Value::as_u64)
        .filter(|_| method.waits())
        .map(|ms| Duration::from_millis(ms + u64::from(editor::WAIT_MARGIN_MS)))
        .filter(|t| *t > ctx.services.settings.editor.request_timeout);
    ctx.services.extension.do_send(Call {
        method,
        params,
        timeout,
        reply,
    });
    answer
        .await
        .unwrap_or_else(|_| Err(ExtError::Restarted(method.wire())))
}

/// The params of `extension/<method>` for `args`, from the calling session.
pub(crate) fn request<A: Serialize + JsonSchema + 'static>(
    ctx: &ToolContext,
    method: Method,
    args: &A,
) -> Result<Value, ToolError> {
    prepare(&ctx.services.workspace, &ctx.terminal_prefix, method, args)
}

/// Serialises `args` as the editor's params: every path its type marks is replaced by
/// its confined absolute form (a path outside the workspace is refused), and terminal
/// names get `terminal_prefix`.
pub(crate) fn prepare<A: Serialize + JsonSchema + 'static>(
    workspace: &Workspace,
    terminal_prefix: &str,
    method: Method,
    args: &A,
) -> Result<Value, ToolError> {
    let mut params = serde_json::to_value(args)
        .map_err(|e| ToolError::refused(format!("failed to encode the request: {e}")))?;
    PathMarks::of_type::<A>().apply(&mut params, &mut |path: &str| {
        workspace.resolve(path).map(|p| p.display().to_string())
    })?;
    if let (true, Value::Object(params)) = (method.names_a_terminal(), &mut params) {
        let name = match params.get("name").and_then(Value::as_str) {
            Some(n) if n.starts_with(terminal_prefix) => Some(n.to_string()),
            Some(n) => Some(format!("{terminal_prefix}{n}")),
            None if method == Method::CreateTerminal => Some(format!("{terminal_prefix}terminal")),
            None => None,
        };
        if let Some(name) = name {
            params.insert("name".into(), Value::String(name));
        }
    }
    Ok(params)
}

/// The editor's answer as a tool result.
pub(crate) fn editor_result(method: Method, answer: Result<Value, ExtError>) -> ToolResult {
    let value = answer?;
    if method != Method::CaptureScreenshot {
        return Ok(CallToolResult::json(&value));
    }
    let data = value
        .get("base64")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::refused("The editor returned no screenshot"))?;
    Ok(CallToolResult {
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
        structured_content: None,
    })
}

/// Forwards a validated call.
pub(crate) async fn forward<A: Serialize + JsonSchema + 'static>(
    ctx: ToolContext,
    method: Method,
    args: A,
) -> ToolResult {
    let params = request(&ctx, method, &args)?;
    let lsp = &ctx.services.settings.lsp;
    let pooled = lsp.enabled && pool::answers(method);
    let preview = method == Method::RenameSymbol && params["preview"] == true;
    if preview && !pooled {
        return Err(ToolError::refused(
            "A rename preview comes from the bridge's language servers, and lsp.enabled is false",
        ));
    }
    if pooled && (preview || lsp.prefer == crate::config::LspPrefer::Pool) {
        return pool::answer(&ctx, method, &params).await;
    }
    // getFileContent and the language tools need their params again (to answer
    // without an editor).
    let fallback = (method == Method::GetFileContent || pooled).then(|| params.clone());
    let answer = call_editor(&ctx, method, params).await;
    match (fallback, answer) {
        (Some(params), Err(ExtError::NotConnected)) if pooled => {
            pool::answer(&ctx, method, &params).await
        }
        (Some(params), Err(ExtError::NotConnected)) => file_content_from_disk(&ctx, &params).await,
        // The editor could not answer (no language server of its own for the file, a
        // suspended or stalled editor): the bridge's servers may; when they cannot
        // either, the editor's reason stands.
        (Some(params), Err(e)) if pooled && editor_did_nothing(method, &e) => {
            match pool::answer(&ctx, method, &params).await {
                Ok(answer) if !answer.is_error => Ok(answer),
                _ => editor_result(method, Err(e)),
            }
        }
        (_, answer) => editor_result(method, answer),
    }
}

/// The bridge's language servers may answer in the editor's place: it was never asked
/// (its breaker is open), or — for a request that only reads — it could not answer
/// (refused, went away, did not answer in time). A write is left to the editor, whose
/// buffer may hold unsaved text the servers would not see, and whose refusal (a bad new
/// name) stands.
fn editor_did_nothing(method: Method, e: &ExtError) -> bool {
    match e {
        ExtError::CircuitOpen { .. } => true,
        ExtError::Editor { .. }
        | ExtError::Timeout { .. }
        | ExtError::Disconnected(_)
        | ExtError::Restarted(_) => !pool::writes(method),
        _ => false,
    }
}

/// Tries the editor with `params` (from [`request`]); `None` when none is connected
/// (the caller falls back to the workspace).
pub(crate) async fn try_editor(
    ctx: &ToolContext,
    method: Method,
    params: Value,
) -> Option<ToolResult> {
    match call_editor(ctx, method, params).await {
        Err(ExtError::NotConnected) => None,
        answer => Some(editor_result(method, answer).map(|r| with_source(r, "editor"))),
    }
}

/// Like [`try_editor`], for a tool whose answer is typed: the editor's answer (with
/// `"source": "editor"`) is read as `T`, so both paths answer with the same
/// `structuredContent`. An answer that is not a `T` is a tool error quoting it.
pub(crate) async fn try_editor_as<T: Serialize + DeserializeOwned>(
    ctx: &ToolContext,
    method: Method,
    params: Value,
) -> Option<ToolResult> {
    let mut value = match call_editor(ctx, method, params).await {
        Err(ExtError::NotConnected) => return None,
        Err(e) => return Some(Err(e.into())),
        Ok(value) => value,
    };
    if let Value::Object(map) = &mut value {
        map.insert("source".into(), Value::String("editor".into()));
    }
    Some(match T::deserialize(&value) {
        Ok(answer) => Ok(CallToolResult::structured(&answer)),
        Err(e) => Err(ToolError::refused(format!(
            "The editor's answer to {} was not understood ({e}): {value} (the editor may have done it: check before retrying)",
            method.name()
        ))),
    })
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
async fn file_content_from_disk(ctx: &ToolContext, params: &Value) -> ToolResult {
    let path = params
        .get("file")
        .and_then(Value::as_str)
        .map(std::path::PathBuf::from)
        .ok_or_else(|| ToolError::refused("file is required"))?;
    let p = path.clone();
    let root = ctx.services.workspace.dir().clone();
    let (text, _) = blocking(move || crate::workspace::files::read_text(&root, &p)).await??;
    Ok(CallToolResult::json(&serde_json::json!({
        "content": text,
        "isDirty": false,
        "languageId": crate::workspace::language_id(&path),
        "lineCount": text.lines().count(),
        "source": "workspace",
    })))
}

#[cfg(test)]
mod tests {
    use crate::protocol::editor::Method;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use super::prepare;
    use crate::tools::WorkspacePath;
    use crate::workspace::Workspace;

    /// A forwarded tool's arguments with a path under a key no other tool uses.
    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct LinkArgs {
        target: WorkspacePath,
        #[serde(skip_serializing_if = "Option::is_none")]
        via: Option<Vec<WorkspacePath>>,
        label: String,
    }

    fn args(target: &str) -> LinkArgs {
        LinkArgs {
            target: target.into(),
            via: None,
            label: "../not-a-path".into(),
        }
    }

    #[test]
    fn a_path_under_any_key_is_confined_before_forwarding() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let root = ws.root().to_path_buf();

        let sent = prepare(&ws, "p-", Method::DebugLink, &args("src/main.rs")).unwrap();
        assert_eq!(
            sent,
            json!({"target": root.join("src/main.rs").display().to_string(), "label": "../not-a-path"})
        );

        let outside = root.parent().unwrap().join("elsewhere.rs");
        let refused = prepare(
            &ws,
            "p-",
            Method::DebugLink,
            &args(&outside.display().to_string()),
        )
        .unwrap_err()
        .to_string();
        let expected = ws.resolve(&outside.display().to_string()).unwrap_err();
        assert_eq!(refused, expected.to_string());
        assert!(refused.starts_with("Path escapes workspace"), "{refused}");

        let mut nested = args("a.rs");
        nested.via = Some(vec!["b.rs".into(), "../../etc/passwd".into()]);
        let refused = prepare(&ws, "p-", Method::DebugLink, &nested).unwrap_err();
        assert_eq!(
            refused.to_string(),
            ws.resolve("../../etc/passwd").unwrap_err().to_string()
        );
    }
}
