//! The activity log file: JSON Lines appended by a dedicated writer thread, rotated by
//! size, and read back line by line with validation (bad lines are skipped and
//! counted, never fatal; overlong lines are skipped without being held in memory).

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;

use serde_json::Value;

/// Lines longer than this are treated as corrupt.
pub const MAX_LINE_BYTES: usize = 1024 * 1024;
/// Rotated files kept (`.1` is the newest).
pub const ROTATED_KEPT: usize = 3;

/// What loading found (tests: every entry kept).
#[cfg(test)]
#[derive(Debug, Default)]
pub struct Loaded {
    /// Valid lines, parsed, oldest first.
    pub entries: Vec<Value>,
    /// Lines skipped as corrupt (garbage, wrong types, torn, overlong).
    pub skipped: usize,
}

/// Validation of one persisted entry: an object with a numeric `id` and `timestamp`, a
/// known `kind`; tool calls need a string `status` and a numeric or absent `durationMs`.
pub fn valid_entry(v: &Value) -> bool {
    let Some(o) = v.as_object() else { return false };
    let number = |k: &str| o.get(k).is_some_and(Value::is_u64);
    if !number("id") || !number("timestamp") {
        return false;
    }
    match o.get("kind").and_then(Value::as_str) {
        Some("toolCall") => {
            o.get("status").is_some_and(Value::is_string)
                && o.get("tool").is_some_and(Value::is_string)
                && o.get("durationMs").is_none_or(Value::is_u64)
        }
        Some("lifecycle") => o.get("event").is_some_and(Value::is_string),
        _ => false,
    }
}

/// Reads `path` (missing file: nothing), keeping valid entries.
#[cfg(test)]
pub fn load(path: &Path) -> io::Result<Loaded> {
    let mut entries = Vec::new();
    let skipped = for_each_entry(path, |v| entries.push(v))?;
    Ok(Loaded { entries, skipped })
}

/// Reads `path` (missing file: nothing) a line at a time, handing each valid entry to
/// `keep`, oldest first, and answers how many lines were skipped as corrupt (garbage,
/// wrong types, torn, overlong). Nothing is held beyond one line: what to keep of a
/// log of any size is the caller's to bound.
pub fn for_each_entry(path: &Path, mut keep: impl FnMut(Value)) -> io::Result<usize> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut reader = BufReader::new(file);
    let mut skipped = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        if line.len() > MAX_LINE_BYTES && line.last() != Some(&b'\n') {
            // Overlong: skip the rest of it without buffering.
            skipped += 1;
            let mut sink = Vec::new();
            loop {
                sink.clear();
                let m = (&mut reader).take(64 * 1024).read_until(b'\n', &mut sink)?;
                if m == 0 || sink.last() == Some(&b'\n') {
                    break;
                }
            }
            continue;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Value>(text) {
            Ok(v) if valid_entry(&v) => keep(v),
            _ => skipped += 1,
        }
    }
    Ok(skipped)
}

/// Commands for the writer thread.
enum Command {
    Append(Vec<String>),
    Flush(Sender<()>),
}

/// Handle of the writer thread; dropping it flushes and stops the thread.
pub struct Appender {
    tx: Option<Sender<Command>>,
    thread: Option<JoinHandle<()>>,
}

impl Appender {
    /// Starts a writer thread appending to `path`, rotating beyond `max_bytes`.
    pub fn start(path: PathBuf, max_bytes: u64) -> io::Result<Self> {
        let file = open_for_append(&path)?;
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("activity-writer".into())
            .spawn(move || write_loop(path, file, max_bytes, rx))?;
        Ok(Self {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Queues whole lines (no trailing newline) without waiting.
    pub fn append(&self, lines: Vec<String>) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Command::Append(lines));
        }
    }

    /// Waits until everything queued so far is written and synced.
    pub fn flush(&self) {
        if let Some(tx) = &self.tx {
            let (done, wait) = mpsc::channel();
            if tx.send(Command::Flush(done)).is_ok() {
                let _ = wait.recv();
            }
        }
    }
}

impl Drop for Appender {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Opens for appending; a torn last line (no trailing newline) is closed off first so
/// that the next line is not glued to it.
fn open_for_append(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let len = file.metadata()?.len();
    if len > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::Start(len - 1))?;
        file.read_exact(&mut last)?;
        if last[0] != b'\n' {
            file.write_all(b"\n")?;
        }
    }
    set_private(path);
    Ok(file)
}

fn set_private(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = fs::set_permissions(path, fs::Permissions::from_mode(0o600));
}

fn write_loop(path: PathBuf, mut file: File, max_bytes: u64, rx: Receiver<Command>) {
    let mut size = file.metadata().map(|m| m.len()).unwrap_or(0);
    for cmd in rx {
        match cmd {
            Command::Append(lines) => {
                let mut buf = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
                for l in &lines {
                    buf.push_str(l);
                    buf.push('\n');
                }
                if let Err(e) = file
                    .write_all(buf.as_bytes())
                    .and_then(|_| file.sync_data())
                {
                    tracing::error!(path = %path.display(), %e, lines = lines.len(), "activity log write failed; entries stay in memory only");
                    continue;
                }
                size += buf.len() as u64;
                if size > max_bytes {
                    match rotate(&path) {
                        Ok(f) => {
                            file = f;
                            size = 0;
                        }
                        Err(e) => {
                            tracing::error!(path = %path.display(), %e, "activity log rotation failed")
                        }
                    }
                }
            }
            Command::Flush(done) => {
                let _ = file.sync_all();
                let _ = done.send(());
            }
        }
    }
    let _ = file.sync_all();
}

/// `log` → `log.1` → `log.2` …, keeping [`ROTATED_KEPT`]; returns a fresh file.
fn rotate(path: &Path) -> io::Result<File> {
    let name = |n: usize| PathBuf::from(format!("{}.{n}", path.display()));
    let _ = fs::remove_file(name(ROTATED_KEPT));
    for n in (1..ROTATED_KEPT).rev() {
        let _ = fs::rename(name(n), name(n + 1));
    }
    fs::rename(path, name(1))?;
    open_for_append(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: u64) -> String {
        format!(
            r#"{{"id":{id},"timestamp":1,"kind":"toolCall","tool":"t","sessionId":"s","status":"success","durationMs":3,"summary":""}}"#
        )
    }

    #[test]
    fn loading_skips_and_counts_corrupt_lines() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("a.jsonl");
        let huge = "x".repeat(10 * 1024 * 1024);
        let body = [
            call(1),
            "garbage".into(),
            r#"{"id":2,"timestamp":"yesterday","kind":"toolCall","tool":"t","status":"success"}"#.into(),
            r#"{"id":3,"timestamp":5,"kind":"toolCall","tool":"t","status":7}"#.into(),
            r#"{"id":4,"timestamp":5,"kind":"toolCall","tool":"t","status":"error","durationMs":"slow"}"#.into(),
            r#"{"id":5,"timestamp":5,"kind":"toolCall","tool":"t","status":"error"}"#.into(),
            format!(r#"{{"id":6,"timestamp":5,"kind":"lifecycle","event":"x","detail":"{huge}"}}"#),
            r#"{"id":7,"timestamp":5,"kind":"lifecycle","event":"agent_connected","detail":""}"#.into(),
            r#"{"id":8,"timestamp":5,"kind":"toolCall","tool":"t","sta"#.into(),
        ]
        .join("\n");
        fs::write(&p, body).unwrap();
        let loaded = load(&p).unwrap();
        let ids: Vec<u64> = loaded
            .entries
            .iter()
            .map(|e| e["id"].as_u64().unwrap())
            .collect();
        assert_eq!(ids, vec![1, 5, 7], "absent durationMs is fine");
        assert_eq!(loaded.skipped, 6);
        assert_eq!(load(&t.path().join("missing")).unwrap().entries.len(), 0);
    }

    #[test]
    fn appends_close_torn_lines_and_rotate() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("a.jsonl");
        fs::write(&p, format!("{}\n{{\"torn", call(1))).unwrap();
        let a = Appender::start(p.clone(), 400).unwrap();
        a.append(vec![call(2)]);
        a.flush();
        let loaded = load(&p).unwrap();
        assert_eq!(
            (loaded.entries.len(), loaded.skipped),
            (2, 1),
            "the new line is not glued to the torn one"
        );
        for i in 3..10 {
            a.append(vec![call(i)]);
        }
        a.flush();
        drop(a);
        assert!(
            PathBuf::from(format!("{}.1", p.display())).exists(),
            "rotated past 400 bytes"
        );
        assert!(fs::metadata(&p).unwrap().len() < 400);
    }
}
