//! The editor's language tools answered by the bridge's own language servers (the
//! LanguageServers pool), in the same shapes, when no editor is connected (or always,
//! with `lsp.prefer = "pool"`).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::super::{ToolError, ToolResult};
use super::ToolContext;
use crate::actors::language_servers::{
    next_token, Ask, AskRunning, CancelAsk, Diagnose, LspError, NAME,
};
use crate::lsp::edits::{by_file, preview, FileEdits};
use crate::lsp::shapes;
use crate::protocol::editor::Method;
use crate::protocol::mcp::CallToolResult;
use crate::tools::files::server_edits::apply_all;

/// The editor methods the pool answers.
pub(crate) const fn answers(method: Method) -> bool {
    matches!(
        method,
        Method::GetHover
            | Method::GoToDefinition
            | Method::FindReferences
            | Method::GetDocumentSymbols
            | Method::SearchSymbols
            | Method::GetCallHierarchy
            | Method::GetTypeHierarchy
            | Method::GetInlayHints
            | Method::GetCodeActions
            | Method::ApplyCodeAction
            | Method::RenameSymbol
            | Method::FormatDocument
    )
}

/// Of [`answers`], those that change files: left to the editor when it is asked (see
/// `editor_did_nothing`).
pub(crate) const fn writes(method: Method) -> bool {
    answers(method) && !method.effect().reads_only()
}

fn number(params: &Value, key: &str) -> u64 {
    params[key].as_u64().unwrap_or(1)
}

pub(crate) fn parse<T: serde::de::DeserializeOwned>(answer: Value) -> Result<Option<T>, ToolError> {
    if answer.is_null() {
        return Ok(None);
    }
    serde_json::from_value(answer).map(Some).map_err(|e| {
        ToolError::refused(format!(
            "The language server's answer was not understood: {e}"
        ))
    })
}

fn failed(e: LspError) -> ToolError {
    ToolError::refused(e.to_string())
}

fn unavailable(e: actix::MailboxError) -> ToolError {
    ToolError::refused(format!("the {NAME} actor is unavailable ({e})"))
}

/// One request to the server of `file`'s language (started if needed). When the
/// agent cancels the call (or the tool times out) this future is dropped, and the
/// server is told to stop working on the request.
pub(crate) async fn ask(
    ctx: &ToolContext,
    file: &Path,
    method: &'static str,
    params: Value,
) -> Result<Value, ToolError> {
    let pool = &ctx.services.language_servers;
    let token = next_token();
    let asked = Ask {
        file: file.to_path_buf(),
        method,
        params,
        token,
    };
    let mut guard = CancelOnDrop {
        pool: pool.clone(),
        token,
        armed: true,
    };
    let answer = pool.send(asked).await.map_err(unavailable)?.map_err(failed);
    guard.armed = false;
    answer
}

/// `method` (one that [`answers`]) with the editor's `params` (paths already confined
/// and absolute), answered by the pool in the editor's shape.
pub(crate) async fn answer(ctx: &ToolContext, method: Method, params: &Value) -> ToolResult {
    if method == Method::SearchSymbols {
        return search(ctx, params).await;
    }
    let file = params["file"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| ToolError::refused("file is required"))?;
    let document = json!({"uri": shapes::uri_of(&file)});
    let at = || {
        json!({
            "textDocument": document,
            "position": shapes::position(number(params, "line"), number(params, "column")),
        })
    };
    let shaped = match method {
        Method::GetHover => {
            shapes::hover(parse(ask(ctx, &file, "textDocument/hover", at()).await?)?)
        }
        Method::GoToDefinition => shapes::definition(parse(
            ask(ctx, &file, "textDocument/definition", at()).await?,
        )?),
        Method::FindReferences => {
            let mut p = at();
            p["context"] = json!({"includeDeclaration": true});
            shapes::references(parse(ask(ctx, &file, "textDocument/references", p).await?)?)
        }
        Method::GetDocumentSymbols => {
            let p = json!({"textDocument": document});
            shapes::document_symbols(parse(
                ask(ctx, &file, "textDocument/documentSymbol", p).await?,
            )?)
        }
        Method::GetCallHierarchy => call_hierarchy(ctx, &file, at(), params).await?,
        Method::GetTypeHierarchy => type_hierarchy(ctx, &file, at(), params).await?,
        Method::GetInlayHints => {
            let first = number(params, "startLine");
            let last = number(params, "endLine").max(first);
            let p = json!({
                "textDocument": document,
                "range": {"start": shapes::position(first, 1), "end": shapes::position(last + 1, 1)},
            });
            shapes::inlay_hints(parse(ask(ctx, &file, "textDocument/inlayHint", p).await?)?)
        }
        Method::GetCodeActions => {
            let (actions, _) = code_actions(ctx, &file, params).await?;
            shapes::code_actions(&actions)
        }
        Method::ApplyCodeAction => apply_code_action(ctx, &file, params).await?,
        Method::RenameSymbol => rename(ctx, &file, at(), params).await?,
        Method::FormatDocument => format(ctx, &file).await?,
        other => {
            return Err(ToolError::refused(format!(
                "{} is not answered by the bridge's language servers",
                other.name()
            )))
        }
    };
    Ok(CallToolResult::json(&shaped))
}

/// Why nothing could be searched: which configured servers are installed (a file of
/// theirs starts one), or that none is.
fn none_running(ctx: &ToolContext) -> String {
    let servers = crate::lsp::servers::effective(&ctx.services.settings.lsp.servers);
    let (installed, missing): (Vec<_>, Vec<_>) = servers
        .iter()
        .partition(|(_, s)| crate::lsp::servers::resolve(&s.command).is_some());
    let missing = missing
        .iter()
        .map(|(language, s)| format!("{} ({language})", s.command))
        .collect::<Vec<_>>()
        .join(", ");
    if installed.is_empty() {
        return format!(
            "No language server is installed: none of {missing} is on PATH (install one, or set lsp.servers)"
        );
    }
    // Each installed server with the files that start it; the rest named too, so that
    // a workspace of a language whose server is missing hears why.
    let installed: Vec<String> = installed
        .iter()
        .map(|(language, s)| {
            let files: Vec<String> = s
                .extensions
                .iter()
                .take(2)
                .map(|e| format!(".{e}"))
                .collect();
            format!("{} ({language}: {})", s.command, files.join(", "))
        })
        .collect();
    let mut said = format!(
        "No language server is running yet: ask about a file of an installed server's \
         language (getHover, getDocumentSymbols) to start it, then search. Installed: {}",
        installed.join("; ")
    );
    if !missing.is_empty() {
        said.push_str(&format!(
            ". Not installed (install one, or set lsp.servers): {missing}"
        ));
    }
    said
}

/// `searchSymbols`: every running server's `workspace/symbol`, merged.
async fn search(ctx: &ToolContext, params: &Value) -> ToolResult {
    let max = params["maxResults"].as_u64().unwrap_or(50).clamp(1, 200) as usize;
    let asked = AskRunning {
        method: "workspace/symbol",
        params: json!({"query": params["query"].as_str().unwrap_or("")}),
    };
    let answers = ctx
        .services
        .language_servers
        .send(asked)
        .await
        .map_err(unavailable)?;
    if answers.is_empty() {
        return Err(ToolError::refused(none_running(ctx)));
    }
    let mut symbols = Vec::new();
    let mut truncated = false;
    let mut failures = Vec::new();
    let asked = answers.len();
    for (language, answer) in answers {
        let listed = match answer.map_err(failed).and_then(parse) {
            Ok(found) => shapes::workspace_symbols(found, max),
            Err(e) => {
                failures.push(format!("{language}: {e}"));
                continue;
            }
        };
        truncated |= listed["truncated"].as_bool().unwrap_or(false);
        symbols.extend(listed["symbols"].as_array().cloned().unwrap_or_default());
    }
    if failures.len() == asked {
        return Err(ToolError::refused(format!(
            "No language server could search: {}",
            failures.join("; ")
        )));
    }
    truncated |= symbols.len() > max;
    symbols.truncate(max);
    let mut answer = json!({"symbols": symbols, "count": symbols.len(), "truncated": truncated, "source": "bridge"});
    if !failures.is_empty() {
        answer["unanswered"] = json!(failures);
    }
    Ok(CallToolResult::json(&answer))
}

/// The most items one direction of a hierarchy lists (`maxResults`, default 50).
fn most(params: &Value) -> usize {
    params["maxResults"].as_u64().unwrap_or(50).clamp(1, 200) as usize
}

/// Whether `direction` (default `both`) includes `one`.
fn wants(params: &Value, one: &str) -> bool {
    matches!(params["direction"].as_str(), None | Some("both")) || params["direction"] == one
}

/// `getCallHierarchy`: `{symbol, incoming, outgoing}` (the directions asked for), or
/// null when there is no function there.
async fn call_hierarchy(
    ctx: &ToolContext,
    file: &Path,
    at: Value,
    params: &Value,
) -> Result<Value, ToolError> {
    let items = ask(ctx, file, "textDocument/prepareCallHierarchy", at).await?;
    let Some(raw) = items.get(0).cloned() else {
        return Ok(Value::Null);
    };
    let Some(item) = parse::<crate::lsp::types::CallHierarchyItem>(raw.clone())? else {
        return Ok(Value::Null);
    };
    let mut out = json!({"symbol": shapes::call_item(&item)});
    let max = most(params);
    // Each call names the other end under `from` (incoming) or `to` (outgoing).
    for (key, method, end) in [
        ("incoming", "callHierarchy/incomingCalls", "from"),
        ("outgoing", "callHierarchy/outgoingCalls", "to"),
    ] {
        if wants(params, key) {
            let calls: Vec<Value> =
                parse(ask(ctx, file, method, json!({"item": raw})).await?)?.unwrap_or_default();
            let mut items = Vec::new();
            for call in calls.into_iter().take(max) {
                if let Some(item) =
                    parse::<crate::lsp::types::CallHierarchyItem>(call[end].clone())?
                {
                    items.push(shapes::call_item(&item));
                }
            }
            out[key] = Value::Array(items);
        }
    }
    Ok(out)
}

/// `getTypeHierarchy`: `{found: true, root, supertypes, subtypes}` (the directions
/// asked for), or `{found: false}`.
async fn type_hierarchy(
    ctx: &ToolContext,
    file: &Path,
    at: Value,
    params: &Value,
) -> Result<Value, ToolError> {
    let items = ask(ctx, file, "textDocument/prepareTypeHierarchy", at).await?;
    let Some(raw) = items.get(0).cloned() else {
        return Ok(json!({"found": false}));
    };
    let Some(item) = parse::<crate::lsp::types::TypeHierarchyItem>(raw.clone())? else {
        return Ok(json!({"found": false}));
    };
    let mut out = json!({"found": true, "root": shapes::type_item(&item)});
    let max = most(params);
    for (key, method) in [
        ("supertypes", "typeHierarchy/supertypes"),
        ("subtypes", "typeHierarchy/subtypes"),
    ] {
        if wants(params, key) {
            let found = ask(ctx, file, method, json!({"item": raw})).await?;
            let found: Vec<crate::lsp::types::TypeHierarchyItem> =
                parse(found)?.unwrap_or_default();
            out[key] = found.iter().take(max).map(shapes::type_item).collect();
        }
    }
    Ok(out)
}

/// The code actions of the range in `params` (`startLine`… ; the whole file without
/// one), with the server's diagnostics there as their context: typed, and as sent.
async fn code_actions(
    ctx: &ToolContext,
    file: &Path,
    params: &Value,
) -> Result<(Vec<crate::lsp::types::CodeActionOrCommand>, Vec<Value>), ToolError> {
    let start = shapes::position(number(params, "startLine"), number(params, "startColumn"));
    let end = match params["endLine"].as_u64() {
        Some(line) => shapes::position(line, number(params, "endColumn")),
        None => crate::lsp::types::Position::new(u32::MAX / 2, 0),
    };
    // The server's diagnostics in the range let it offer its quick fixes; none known
    // (it publishes none, or not in time) still asks for the rest.
    let diagnose = Diagnose {
        file: file.to_path_buf(),
        start: true,
        wait: ctx.services.settings.lsp.request_timeout,
    };
    let published = match ctx.services.language_servers.send(diagnose).await {
        Ok(Ok(Some(d))) => d,
        _ => Vec::new(),
    };
    let within: Vec<Value> = published
        .into_iter()
        .filter(|d| {
            let line = |k: &str| d["range"][k]["line"].as_u64().unwrap_or(0);
            line("start") <= u64::from(end.line) && line("end") >= u64::from(start.line)
        })
        .collect();
    let p = json!({
        "textDocument": {"uri": shapes::uri_of(file)},
        "range": {"start": start, "end": end},
        "context": {"diagnostics": within, "triggerKind": 1},
    });
    let raw: Vec<Value> =
        parse(ask(ctx, file, "textDocument/codeAction", p).await?)?.unwrap_or_default();
    let typed = raw
        .iter()
        .filter_map(|a| serde_json::from_value(a.clone()).ok())
        .collect();
    Ok((typed, raw))
}

/// `applyCodeAction`: the action titled `actionTitle` (resolved first when the server
/// sends its edit later), its edit applied through the bridge's writer.
async fn apply_code_action(
    ctx: &ToolContext,
    file: &Path,
    params: &Value,
) -> Result<Value, ToolError> {
    let title = params["actionTitle"].as_str().unwrap_or_default();
    let (_, raw) = code_actions(ctx, file, params).await?;
    let Some(mut action) = raw.iter().find(|a| a["title"] == title).cloned() else {
        let titles: Vec<&str> = raw.iter().filter_map(|a| a["title"].as_str()).collect();
        return Ok(json!({
            "applied": false,
            "error": format!("no code action titled '{title}' (available: {})", titles.join("; ")),
        }));
    };
    if action.get("edit").is_none() && action.get("data").is_some() {
        let resolved = ask(ctx, file, "codeAction/resolve", action.clone()).await?;
        if resolved.is_object() {
            action = resolved;
        }
    }
    let Some(edit) = action.get("edit").cloned() else {
        let command = action["command"]["command"]
            .as_str()
            .or(action["command"].as_str())
            .unwrap_or("?");
        return Ok(json!({
            "applied": false,
            "title": title,
            "error": format!("this action runs the language server's command '{command}', whose edit only an editor applies; connect an editor to apply it"),
        }));
    };
    let edit: crate::lsp::types::WorkspaceEdit = parse(edit)?.unwrap_or_default();
    let files = by_file(&edit).map_err(|e| ToolError::refused(e.to_string()))?;
    let applied = apply_all(ctx, Method::ApplyCodeAction.name(), files).await?;
    Ok(json!({
        "applied": true,
        "title": title,
        "affectedFiles": applied.affected_files,
        "totalEdits": applied.total_edits,
    }))
}

/// `renameSymbol`: the server's rename, applied through the bridge's writer, or with
/// `preview: true` only listed.
async fn rename(
    ctx: &ToolContext,
    file: &Path,
    mut at: Value,
    params: &Value,
) -> Result<Value, ToolError> {
    at["newName"] = params["newName"].clone();
    let Some(edit) = parse::<crate::lsp::types::WorkspaceEdit>(
        ask(ctx, file, "textDocument/rename", at).await?,
    )?
    else {
        return Ok(
            json!({"success": false, "error": "the language server found nothing to rename there"}),
        );
    };
    let files = by_file(&edit).map_err(|e| ToolError::refused(e.to_string()))?;
    if params["preview"] == true {
        let total: usize = files.iter().map(|f| f.edits.len()).sum();
        return Ok(json!({
            "success": true,
            "applied": false,
            "affectedFiles": files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
            "totalEdits": total,
            "changes": files.iter().map(preview).collect::<Vec<_>>(),
        }));
    }
    let applied = apply_all(ctx, Method::RenameSymbol.name(), files).await?;
    Ok(json!({
        "success": true,
        "applied": true,
        "affectedFiles": applied.affected_files,
        "totalEdits": applied.total_edits,
    }))
}

/// `formatDocument`: the server's formatting of the file, written through the
/// bridge's writer.
async fn format(ctx: &ToolContext, file: &Path) -> Result<Value, ToolError> {
    let p = json!({
        "textDocument": {"uri": shapes::uri_of(file)},
        "options": {"tabSize": 4, "insertSpaces": true},
    });
    let edits: Vec<crate::lsp::types::TextEdit> =
        parse(ask(ctx, file, "textDocument/formatting", p).await?)?.unwrap_or_default();
    if edits.is_empty() {
        return Ok(json!({"success": true, "editsApplied": 0}));
    }
    let files = vec![FileEdits {
        path: file.display().to_string(),
        edits,
    }];
    let applied = apply_all(ctx, Method::FormatDocument.name(), files).await?;
    Ok(json!({"success": true, "editsApplied": applied.total_edits}))
}

/// Tells the pool that the asker with `token` gave up, when dropped still armed.
struct CancelOnDrop {
    pool: actix::Addr<crate::actors::language_servers::LanguageServers>,
    token: u64,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.pool.do_send(CancelAsk(self.token));
        }
    }
}
