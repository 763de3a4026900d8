//! The bridge's capabilities as the composable language's functions, types and
//! conversions, each declared once here: the tool's description and `describe` are
//! written from these declarations. Every function runs bridge tools for the calling
//! agent (so an editor answers when one is connected, the language-server pool when
//! not, and claims and confinement apply as to any call), each recorded in the agent's
//! timeline as its own calls are.

use std::collections::HashMap;
use std::sync::LazyLock;
use std::time::Instant;

use futures_util::FutureExt;
use ide_bridge_compose::{Args, Conversion, Function, Language, Outcome, Param, Ty, TypeInfo};
use serde_json::{json, Map, Value};

use crate::actors::activity_log::{CallStatus, RecordToolCall};
use crate::protocol::editor::Method;
use crate::protocol::mcp::Content;
use crate::tools::changes::WhoChanged;
use crate::tools::files::read_file::ReadFile;
use crate::tools::files::search_workspace::SearchWorkspace;
use crate::tools::git::git_blame::GitBlame;
use crate::tools::ide::get_current_selection::GetCurrentSelection;
use crate::tools::ide::get_diagnostics::GetDiagnostics;
use crate::tools::registry::Tool;
use crate::tools::summary::summarize;
use crate::tools::ToolContext;

/// The language, built once.
pub static LANGUAGE: LazyLock<Language<ToolContext>> =
    LazyLock::new(|| build().expect("the capability language is consistent"));

/// Files `findSymbol` outlines when no symbol search answers (those whose text names
/// the symbol, in path order).
const OUTLINED_FILES: usize = 20;
/// Characters of a line shown beside a location.
const LINE_CHARS: usize = 160;

const SYMBOL: &str = "symbol";
const LOCATION: &str = "location";
const SELECTION: &str = "selection";
const FILE: &str = "file";
const DIAGNOSTIC: &str = "diagnostic";

fn build() -> Result<Language<ToolContext>, ide_bridge_compose::LanguageError> {
    let mut l = Language::default();
    l.type_(TypeInfo {
        name: SYMBOL,
        description: "a named definition: {name, kind, file, line, column} (1-based, at its name)",
        show: |v| {
            format!(
                "{} {} — {}:{}",
                v["kind"].as_str().unwrap_or("symbol"),
                v["name"].as_str().unwrap_or("?"),
                v["file"].as_str().unwrap_or("?"),
                v["line"]
            )
        },
    })?;
    l.type_(TypeInfo {
        name: LOCATION,
        description: "a place in a file: {file, line, column, text} (1-based; text is the line)",
        show: |v| match v["text"].as_str() {
            Some(text) => format!(
                "{}:{}: {}",
                v["file"].as_str().unwrap_or("?"),
                v["line"],
                text.trim()
            ),
            None => format!(
                "{}:{}:{}",
                v["file"].as_str().unwrap_or("?"),
                v["line"],
                v["column"]
            ),
        },
    })?;
    l.type_(TypeInfo {
        name: SELECTION,
        description: "what the person selected in the editor: {file, line, column, endLine, endColumn, text}",
        show: |v| format!("{}:{}: {:?}", v["file"].as_str().unwrap_or("?"), v["line"], v["text"].as_str().unwrap_or("")),
    })?;
    l.type_(TypeInfo {
        name: FILE,
        description: "a workspace file: {path}",
        show: |v| v["path"].as_str().unwrap_or("?").to_string(),
    })?;
    l.type_(TypeInfo {
        name: DIAGNOSTIC,
        description: "an error or warning: {file, line, severity, message, source}",
        show: |v| {
            format!(
                "{}:{}: {}: {}",
                v["file"].as_str().unwrap_or("?"),
                v["line"],
                v["severity"].as_str().unwrap_or("?"),
                v["message"].as_str().unwrap_or("")
            )
        },
    })?;
    let symbol = Ty::one(SYMBOL);
    let location = Ty::one(LOCATION);
    let file = Ty::one(FILE);
    l.function(Function {
        name: "findSymbol",
        description: "Definitions with this exact name (functions, classes, variables…), from the editor's or the language servers' symbols.",
        params: vec![
            Param::required("name", Ty::STRING, "the symbol's name"),
            Param::optional("kind", Ty::STRING, "only this kind (Function, Class, Method, Variable…)"),
            Param::optional(FILE, file, "only definitions in this file"),
        ],
        returns: Ty::many(SYMBOL),
        body: |ctx, a| find_symbol(ctx, a).boxed_local(),
    })?;
    l.function(Function {
        name: "findReferences",
        description: "Every reference to a symbol (its call sites and uses, the definition included), each with its line.",
        params: vec![Param::required(SYMBOL, symbol, "the symbol")],
        returns: Ty::many(LOCATION),
        body: |ctx, a| {
            async move {
                let at = position(a.value(SYMBOL));
                outcome(locations(ctx, Method::FindReferences.name(), at, "/references").await)
            }
            .boxed_local()
        },
    })?;
    l.function(Function {
        name: "goToDefinition",
        description: "Where what is at a location is defined.",
        params: vec![Param::required(LOCATION, location, "a use of the name")],
        returns: Ty::many(LOCATION),
        body: |ctx, a| {
            async move {
                let at = position(a.value(LOCATION));
                outcome(locations(ctx, Method::GoToDefinition.name(), at, "").await)
            }
            .boxed_local()
        },
    })?;
    l.function(Function {
        name: "getHover",
        description: "The type and documentation of what is at a location.",
        params: vec![Param::required(LOCATION, location, "where")],
        returns: Ty::STRING,
        body: |ctx, a| {
            async move {
                let answer =
                    match tool(ctx, Method::GetHover.name(), position(a.value(LOCATION))).await {
                        Ok(answer) => answer,
                        Err(e) => return Outcome::Failed(e),
                    };
                let parts: Vec<&str> = answer["contents"]
                    .as_array()
                    .map(|c| c.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if parts.is_empty() {
                    Outcome::Failed("nothing to show there".into())
                } else {
                    Outcome::Value(json!(parts.join("\n\n")))
                }
            }
            .boxed_local()
        },
    })?;
    l.function(Function {
        name: "getSelection",
        description: "What the person has selected in the editor now (needs a connected editor).",
        params: vec![],
        returns: Ty::one(SELECTION),
        body: |ctx, _| selection(ctx).boxed_local(),
    })?;
    l.function(Function {
        name: "getDiagnostics",
        description: "Errors and warnings, of one file or of every file known (editor, language servers, linters).",
        params: vec![Param::optional(FILE, file, "only this file")],
        returns: Ty::many(DIAGNOSTIC),
        body: |ctx, a| diagnostics(ctx, a).boxed_local(),
    })?;
    l.function(Function {
        name: "searchText",
        description: "Lines of the workspace's files containing text (or matching a regex), each as a location.",
        params: vec![
            Param::required("query", Ty::STRING, "the text (or regex)"),
            Param::optional("regex", Ty::BOOLEAN, "treat query as a regex"),
            Param::optional("glob", Ty::STRING, "only files matching this glob (*.py)"),
        ],
        returns: Ty::many(LOCATION),
        body: |ctx, a| search_text(ctx, a).boxed_local(),
    })?;
    l.function(Function {
        name: "readLines",
        description: "The text of a file, or of some of its lines.",
        params: vec![
            Param::required(FILE, file, "the file"),
            Param::optional("start", Ty::NUMBER, "first line (1-based)"),
            Param::optional("end", Ty::NUMBER, "last line"),
        ],
        returns: Ty::STRING,
        body: |ctx, a| {
            async move {
                let mut args = json!({"filePath": a.value(FILE).map(|f| f["path"].clone())});
                for (from, to) in [("start", "startLine"), ("end", "endLine")] {
                    if let Some(n) = a.u64(from) {
                        args[to] = json!(n.max(1));
                    }
                }
                match tool(ctx, ReadFile::NAME, args).await {
                    Ok(answer) => Outcome::Value(answer.get("content").cloned().unwrap_or(answer)),
                    Err(e) => Outcome::Failed(e),
                }
            }
            .boxed_local()
        },
    })?;
    for (name, direction, description) in [
        ("callers", "incoming", "The functions that call a symbol."),
        ("callees", "outgoing", "The functions a symbol calls."),
    ] {
        l.function(Function {
            name,
            description,
            params: vec![Param::required(SYMBOL, symbol, "a function or method")],
            returns: Ty::many(SYMBOL),
            body: if direction == "incoming" {
                |ctx, a| calls(ctx, a, "incoming").boxed_local()
            } else {
                |ctx, a| calls(ctx, a, "outgoing").boxed_local()
            },
        })?;
    }
    l.function(Function {
        name: "fileOutline",
        description: "Every symbol a file defines, nested ones after their parent.",
        params: vec![Param::required(FILE, file, "the file")],
        returns: Ty::many(SYMBOL),
        body: |ctx, a| {
            async move {
                let path = a
                    .value(FILE)
                    .and_then(|f| f["path"].as_str())
                    .unwrap_or("")
                    .to_string();
                outcome(outline(ctx, &path).await)
            }
            .boxed_local()
        },
    })?;
    l.function(Function {
        name: "gitBlame",
        description: "Who last changed a line, in which commit (git blame).",
        params: vec![Param::required(LOCATION, location, "the line")],
        returns: Ty::ANY,
        body: |ctx, a| {
            async move {
                let at = a.value(LOCATION).cloned().unwrap_or_default();
                let args =
                    json!({"filePath": at["file"], "startLine": at["line"], "endLine": at["line"]});
                outcome(tool(ctx, GitBlame::NAME, args).await)
            }
            .boxed_local()
        },
    })?;
    l.function(Function {
        name: "whoChanged",
        description: "Which agent changed a line through the bridge or its own tools, and whether the person kept it.",
        params: vec![Param::required(LOCATION, location, "the line")],
        returns: Ty::ANY,
        body: |ctx, a| {
            async move {
                let at = a.value(LOCATION).cloned().unwrap_or_default();
                outcome(tool(ctx, WhoChanged::NAME, json!({"file": at["file"], "line": at["line"]})).await)
            }
            .boxed_local()
        },
    })?;
    #[cfg(feature = "fault-injection")]
    l.function(Function {
        name: "debugSleep",
        description: "Test builds only: waits ms milliseconds.",
        params: vec![Param::required("ms", Ty::NUMBER, "how long")],
        returns: Ty::NULL,
        body: |_, a| {
            async move {
                tokio::time::sleep(std::time::Duration::from_millis(a.u64("ms").unwrap_or(0)))
                    .await;
                Outcome::Value(Value::Null)
            }
            .boxed_local()
        },
    })?;
    conversions(&mut l)?;
    Ok(l)
}

fn conversions(l: &mut Language<ToolContext>) -> Result<(), ide_bridge_compose::LanguageError> {
    l.conversion(Conversion {
        from: "string",
        to: SYMBOL,
        description: "the definitions of that name (findSymbol)",
        body: |ctx, v| {
            async move {
                let mut values = Map::new();
                values.insert("name".into(), v);
                find_symbol(
                    ctx,
                    Args {
                        values,
                        limit: 1000,
                    },
                )
                .await
            }
            .boxed_local()
        },
    })?;
    l.conversion(Conversion {
        from: "string",
        to: FILE,
        description: "its path",
        body: |_, v| async move { Outcome::Value(json!({"path": v})) }.boxed_local(),
    })?;
    l.conversion(Conversion {
        from: "string",
        to: LOCATION,
        description: "\"path:line\" or \"path:line:column\"",
        body: |_, v| async move { parse_location(v.as_str().unwrap_or("")) }.boxed_local(),
    })?;
    l.conversion(Conversion {
        from: SYMBOL,
        to: LOCATION,
        description: "where its name is",
        body: |_, v| {
            async move {
                Outcome::Value(json!({"file": v["file"], "line": v["line"], "column": v["column"]}))
            }
            .boxed_local()
        },
    })?;
    l.conversion(Conversion {
        from: SYMBOL,
        to: FILE,
        description: "the file it is in",
        body: |_, v| async move { Outcome::Value(json!({"path": v["file"]})) }.boxed_local(),
    })?;
    l.conversion(Conversion {
        from: LOCATION,
        to: FILE,
        description: "its file",
        body: |_, v| async move { Outcome::Value(json!({"path": v["file"]})) }.boxed_local(),
    })?;
    l.conversion(Conversion {
        from: SELECTION,
        to: LOCATION,
        description: "where it starts",
        body: |_, v| async move { Outcome::Value(json!({"file": v["file"], "line": v["line"], "column": v["column"], "text": v["text"]})) }.boxed_local(),
    })?;
    l.conversion(Conversion {
        from: SELECTION,
        to: SYMBOL,
        description: "the selected name (or the word at the cursor), where it is",
        body: |ctx, v| selected_symbol(ctx, v).boxed_local(),
    })?;
    l.conversion(Conversion {
        from: SELECTION,
        to: FILE,
        description: "the file it is in",
        body: |_, v| async move { Outcome::Value(json!({"path": v["file"]})) }.boxed_local(),
    })?;
    Ok(())
}

fn outcome(result: Result<Value, String>) -> Outcome {
    match result {
        Ok(v) => Outcome::Value(v),
        Err(e) => Outcome::Failed(e),
    }
}

/// Runs the bridge tool `name` with `args` for the calling agent, as if it had called
/// it (its schema, its editor-or-pool routing, its checks): the answer's JSON (its
/// structured content, or its text parsed), or the tool's error.
async fn tool(ctx: &ToolContext, name: &str, args: Value) -> Result<Value, String> {
    let t = ctx
        .services
        .tools
        .get(name)
        .ok_or_else(|| format!("the bridge has no tool {name}"))?;
    // What `tools.expose` hides from the model stays hidden behind this tool too.
    if !t.exposed {
        return Err(format!(
            "{name} is not exposed (tools.expose), so ideCapability cannot run it"
        ));
    }
    t.validate(&args).map_err(|e| e.to_string())?;
    let summary = format!("via ideCapability: {}", summarize(&args));
    let started = Instant::now();
    let answer = t
        .invoke(ctx.sibling(), args)
        .map_err(|e| e.to_string())?
        .await;
    // In the agent's timeline and the metrics like its own calls, so that the person
    // sees what a program did.
    let status = if answer.is_error {
        CallStatus::Error
    } else {
        CallStatus::Success
    };
    let elapsed = started.elapsed();
    t.meter(&ctx.services.metrics)
        .record(status, elapsed.as_secs_f64());
    ctx.services.activity.do_send(RecordToolCall {
        tool: t.info.name.into(),
        session_id: ctx.session_id.clone(),
        status,
        duration_ms: elapsed.as_millis() as u64,
        summary,
        native: false,
        call_id: None,
    });
    let text: Vec<&str> = answer
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let text = text.join("\n");
    if answer.is_error {
        return Err(text);
    }
    Ok(answer
        .structured_content
        .unwrap_or_else(|| serde_json::from_str(&text).unwrap_or(Value::String(text))))
}

/// `{file, line, column}` of a symbol or location, as the position tools take them.
fn position(v: Option<&Value>) -> Value {
    let v = v.cloned().unwrap_or_default();
    json!({"file": v["file"], "line": v["line"], "column": v["column"]})
}

/// The workspace-relative form of a path a tool answered.
fn relative(ctx: &ToolContext, path: &str) -> String {
    ctx.services
        .workspace
        .relative(path)
        .unwrap_or_else(|| path.to_string())
}

/// Lines of files, by `(file, 1-based line)`.
type Lines = HashMap<(String, u64), String>;

/// Characters of a line kept for context and for finding a name in it.
const LINE_KEPT: usize = 1000;

/// The lines asked for, each file read once (confined; at most 200 files) and only the
/// lines asked for kept (cut at [`LINE_KEPT`] characters).
async fn lines_of(ctx: &ToolContext, wanted: Vec<(String, u64)>) -> Lines {
    let mut by_file: HashMap<String, Vec<u64>> = HashMap::new();
    for (file, line) in wanted {
        by_file.entry(file).or_default().push(line);
    }
    let workspace = ctx.services.workspace.clone();
    crate::tools::blocking(move || {
        let mut kept = Lines::new();
        for (rel, lines) in by_file.into_iter().take(200) {
            let Ok(abs) = workspace.resolve(&rel) else {
                continue;
            };
            let Ok((text, _)) = crate::workspace::files::read_text(workspace.dir(), &abs) else {
                continue;
            };
            let all: Vec<&str> = text.lines().collect();
            for line in lines {
                let Some(at) = (line as usize).checked_sub(1).and_then(|i| all.get(i)) else {
                    continue;
                };
                kept.insert((rel.clone(), line), at.chars().take(LINE_KEPT).collect());
            }
        }
        kept
    })
    .await
    .unwrap_or_default()
}

/// Each location with its file made relative and its line's text beside it.
async fn with_lines(ctx: &ToolContext, found: Vec<Value>) -> Vec<Value> {
    let mut found: Vec<Value> = found
        .into_iter()
        .map(|mut l| {
            let rel = relative(ctx, l["file"].as_str().unwrap_or(""));
            json!({"file": rel, "line": l["line"].take(), "column": l["column"].take()})
        })
        .collect();
    let key = |l: &Value| {
        (
            l["file"].as_str().unwrap_or("").to_string(),
            l["line"].as_u64().unwrap_or(0),
        )
    };
    let read = lines_of(ctx, found.iter().map(key).collect()).await;
    for l in &mut found {
        if let Some(text) = read.get(&key(l)) {
            l["text"] = json!(text.chars().take(LINE_CHARS).collect::<String>());
        }
    }
    found
}

/// A tool's symbols as symbol values (in `file` when they do not say), each with its
/// column on its name.
async fn symbols(ctx: &ToolContext, listed: &[Value], file: Option<&str>) -> Vec<Value> {
    let place = |s: &Value| {
        let file = relative(ctx, s["file"].as_str().or(file).unwrap_or(""));
        (file, s["line"].as_u64().unwrap_or(1))
    };
    let lines = lines_of(ctx, listed.iter().map(place).collect()).await;
    listed
        .iter()
        .map(|s| symbol_of(s, place(s), &lines))
        .collect()
}

/// A position tool's locations (at `pointer` in its answer; an array or null at the
/// top for `goToDefinition`), with their lines.
async fn locations(
    ctx: &ToolContext,
    name: &str,
    at: Value,
    pointer: &str,
) -> Result<Value, String> {
    let answer = tool(ctx, name, at).await?;
    let found = answer
        .pointer(pointer)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    Ok(Value::Array(with_lines(ctx, found).await))
}

/// A symbol value from a tool's symbol at `(file, line)`; its column moved onto its
/// name when the line shows the name elsewhere.
fn symbol_of(s: &Value, (file, line): (String, u64), lines: &Lines) -> Value {
    let name = s["name"].as_str().unwrap_or("");
    let mut column = s["column"].as_u64().unwrap_or(1);
    if let Some(text) = lines.get(&(file.clone(), line)) {
        let from = text
            .char_indices()
            .nth((column as usize).saturating_sub(1))
            .map_or(0, |(i, _)| i);
        if !name.is_empty() && !text[from..].starts_with(name) {
            if let Some(i) = word_at(text, name, from).or_else(|| word_at(text, name, 0)) {
                column = text[..i].chars().count() as u64 + 1;
            }
        }
    }
    let mut v =
        json!({"name": name, "kind": s["kind"], "file": file, "line": line, "column": column});
    if let Some(c) = s["containerName"].as_str() {
        v["container"] = json!(c);
    }
    v
}

/// The byte offset of `word` standing alone in `text`, at or after `from`.
fn word_at(text: &str, word: &str, from: usize) -> Option<usize> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut start = from;
    while let Some(i) = text.get(start..)?.find(word).map(|i| i + start) {
        let before = text[..i].chars().next_back().is_none_or(|c| !is_ident(c));
        let after = text[i + word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !is_ident(c));
        if before && after {
            return Some(i);
        }
        start = i + word.len();
    }
    None
}

async fn outline(ctx: &ToolContext, path: &str) -> Result<Value, String> {
    let answer = tool(
        ctx,
        Method::GetDocumentSymbols.name(),
        json!({"file": path}),
    )
    .await?;
    let rel = relative(ctx, path);
    let listed = answer["symbols"].as_array().cloned().unwrap_or_default();
    Ok(Value::Array(symbols(ctx, &listed, Some(&rel)).await))
}

/// `findSymbol`: the editor's (or servers') symbol search, exact names only; when it
/// cannot answer, the outlines of the files whose text names the symbol.
async fn find_symbol(ctx: &ToolContext, a: Args) -> Outcome {
    let Some(name) = a.str("name").map(str::to_string) else {
        return Outcome::Failed("name must be a string".into());
    };
    let kind = a.str("kind").map(str::to_lowercase);
    let only_file = a
        .value(FILE)
        .and_then(|f| f["path"].as_str())
        .map(|p| relative(ctx, p));
    let fits = |s: &Value| {
        s["name"] == name.as_str()
            && kind
                .as_ref()
                .is_none_or(|k| s["kind"].as_str().is_some_and(|sk| sk.to_lowercase() == *k))
            && only_file
                .as_ref()
                .is_none_or(|f| s["file"].as_str() == Some(f))
    };
    let mut found = Vec::new();
    let mut failures = Vec::new();
    if only_file.is_none() {
        match tool(
            ctx,
            "searchSymbols",
            json!({"query": name, "maxResults": 200}),
        )
        .await
        {
            Ok(answer) => {
                let listed = answer["symbols"].as_array().cloned().unwrap_or_default();
                found.extend(symbols(ctx, &listed, None).await.into_iter().filter(fits));
            }
            Err(e) => failures.push(format!("symbol search: {e}")),
        }
    }
    if found.is_empty() {
        let files = match &only_file {
            Some(f) => vec![f.clone()],
            None => match files_naming(ctx, &name).await {
                Ok(files) => files,
                Err(e) => return Outcome::Failed(e),
            },
        };
        for file in files {
            match outline(ctx, &file).await {
                Ok(Value::Array(symbols)) => {
                    for s in symbols.into_iter().filter(fits) {
                        if defined_here(ctx, &s).await {
                            found.push(s);
                        }
                    }
                }
                Ok(_) => {}
                Err(e) => failures.push(format!("{file}: {e}")),
            }
            if found.len() > a.limit {
                break;
            }
        }
    }
    if found.is_empty() && !failures.is_empty() {
        failures.truncate(3);
        return Outcome::Failed(format!(
            "no definition of {name} found; {}",
            failures.join("; ")
        ));
    }
    let mut seen = std::collections::HashSet::new();
    found.retain(|s| seen.insert(s.to_string()));
    Outcome::Value(Value::Array(found))
}

/// Whether an outline's symbol is a definition rather than a name brought in from
/// elsewhere (an import, which some servers outline): its definition is itself, or
/// the server cannot say.
async fn defined_here(ctx: &ToolContext, s: &Value) -> bool {
    let Ok(Value::Array(found)) = tool(ctx, Method::GoToDefinition.name(), position(Some(s))).await
    else {
        return true;
    };
    found.is_empty()
        || found.iter().any(|d| {
            relative(ctx, d["file"].as_str().unwrap_or("")) == s["file"].as_str().unwrap_or("")
                && d["line"] == s["line"]
        })
}

/// The files (at most [`OUTLINED_FILES`]) whose text has `name` as a word.
async fn files_naming(ctx: &ToolContext, name: &str) -> Result<Vec<String>, String> {
    let pattern = format!(r"\b{}\b", regex_syntax::escape(name));
    let answer = tool(
        ctx,
        "searchWorkspace",
        json!({"query": pattern, "regex": true, "maxResults": 500}),
    )
    .await?;
    let mut files: Vec<String> = Vec::new();
    for m in answer["matches"].as_array().into_iter().flatten() {
        let Some(path) = m["path"].as_str() else {
            continue;
        };
        if !files.iter().any(|f| f == path) {
            files.push(path.to_string());
        }
        if files.len() == OUTLINED_FILES {
            break;
        }
    }
    Ok(files)
}

async fn selection(ctx: &ToolContext) -> Outcome {
    let answer = match tool(ctx, GetCurrentSelection::NAME, json!({})).await {
        Ok(answer) => answer,
        Err(e) => return Outcome::Failed(e),
    };
    if answer["success"] != true || answer["filePath"].as_str().is_none_or(str::is_empty) {
        return Outcome::Failed(
            "no selection: no editor is connected, or none has a file open".into(),
        );
    }
    let at = |p: &str| answer.pointer(p).and_then(Value::as_u64).unwrap_or(0) + 1;
    Outcome::Value(json!({
        "file": relative(ctx, answer["filePath"].as_str().unwrap_or("")),
        "line": at("/selection/start/line"),
        "column": at("/selection/start/character"),
        "endLine": at("/selection/end/line"),
        "endColumn": at("/selection/end/character"),
        "text": answer["text"],
    }))
}

/// The selected name, or the word under the cursor, as a symbol at its place.
async fn selected_symbol(ctx: &ToolContext, sel: Value) -> Outcome {
    let file = sel["file"].as_str().unwrap_or("").to_string();
    let line = sel["line"].as_u64().unwrap_or(1);
    let column = sel["column"].as_u64().unwrap_or(1);
    let selected = sel["text"].as_str().unwrap_or("").trim();
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    if !selected.is_empty() && selected.chars().all(is_ident) {
        return Outcome::Value(
            json!({"name": selected, "kind": "", "file": file, "line": line, "column": column}),
        );
    }
    let lines = lines_of(ctx, vec![(file.clone(), line)]).await;
    let Some(text) = lines.get(&(file.clone(), line)) else {
        return Outcome::Failed(format!("cannot read line {line} of {file}"));
    };
    let chars: Vec<char> = text.chars().collect();
    let at = (column as usize).saturating_sub(1).min(chars.len());
    let start = (0..at)
        .rev()
        .take_while(|i| is_ident(chars[*i]))
        .last()
        .unwrap_or(at);
    let end = (at..chars.len())
        .take_while(|i| is_ident(chars[*i]))
        .last()
        .map_or(at, |e| e + 1);
    if start >= end {
        return Outcome::Failed(
            "the selection is not on a name: select one, or put the cursor in it".into(),
        );
    }
    let name: String = chars[start..end].iter().collect();
    Outcome::Value(
        json!({"name": name, "kind": "", "file": file, "line": line, "column": start + 1}),
    )
}

async fn diagnostics(ctx: &ToolContext, a: Args) -> Outcome {
    let args = match a.value(FILE).and_then(|f| f["path"].as_str()) {
        Some(path) => json!({"uri": path}),
        None => json!({}),
    };
    let answer = match tool(ctx, GetDiagnostics::NAME, args).await {
        Ok(answer) => answer,
        Err(e) => return Outcome::Failed(e),
    };
    let mut out = Vec::new();
    for f in answer.as_array().into_iter().flatten() {
        let file = relative(
            ctx,
            f["uri"]
                .as_str()
                .unwrap_or("")
                .trim_start_matches("file://"),
        );
        for d in f["diagnostics"].as_array().into_iter().flatten() {
            out.push(json!({
                "file": file,
                "line": d.pointer("/range/start/line").and_then(Value::as_u64).unwrap_or(0) + 1,
                "severity": d["severity"],
                "message": d["message"],
                "source": d["source"],
            }));
            if out.len() > a.limit {
                return Outcome::Value(Value::Array(out));
            }
        }
    }
    Outcome::Value(Value::Array(out))
}

async fn search_text(ctx: &ToolContext, a: Args) -> Outcome {
    let query = a.str("query").unwrap_or("").to_string();
    let regex = a.value("regex").and_then(Value::as_bool).unwrap_or(false);
    let cap = ctx.services.settings.files.max_results;
    let mut args = json!({"query": query, "regex": regex, "maxResults": (a.limit + 1).min(cap)});
    if let Some(glob) = a.str("glob") {
        args["glob"] = json!(glob);
    }
    let answer = match tool(ctx, SearchWorkspace::NAME, args).await {
        Ok(answer) => answer,
        Err(e) => return Outcome::Failed(e),
    };
    if answer["truncated"] == true && cap <= a.limit {
        return Outcome::Failed(format!(
            "more than {cap} lines match (files.max_results); narrow the query or add a glob"
        ));
    }
    let found = answer["matches"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            let text = m["text"].as_str().unwrap_or("");
            let column = if regex { None } else { text.find(&query) };
            json!({
                "file": m["path"],
                "line": m["line"],
                "column": column.map_or(1, |i| text[..i].chars().count() + 1),
                "text": text.chars().take(LINE_CHARS).collect::<String>(),
            })
        })
        .collect();
    Outcome::Value(Value::Array(found))
}

async fn calls(ctx: &ToolContext, a: Args, direction: &str) -> Outcome {
    let mut at = position(a.value(SYMBOL));
    at["direction"] = json!(direction);
    at["maxResults"] = json!((a.limit + 1).min(200));
    let answer = match tool(ctx, Method::GetCallHierarchy.name(), at).await {
        Ok(answer) => answer,
        Err(e) => return Outcome::Failed(e),
    };
    let items = answer[direction].as_array().cloned().unwrap_or_default();
    Outcome::Value(Value::Array(symbols(ctx, &items, None).await))
}

/// `path:line` or `path:line:column` (a path may hold `:`; a part of digits only is a
/// number, and must be one a file can have).
fn parse_location(text: &str) -> Outcome {
    let mut parts = text.rsplitn(3, ':').collect::<Vec<_>>();
    parts.reverse();
    let digits = |s: &str| !s.trim().is_empty() && s.trim().bytes().all(|b| b.is_ascii_digit());
    let num = |s: &str, what: &str| {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|n| *n >= 1)
            .map(u64::from)
            .ok_or_else(|| {
                format!(
                    "{what} {} in {text:?} is not a {what} a file has (1 to {})",
                    s.trim(),
                    u32::MAX
                )
            })
    };
    let parsed = match parts.as_slice() {
        [file, line, column] if digits(line) && digits(column) => {
            num(line, "line").and_then(|l| Ok((file.to_string(), l, num(column, "column")?)))
        }
        [file, line, column] if digits(column) => {
            num(column, "line").map(|l| (format!("{file}:{line}"), l, 1))
        }
        [file, line] if digits(line) => num(line, "line").map(|l| (file.to_string(), l, 1)),
        _ => Err(format!(
            "{text:?} is not a location: write \"path:line\" or \"path:line:column\""
        )),
    };
    match parsed {
        Ok((file, line, column)) => {
            Outcome::Value(json!({"file": file, "line": line, "column": column}))
        }
        Err(why) => Outcome::Failed(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_and_out_of_range_numbers_are_named() {
        let at = |t: &str| match parse_location(t) {
            Outcome::Value(v) => Ok(v),
            Outcome::Failed(why) => Err(why),
            _ => Err("other".into()),
        };
        assert_eq!(
            at("a.rs:3:5").unwrap(),
            json!({"file": "a.rs", "line": 3, "column": 5})
        );
        assert_eq!(
            at("a.rs:3").unwrap(),
            json!({"file": "a.rs", "line": 3, "column": 1})
        );
        assert_eq!(at("c:/x.rs:3").unwrap()["file"], "c:/x.rs");
        let why = at("README.md:99999999999999999999:1").unwrap_err();
        assert!(why.contains("line 99999999999999999999"), "{why}");
        assert!(at("a.rs:0").unwrap_err().contains("line 0"));
        assert!(at("a.rs:3:0").unwrap_err().contains("column 0"));
        assert!(at("a.rs").unwrap_err().contains("not a location"));
    }

    #[test]
    fn the_language_is_consistent_and_describes_itself() {
        let guide = LANGUAGE.describe(None).unwrap();
        for name in [
            "findSymbol(name: string, kind?: string, file?: file) -> symbol[]",
            "findReferences(symbol: symbol) -> location[]",
            "selection -> symbol",
        ] {
            assert!(guide.contains(name), "{name} in {guide}");
        }
    }

    #[test]
    fn locations_parse_from_text() {
        assert_eq!(
            parse_location("src/a.py:3"),
            Outcome::Value(json!({"file": "src/a.py", "line": 3, "column": 1}))
        );
        assert_eq!(
            parse_location("a.py:3:7"),
            Outcome::Value(json!({"file": "a.py", "line": 3, "column": 7}))
        );
        assert!(matches!(parse_location("a.py"), Outcome::Failed(_)));
        assert!(matches!(parse_location("a.py:0"), Outcome::Failed(_)));
    }

    #[test]
    fn words_are_found_standing_alone() {
        assert_eq!(
            word_at("def greet(): greeting = greet", "greet", 0),
            Some(4)
        );
        assert_eq!(word_at("greeting = greet", "greet", 0), Some(11));
        assert_eq!(word_at("greeting", "greet", 0), None);
    }
}
