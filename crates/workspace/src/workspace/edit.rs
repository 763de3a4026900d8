//! Pure text edits: 1-based line/column edits applied atomically, and exact block
//! replacement that refuses absent or ambiguous blocks.

use serde::{Deserialize, Serialize};

/// Most edits accepted in one `editText` call.
pub const MAX_EDITS: usize = 1000;

/// One edit, positions 1-based. Columns count UTF-16 code units, as the language
/// servers, the editors and the extension protocol do (a character beyond U+FFFF, an
/// emoji, counts two), so that a position another tool reported can be edited at.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LineEdit {
    /// insert, delete or replace.
    #[serde(rename = "type")]
    pub kind: EditKind,
    /// Start line.
    #[schemars(range(min = 1))]
    pub line: usize,
    /// Start column (UTF-16 code units, as the language-server tools report them: a
    /// character beyond U+FFFF counts two).
    #[schemars(range(min = 1))]
    pub column: usize,
    /// End line (delete, replace).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub end_line: Option<usize>,
    /// End column, exclusive (delete, replace).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub end_column: Option<usize>,
    /// Text to insert (insert, replace).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// What an edit does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EditKind {
    /// Insert `text` at the position.
    Insert,
    /// Delete the range.
    Delete,
    /// Replace the range with `text`.
    Replace,
}

/// Why edits were refused (nothing is changed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// Too many edits in one call.
    #[error("Too many edits: {0} (max {MAX_EDITS})")]
    TooMany(usize),
    /// A position outside the file.
    #[error("Edit {index}: position {line}:{column} is outside the file ({detail})")]
    OutOfRange {
        /// Edit index (0-based).
        index: usize,
        line: usize,
        column: usize,
        /// Why.
        detail: String,
    },
    /// A range that ends before it starts, or lacks its end.
    #[error("Edit {index}: {detail}")]
    BadRange {
        /// Edit index.
        index: usize,
        /// Why.
        detail: &'static str,
    },
    /// Two edits overlap.
    #[error("Edits {0} and {1} overlap")]
    Overlap(usize, usize),
    /// `oldContent` not found.
    #[error("Block not found: oldContent does not occur in {0}")]
    BlockAbsent(String),
    /// `oldContent` found more than once.
    #[error("Ambiguous block: oldContent occurs {count} times in {path}; include more context")]
    BlockAmbiguous {
        /// Occurrences.
        count: usize,
        /// File.
        path: String,
    },
    /// Empty `oldContent`.
    #[error("oldContent must not be empty")]
    EmptyBlock,
}

/// Applies every edit or none.
pub fn apply_edits(text: &str, edits: &[LineEdit]) -> Result<String, EditError> {
    if edits.len() > MAX_EDITS {
        return Err(EditError::TooMany(edits.len()));
    }
    let starts = line_starts(text);
    let mut spans: Vec<(usize, usize, &str, usize)> = Vec::with_capacity(edits.len());
    for (index, e) in edits.iter().enumerate() {
        let start = offset(text, &starts, index, e.line, e.column)?;
        let (end, insert) = match e.kind {
            EditKind::Insert => (
                start,
                e.text.as_deref().ok_or(EditError::BadRange {
                    index,
                    detail: "insert needs text",
                })?,
            ),
            EditKind::Delete | EditKind::Replace => {
                let (Some(el), Some(ec)) = (e.end_line, e.end_column) else {
                    return Err(EditError::BadRange {
                        index,
                        detail: "delete and replace need endLine and endColumn",
                    });
                };
                let end = offset(text, &starts, index, el, ec)?;
                if end < start {
                    return Err(EditError::BadRange {
                        index,
                        detail: "the range ends before it starts",
                    });
                }
                let insert = match e.kind {
                    EditKind::Replace => e.text.as_deref().ok_or(EditError::BadRange {
                        index,
                        detail: "replace needs text",
                    })?,
                    _ => "",
                };
                (end, insert)
            }
        };
        spans.push((start, end, insert, index));
    }
    spans.sort_by_key(|s| (s.0, s.1));
    for pair in spans.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if b.0 < a.1 || (b.0 == a.0 && a.0 == a.1 && b.0 == b.1) {
            return Err(EditError::Overlap(a.3.min(b.3), a.3.max(b.3)));
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, insert, _) in spans {
        out.push_str(&text[at..start]);
        out.push_str(insert);
        at = end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// Replaces the single occurrence of `old` with `new`.
pub fn replace_block(text: &str, old: &str, new: &str, path: &str) -> Result<String, EditError> {
    if old.is_empty() {
        return Err(EditError::EmptyBlock);
    }
    let count = text.matches(old).count();
    match count {
        0 => Err(EditError::BlockAbsent(path.to_string())),
        1 => Ok(text.replacen(old, new, 1)),
        _ => Err(EditError::BlockAmbiguous {
            count,
            path: path.to_string(),
        }),
    }
}

fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

fn offset(
    text: &str,
    starts: &[usize],
    index: usize,
    line: usize,
    column: usize,
) -> Result<usize, EditError> {
    let bad = |detail: String| EditError::OutOfRange {
        index,
        line,
        column,
        detail,
    };
    if line == 0 || column == 0 {
        return Err(bad("positions are 1-based".into()));
    }
    let Some(&start) = starts.get(line - 1) else {
        // Counted as readFile counts them: the place after a last newline is the
        // file's end, not a line of its own.
        let ends_line = text.is_empty() || text.ends_with('\n');
        let lines = starts.len() - usize::from(ends_line);
        let count = match lines {
            1 => "1 line".to_string(),
            n => format!("{n} lines"),
        };
        return Err(bad(if ends_line {
            format!(
                "the file has {count} (line {}, column 1 is its end)",
                lines + 1
            )
        } else {
            format!("the file has {count}")
        }));
    };
    let end = starts.get(line).map(|s| s - 1).unwrap_or(text.len());
    let mut content = &text[start..end];
    // A CRLF line's `\r` is part of its end: a column after it would split the pair.
    if end < text.len() {
        content = content.strip_suffix('\r').unwrap_or(content);
    }
    let mut units = 0;
    for (byte, c) in content.char_indices() {
        if units == column - 1 {
            return Ok(start + byte);
        }
        units += c.len_utf16();
        if units > column - 1 {
            return Err(bad(format!(
                "column {column} falls inside {c:?}, which counts two columns (UTF-16)"
            )));
        }
    }
    if column - 1 > units {
        let chars = content.chars().count();
        return Err(bad(if chars == units {
            format!("line {line} has {chars} characters")
        } else {
            format!("line {line} has {chars} characters, {units} columns in UTF-16")
        }));
    }
    Ok(start + content.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(
        kind: EditKind,
        line: usize,
        column: usize,
        end: Option<(usize, usize)>,
        text: Option<&str>,
    ) -> LineEdit {
        LineEdit {
            kind,
            line,
            column,
            end_line: end.map(|e| e.0),
            end_column: end.map(|e| e.1),
            text: text.map(str::to_string),
        }
    }

    #[test]
    fn applies_inserts_deletes_and_replaces_together() {
        let text = "fn main() {\n    old();\n}\n";
        let out = apply_edits(
            text,
            &[
                e(EditKind::Replace, 2, 5, Some((2, 8)), Some("new")),
                e(EditKind::Insert, 1, 1, None, Some("// hi\n")),
                e(EditKind::Delete, 3, 1, Some((4, 1)), None),
            ],
        )
        .unwrap();
        assert_eq!(out, "// hi\nfn main() {\n    new();\n");
    }

    #[test]
    fn columns_count_characters_and_end_of_line_is_valid() {
        assert_eq!(
            apply_edits("héllo\n", &[e(EditKind::Insert, 1, 3, None, Some("X"))]).unwrap(),
            "héXllo\n"
        );
        assert_eq!(
            apply_edits("ab", &[e(EditKind::Insert, 1, 3, None, Some("!"))]).unwrap(),
            "ab!"
        );
        assert!(apply_edits("ab", &[e(EditKind::Insert, 1, 4, None, Some("!"))]).is_err());
    }

    /// The columns a language server reports (UTF-16) edit what it pointed at.
    #[test]
    fn columns_count_utf16_units_as_language_servers_do() {
        // `total` starts at UTF-16 column 13 (each emoji counts two) and ends at 18.
        let text = "s = \"😀😀\"; total(1)\n";
        let replace = e(EditKind::Replace, 1, 13, Some((1, 18)), Some("sum"));
        assert_eq!(
            apply_edits(text, &[replace]).unwrap(),
            "s = \"😀😀\"; sum(1)\n"
        );
        // Inside an emoji: refused, saying why.
        let inside = apply_edits(text, &[e(EditKind::Insert, 1, 7, None, Some("x"))]);
        assert!(
            matches!(&inside, Err(EditError::OutOfRange { detail, .. }) if detail.contains("counts two")),
            "{inside:?}"
        );
        // The line's end is column 21 (18 characters); one past it is refused.
        let past = apply_edits(text, &[e(EditKind::Insert, 1, 22, None, Some("x"))]);
        assert!(
            matches!(&past, Err(EditError::OutOfRange { detail, .. })
                if detail == "line 1 has 18 characters, 20 columns in UTF-16"),
            "{past:?}"
        );
        assert!(apply_edits(text, &[e(EditKind::Insert, 1, 21, None, Some("x"))]).is_ok());
    }

    /// A CRLF line ends before its `\r`: a column after it would split the pair.
    #[test]
    fn a_crlf_line_ends_before_its_carriage_return() {
        let text = "ab\r\ncd\r\n";
        assert_eq!(
            apply_edits(text, &[e(EditKind::Insert, 1, 3, None, Some("!"))]).unwrap(),
            "ab!\r\ncd\r\n"
        );
        let past = apply_edits(text, &[e(EditKind::Insert, 1, 4, None, Some("!"))]);
        assert!(
            matches!(&past, Err(EditError::OutOfRange { detail, .. }) if detail == "line 1 has 2 characters"),
            "{past:?}"
        );
        // A lone `\r` at the very end is text like any other.
        assert_eq!(
            apply_edits("ab\r", &[e(EditKind::Insert, 1, 4, None, Some("!"))]).unwrap(),
            "ab\r!"
        );
    }

    #[test]
    fn refuses_bad_ranges_overlaps_and_too_many() {
        let text = "abc\ndef\n";
        assert!(matches!(
            apply_edits(text, &[e(EditKind::Insert, 0, 1, None, Some("x"))]),
            Err(EditError::OutOfRange { .. })
        ));
        let past = apply_edits(text, &[e(EditKind::Insert, 9, 1, None, Some("x"))]);
        assert!(matches!(past, Err(EditError::OutOfRange { .. })));
        // Lines counted as readFile counts them (2), the end named.
        let said = past.unwrap_err().to_string();
        assert!(
            said.contains("the file has 2 lines (line 3, column 1 is its end"),
            "{said}"
        );
        // And the end is a place to insert at.
        assert_eq!(
            apply_edits(text, &[e(EditKind::Insert, 3, 1, None, Some("x"))]).unwrap(),
            "abc\ndef\nx"
        );
        assert!(matches!(
            apply_edits(text, &[e(EditKind::Delete, 1, 1, None, None)]),
            Err(EditError::BadRange { .. })
        ));
        assert!(matches!(
            apply_edits(text, &[e(EditKind::Delete, 2, 1, Some((1, 1)), None)]),
            Err(EditError::BadRange { .. })
        ));
        assert!(matches!(
            apply_edits(text, &[e(EditKind::Replace, 1, 1, Some((1, 2)), None)]),
            Err(EditError::BadRange { .. })
        ));
        let overlap = [
            e(EditKind::Delete, 1, 1, Some((1, 3)), None),
            e(EditKind::Delete, 1, 2, Some((2, 1)), None),
        ];
        assert_eq!(apply_edits(text, &overlap), Err(EditError::Overlap(0, 1)));
        let same_point = [
            e(EditKind::Insert, 1, 1, None, Some("a")),
            e(EditKind::Insert, 1, 1, None, Some("b")),
        ];
        assert_eq!(
            apply_edits(text, &same_point),
            Err(EditError::Overlap(0, 1))
        );
        let many = vec![e(EditKind::Insert, 1, 1, None, Some("x")); MAX_EDITS + 1];
        assert_eq!(
            apply_edits(text, &many),
            Err(EditError::TooMany(MAX_EDITS + 1))
        );
    }

    #[test]
    fn block_replacement_needs_exactly_one_match() {
        assert_eq!(replace_block("a b a", "b", "c", "f").unwrap(), "a c a");
        assert!(matches!(
            replace_block("a b a", "a", "c", "f"),
            Err(EditError::BlockAmbiguous { count: 2, .. })
        ));
        assert!(matches!(
            replace_block("a", "z", "c", "f"),
            Err(EditError::BlockAbsent(_))
        ));
        assert_eq!(replace_block("a", "", "c", "f"), Err(EditError::EmptyBlock));
    }
}
