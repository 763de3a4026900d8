//! Following a reference's lines through edits: the text a review was written against
//! (its base) is diffed line by line with the file as it is now; a reference whose
//! lines all survived unchanged moves with them, one whose lines were edited or
//! deleted is stale (and points at where they were).

use serde::Serialize;
use similar::DiffOp;

use crate::changes::line_diff as diff_lines;

/// Where each line of a base text went in the current text.
pub struct LineMap {
    ops: Vec<DiffOp>,
    current_lines: usize,
}

impl LineMap {
    /// Diffs `base` with `current`, line by line.
    pub fn new(base: &str, current: &str) -> Self {
        Self {
            ops: diff_lines(base, current),
            current_lines: line_count(current),
        }
    }

    /// The op covering base line `old` (0-based).
    fn op(&self, old: usize) -> Option<&DiffOp> {
        let at = self
            .ops
            .partition_point(|op| op.old_range().end <= old)
            .min(self.ops.len().saturating_sub(1));
        self.ops.get(at)
    }

    /// The current line (0-based) of base line `old` when it is unchanged.
    pub fn exact(&self, old: usize) -> Option<usize> {
        match self.op(old)? {
            DiffOp::Equal {
                old_index,
                new_index,
                ..
            } if *old_index <= old => Some(new_index + (old - old_index)),
            _ => None,
        }
    }

    /// Where base line `old` is now, or where it would be if it was edited away.
    pub fn near(&self, old: usize) -> usize {
        let guess = match self.op(old) {
            Some(op) => {
                let (o, n) = (op.old_range(), op.new_range());
                let offset = old.saturating_sub(o.start);
                if n.is_empty() {
                    n.start
                } else {
                    n.start + offset.min(n.len() - 1)
                }
            }
            None => old,
        };
        guess.min(self.current_lines.saturating_sub(1))
    }
}

/// One step of a line diff, ranges 0-based.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LineOp {
    /// `equal`, `delete`, `insert` or `replace`.
    pub tag: &'static str,
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
}

/// The line diff of `old` and `new`, for showing them side by side.
pub fn line_ops(old: &str, new: &str) -> Vec<LineOp> {
    diff_lines(old, new)
        .iter()
        .map(|op| {
            let (tag, o, n) = op.as_tag_tuple();
            LineOp {
                tag: match tag {
                    similar::DiffTag::Equal => "equal",
                    similar::DiffTag::Delete => "delete",
                    similar::DiffTag::Insert => "insert",
                    similar::DiffTag::Replace => "replace",
                },
                old_start: o.start,
                old_len: o.len(),
                new_start: n.start,
                new_len: n.len(),
            }
        })
        .collect()
}

/// Number of lines, a final line without a newline counted.
pub fn line_count(text: &str) -> usize {
    text.lines().count()
}

/// What became of a reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Fate {
    /// Its lines are where they were, unchanged.
    Kept,
    /// Its lines are unchanged but elsewhere (lines added or removed above them).
    Moved,
    /// One of its lines was edited or deleted; it points at where they were.
    Stale,
    /// The file is gone.
    Gone,
    /// It pointed past the end of the file it was written against.
    OutOfRange,
}

/// A reference's lines now (1-based, inclusive) and what became of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Followed {
    pub start: u32,
    pub end: u32,
    pub fate: Fate,
}

/// Follows lines `start..=end` (1-based) of `base` into the current text (`None`: the
/// file is gone).
pub fn follow(base: &str, current: Option<&LineMap>, start: u32, end: u32) -> Followed {
    let unchanged = |fate| Followed { start, end, fate };
    if start as usize > line_count(base) {
        return unchanged(Fate::OutOfRange);
    }
    let Some(map) = current else {
        return unchanged(Fate::Gone);
    };
    let (first, last) = (start as usize - 1, end as usize - 1);
    let mapped: Option<Vec<usize>> = (first..=last.min(line_count(base) - 1))
        .map(|l| map.exact(l))
        .collect();
    let line = |l: usize| u32::try_from(l + 1).unwrap_or(u32::MAX);
    match mapped {
        Some(lines) if lines.windows(2).all(|w| w[1] == w[0] + 1) && !lines.is_empty() => {
            let new_start = line(lines[0]);
            let new_end = new_start + (end - start);
            let fate = if new_start == start {
                Fate::Kept
            } else {
                Fate::Moved
            };
            Followed {
                start: new_start,
                end: new_end,
                fate,
            }
        }
        _ => {
            let new_start = line(map.near(first));
            let new_end = line(map.near(last)).max(new_start);
            Followed {
                start: new_start,
                end: new_end,
                fate: Fate::Stale,
            }
        }
    }
}

/// Lines `from..=to` (1-based, clamped to the text) with their numbers.
pub fn excerpt(text: &str, from: u32, to: u32) -> Vec<(u32, String)> {
    let from = from.max(1);
    text.lines()
        .enumerate()
        .map(|(i, l)| (u32::try_from(i + 1).unwrap_or(u32::MAX), l))
        .skip_while(|(n, _)| *n < from)
        .take_while(|(n, _)| *n <= to)
        .map(|(n, l)| (n, l.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "a\nb\nc\nd\ne\n";

    fn after(current: &str, start: u32, end: u32) -> Followed {
        follow(BASE, Some(&LineMap::new(BASE, current)), start, end)
    }

    #[test]
    fn unchanged_lines_stay_and_shifted_lines_move_with_the_text() {
        assert_eq!(after(BASE, 2, 3).fate, Fate::Kept);
        let f = after("new\nnew2\na\nb\nc\nd\ne\n", 2, 3);
        assert_eq!((f.start, f.end, f.fate), (4, 5, Fate::Moved));
        let f = after("b\nc\nd\ne\n", 4, 4);
        assert_eq!((f.start, f.end, f.fate), (3, 3, Fate::Moved));
    }

    #[test]
    fn an_edited_or_deleted_line_makes_the_reference_stale_where_it_was() {
        let f = after("a\nB!\nc\nd\ne\n", 2, 3);
        assert_eq!((f.start, f.fate), (2, Fate::Stale));
        let f = after("a\nd\ne\n", 2, 3);
        assert_eq!(f.fate, Fate::Stale);
        assert!(f.start <= 2, "{f:?}");
    }

    #[test]
    fn gone_files_and_lines_past_the_end_are_said_so() {
        assert_eq!(follow(BASE, None, 1, 1).fate, Fate::Gone);
        assert_eq!(after(BASE, 9, 9).fate, Fate::OutOfRange);
    }

    #[test]
    fn line_ops_cover_both_texts() {
        let ops = line_ops("a\nb\nc\n", "a\nB\nc\nd\n");
        let tags: Vec<&str> = ops.iter().map(|o| o.tag).collect();
        assert_eq!(tags, ["equal", "replace", "equal", "insert"]);
        assert_eq!(ops.iter().map(|o| o.new_len).sum::<usize>(), 4);
        assert_eq!(ops.iter().map(|o| o.old_len).sum::<usize>(), 3);
    }

    #[test]
    fn excerpts_are_clamped_and_numbered() {
        assert_eq!(
            excerpt(BASE, 0, 2),
            vec![(1, "a".to_string()), (2, "b".to_string())]
        );
        assert_eq!(excerpt(BASE, 5, 9), vec![(5, "e".to_string())]);
    }
}
