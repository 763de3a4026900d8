//! The editor's language tools answered by the bridge's own language servers (the
//! LanguageServers pool), in the same shapes, when no editor is connected (or always,
//! with `lsp.prefer = "pool"`).

use serde_json::{json, Value};

use super::super::{ToolError, ToolResult};
use super::ToolContext;
use crate::actors::language_servers::{next_token, Ask, AskRunning, CancelAsk, LspError, NAME};
use crate::lsp::shapes;
use crate::protocol::editor::Method;
use crate::protocol::mcp::CallToolResult;

/// The editor methods the pool answers.
pub(crate) const fn answers(method: Method) -> bool {
    matches!(
        method,
        Method::GetHover
            | Method::GoToDefinition
            | Method::FindReferences
            | Method::GetDocumentSymbols
            | Method::SearchSymbols
    )
}

fn number(params: &Value, key: &str) -> u64 {
    params[key].as_u64().unwrap_or(1)
}

fn parse<T: serde::de::DeserializeOwned>(answer: Value) -> Result<Option<T>, ToolError> {
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

/// `method` (one that [`answers`]) with the editor's `params` (paths already confined
/// and absolute), answered by the pool.
pub(crate) async fn answer(ctx: &ToolContext, method: Method, params: &Value) -> ToolResult {
    let pool = &ctx.services.language_servers;
    if method == Method::SearchSymbols {
        let max = params["maxResults"].as_u64().unwrap_or(50).clamp(1, 200) as usize;
        let asked = AskRunning {
            method: "workspace/symbol",
            params: json!({"query": params["query"].as_str().unwrap_or("")}),
        };
        let answers = pool
            .send(asked)
            .await
            .map_err(|e| ToolError::refused(format!("the {NAME} actor is unavailable ({e})")))?;
        if answers.is_empty() {
            return Err(ToolError::refused(
                "No language server is running yet: ask about a file (getHover, getDocumentSymbols) to start its language's server, then search",
            ));
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
        return Ok(CallToolResult::json(&answer));
    }
    let file = params["file"]
        .as_str()
        .map(std::path::PathBuf::from)
        .ok_or_else(|| ToolError::refused("file is required"))?;
    let document = json!({"uri": shapes::uri_of(&file)});
    let at = || {
        json!({
            "textDocument": document,
            "position": shapes::position(number(params, "line"), number(params, "column")),
        })
    };
    let (lsp_method, lsp_params) = match method {
        Method::GetHover => ("textDocument/hover", at()),
        Method::GoToDefinition => ("textDocument/definition", at()),
        Method::FindReferences => {
            let mut p = at();
            p["context"] = json!({"includeDeclaration": true});
            ("textDocument/references", p)
        }
        Method::GetDocumentSymbols => (
            "textDocument/documentSymbol",
            json!({"textDocument": document}),
        ),
        other => {
            return Err(ToolError::refused(format!(
                "{} is not answered by the bridge's language servers",
                other.name()
            )))
        }
    };
    let token = next_token();
    let asked = Ask {
        file,
        method: lsp_method,
        params: lsp_params,
        token,
    };
    // The agent may cancel the call (or the tool time out): this future is dropped, and
    // the server is told to stop working on the request.
    let mut guard = CancelOnDrop {
        pool: pool.clone(),
        token,
        armed: true,
    };
    let answer = pool
        .send(asked)
        .await
        .map_err(|e| ToolError::refused(format!("the {NAME} actor is unavailable ({e})")))?
        .map_err(failed)?;
    guard.armed = false;
    let shaped = match method {
        Method::GetHover => shapes::hover(parse(answer)?),
        Method::GoToDefinition => shapes::definition(parse(answer)?),
        Method::FindReferences => shapes::references(parse(answer)?),
        _ => shapes::document_symbols(parse(answer)?),
    };
    Ok(CallToolResult::json(&shaped))
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
