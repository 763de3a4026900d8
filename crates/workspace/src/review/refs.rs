//! `file:line` and `file:line-line` references in a review's text.
//!
//! A reference is a path (with a `/` in it or a file extension, so that `localhost:80`
//! and `note:3` are not taken for one) followed by `:line` or `:line-line`. Whether the
//! path names a file of the workspace is decided later, when the review is anchored:
//! what names nothing stays plain text.

use std::sync::OnceLock;

use regex::Regex;

/// One reference found in a text: where it is and what it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Byte range of the whole reference (`src/a.rs:3-5`) in the text searched.
    pub span: std::ops::Range<usize>,
    /// The path as written, without a leading `./`.
    pub path: String,
    /// First line, 1-based.
    pub start: u32,
    /// Last line, 1-based, `>= start`.
    pub end: u32,
}

/// Longest line number taken seriously (seven digits); longer runs are not references.
const MAX_LINE_DIGITS: usize = 7;

fn pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        // A path segment: letters, digits and `._@+-`; a path either has a slash or
        // ends in `.ext`. The boundary before it is checked by hand (no look-behind).
        Regex::new(
            r"(?x)
            (?P<path>
                /?(?:[\w.@+-]+/)+[\w.@+-]+      # with a directory
              | [\w@+-][\w.@+-]*\.[A-Za-z0-9]+  # or a bare file name with an extension
            )
            :(?P<start>\d{1,7})(?:-(?P<end>\d{1,7}))?
            ",
        )
        .expect("the reference pattern compiles")
    })
}

/// True when the byte before a match keeps it from being a reference start (it is part
/// of a longer word or of a URL such as `http://host/a.rs:3`).
fn glued(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '/' | ':' | '@' | '-'))
}

/// Every reference in `text`, in order.
pub fn find(text: &str) -> Vec<Found> {
    let mut out = Vec::new();
    for caps in pattern().captures_iter(text) {
        let whole = caps.get(0).expect("group 0 always matches");
        if glued(text, whole.start()) {
            continue;
        }
        // A number that goes on (`a.rs:12345678`) or a range cut short is no reference.
        let after = &text[whole.end()..];
        if after.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let (Some(path), Some(start)) = (caps.name("path"), caps.name("start")) else {
            continue;
        };
        let Ok(start_line) = start.as_str().parse::<u32>() else {
            continue;
        };
        let end_line = match caps.name("end") {
            Some(e) if e.as_str().len() <= MAX_LINE_DIGITS => e.as_str().parse::<u32>().ok(),
            Some(_) => None,
            None => Some(start_line),
        };
        let Some(end_line) = end_line else { continue };
        if start_line == 0 || end_line < start_line {
            continue;
        }
        let path = path.as_str();
        out.push(Found {
            span: whole.range(),
            path: path.strip_prefix("./").unwrap_or(path).to_string(),
            start: start_line,
            end: end_line,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(text: &str) -> Vec<(String, u32, u32)> {
        find(text)
            .into_iter()
            .map(|f| (f.path, f.start, f.end))
            .collect()
    }

    #[test]
    fn paths_with_a_directory_or_an_extension_and_a_line_or_a_range() {
        assert_eq!(
            refs("See src/lib.rs:12 and `main.rs:3-9`, then ./docs/x.md:1."),
            vec![
                ("src/lib.rs".into(), 12, 12),
                ("main.rs".into(), 3, 9),
                ("docs/x.md".into(), 1, 1)
            ]
        );
        assert_eq!(
            refs("[the loop](src/a/b.rs:40-44)"),
            vec![("src/a/b.rs".into(), 40, 44)]
        );
        assert_eq!(refs("/abs/ws/f.py:2"), vec![("/abs/ws/f.py".into(), 2, 2)]);
    }

    #[test]
    fn things_that_only_look_like_references_are_not() {
        for text in [
            "localhost:8080",
            "note:3",
            "http://host/a.rs:3",
            "a.rs:0",
            "a.rs:9-3",
            "a.rs:12345678",
            "ma.rs:1-99999999",
            "time 10:30",
        ] {
            assert_eq!(refs(text), vec![], "{text}");
        }
    }

    #[test]
    fn spans_cover_exactly_the_reference() {
        let text = "at (src/a.rs:3-4).";
        let f = &find(text)[0];
        assert_eq!(&text[f.span.clone()], "src/a.rs:3-4");
    }
}
