//! Parsers for each linter's machine-readable output. A parser that cannot make sense
//! of the output says so (`failed to parse output`) instead of guessing.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::linters::Linter;
use super::{sanitize, Diagnostic, Range, Severity};
use ide_bridge_protocol::ide::Position;

/// One parsed diagnostic with the absolute path of its file.
pub type Located = (PathBuf, Diagnostic);

/// A linter's output that does not have the shape its parser expects.
#[derive(Debug, thiserror::Error)]
#[error("{}: failed to parse output ({shape})", linter.name())]
pub struct ParseError {
    /// Whose output it was.
    pub linter: Linter,
    /// What was wrong with it.
    pub shape: ShapeError,
}

/// What a parser found wrong with the output.
#[derive(Debug, thiserror::Error)]
pub enum ShapeError {
    /// Neither `[` nor `{` anywhere.
    #[error("no JSON in output")]
    NoJson,
    /// JSON that does not parse.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// Output with no JSON line among its lines.
    #[error("expected JSON lines")]
    NoJsonLines,
    /// A document that is not the array expected.
    #[error("expected an array")]
    NotArray,
    /// A field the format always has is missing.
    #[error("missing {0}")]
    Missing(&'static str),
}

/// Parses `linter`'s output produced in `root`.
pub fn parse(
    linter: Linter,
    root: &Path,
    stdout: &str,
    stderr: &str,
) -> Result<Vec<Located>, ParseError> {
    let parsed = match linter {
        Linter::Cargo => cargo(root, stdout),
        Linter::Tsc => tsc(root, stdout),
        Linter::Eslint => eslint(stdout),
        Linter::Ruff => ruff(root, stdout),
        Linter::Pyright => pyright(stdout),
        Linter::Go => go_vet(root, stderr),
        Linter::Biome => biome(root, stdout),
    };
    parsed.map_err(|shape| ParseError { linter, shape })
}

fn diag(
    message: &str,
    severity: Severity,
    range: Range,
    source: &str,
    code: Option<String>,
) -> Diagnostic {
    Diagnostic {
        message: sanitize(message),
        severity,
        range,
        source: Some(source.to_string()),
        code: code.filter(|c| !c.is_empty()),
    }
}

fn num(v: &Value) -> u32 {
    v.as_u64()
        .map(|n| n.min(u64::from(u32::MAX)) as u32)
        .unwrap_or(0)
}

fn json_doc(text: &str) -> Result<Value, ShapeError> {
    let start = text.find(['[', '{']).ok_or(ShapeError::NoJson)?;
    Ok(serde_json::from_str(&text[start..])?)
}

/// `cargo check --message-format=json`: one JSON object per line.
fn cargo(root: &Path, stdout: &str) -> Result<Vec<Located>, ShapeError> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut any_json = false;
    for line in stdout.lines().filter(|l| l.starts_with('{')) {
        let v: Value = serde_json::from_str(line)?;
        any_json = true;
        if v["reason"] != "compiler-message" {
            continue;
        }
        let m = &v["message"];
        let severity = match m["level"].as_str() {
            Some("error") | Some("error: internal compiler error") => Severity::Error,
            Some("warning") => Severity::Warning,
            Some("note") => Severity::Info,
            Some("help") => Severity::Hint,
            _ => continue,
        };
        let Some(span) = m["spans"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["is_primary"] == true))
        else {
            continue;
        };
        let manifest_dir = v["manifest_path"]
            .as_str()
            .and_then(|p| Path::new(p).parent())
            .unwrap_or(root);
        let file = manifest_dir.join(span["file_name"].as_str().unwrap_or_default());
        let range = Range::from_one_based(
            num(&span["line_start"]),
            num(&span["column_start"]),
            num(&span["line_end"]),
            num(&span["column_end"]),
        );
        let d = diag(
            m["message"].as_str().unwrap_or_default(),
            severity,
            range,
            "rustc",
            m["code"]["code"].as_str().map(str::to_string),
        );
        if seen.insert((
            file.clone(),
            d.message.clone(),
            range.start.line,
            range.start.character,
        )) {
            out.push((file, d));
        }
    }
    if !any_json && !stdout.trim().is_empty() {
        return Err(ShapeError::NoJsonLines);
    }
    Ok(out)
}

/// `tsc --pretty false`: `path(line,col): error TS1234: message`.
fn tsc(root: &Path, stdout: &str) -> Result<Vec<Located>, ShapeError> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Some((loc, rest)) = line.split_once("): ") else {
            continue;
        };
        let Some((path, pos)) = loc.rsplit_once('(') else {
            continue;
        };
        let mut nums = pos.split(',').map(|n| n.trim().parse::<u32>().unwrap_or(1));
        let (l, c) = (nums.next().unwrap_or(1), nums.next().unwrap_or(1));
        let (kind, msg) = rest.split_once(": ").unwrap_or((rest, ""));
        let mut words = kind.split_whitespace();
        let severity = match words.next() {
            Some("error") => Severity::Error,
            Some("warning") => Severity::Warning,
            _ => Severity::Info,
        };
        out.push((
            root.join(path),
            diag(
                msg,
                severity,
                Range::from_one_based(l, c, l, c),
                "tsc",
                words.next().map(str::to_string),
            ),
        ));
    }
    Ok(out)
}

/// `eslint -f json`.
fn eslint(stdout: &str) -> Result<Vec<Located>, ShapeError> {
    let doc = json_doc(stdout)?;
    let files = doc.as_array().ok_or(ShapeError::NotArray)?;
    let mut out = Vec::new();
    for f in files {
        let path = PathBuf::from(
            f["filePath"]
                .as_str()
                .ok_or(ShapeError::Missing("filePath"))?,
        );
        for m in f["messages"].as_array().into_iter().flatten() {
            let severity = if m["severity"] == 2 {
                Severity::Error
            } else {
                Severity::Warning
            };
            let (l, c) = (num(&m["line"]).max(1), num(&m["column"]).max(1));
            let range =
                Range::from_one_based(l, c, num(&m["endLine"]).max(l), num(&m["endColumn"]).max(c));
            out.push((
                path.clone(),
                diag(
                    m["message"].as_str().unwrap_or_default(),
                    severity,
                    range,
                    "eslint",
                    m["ruleId"].as_str().map(str::to_string),
                ),
            ));
        }
    }
    Ok(out)
}

/// `ruff check --output-format json`.
fn ruff(root: &Path, stdout: &str) -> Result<Vec<Located>, ShapeError> {
    let doc = json_doc(stdout)?;
    let items = doc.as_array().ok_or(ShapeError::NotArray)?;
    let mut out = Vec::new();
    for m in items {
        let file = root.join(
            m["filename"]
                .as_str()
                .ok_or(ShapeError::Missing("filename"))?,
        );
        let code = m["code"].as_str().map(str::to_string);
        // Ruff calls every finding an error; the file's own errors are what cannot run:
        // a syntax error (no code before ruff 0.5, `E999`, now `invalid-syntax`) and an
        // undefined name (`F821`, a NameError). The rest are lints: warnings.
        let severity = match code.as_deref() {
            None | Some("E999" | "invalid-syntax" | "F821") => Severity::Error,
            Some(_) => Severity::Warning,
        };
        let range = Range::from_one_based(
            num(&m["location"]["row"]),
            num(&m["location"]["column"]),
            num(&m["end_location"]["row"]),
            num(&m["end_location"]["column"]),
        );
        out.push((
            file,
            diag(
                m["message"].as_str().unwrap_or_default(),
                severity,
                range,
                "ruff",
                code,
            ),
        ));
    }
    Ok(out)
}

/// `pyright --outputjson` (ranges are already 0-based).
fn pyright(stdout: &str) -> Result<Vec<Located>, ShapeError> {
    let doc = json_doc(stdout)?;
    let items = doc["generalDiagnostics"]
        .as_array()
        .ok_or(ShapeError::Missing("generalDiagnostics"))?;
    let pos = |v: &Value| Position {
        line: num(&v["line"]),
        character: num(&v["character"]),
    };
    Ok(items
        .iter()
        .filter_map(|m| {
            let severity = match m["severity"].as_str()? {
                "error" => Severity::Error,
                "warning" => Severity::Warning,
                _ => Severity::Info,
            };
            let range = Range {
                start: pos(&m["range"]["start"]),
                end: pos(&m["range"]["end"]),
            };
            Some((
                PathBuf::from(m["file"].as_str()?),
                diag(
                    m["message"].as_str()?,
                    severity,
                    range,
                    "pyright",
                    m["rule"].as_str().map(str::to_string),
                ),
            ))
        })
        .collect())
}

/// `go vet`: `path:line:col: message` on stderr.
fn go_vet(root: &Path, stderr: &str) -> Result<Vec<Located>, ShapeError> {
    let mut out = Vec::new();
    for line in stderr.lines().filter(|l| !l.starts_with('#')) {
        let line = line.strip_prefix("vet: ").unwrap_or(line);
        let mut parts = line.splitn(4, ':');
        let (Some(path), Some(l), Some(c), Some(msg)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (Ok(l), Ok(c)) = (l.trim().parse::<u32>(), c.trim().parse::<u32>()) else {
            continue;
        };
        out.push((
            root.join(path.trim()),
            diag(
                msg,
                Severity::Warning,
                Range::from_one_based(l, c, l, c),
                "go vet",
                None,
            ),
        ));
    }
    Ok(out)
}

/// Biome's spans are byte offsets into files larger than anything worth reading on a
/// linter run's account; such a file's positions stay at its start.
const MAX_OFFSET_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// A file's text and where its lines start, to turn byte offsets into positions.
#[derive(Default)]
struct Lines {
    text: String,
    /// Byte offset of each line's first byte (the first is 0).
    starts: Vec<usize>,
}

impl Lines {
    /// Reads `file` (as the linter named it, relative to `root`) beneath the workspace:
    /// a regular file only (a FIFO or device named in the output is not waited on),
    /// never through a link out of it; anything unreadable gives no text.
    fn read(root: Option<&crate::workspace::Root>, file: &str) -> Lines {
        let bytes = root.and_then(|root| {
            crate::workspace::files::read_regular_max(
                root,
                &root.path().join(file),
                MAX_OFFSET_FILE_BYTES,
            )
            .ok()
        });
        let text = bytes
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Lines { text, starts }
    }

    /// The position of byte `offset` (past the end: the end).
    fn at(&self, offset: u64) -> Position {
        let offset = self
            .text
            .floor_char_boundary((offset as usize).min(self.text.len()));
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        Position {
            line: line as u32,
            character: self.text[start..offset].chars().count() as u32,
        }
    }
}

/// `biome lint --reporter=json`: spans are byte offsets into the file.
fn biome(root: &Path, stdout: &str) -> Result<Vec<Located>, ShapeError> {
    let doc = json_doc(stdout)?;
    let items = doc["diagnostics"]
        .as_array()
        .ok_or(ShapeError::Missing("diagnostics"))?;
    let beneath = crate::workspace::Root::open(root).ok();
    // Each file read once, however many findings it has.
    let mut files: std::collections::HashMap<&str, Lines> = std::collections::HashMap::new();
    let mut out = Vec::new();
    for m in items {
        let Some(file) = m["location"]["path"]["file"].as_str() else {
            continue;
        };
        let path = root.join(file);
        let lines = files
            .entry(file)
            .or_insert_with(|| Lines::read(beneath.as_ref(), file));
        let span = m["location"]["span"].as_array();
        let (s, e) = span.map_or((0, 0), |s| {
            (
                s.first().and_then(Value::as_u64).unwrap_or(0),
                s.get(1).and_then(Value::as_u64).unwrap_or(0),
            )
        });
        let severity = match m["severity"].as_str() {
            Some("error") | Some("fatal") => Severity::Error,
            Some("warning") => Severity::Warning,
            _ => Severity::Info,
        };
        let message = m["description"]
            .as_str()
            .or(m["message"].as_str())
            .unwrap_or_default();
        out.push((
            path,
            diag(
                message,
                severity,
                Range {
                    start: lines.at(s),
                    end: lines.at(e),
                },
                "biome",
                m["category"].as_str().map(str::to_string),
            ),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cargo_json_lines() {
        let root = Path::new("/w");
        let line = r#"{"reason":"compiler-message","manifest_path":"/w/Cargo.toml","message":{"message":"mismatched types","level":"error","code":{"code":"E0308"},"spans":[{"file_name":"src/main.rs","line_start":3,"line_end":3,"column_start":18,"column_end":25,"is_primary":true}]}}"#;
        let noise = r#"{"reason":"build-finished","success":false}"#;
        let out = parse(
            Linter::Cargo,
            root,
            &format!("{line}\n{line}\n{noise}\n"),
            "",
        )
        .unwrap();
        assert_eq!(out.len(), 1, "duplicates from several targets are merged");
        let (file, d) = &out[0];
        assert_eq!(file, Path::new("/w/src/main.rs"));
        assert_eq!(
            (d.severity, d.code.as_deref()),
            (Severity::Error, Some("E0308"))
        );
        assert_eq!(
            (
                d.range.start.line,
                d.range.start.character,
                d.range.end.character
            ),
            (2, 17, 24)
        );
        assert!(parse(Linter::Cargo, root, "garbage that is not json", "")
            .unwrap_err()
            .to_string()
            .contains("cargo: failed to parse output"));
    }

    #[test]
    fn parses_tsc_eslint_ruff_pyright_and_go() {
        let root = Path::new("/w");
        let t = parse(
            Linter::Tsc,
            root,
            "src/a.ts(3,5): error TS2322: Type 'x' is wrong.\n",
            "",
        )
        .unwrap();
        assert_eq!(
            (t[0].1.range.start.line, t[0].1.code.as_deref()),
            (2, Some("TS2322"))
        );
        let e = parse(Linter::Eslint, root, r#"[{"filePath":"/w/a.js","messages":[{"line":1,"column":2,"severity":2,"message":"no","ruleId":"no-x"}]}]"#, "").unwrap();
        assert_eq!(
            (e[0].1.severity, e[0].1.range.start.character),
            (Severity::Error, 1)
        );
        let r = parse(Linter::Ruff, root, r#"[{"filename":"/w/a.py","code":"F401","message":"unused","location":{"row":1,"column":8},"end_location":{"row":1,"column":10}}]"#, "").unwrap();
        assert_eq!(
            (r[0].1.severity, r[0].1.code.as_deref()),
            (Severity::Warning, Some("F401"))
        );
        // What ruff 0.17 says of a syntax error and of an undefined name: errors.
        for code in ["invalid-syntax", "F821"] {
            let doc = format!(
                r#"[{{"filename":"/w/a.py","code":"{code}","severity":"error","message":"m","location":{{"row":1,"column":12}},"end_location":{{"row":1,"column":13}}}}]"#
            );
            let r = parse(Linter::Ruff, root, &doc, "").unwrap();
            assert_eq!(r[0].1.severity, Severity::Error, "{code}");
        }
        let p = parse(Linter::Pyright, root, r#"{"generalDiagnostics":[{"file":"/w/a.py","severity":"error","message":"bad","range":{"start":{"line":4,"character":1},"end":{"line":4,"character":3}}}]}"#, "").unwrap();
        assert_eq!(p[0].1.range.start.line, 4);
        let g = parse(
            Linter::Go,
            root,
            "",
            "# pkg\nvet: ./a.go:7:2: unreachable code\n",
        )
        .unwrap();
        assert_eq!(
            (g[0].0.clone(), g[0].1.range.start.line),
            (PathBuf::from("/w/./a.go"), 6)
        );
        assert!(parse(Linter::Ruff, root, "{not json", "").is_err());
        assert!(parse(Linter::Pyright, root, "[]", "").is_err());
    }

    /// Biome's byte offsets become line and character (characters, not bytes); a FIFO,
    /// a link out of the workspace or a path outside it named in the output is not read
    /// (a FIFO held the diagnostics actor's thread for ever).
    #[test]
    fn biome_offsets_are_read_beneath_the_workspace_without_waiting_on_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.js"), "let a;\nlet é = 1;\n").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("s.js"), "x\ny\nz\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("s.js"), root.join("link.js")).unwrap();
        let fifo =
            std::ffi::CString::new(root.join("fifo.js").into_os_string().into_encoded_bytes())
                .unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let finding = |file: &str, from: u64, to: u64| {
            format!(
                r#"{{"location":{{"path":{{"file":"{file}"}},"span":[{from},{to}]}},"severity":"error","description":"d","category":"lint/x"}}"#
            )
        };
        let outside_file = outside.path().join("s.js");
        let doc = format!(
            r#"{{"diagnostics":[{},{},{},{},{}]}}"#,
            finding("a.js", 11, 14),
            finding("a.js", 3, 999),
            finding("fifo.js", 4, 4),
            finding("link.js", 4, 4),
            finding(outside_file.to_str().unwrap(), 4, 4),
        );
        let (done, finished) = std::sync::mpsc::channel();
        let root_for_parse = root.clone();
        std::thread::spawn(move || {
            let _ = done.send(parse(Linter::Biome, &root_for_parse, &doc, "").unwrap());
        });
        let out = finished
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("parsing waited on the FIFO");
        let at = |i: usize| {
            let r = out[i].1.range;
            (r.start.line, r.start.character, r.end.line, r.end.character)
        };
        // "let é = 1;": `é` is two bytes; offset 11 is after "let é" on line 1.
        assert_eq!(at(0), (1, 4, 1, 6));
        assert_eq!(at(1), (0, 3, 2, 0), "past the end: the end");
        for (i, (file, _)) in out.iter().enumerate().skip(2) {
            assert_eq!(at(i), (0, 0, 0, 0), "{file:?} was read");
        }
    }
}
