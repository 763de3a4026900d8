//! Diagnostics in Claude Code's shape, and the command-line linters that produce them
//! when no editor is connected.

pub mod changes;
pub mod linters;
pub mod parse;

use serde::Serialize;

use ide_bridge_protocol::ide::Position;

/// Longest diagnostic message kept (longer ones are cut with `…`).
pub const MAX_MESSAGE_CHARS: usize = 500;

/// Severity names as Claude Code expects them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub enum Severity {
    /// An error.
    Error,
    /// A warning.
    Warning,
    /// Information.
    Info,
    /// A hint.
    Hint,
}

/// A 0-based range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Range {
    /// Start.
    pub start: Position,
    /// End.
    pub end: Position,
}

impl Range {
    /// From 1-based line/column pairs (clamped at 1).
    pub fn from_one_based(line: u32, col: u32, end_line: u32, end_col: u32) -> Self {
        let p = |l: u32, c: u32| Position {
            line: l.saturating_sub(1),
            character: c.saturating_sub(1),
        };
        Range {
            start: p(line, col),
            end: p(
                end_line.max(line),
                if end_line > line {
                    end_col
                } else {
                    end_col.max(col)
                },
            ),
        }
    }
}

/// One diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Diagnostic {
    /// Sanitised message.
    pub message: String,
    /// Severity.
    pub severity: Severity,
    /// 0-based range.
    pub range: Range,
    /// Which tool said so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Rule or error code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// Diagnostics of one file, keyed by absolute path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileDiagnostics {
    /// `file://` URI.
    pub uri: String,
    /// Its diagnostics.
    pub diagnostics: Vec<Diagnostic>,
}

/// Strips control characters (newlines and tabs become spaces) and caps the length.
pub fn sanitize(message: &str) -> String {
    let mut cleaned = String::with_capacity(message.len());
    for c in message.chars() {
        match c {
            '\n' | '\r' | '\t' => cleaned.push(' '),
            c if c.is_control() => {}
            c => push_visible(&mut cleaned, c),
        }
    }
    let trimmed = cleaned.trim();
    if trimmed.chars().count() > MAX_MESSAGE_CHARS {
        let mut cut: String = trimmed.chars().take(MAX_MESSAGE_CHARS - 1).collect();
        cut.push('…');
        cut
    } else {
        trimmed.to_string()
    }
}

/// Whether `c` is invisible yet changes how text reads: bidirectional controls
/// (which can make `a.rs` display as something else, "Trojan Source"), zero-width
/// characters, line and paragraph separators, the byte-order mark.
pub fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}'
        | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

/// Appends `c`, or `<U+XXXX>` for an [invisible format character](is_invisible_format),
/// so that what a person or a model reads is what is there.
pub fn push_visible(out: &mut String, c: char) {
    if is_invisible_format(c) {
        out.push_str(&format!("<U+{:04X}>", u32::from(c)));
    } else {
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_and_zero_width_characters_are_shown_not_kept() {
        assert_eq!(
            sanitize("a\u{202E}sr.exe\u{200B}b\u{2028}c"),
            "a<U+202E>sr.exe<U+200B>b<U+2028>c"
        );
        assert_eq!(sanitize("é ü 日本"), "é ü 日本");
    }

    #[test]
    fn sanitizes_control_characters_and_caps_length() {
        assert_eq!(sanitize("a\u{1b}[31mb\nc\u{0}"), "a[31mb c");
        let long = "x".repeat(600);
        let s = sanitize(&long);
        assert_eq!(s.chars().count(), 500);
        assert!(s.ends_with('…'));
        assert_eq!(sanitize(&"y".repeat(500)).chars().count(), 500);
    }

    #[test]
    fn ranges_become_zero_based() {
        let r = Range::from_one_based(3, 5, 3, 9);
        assert_eq!(
            (r.start.line, r.start.character, r.end.line, r.end.character),
            (2, 4, 2, 8)
        );
    }
}
