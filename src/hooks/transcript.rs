//! How a native tool call ended, read from the agent's transcript: the CLI appends one
//! JSON line per message to `$CLAUDE_CONFIG_DIR/projects/<dir>/<conversation>.jsonl`
//! (the path is in every hook's input), and a tool's result is a user message with a
//! `tool_result` block (`tool_use_id`, `is_error`, `content`) and a `timestamp`.
//!
//! This is why `init` installs no hook after a tool: the one before the next tool (or
//! the stop) reads what happened since, so a tool call costs one hook, not two
//! (docs/benchmarks.md). Only complete lines are read; the offset after the last one is
//! where the next read starts. Lines that are not tool results are skipped without
//! being parsed.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::input::clip;

/// How a tool call ended, as the transcript says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The call (`toolu_…`), as the hooks name it.
    pub tool_use_id: String,
    /// The tool failed (a Bash exit code, an Edit that did not apply, a denial).
    pub is_error: bool,
    /// Unix ms when the result was written, when the line says.
    pub at_ms: Option<u64>,
    /// The first line of the result's text (for a failure: why).
    pub text: String,
    /// What the file held before, when the result says (an Edit's `originalFile`, a
    /// Write that created its file): how a write no hook announced is told hunk by hunk.
    pub before: Option<Before>,
}

/// What a native write's result says its file held before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Before {
    Text(String),
    /// It created the file.
    Absent,
}

/// A tool call the model made, as the transcript records it (the assistant's
/// `tool_use` block): how the bridge learns of a call whose hook it never heard.
#[derive(Debug, Clone, PartialEq)]
pub struct Used {
    pub tool_use_id: String,
    pub name: String,
    pub input: Value,
    /// Unix ms of the line, when it says.
    pub at_ms: Option<u64>,
}

/// Calls one read reports at most.
const MAX_USED: usize = 256;

/// What one read found.
#[derive(Debug, Default, PartialEq)]
pub struct Scan {
    /// Where the next read starts (after the last complete line).
    pub offset: u64,
    /// Tool results in the lines read, in order.
    pub outcomes: Vec<Outcome>,
    /// Tool calls in the lines read, in order.
    pub used: Vec<Used>,
    /// Bytes skipped because more than the bound was new (their results are lost).
    pub skipped: u64,
}

/// Characters of a result's text kept: its first line only (`Exit code 1`), since the
/// rest of a tool's answer (a command's output) may hold anything.
const MAX_TEXT: usize = 120;

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    message: Option<Message>,
    /// What the CLI kept of the tool's answer (for Edit and Write: the file's text before).
    #[serde(default, rename = "toolUseResult")]
    tool_use_result: Option<Value>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Value,
}

/// Reads the transcript at `path` from `from` up to `max_bytes` of new complete lines.
/// When more is new than `max_bytes`, the start of it is skipped (and counted).
pub fn read_outcomes(path: &Path, from: u64, max_bytes: u64) -> std::io::Result<Scan> {
    let mut file = open_regular(path)?;
    let len = file.metadata()?.len();
    if len <= from {
        // Nothing new, or the file was replaced by a shorter one: start over at its end.
        return Ok(Scan {
            offset: len,
            ..Scan::default()
        });
    }
    let start = from.max(len.saturating_sub(max_bytes));
    let skipped = start - from;
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity((len - start) as usize);
    file.take(len - start).read_to_end(&mut bytes)?;
    // Skipping into the middle of a line: drop that partial line.
    let mut body: &[u8] = &bytes;
    let mut consumed = 0u64;
    if skipped > 0 {
        match body.iter().position(|b| *b == b'\n') {
            Some(nl) => {
                consumed = nl as u64 + 1;
                body = &body[nl + 1..];
            }
            None => {
                return Ok(Scan {
                    offset: from,
                    skipped: 0,
                    ..Scan::default()
                })
            }
        }
    }
    let complete = match body.iter().rposition(|b| *b == b'\n') {
        Some(last) => last + 1,
        None => 0,
    };
    let mut outcomes = Vec::new();
    let mut used = Vec::new();
    for line in body[..complete].split(|b| *b == b'\n') {
        if contains(line, b"\"tool_result\"") {
            outcomes.extend(outcomes_of(line));
        } else if contains(line, b"\"tool_use\"") && used.len() < MAX_USED {
            used.extend(uses_of(line));
        }
    }
    Ok(Scan {
        offset: start + consumed + complete as u64,
        outcomes,
        used,
        skipped,
    })
}

/// Bytes before a transcript's end that its first read looks back over: the CLI may
/// have written a call's result before the hook that announced the call arrived (a
/// busy machine, read-only tools), and results of calls not waited for are ignored.
pub const LOOKBACK: u64 = 256 * 1024;

/// Where a transcript not read before is first read from: [`LOOKBACK`] before its end.
pub fn start_of_unread(path: &Path) -> std::io::Result<u64> {
    length(path).map(|len| len.saturating_sub(LOOKBACK))
}

/// The length of the transcript at `path` now (0 while it does not exist).
pub fn length(path: &Path) -> std::io::Result<u64> {
    match open_regular(path) {
        Ok(f) => Ok(f.metadata()?.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e),
    }
}

/// Opens `path` for reading only when it is a regular file, never through a symlink at
/// its last component and never blocking on a FIFO.
fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if file.metadata()?.is_file() {
        Ok(file)
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ))
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The content blocks of one transcript line, its time and its `toolUseResult`.
fn blocks_of(line: &[u8]) -> Option<(Vec<Value>, Option<u64>, Option<Value>)> {
    let parsed = serde_json::from_slice::<Line>(line).ok()?;
    let at_ms = parsed
        .timestamp
        .as_deref()
        .and_then(|t| humantime::parse_rfc3339(t).ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64);
    match parsed.message.map(|m| m.content) {
        Some(Value::Array(blocks)) => Some((blocks, at_ms, parsed.tool_use_result)),
        _ => None,
    }
}

/// What a write's `toolUseResult` says its file held before.
fn before_of(result: &Value) -> Option<Before> {
    match result.get("originalFile") {
        Some(Value::String(text)) => Some(Before::Text(text.clone())),
        _ if result["type"] == "create" => Some(Before::Absent),
        _ => None,
    }
}

/// The tool calls of one transcript line.
fn uses_of(line: &[u8]) -> Vec<Used> {
    let Some((blocks, at_ms, _)) = blocks_of(line) else {
        return Vec::new();
    };
    blocks
        .into_iter()
        .filter(|b| b["type"] == "tool_use")
        .filter_map(|mut b| {
            Some(Used {
                tool_use_id: b["id"].as_str()?.to_string(),
                name: b["name"].as_str()?.to_string(),
                input: b.get_mut("input").map(Value::take).unwrap_or_default(),
                at_ms,
            })
        })
        .collect()
}

/// The tool results of one transcript line.
fn outcomes_of(line: &[u8]) -> Vec<Outcome> {
    let Some((blocks, at_ms, result)) = blocks_of(line) else {
        return Vec::new();
    };
    // A line's `toolUseResult` is its one result's (never guessed among several).
    let results = blocks.iter().filter(|b| b["type"] == "tool_result").count();
    let before = result.as_ref().filter(|_| results == 1).and_then(before_of);
    blocks
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .filter_map(|b| {
            let id = b["tool_use_id"].as_str()?;
            let text = match &b["content"] {
                Value::String(s) => s.clone(),
                Value::Array(items) => items
                    .iter()
                    .filter_map(|i| i["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => String::new(),
            };
            Some(Outcome {
                tool_use_id: id.to_string(),
                is_error: b["is_error"] == true,
                at_ms,
                text: clip(text.lines().next().unwrap_or(""), MAX_TEXT),
                before: before.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const USE: &str = r#"{"type":"assistant","timestamp":"2026-11-25T22:00:11.628Z","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Read"}]}}"#;
    const OK: &str = r#"{"type":"user","timestamp":"2026-11-25T22:00:11.655Z","message":{"content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"1\thello"}]},"toolUseResult":{"type":"text"}}"#;
    const FAILED: &str = r#"{"type":"user","timestamp":"2026-11-25T22:00:12.044Z","message":{"content":[{"type":"tool_result","content":[{"type":"text","text":"Exit code 1"}],"is_error":true,"tool_use_id":"toolu_2"}]}}"#;

    #[test]
    fn a_writes_result_says_what_its_file_held_before() {
        let edit = r#"{"type":"user","message":{"content":[{"tool_use_id":"e","type":"tool_result","content":"ok"}]},"toolUseResult":{"filePath":"/w/a","originalFile":"a\n"}}"#;
        let create = r#"{"type":"user","message":{"content":[{"tool_use_id":"w","type":"tool_result","content":"ok"}]},"toolUseResult":{"type":"create","filePath":"/w/b"}}"#;
        let two = r#"{"type":"user","message":{"content":[{"tool_use_id":"x","type":"tool_result","content":"ok"},{"tool_use_id":"y","type":"tool_result","content":"ok"}]},"toolUseResult":{"originalFile":"?"}}"#;
        assert_eq!(
            outcomes_of(edit.as_bytes())[0].before,
            Some(Before::Text("a\n".into()))
        );
        assert_eq!(
            outcomes_of(create.as_bytes())[0].before,
            Some(Before::Absent)
        );
        assert!(outcomes_of(two.as_bytes())
            .iter()
            .all(|o| o.before.is_none()));
        assert_eq!(outcomes_of(OK.as_bytes())[0].before, None);
    }

    #[test]
    fn reads_results_incrementally_and_only_complete_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut f = std::fs::File::create(&path).unwrap();
        writeln!(f, "{USE}\n{OK}").unwrap();
        write!(f, "{}", &FAILED[..20]).unwrap();
        f.flush().unwrap();
        let first = read_outcomes(&path, 0, 1 << 20).unwrap();
        assert_eq!(first.outcomes.len(), 1);
        assert_eq!(first.outcomes[0].tool_use_id, "toolu_1");
        assert!(!first.outcomes[0].is_error);
        assert_eq!(first.outcomes[0].at_ms, Some(1_795_644_011_655));
        writeln!(f, "{}", &FAILED[20..]).unwrap();
        f.flush().unwrap();
        let second = read_outcomes(&path, first.offset, 1 << 20).unwrap();
        assert_eq!(
            second.outcomes.len(),
            1,
            "the partial line is read whole now"
        );
        assert!(second.outcomes[0].is_error);
        assert_eq!(second.outcomes[0].text, "Exit code 1");
        let none = read_outcomes(&path, second.offset, 1 << 20).unwrap();
        assert!(none.outcomes.is_empty() && none.offset == second.offset);
    }

    #[test]
    fn more_than_the_bound_skips_the_start_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let filler = format!("{{\"type\":\"x\",\"pad\":\"{}\"}}\n", "p".repeat(500));
        std::fs::write(&path, format!("{OK}\n{filler}{filler}{FAILED}\n")).unwrap();
        let bound = (filler.len() + FAILED.len() + 1) as u64;
        let read = read_outcomes(&path, 0, bound).unwrap();
        assert!(read.skipped > 0);
        assert_eq!(read.outcomes.len(), 1, "toolu_1 was in the skipped part");
        assert_eq!(read.outcomes[0].tool_use_id, "toolu_2");
        assert_eq!(read.offset, std::fs::metadata(&path).unwrap().len());
        std::fs::write(&path, "short\n").unwrap();
        let reset = read_outcomes(&path, read.offset, 1 << 20).unwrap();
        assert_eq!(reset.offset, 6, "a shorter file starts over at its end");
    }
}

#[cfg(test)]
mod special_files {
    use super::*;

    #[test]
    fn symlinks_and_fifos_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.jsonl");
        std::fs::write(&real, "{}\n").unwrap();
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(read_outcomes(&link, 0, 1 << 20).is_err());
        let fifo = dir.path().join("fifo.jsonl");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a path we own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(
            read_outcomes(&fifo, 0, 1 << 20).is_err(),
            "refused, not blocking"
        );
        assert_eq!(length(&dir.path().join("missing.jsonl")).unwrap(), 0);
    }
}
