//! Language servers' answers in the shapes the editor plugins give (docs/protocol.md):
//! positions 1-based (columns in UTF-16 units, as LSP and VS Code count them), files as
//! absolute paths, symbol kinds by name. An agent cannot tell which one answered.

use lsp_types::{
    DocumentSymbol, DocumentSymbolResponse, GotoDefinitionResponse, Hover, HoverContents, Location,
    MarkedString, Position, Range, SymbolKind, Uri, WorkspaceSymbolResponse,
};
use serde_json::{json, Map, Value};

use crate::diagnostics::{sanitize, Diagnostic, Range as DiagnosticRange, Severity};
use ide_bridge_protocol::ide::Position as IdePosition;

/// The LSP position of a 1-based line and column.
pub fn position(line: u64, column: u64) -> Position {
    let zero = |n: u64| u32::try_from(n.saturating_sub(1)).unwrap_or(u32::MAX);
    Position {
        line: zero(line),
        character: zero(column),
    }
}

/// `file://` URI of an absolute path.
pub fn uri_of(path: &std::path::Path) -> Uri {
    crate::workspace::file_url(path)
        .parse()
        .unwrap_or_else(|_| "file:///".parse().expect("a valid URI"))
}

/// The absolute path of a `file://` URI (percent-decoded); other URIs as they are.
pub fn path_of(uri: &Uri) -> String {
    let text = uri.as_str();
    let Some(rest) = text.strip_prefix("file://") else {
        return text.to_string();
    };
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn span(range: &Range) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("line".into(), json!(range.start.line + 1));
    m.insert("column".into(), json!(range.start.character + 1));
    m.insert("endLine".into(), json!(range.end.line + 1));
    m.insert("endColumn".into(), json!(range.end.character + 1));
    m
}

fn location(uri: &Uri, range: &Range) -> Value {
    let mut m = Map::new();
    m.insert("file".into(), json!(path_of(uri)));
    m.extend(span(range));
    Value::Object(m)
}

/// The name VS Code gives a symbol kind (`Function`, `Class`, …).
pub fn kind_name(kind: SymbolKind) -> String {
    const NAMES: [&str; 26] = [
        "File",
        "Module",
        "Namespace",
        "Package",
        "Class",
        "Method",
        "Property",
        "Field",
        "Constructor",
        "Enum",
        "Interface",
        "Function",
        "Variable",
        "Constant",
        "String",
        "Number",
        "Boolean",
        "Array",
        "Object",
        "Key",
        "Null",
        "EnumMember",
        "Struct",
        "Event",
        "Operator",
        "TypeParameter",
    ];
    let n: i32 = serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_i64())
        .and_then(|n| i32::try_from(n).ok())
        .unwrap_or(0);
    usize::try_from(n - 1)
        .ok()
        .and_then(|i| NAMES.get(i))
        .map_or_else(|| n.to_string(), |s| (*s).to_string())
}

fn marked(m: &MarkedString) -> String {
    match m {
        MarkedString::String(s) => s.clone(),
        MarkedString::LanguageString(l) => format!("```{}\n{}\n```", l.language, l.value),
    }
}

/// A server's diagnostic in Claude Code's shape (message sanitised and capped; a
/// diagnostic without a severity is an error, as LSP leaves it to the client).
pub fn diagnostic(d: &lsp_types::Diagnostic) -> Diagnostic {
    use lsp_types::DiagnosticSeverity as S;
    let severity = match d.severity {
        Some(S::WARNING) => Severity::Warning,
        Some(S::INFORMATION) => Severity::Info,
        Some(S::HINT) => Severity::Hint,
        _ => Severity::Error,
    };
    let at = |p: &Position| IdePosition {
        line: p.line,
        character: p.character,
    };
    Diagnostic {
        message: sanitize(&d.message),
        severity,
        range: DiagnosticRange {
            start: at(&d.range.start),
            end: at(&d.range.end),
        },
        source: d.source.clone(),
        code: d.code.as_ref().map(|c| match c {
            lsp_types::NumberOrString::Number(n) => n.to_string(),
            lsp_types::NumberOrString::String(s) => s.clone(),
        }),
    }
}

/// `getHover`: `{contents: [text…], range}`, or null when the server knows nothing.
pub fn hover(answer: Option<Hover>) -> Value {
    let Some(h) = answer else {
        return Value::Null;
    };
    let contents: Vec<String> = match &h.contents {
        HoverContents::Scalar(m) => vec![marked(m)],
        HoverContents::Array(ms) => ms.iter().map(marked).collect(),
        HoverContents::Markup(m) => vec![m.value.clone()],
    }
    .into_iter()
    .filter(|t| !t.trim().is_empty())
    .collect();
    if contents.is_empty() {
        return Value::Null;
    }
    json!({
        "contents": contents,
        "range": h.range.as_ref().map(|r| Value::Object(span(r))),
    })
}

/// `goToDefinition`: the locations, or null when there are none.
pub fn definition(answer: Option<GotoDefinitionResponse>) -> Value {
    let found: Vec<Value> = match answer {
        None => Vec::new(),
        Some(GotoDefinitionResponse::Scalar(l)) => vec![location(&l.uri, &l.range)],
        Some(GotoDefinitionResponse::Array(ls)) => {
            ls.iter().map(|l| location(&l.uri, &l.range)).collect()
        }
        Some(GotoDefinitionResponse::Link(links)) => links
            .iter()
            .map(|l| location(&l.target_uri, &l.target_selection_range))
            .collect(),
    };
    if found.is_empty() {
        Value::Null
    } else {
        Value::Array(found)
    }
}

/// `findReferences`: `{references, count}`.
pub fn references(answer: Option<Vec<Location>>) -> Value {
    let references: Vec<Value> = answer
        .unwrap_or_default()
        .iter()
        .map(|l| location(&l.uri, &l.range))
        .collect();
    json!({ "count": references.len(), "references": references })
}

/// A symbol's name, kind, and (when not empty) detail and container, the start of every
/// symbol shape.
fn symbol(
    name: &str,
    kind: SymbolKind,
    detail: Option<&str>,
    container: Option<&str>,
) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("name".into(), json!(name));
    m.insert("kind".into(), json!(kind_name(kind)));
    if let Some(d) = detail.filter(|d| !d.is_empty()) {
        m.insert("detail".into(), json!(d));
    }
    if let Some(c) = container.filter(|c| !c.is_empty()) {
        m.insert("containerName".into(), json!(c));
    }
    m
}

fn flatten(symbols: &[DocumentSymbol], container: Option<&str>, out: &mut Vec<Value>) {
    for s in symbols {
        let mut m = symbol(&s.name, s.kind, s.detail.as_deref(), container);
        m.extend(span(&s.selection_range));
        out.push(Value::Object(m));
        flatten(
            s.children.as_deref().unwrap_or_default(),
            Some(&s.name),
            out,
        );
    }
}

/// `getDocumentSymbols`: every symbol, nested ones after their parent with its name as
/// `containerName`, as `{symbols, count}`.
pub fn document_symbols(answer: Option<DocumentSymbolResponse>) -> Value {
    let mut symbols = Vec::new();
    match answer {
        None => {}
        Some(DocumentSymbolResponse::Nested(nested)) => flatten(&nested, None, &mut symbols),
        Some(DocumentSymbolResponse::Flat(flat)) => {
            for s in flat {
                let mut m = symbol(&s.name, s.kind, None, s.container_name.as_deref());
                m.extend(span(&s.location.range));
                symbols.push(Value::Object(m));
            }
        }
    }
    json!({ "count": symbols.len(), "symbols": symbols })
}

/// `searchSymbols`: at most `max`, as `{symbols, count, truncated}`.
pub fn workspace_symbols(answer: Option<WorkspaceSymbolResponse>, max: usize) -> Value {
    let mut all = Vec::new();
    let mut push = |mut m: Map<String, Value>, uri: &Uri, range: Option<&Range>| {
        m.insert("file".into(), json!(path_of(uri)));
        if let Some(r) = range {
            m.extend(span(r));
        }
        all.push(Value::Object(m));
    };
    match answer {
        None => {}
        Some(WorkspaceSymbolResponse::Flat(flat)) => {
            for s in flat {
                let m = symbol(&s.name, s.kind, None, s.container_name.as_deref());
                push(m, &s.location.uri, Some(&s.location.range));
            }
        }
        Some(WorkspaceSymbolResponse::Nested(nested)) => {
            for s in nested {
                let m = symbol(&s.name, s.kind, None, s.container_name.as_deref());
                match &s.location {
                    lsp_types::OneOf::Left(l) => push(m, &l.uri, Some(&l.range)),
                    lsp_types::OneOf::Right(w) => push(m, &w.uri, None),
                }
            }
        }
    }
    let truncated = all.len() > max;
    all.truncate(max);
    json!({ "count": all.len(), "symbols": all, "truncated": truncated })
}

/// A call or type hierarchy item: `{name, kind, detail, file, line, column}` (at its
/// name).
pub fn hierarchy_item(
    name: &str,
    kind: SymbolKind,
    detail: Option<&str>,
    uri: &Uri,
    at: &Range,
) -> Value {
    let mut m = symbol(name, kind, detail, None);
    m.insert("file".into(), json!(path_of(uri)));
    m.insert("line".into(), json!(at.start.line + 1));
    m.insert("column".into(), json!(at.start.character + 1));
    Value::Object(m)
}

/// A call hierarchy item, as [`hierarchy_item`].
pub fn call_item(item: &lsp_types::CallHierarchyItem) -> Value {
    hierarchy_item(
        &item.name,
        item.kind,
        item.detail.as_deref(),
        &item.uri,
        &item.selection_range,
    )
}

/// A type hierarchy item, as [`hierarchy_item`].
pub fn type_item(item: &lsp_types::TypeHierarchyItem) -> Value {
    hierarchy_item(
        &item.name,
        item.kind,
        item.detail.as_deref(),
        &item.uri,
        &item.selection_range,
    )
}

/// `getInlayHints`: `{hints: [{position: {line, column}, label, kind, tooltip}], count}`
/// (kind `type`, `parameter` or null).
pub fn inlay_hints(answer: Option<Vec<lsp_types::InlayHint>>) -> Value {
    use lsp_types::{InlayHintKind, InlayHintLabel, InlayHintTooltip};
    let hints: Vec<Value> = answer
        .unwrap_or_default()
        .iter()
        .map(|h| {
            let label = match &h.label {
                InlayHintLabel::String(s) => s.clone(),
                InlayHintLabel::LabelParts(parts) => {
                    parts.iter().map(|p| p.value.as_str()).collect()
                }
            };
            let kind = match h.kind {
                Some(InlayHintKind::TYPE) => json!("type"),
                Some(InlayHintKind::PARAMETER) => json!("parameter"),
                _ => Value::Null,
            };
            let tooltip = match &h.tooltip {
                Some(InlayHintTooltip::String(s)) => json!(s),
                Some(InlayHintTooltip::MarkupContent(m)) => json!(m.value),
                None => Value::Null,
            };
            json!({
                "position": {"line": h.position.line + 1, "column": h.position.character + 1},
                "label": label,
                "kind": kind,
                "tooltip": tooltip,
            })
        })
        .collect();
    json!({"count": hints.len(), "hints": hints})
}

/// `getCodeActions`: `{actions: [{title, kind, isPreferred}]}`.
pub fn code_actions(answer: &[lsp_types::CodeActionOrCommand]) -> Value {
    let actions: Vec<Value> = answer
        .iter()
        .map(|a| match a {
            lsp_types::CodeActionOrCommand::Command(c) => {
                json!({"title": c.title, "kind": null, "isPreferred": false})
            }
            lsp_types::CodeActionOrCommand::CodeAction(a) => json!({
                "title": a.title,
                "kind": a.kind.as_ref().map(|k| k.as_str()),
                "isPreferred": a.is_preferred.unwrap_or(false),
            }),
        })
        .collect();
    json!({ "actions": actions })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_take_the_editors_shapes() {
        let h: Hover = serde_json::from_value(json!({
            "contents": {"kind": "markdown", "value": "def f()"},
            "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 5}}
        }))
        .unwrap();
        assert_eq!(
            hover(Some(h)),
            json!({"contents": ["def f()"], "range": {"line": 1, "column": 5, "endLine": 1, "endColumn": 6}})
        );
        assert_eq!(hover(None), Value::Null);
        let d: GotoDefinitionResponse = serde_json::from_value(json!([{
            "uri": "file:///w/a%20b.py",
            "range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 3}}
        }]))
        .unwrap();
        assert_eq!(
            definition(Some(d)),
            json!([{"file": "/w/a b.py", "line": 3, "column": 1, "endLine": 3, "endColumn": 4}])
        );
        let s: DocumentSymbolResponse = serde_json::from_value(json!([{
            "name": "C", "kind": 5,
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}},
            "selectionRange": {"start": {"line": 0, "character": 6}, "end": {"line": 0, "character": 7}},
            "children": [{
                "name": "m", "kind": 6,
                "range": {"start": {"line": 1, "character": 4}, "end": {"line": 2, "character": 0}},
                "selectionRange": {"start": {"line": 1, "character": 8}, "end": {"line": 1, "character": 9}}
            }]
        }]))
        .unwrap();
        let listed = document_symbols(Some(s));
        assert_eq!(listed["count"], 2);
        assert_eq!(listed["symbols"][0]["kind"], "Class");
        assert_eq!(listed["symbols"][1]["containerName"], "C");
        assert_eq!(listed["symbols"][1]["kind"], "Method");
        assert_eq!(
            position(1, 1),
            Position {
                line: 0,
                character: 0
            }
        );
        assert_eq!(
            position(0, 0),
            Position {
                line: 0,
                character: 0
            }
        );
    }
}
