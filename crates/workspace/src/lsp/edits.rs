//! Edits a language server proposes (a rename, a formatting, a code action): a
//! `WorkspaceEdit` taken apart by file, and LSP text edits (0-based, columns in UTF-16
//! units) applied to a text, all or none. Nothing here writes: the bridge's writer does,
//! after confinement and the claims.

use std::collections::BTreeMap;

use lsp_types::{
    DocumentChangeOperation, DocumentChanges, OneOf, Position, TextEdit, WorkspaceEdit,
};
use serde_json::{json, Value};

use super::shapes::path_of;

/// Why a server's edit cannot be applied (nothing is changed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditsError {
    /// It creates, renames or deletes files, which the bridge does not do for a server.
    #[error(
        "the language server's edit also {0}, which the bridge does not apply; nothing was changed"
    )]
    ResourceOperation(&'static str),
    /// Two of its edits of one file overlap.
    #[error("the language server's edits of {0} overlap; nothing was changed")]
    Overlap(String),
    /// An edit starts after it ends.
    #[error(
        "the language server sent an edit of {0} that ends before it starts; nothing was changed"
    )]
    Backwards(String),
}

/// The edits of one file (its absolute path, decoded from the server's URI).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEdits {
    pub path: String,
    pub edits: Vec<TextEdit>,
}

/// A server's `WorkspaceEdit` by file, in path order (a file named twice gets both
/// lists, in order).
pub fn by_file(edit: &WorkspaceEdit) -> Result<Vec<FileEdits>, EditsError> {
    let mut files: BTreeMap<String, Vec<TextEdit>> = BTreeMap::new();
    let mut add = |uri: &lsp_types::Uri, edits: Vec<TextEdit>| {
        files.entry(path_of(uri)).or_default().extend(edits);
    };
    let plain = |edits: &[OneOf<TextEdit, lsp_types::AnnotatedTextEdit>]| -> Vec<TextEdit> {
        edits
            .iter()
            .map(|e| match e {
                OneOf::Left(e) => e.clone(),
                OneOf::Right(a) => a.text_edit.clone(),
            })
            .collect()
    };
    match &edit.document_changes {
        Some(DocumentChanges::Edits(list)) => {
            for d in list {
                add(&d.text_document.uri, plain(&d.edits));
            }
        }
        Some(DocumentChanges::Operations(ops)) => {
            for op in ops {
                match op {
                    DocumentChangeOperation::Edit(d) => add(&d.text_document.uri, plain(&d.edits)),
                    DocumentChangeOperation::Op(lsp_types::ResourceOp::Create(_)) => {
                        return Err(EditsError::ResourceOperation("creates files"))
                    }
                    DocumentChangeOperation::Op(lsp_types::ResourceOp::Rename(_)) => {
                        return Err(EditsError::ResourceOperation("renames files"))
                    }
                    DocumentChangeOperation::Op(lsp_types::ResourceOp::Delete(_)) => {
                        return Err(EditsError::ResourceOperation("deletes files"))
                    }
                }
            }
        }
        None => {
            for (uri, edits) in edit.changes.iter().flatten() {
                add(uri, edits.clone());
            }
        }
    }
    Ok(files
        .into_iter()
        .filter(|(_, edits)| !edits.is_empty())
        .map(|(path, edits)| FileEdits { path, edits })
        .collect())
}

/// The byte offset of an LSP position in `text` (`starts`: the offset of each line). A
/// line past the end is the end; a character past its line's end is that end (as LSP
/// says).
fn offset(text: &str, starts: &[usize], at: Position) -> usize {
    let Some(&start) = starts.get(at.line as usize) else {
        return text.len();
    };
    let end = starts
        .get(at.line as usize + 1)
        .map_or(text.len(), |next| next - 1);
    let line = &text[start..end];
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut units = 0u32;
    for (i, c) in line.char_indices() {
        if units >= at.character {
            return start + i;
        }
        units += c.len_utf16() as u32;
    }
    start + line.len()
}

/// `text` with every edit applied (edits at one position in the order given), or why
/// not.
pub fn apply(text: &str, edits: &[TextEdit], path: &str) -> Result<String, EditsError> {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let mut spans: Vec<(usize, usize, &str)> = Vec::with_capacity(edits.len());
    for e in edits {
        let (from, to) = (
            offset(text, &starts, e.range.start),
            offset(text, &starts, e.range.end),
        );
        if to < from {
            return Err(EditsError::Backwards(path.to_string()));
        }
        spans.push((from, to, &e.new_text));
    }
    spans.sort_by_key(|(from, to, _)| (*from, *to));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (from, to, new) in spans {
        if from < at {
            return Err(EditsError::Overlap(path.to_string()));
        }
        out.push_str(&text[at..from]);
        out.push_str(new);
        at = to;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// A file's edits as an agent sees them in a preview: 1-based positions (UTF-16
/// columns, as every position the tools give) and the new text.
pub fn preview(file: &FileEdits) -> Value {
    let edits: Vec<Value> = file
        .edits
        .iter()
        .map(|e| {
            json!({
                "line": e.range.start.line + 1,
                "column": e.range.start.character + 1,
                "endLine": e.range.end.line + 1,
                "endColumn": e.range.end.character + 1,
                "newText": e.new_text,
            })
        })
        .collect();
    json!({"file": file.path, "edits": edits})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(l: u32, c: u32, el: u32, ec: u32, text: &str) -> TextEdit {
        TextEdit {
            range: lsp_types::Range {
                start: Position::new(l, c),
                end: Position::new(el, ec),
            },
            new_text: text.into(),
        }
    }

    #[test]
    fn edits_apply_at_utf16_columns_all_or_none() {
        let text = "let 😀 = a;\nb(a)\r\nend";
        // 😀 is two UTF-16 units: `a` on line 0 is at character 9.
        let out = apply(
            text,
            &[
                edit(1, 2, 1, 3, "x"),
                edit(0, 9, 0, 10, "x"),
                edit(2, 99, 2, 99, "!"),
                edit(9, 0, 9, 0, "\n"),
            ],
            "f",
        )
        .unwrap();
        assert_eq!(out, "let 😀 = x;\nb(x)\r\nend!\n");
        assert_eq!(
            apply(text, &[edit(0, 0, 0, 5, ""), edit(0, 4, 0, 6, "")], "f"),
            Err(EditsError::Overlap("f".into()))
        );
        assert_eq!(
            apply(text, &[edit(1, 2, 0, 0, "")], "f"),
            Err(EditsError::Backwards("f".into()))
        );
        // Two inserts at one place keep their order.
        assert_eq!(
            apply("ab", &[edit(0, 1, 0, 1, "1"), edit(0, 1, 0, 1, "2")], "f").unwrap(),
            "a12b"
        );
    }

    #[test]
    fn a_workspace_edit_is_taken_apart_by_file_and_file_operations_are_refused() {
        let changes: WorkspaceEdit = serde_json::from_value(json!({
            "changes": {
                "file:///w/b%20c.py": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "newText": "x"}],
                "file:///w/a.py": [],
            }
        }))
        .unwrap();
        let files = by_file(&changes).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, "/w/b c.py");
        assert_eq!(
            preview(&files[0]),
            json!({"file": "/w/b c.py", "edits": [{"line": 1, "column": 1, "endLine": 1, "endColumn": 2, "newText": "x"}]})
        );
        let ops: WorkspaceEdit = serde_json::from_value(json!({
            "documentChanges": [
                {"textDocument": {"uri": "file:///w/a.py", "version": 1}, "edits": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "newText": "y"}]},
                {"kind": "rename", "oldUri": "file:///w/a.py", "newUri": "file:///w/z.py"}
            ]
        }))
        .unwrap();
        assert_eq!(
            by_file(&ops),
            Err(EditsError::ResourceOperation("renames files"))
        );
    }
}
