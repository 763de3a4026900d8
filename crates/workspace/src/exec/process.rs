//! Runs a program without a shell: its own process group (killed on timeout and when
//! the caller is cancelled), a minimal environment with no secrets, stdin closed, and
//! stdout/stderr captured up to a cap with a truncation marker.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

/// Environment variables passed through (none of them carries credentials).
const PASS_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "GOPATH",
    "GOROOT",
    "GOCACHE",
    "GOMODCACHE",
    "NODE_PATH",
    "NPM_CONFIG_CACHE",
    "VIRTUAL_ENV",
    "JAVA_HOME",
];

/// Fixed variables that keep tools non-interactive and plain.
const FIXED_ENV: &[(&str, &str)] = &[
    ("TERM", "dumb"),
    ("NO_COLOR", "1"),
    ("CLICOLOR", "0"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("CARGO_TERM_COLOR", "never"),
];

/// What to run.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Program (bare name, resolved through PATH) or absolute path for internal use.
    pub program: String,
    /// Arguments.
    pub args: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Kill after this long.
    pub timeout: Duration,
    /// Bytes kept per stream.
    pub max_output: usize,
    /// Extra environment (internal callers only).
    pub env: Vec<(String, String)>,
    /// Run under this sandbox: namespaces through the helper ([`super::isolate`])
    /// where the kernel allows them, and Landlock ([`super::sandbox`]); `TMPDIR` is
    /// then a fresh directory of its own, writable, removed afterwards.
    pub sandbox: Option<super::sandbox::Sandbox>,
}

/// The outcome of a run that started.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunOutput {
    /// Exit code (None when killed by a signal).
    pub exit_code: Option<i32>,
    /// Captured standard output.
    pub stdout: String,
    /// Captured standard error.
    pub stderr: String,
    /// True when a stream went over the cap.
    pub truncated: bool,
    /// True when the timeout killed it.
    pub timed_out: bool,
    /// Wall time.
    pub duration_ms: u64,
}

/// Why a program could not be started.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Not on PATH.
    #[error("Command not found: {0} (is it installed and on PATH?)")]
    NotFound(String),
    /// Other spawn failure.
    #[error("Cannot run {program}: {source}")]
    Spawn {
        program: String,
        /// Cause.
        source: std::io::Error,
    },
}

/// Kills the whole process group when dropped (timeout, cancellation, panic).
pub struct GroupGuard(Option<i32>);

impl GroupGuard {
    /// Guards the process group whose leader is `pgid` (`None`: nothing to kill).
    pub fn new(pgid: Option<i32>) -> Self {
        Self(pgid)
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.0.take() {
            // SAFETY: signalling a process group we created; harmless if it is gone.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

/// The minimal environment handed to commands.
pub fn minimal_env() -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = PASS_ENV
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
        .collect();
    env.extend(
        FIXED_ENV
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    env
}

/// Runs `spec` to completion or timeout.
pub async fn run(spec: RunSpec) -> Result<RunOutput, RunError> {
    let started = Instant::now();
    let spawn_error = |program: &str, source| RunError::Spawn {
        program: program.to_string(),
        source,
    };
    // Kept until the run ends: the per-command temp dir.
    let mut _tmp = None;
    let mut sandbox = spec.sandbox.clone();
    if let Some(sandbox) = &mut sandbox {
        let tmp = tempfile::Builder::new()
            .prefix("ide-bridge-cmd-")
            .tempdir()
            .map_err(|e| spawn_error(&spec.program, e))?;
        sandbox.writable.push(tmp.path().to_path_buf());
        _tmp = Some(tmp);
    }
    // In namespaces, through the helper ([`super::isolate`]), which also applies
    // Landlock; without them, Landlock alone, enforced between fork and exec.
    let isolated = match &sandbox {
        Some(sandbox) if super::isolate::available() => {
            let program = super::isolate::resolve(&spec.program)
                .ok_or_else(|| RunError::NotFound(spec.program.clone()))?;
            super::isolate::Request {
                writable: sandbox.writable.clone(),
                hidden: super::isolate::hidden_paths(),
                network: sandbox.network,
                program,
                args: spec.args.clone(),
            }
            .command_line()
        }
        _ => None,
    };
    let mut cmd = match &isolated {
        Some((helper, args)) => {
            let mut cmd = Command::new(helper);
            cmd.args(args);
            cmd
        }
        None => {
            let mut cmd = Command::new(&spec.program);
            cmd.args(&spec.args);
            cmd
        }
    };
    cmd.current_dir(&spec.cwd)
        .env_clear()
        .envs(minimal_env())
        .envs(spec.env.iter().cloned())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let (Some(sandbox), Some(tmp)) = (&sandbox, &_tmp) {
        // Caches outside the workspace are read-only in the sandbox: tools that need
        // one (go's build cache, XDG caches) get one in the temp dir instead.
        cmd.env("TMPDIR", tmp.path())
            .env("GOCACHE", tmp.path().join("go-build"))
            .env("XDG_CACHE_HOME", tmp.path().join("cache"));
        if isolated.is_none() {
            let ruleset = super::sandbox::ruleset(sandbox)
                .map_err(|e| spawn_error(&spec.program, std::io::Error::other(e)))?;
            // SAFETY: the hook only takes the prepared ruleset out of its slot and
            // makes the prctl and landlock_restrict_self calls.
            unsafe {
                cmd.pre_exec(super::sandbox::restrict_in_child(ruleset));
            }
        }
    }
    let mut child = cmd.spawn().map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            RunError::NotFound(spec.program.clone())
        } else {
            RunError::Spawn {
                program: spec.program.clone(),
                source,
            }
        }
    })?;
    let guard = GroupGuard(child.id().and_then(|id| i32::try_from(id).ok()));
    let max = spec.max_output;
    let stdout = actix_rt::spawn(capture(child.stdout.take(), max));
    let stderr = actix_rt::spawn(capture(child.stderr.take(), max));
    let status = tokio::time::timeout(spec.timeout, child.wait()).await;
    let timed_out = status.is_err();
    // Whether the leader exited or timed out, nothing of its group may outlive the
    // call; killing the group also closes the pipes the captures are reading.
    drop(guard);
    let collect = |task: actix_rt::task::JoinHandle<(String, bool)>| async move {
        tokio::time::timeout(Duration::from_secs(2), task)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default()
    };
    let (out, mut err) = (collect(stdout).await, collect(stderr).await);
    if timed_out {
        err.0.push_str(&format!(
            "\n[timed out after {} ms; the process group was killed]",
            spec.timeout.as_millis()
        ));
    }
    Ok(RunOutput {
        exit_code: status.ok().and_then(|s| s.ok()).and_then(|s| s.code()),
        truncated: out.1 || err.1,
        stdout: out.0,
        stderr: err.0,
        timed_out,
        duration_ms: started.elapsed().as_millis() as u64,
    })
}

/// Reads a stream to its end, keeping its first and last bytes (see [`Kept`]).
async fn capture<R: AsyncRead + Unpin>(stream: Option<R>, max: usize) -> (String, bool) {
    let Some(mut stream) = stream else {
        return (String::new(), false);
    };
    let mut kept = Kept::new(max);
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => kept.push(&buf[..n]),
        }
    }
    kept.finish()
}

/// At most `max` bytes of a stream: all of it when it fits, else its first half and
/// its last half (where a build or a test run says how it ended) around a marker
/// saying how much was left out. Cuts fall between characters.
struct Kept {
    head: Vec<u8>,
    head_max: usize,
    /// The bytes after the head, trimmed to the last `tail_max` from time to time.
    tail: Vec<u8>,
    tail_max: usize,
    total: usize,
}

impl Kept {
    fn new(max: usize) -> Self {
        let head_max = max / 2;
        Kept {
            head: Vec::new(),
            head_max,
            tail: Vec::new(),
            tail_max: max - head_max,
            total: 0,
        }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len();
        let room = self.head_max - self.head.len();
        let (to_head, rest) = bytes.split_at(bytes.len().min(room));
        self.head.extend_from_slice(to_head);
        bytes = rest;
        if bytes.len() >= self.tail_max {
            self.tail.clear();
            bytes = &bytes[bytes.len() - self.tail_max..];
        }
        self.tail.extend_from_slice(bytes);
        // Trimmed once it holds twice what is kept: a copy per `tail_max` bytes read.
        if self.tail.len() >= 2 * self.tail_max {
            self.tail.drain(..self.tail.len() - self.tail_max);
        }
    }

    /// The text kept, and whether anything was left out.
    fn finish(mut self) -> (String, bool) {
        if self.tail.len() > self.tail_max {
            self.tail.drain(..self.tail.len() - self.tail_max);
        }
        let kept = self.head.len() + self.tail.len();
        if kept == self.total {
            self.head.extend_from_slice(&self.tail);
            return (String::from_utf8_lossy(&self.head).into_owned(), false);
        }
        // A character cut at the head's end or the tail's start is left out whole.
        let head_end = match std::str::from_utf8(&self.head) {
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            _ => self.head.len(),
        };
        let tail_start = self
            .tail
            .iter()
            .take(3)
            .take_while(|b| (**b & 0xC0) == 0x80)
            .count();
        let (head, tail) = (&self.head[..head_end], &self.tail[tail_start..]);
        let omitted = self.total - head.len() - tail.len();
        let text = format!(
            "{}\n[… {omitted} bytes left out: the first {} and the last {} of {} bytes \
             are shown]\n{}",
            String::from_utf8_lossy(head),
            head.len(),
            tail.len(),
            self.total,
            String::from_utf8_lossy(tail),
        );
        (text, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(program: &str, args: &[&str]) -> RunSpec {
        RunSpec {
            program: program.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            cwd: std::env::temp_dir(),
            timeout: Duration::from_secs(10),
            max_output: 1000,
            sandbox: None,
            env: Vec::new(),
        }
    }

    #[actix_rt::test]
    async fn captures_output_and_exit_codes() {
        let out = run(spec("git", &["--version"])).await.unwrap();
        assert_eq!(out.exit_code, Some(0));
        assert!(out.stdout.starts_with("git version"));
        let bad = run(spec("git", &["no-such-subcommand"])).await.unwrap();
        assert_ne!(bad.exit_code, Some(0));
        assert!(matches!(
            run(spec("no-such-program-xyz", &[])).await,
            Err(RunError::NotFound(_))
        ));
    }

    #[actix_rt::test]
    async fn caps_output_and_kills_on_timeout() {
        let mut big = spec("yes", &[]);
        big.timeout = Duration::from_millis(300);
        let out = run(big).await.unwrap();
        assert!(out.timed_out && out.stderr.contains("timed out after 300 ms"));
        assert!(out.stdout.starts_with("y\ny\n"), "partial output is kept");
        let mut long = spec("head", &["-c", "5000", "/dev/zero"]);
        long.max_output = 100;
        let out = run(long).await.unwrap();
        assert!(
            out.truncated
                && out
                    .stdout
                    .contains("the first 50 and the last 50 of 5000 bytes"),
            "{}",
            out.stdout
        );
    }

    fn kept(max: usize, chunks: &[&[u8]]) -> (String, bool) {
        let mut kept = Kept::new(max);
        for c in chunks {
            kept.push(c);
        }
        kept.finish()
    }

    #[test]
    fn output_that_fits_is_kept_whole_and_longer_output_keeps_its_start_and_end() {
        // At the limit, in pieces of every size: all of it.
        let text: Vec<u8> = (0..100u8).map(|i| b'a' + i % 26).collect();
        for piece in [1, 7, 49, 50, 51, 100] {
            let chunks: Vec<&[u8]> = text.chunks(piece).collect();
            assert_eq!(
                kept(100, &chunks),
                (String::from_utf8(text.clone()).unwrap(), false)
            );
        }
        // One byte more: the first 50 and the last 50, the 101st byte's neighbour gone.
        let mut more = text.clone();
        more.push(b'!');
        for piece in [1, 7, 50, 101] {
            let chunks: Vec<&[u8]> = more.chunks(piece).collect();
            let (out, cut) = kept(100, &chunks);
            assert!(cut);
            let (head, rest) = out
                .split_once(
                    "\n[… 1 bytes left out: the first 50 and the last 50 of 101 bytes are shown]\n",
                )
                .expect(&out);
            assert_eq!(head.as_bytes(), &more[..50]);
            assert_eq!(rest.as_bytes(), &more[51..]);
        }
        // A long stream keeps its very end.
        let lines: String = (1..=10_000).map(|i| format!("{i}\n")).collect();
        let chunks: Vec<&[u8]> = lines.as_bytes().chunks(4096).collect();
        let (out, cut) = kept(1000, &chunks);
        assert!(
            cut && out.starts_with("1\n2\n3\n") && out.ends_with("9999\n10000\n"),
            "{out}"
        );
    }

    #[test]
    fn cuts_fall_between_characters() {
        // "é" is two bytes: a 5-byte head would end inside the third one.
        let text = "ééééééééééé".as_bytes();
        let (out, cut) = kept(10, &[text]);
        assert!(cut);
        assert!(!out.contains('\u{FFFD}'), "{out}");
        assert!(out.starts_with("éé\n[…") && out.ends_with("]\néé"), "{out}");
    }

    #[test]
    fn environment_carries_no_secrets() {
        std::env::set_var("GITHUB_TOKEN_FOR_TEST", "x");
        let env = minimal_env();
        assert!(env.iter().all(|(k, _)| !k.contains("TOKEN")));
        assert!(env.iter().any(|(k, v)| k == "TERM" && v == "dumb"));
    }
}
