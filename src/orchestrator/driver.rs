//! Runs one Claude task: `claude -p --output-format stream-json --verbose
//! --input-format stream-json --permission-prompt-tool stdio` in the workspace, with
//! `CLAUDECODE` removed from its environment, in its own process group (killed on
//! timeout and on cancellation, i.e. when this future is dropped). The prompt goes in as
//! a stream-json user message; assistant text streams out as events; `can_use_tool`
//! control requests are answered from the policy, and those a rule sends to the person
//! (`ask`) from the browser page, denied when nobody decides in time.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::mpsc::UnboundedSender;

use actix::Recipient;

use super::permissions::{control_response, Decision, Policy, Verdict};
use crate::actors::messages::dashboard::{AskApproval, Asker};
use crate::exec::process::GroupGuard;

/// What a run reports while it goes.
#[derive(Debug, Clone)]
pub enum Event {
    /// Assistant or result text.
    Output(String),
    /// A permission decision.
    Permission {
        /// Tool asked for.
        tool: String,
        /// Allowed.
        allow: bool,
        /// Why.
        reason: String,
    },
}

/// Why a run did not end with a result.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The program could not be spawned.
    #[error("cannot start {program}: {source}")]
    Start {
        /// The Claude executable as configured.
        program: String,
        /// The spawn error.
        source: std::io::Error,
    },
    /// A pipe that was asked for is missing.
    #[error("no {0}")]
    NoPipe(&'static str),
    /// Writing the prompt to the process failed.
    #[error("cannot send the prompt: {0}")]
    Prompt(std::io::Error),
    /// The run outlived its timeout.
    #[error("timed out after {} ms; the process group was killed", .0.as_millis())]
    Timeout(Duration),
    /// Waiting for the process failed.
    #[error("{0}")]
    Wait(std::io::Error),
    /// The process exited 0 without a `result` message.
    #[error(
        "{program} exited without a result (is orchestrator.claude_binary the Claude Code CLI?)"
    )]
    NoResult {
        /// The Claude executable as configured.
        program: String,
    },
    /// The process exited 0 but its result says it failed.
    #[error("the task reported an error: {0}")]
    Reported(String),
    /// The process exited non-zero or was killed by a signal.
    #[error("claude exited with {}{}", code.map_or("a signal".to_string(), |c| format!("code {c}")), if stderr.is_empty() { String::new() } else { format!(": {stderr}") })]
    Exit {
        /// The exit code; `None` after a signal.
        code: Option<i32>,
        /// The start of its stderr, trimmed.
        stderr: String,
    },
}

/// How much of a task's stderr is kept (for its error).
const STDERR_KEPT: usize = 16 * 1024;
/// After the CLI exited, how long a read of its remaining output may wait.
const AFTER_EXIT: Duration = Duration::from_millis(500);

/// How to run tasks.
#[derive(Debug, Clone)]
pub struct DriverConfig {
    /// The Claude executable.
    pub program: String,
    /// Working directory.
    pub workspace: PathBuf,
    /// Permission rules.
    pub policy: Arc<Policy>,
    /// Where `ask` rules ask (the browser page's actor); `None`: the page is off and
    /// `ask` denies.
    pub approver: Option<Recipient<AskApproval>>,
    /// How long an `ask` waits for the person.
    pub approval_timeout: Duration,
}

/// Decides a tool request: the policy's verdict, or for `ask` the person's.
async fn decide(config: &DriverConfig, task_id: &str, tool: &str, input: &Value) -> Decision {
    let decision = config.policy.decide(tool, input);
    if decision.verdict != Verdict::Ask {
        return decision;
    }
    let rule = decision.reason;
    let answer = |allow: bool, why: String| Decision {
        verdict: if allow { Verdict::Allow } else { Verdict::Deny },
        reason: format!("{rule}: {why}"),
    };
    let Some(approver) = &config.approver else {
        return answer(
            false,
            "asks the person, but the browser page is off (ui.enabled = false)".into(),
        );
    };
    let timeout = config.approval_timeout;
    let asked = approver
        .send(AskApproval {
            asker: Asker::Task {
                task_id: task_id.into(),
                rule: rule.clone(),
            },
            tool: tool.to_string(),
            input: input.clone(),
            timeout,
            only_if_watched: false,
        })
        .await;
    let Ok(decision) = asked else {
        return answer(false, "the browser page could not be asked".into());
    };
    match tokio::time::timeout(timeout, decision).await {
        Ok(Ok(true)) => answer(true, "approved in the browser page".into()),
        Ok(Ok(false)) => answer(false, "denied in the browser page".into()),
        Ok(Err(_)) => answer(
            false,
            "the request was dropped before anyone decided".into(),
        ),
        Err(_) => answer(
            false,
            format!(
                "nobody decided within {} s (orchestrator.approval_timeout_ms)",
                timeout.as_secs()
            ),
        ),
    }
}

/// Runs `prompt`; `Ok(result text)` when the process exits 0.
pub async fn run(
    config: &DriverConfig,
    task_id: &str,
    prompt: &str,
    timeout: Duration,
    events: UnboundedSender<Event>,
) -> Result<String, RunError> {
    let mut command = Command::new(&config.program);
    command
        .args([
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--input-format",
            "stream-json",
            "--permission-prompt-tool",
            "stdio",
        ])
        .current_dir(&config.workspace)
        .env_remove("CLAUDECODE")
        .env(super::TASK_ENV, task_id)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    // SAFETY: prctl is async-signal-safe; it only sets this child's parent-death signal,
    // so a bridge killed with SIGKILL still takes its task processes down.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(|source| RunError::Start {
        program: config.program.clone(),
        source,
    })?;
    let _group = GroupGuard::new(child.id().and_then(|id| i32::try_from(id).ok()));
    let mut stdin = child.stdin.take();
    let stdout = child.stdout.take().ok_or(RunError::NoPipe("stdout"))?;
    let mut stderr = child.stderr.take().ok_or(RunError::NoPipe("stderr"))?;
    // All of stderr is read (a CLI that cannot write it fails), its start kept.
    let stderr_task = actix_rt::spawn(async move {
        let mut kept = Vec::new();
        let mut chunk = [0u8; 8192];
        while let Ok(n @ 1..) = stderr.read(&mut chunk).await {
            let room = STDERR_KEPT.saturating_sub(kept.len());
            kept.extend_from_slice(&chunk[..n.min(room)]);
        }
        String::from_utf8_lossy(&kept).into_owned()
    });
    let user = json!({
        "type": "user",
        "session_id": "",
        "message": { "role": "user", "content": [{ "type": "text", "text": prompt }] }
    });
    if let Some(w) = stdin.as_mut() {
        w.write_all(format!("{user}\n").as_bytes())
            .await
            .map_err(RunError::Prompt)?;
    }
    let work = async {
        let mut reader = BufReader::new(stdout);
        let mut line = Vec::new();
        let mut exited = None;
        let mut result: Option<(String, bool)> = None;
        // The CLI's result repeats its last assistant text: shown once.
        let mut last_text: Option<String> = None;
        loop {
            // Until the CLI exits, its lines; then only what is in the pipe already: a
            // process it left behind may hold the pipe open for ever. (A line read in
            // part when the exit came stays in `line`.)
            let read = match exited {
                None => tokio::select! {
                    status = child.wait() => {
                        exited = Some(status);
                        continue;
                    }
                    read = reader.read_until(b'\n', &mut line) => read,
                },
                Some(_) => {
                    match tokio::time::timeout(AFTER_EXIT, reader.read_until(b'\n', &mut line))
                        .await
                    {
                        Ok(read) => read,
                        Err(_) => break,
                    }
                }
            };
            if !matches!(read, Ok(1..)) {
                break;
            }
            // Not UTF-8 somewhere (a file's bytes in a tool result): read as well as it
            // can be, not the end of the output.
            let parsed = serde_json::from_str::<Value>(&String::from_utf8_lossy(&line));
            line.clear();
            let Ok(msg) = parsed else {
                continue;
            };
            match msg["type"].as_str() {
                Some("assistant") => {
                    for item in msg["message"]["content"].as_array().into_iter().flatten() {
                        if let Some(text) = item["text"].as_str() {
                            let _ = events.send(Event::Output(text.to_string()));
                            last_text = Some(text.to_string());
                        }
                    }
                }
                Some("result") => {
                    let text = msg["result"].as_str().unwrap_or_default().to_string();
                    let is_error =
                        msg["is_error"].as_bool().unwrap_or(false) || msg["subtype"] != "success";
                    result = Some((text, is_error));
                    // The CLI keeps reading stream-json input: closing stdin ends it.
                    stdin.take();
                }
                Some("control_request") if msg["request"]["subtype"] == "can_use_tool" => {
                    let tool = msg["request"]["tool_name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    let input = msg["request"]["input"].clone();
                    let decision = decide(config, task_id, &tool, &input).await;
                    let _ = events.send(Event::Permission {
                        tool,
                        allow: decision.allows(),
                        reason: decision.reason.clone(),
                    });
                    let id = msg["request_id"].as_str().unwrap_or_default();
                    if let Some(w) = stdin.as_mut() {
                        let line = control_response(id, &decision, &input);
                        let _ = w.write_all(format!("{line}\n").as_bytes()).await;
                    }
                }
                _ => {}
            }
        }
        stdin.take();
        let status = match exited {
            Some(status) => status,
            None => child.wait().await,
        };
        (status, result, last_text)
    };
    let (status, result, last_text) = tokio::time::timeout(timeout, work)
        .await
        .map_err(|_| RunError::Timeout(timeout))?;
    let stderr = tokio::time::timeout(Duration::from_secs(1), stderr_task)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    let code = status.map_err(RunError::Wait)?.code();
    match (code, result) {
        (Some(0), Some((text, false))) => {
            if last_text.as_deref() != Some(text.as_str()) {
                let _ = events.send(Event::Output(text.clone()));
            }
            Ok(text)
        }
        (Some(0), None) => Err(RunError::NoResult {
            program: config.program.clone(),
        }),
        (Some(0), Some((text, true))) => Err(RunError::Reported(text)),
        (code, _) => Err(RunError::Exit {
            code,
            stderr: stderr.trim().to_string(),
        }),
    }
}

/// Where the Claude executable `program` is, found as a task's process would find it
/// (a path with a `/` as it is, a bare name on `PATH`); `None` when it is not there.
pub fn find_program(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |path: &std::path::Path| {
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = PathBuf::from(program);
        return runnable(&path).then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| runnable(candidate))
}
