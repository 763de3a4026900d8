//! `ide-bridge hook`: the command Claude Code runs for each hook `ide-bridge init`
//! installs. It reads the hook's JSON on stdin, finds the bridge serving the project
//! through the lock files, posts the JSON to its `/hooks` with the token and the
//! process chain that identifies the agent, and prints the bridge's answer on stdout.
//! A write into another bridge's workspace is first posted to that bridge, whose
//! claims may refuse it.
//!
//! It never gets in the person's way: with no bridge, a bridge that does not answer,
//! or any error, it prints nothing and exits 0, so the CLI carries on as if no hook
//! ran (a claim cannot be enforced then; docs/hooks.md says so). It writes nothing on
//! stderr unless `IDE_BRIDGE_HOOK_DEBUG` is set.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use super::input::{HookEvent, HookInput, NativeAction};
use crate::http::{CLIENT_HEADER, IGNORED_HEADER, TASK_HEADER};
use crate::orchestrator::TASK_ENV;
use crate::{ancestry, http_client, lockfile};

/// The bridge's route for hooks.
pub const PATH: &str = "/hooks";

/// Inputs larger than this are forwarded with their long strings (file contents,
/// command output) replaced by their length.
pub const MAX_FORWARD_BYTES: usize = 4 * 1024 * 1024;
/// Strings longer than this are the ones replaced in an oversized input.
const MAX_KEPT_STRING: usize = 16 * 1024;
/// Read at most this much of stdin; the rest is drained unread, and what was read is
/// forwarded with the values that came before the cut (see [`super::shrink`]).
const MAX_STDIN_BYTES: usize = 64 * 1024 * 1024;

/// How long the hook waits for the bridge to accept the connection.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);
/// How long it waits for an answer to events the bridge answers at once.
const QUICK_ANSWER: Duration = Duration::from_secs(10);
/// How long it waits for events that may wait on a person or on checks (a permission
/// dialog answered in the page, a stop held by the done-gate). The CLI's own `timeout`
/// for the hook (set by `init`) ends it sooner.
const SLOW_ANSWER: Duration = Duration::from_secs(24 * 3600);

/// Set to print why a hook had no effect on stderr.
pub const DEBUG_ENV: &str = "IDE_BRIDGE_HOOK_DEBUG";

/// Why a hook had no effect (only shown with `IDE_BRIDGE_HOOK_DEBUG`).
#[derive(Debug, thiserror::Error)]
enum Miss {
    #[error("could not read the hook's input: {0}")]
    Stdin(std::io::Error),
    #[error("no bridge serves {0} (no live lock file names it)")]
    NoBridge(PathBuf),
    #[error("the bridge on port {port} did not answer: {source}")]
    Unreachable { port: u16, source: std::io::Error },
    #[error("the bridge answered HTTP {status}: {body}")]
    Refused { status: u16, body: String },
}

/// Runs the hook; always exits 0.
pub fn run() -> u8 {
    let debug = std::env::var_os(DEBUG_ENV).is_some();
    match forward() {
        Ok(answer) if !answer.is_empty() => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&answer);
            let _ = out.flush();
        }
        Ok(_) => {}
        Err(miss) if debug => eprintln!("ide-bridge hook: {miss}"),
        Err(_) => {}
    }
    0
}

fn forward() -> Result<Vec<u8>, Miss> {
    let body = read_input(&mut std::io::stdin().lock(), MAX_STDIN_BYTES).map_err(Miss::Stdin)?;
    let dir = project_dir(&body);
    let ide_dir = lockfile::ide_dir();
    let project = lockfile::find_bridge_for(&ide_dir, &dir);
    // A write into a workspace another bridge serves (a CLI started outside it, or in
    // another project): that bridge's claims are asked first, and a refusal is the
    // answer. A bridge that does not answer is passed over, as below.
    if let Some((port, lock)) = written_file(&body)
        .and_then(|file| lockfile::find_bridge_for(&ide_dir, &file))
        .filter(|(port, _)| project.as_ref().map(|(p, _)| p) != Some(port))
    {
        match post(port, &lock, &body, QUICK_ANSWER) {
            Ok(answer) if !answer.is_empty() => return Ok(answer),
            Ok(_) => {}
            Err(miss) if std::env::var_os(DEBUG_ENV).is_some() => {
                eprintln!("ide-bridge hook: {miss}")
            }
            Err(_) => {}
        }
    }
    let (port, lock) = project.ok_or_else(|| Miss::NoBridge(dir.clone()))?;
    let wait = match event_of(&body) {
        Some(HookEvent::PermissionRequest | HookEvent::Stop) => SLOW_ANSWER,
        // An edit gate may check the proposal first.
        Some(HookEvent::PreToolUse) if written_file(&body).is_some() => super::WRITE_HOOK_WAIT,
        _ => QUICK_ANSWER,
    };
    post(port, &lock, &body, wait)
}

/// Posts the hook's input to the bridge on `port`, waiting at most `wait` for its
/// answer.
fn post(
    port: u16,
    lock: &lockfile::LockFile,
    body: &[u8],
    wait: Duration,
) -> Result<Vec<u8>, Miss> {
    let mut request = http_client::Request::new("POST", port, PATH, &lock.auth_token)
        .header(CLIENT_HEADER, client_chain());
    // Inside a Claude task the bridge started: its permission policy answers the
    // task's tool requests, not the page.
    if let Some(task) = std::env::var(TASK_ENV)
        .ok()
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_graphic()))
    {
        request = request.header(TASK_HEADER, task);
    }
    let (status, head, answer) = request
        .json(body)
        .timeouts(CONNECT_TIMEOUT, wait)
        .send_with_head()
        .map_err(|source| Miss::Unreachable { port, source })?;
    if status != 200 {
        return Err(Miss::Refused {
            status,
            body: String::from_utf8_lossy(&answer).chars().take(300).collect(),
        });
    }
    // Not recorded: said under the debug switch, with whether it was answered all the
    // same (a write to a claimed file is refused whoever makes it).
    if let Some(why) = http_client::header_of(&head, IGNORED_HEADER) {
        if std::env::var_os(DEBUG_ENV).is_some() {
            let decided = String::from_utf8_lossy(&answer).contains("permissionDecision");
            let how = if decided {
                "did not record this hook, but answered it (the claims' decision applies to \
                 every writer)"
            } else {
                "took no notice of this hook"
            };
            eprintln!("ide-bridge hook: the bridge on port {port} {how}: {why}");
        }
    }
    Ok(answer)
}

/// The file a `PreToolUse` of `Edit`, `Write` or `NotebookEdit` is about to change, as
/// an absolute path with its existing part resolved (symlinks followed); `None` for
/// any other hook, or a relative path (the CLI names files absolutely).
fn written_file(input: &[u8]) -> Option<PathBuf> {
    if event_of(input) != Some(HookEvent::PreToolUse) {
        return None;
    }
    let input = HookInput::parse(input).ok()?;
    let NativeAction::Write(path) = input.action() else {
        return None;
    };
    path.is_absolute().then(|| super::real_path(path))
}

/// The directory whose bridge gets the hook: `$CLAUDE_PROJECT_DIR`, else the input's
/// `cwd`, else ours.
fn project_dir(input: &[u8]) -> PathBuf {
    let from_env = std::env::var_os("CLAUDE_PROJECT_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from);
    let dir = from_env
        .or_else(|| {
            #[derive(serde::Deserialize)]
            struct Cwd {
                cwd: Option<PathBuf>,
            }
            serde_json::from_slice::<Cwd>(input).ok()?.cwd
        })
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    dir.canonicalize().unwrap_or(dir)
}

/// The event named in the input, when it can be read cheaply.
fn event_of(input: &[u8]) -> Option<HookEvent> {
    #[derive(serde::Deserialize)]
    struct Name<'a> {
        #[serde(borrow)]
        hook_event_name: &'a str,
    }
    HookEvent::parse(serde_json::from_slice::<Name>(input).ok()?.hook_event_name)
}

/// The agent's process: `$CLAUDE_PID` (2.1.332 and later) first, then our parent (the
/// shell the CLI started) and its ancestors, nearest first, comma-separated.
fn client_chain() -> String {
    let mut chain: Vec<u32> = std::env::var("CLAUDE_PID")
        .ok()
        .and_then(|p| p.trim().parse().ok())
        .into_iter()
        .collect();
    for pid in ancestry::client_pids(4) {
        if !chain.contains(&pid) {
            chain.push(pid);
        }
    }
    chain
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Reads the hook's input: as is up to [`MAX_FORWARD_BYTES`]; larger, with its long
/// strings replaced by `<N bytes>`; past `cap`, the rest is drained (the CLI's write
/// never fails) and the values before the cut are kept. Not JSON at all: `{}` (the
/// bridge then answers nothing).
fn read_input(stdin: &mut impl Read, cap: usize) -> std::io::Result<Vec<u8>> {
    let mut input = Vec::new();
    stdin.take(cap as u64).read_to_end(&mut input)?;
    let drained = std::io::copy(stdin, &mut std::io::sink())?;
    if input.len() <= MAX_FORWARD_BYTES && drained == 0 {
        return Ok(input);
    }
    let (shrunk, _complete) = super::shrink::shrink(&input, MAX_KEPT_STRING);
    drop(input);
    Ok(serde_json::to_vec(&shrunk).unwrap_or_else(|_| b"{}".to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn an_oversized_input_keeps_its_shape_without_the_bulk_and_one_past_the_cap_keeps_what_came_first(
    ) {
        let big = "x".repeat(MAX_FORWARD_BYTES);
        let input = serde_json::json!({
            "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": "/w/a", "content": big}
        })
        .to_string();
        let read = |cap| -> Value {
            serde_json::from_slice(&read_input(&mut input.as_bytes(), cap).unwrap()).unwrap()
        };
        let whole = read(input.len());
        assert_eq!(whole["tool_input"]["file_path"], "/w/a");
        assert_eq!(
            whole["tool_input"]["content"],
            format!("<{MAX_FORWARD_BYTES} bytes>")
        );
        let cut = read(input.len() - 100);
        assert_eq!(cut["tool_input"]["file_path"], "/w/a");
        assert_eq!(cut["tool_input"]["content"], Value::Null);
        assert_eq!(
            event_of(&serde_json::to_vec(&cut).unwrap()),
            Some(HookEvent::PreToolUse)
        );
        let small = br#"{"hook_event_name":"Stop"}"#;
        assert_eq!(read_input(&mut &small[..], small.len()).unwrap(), small);
        assert_eq!(read_input(&mut &b"not json"[..], 4).unwrap(), b"{}");
    }
}
