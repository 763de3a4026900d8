//! Claude tasks: their states and limits, the permission policy answered over
//! stream-json, and the persisted queue and history. The bridge's `orchestrator` runs
//! them (its subprocess driver).

pub mod permissions;

use std::path::Path;

use serde::{Deserialize, Serialize};

use ide_bridge_protocol::id::SessionId;

pub use ide_bridge_protocol::id::TaskId;

/// Task timeout bounds and default (ms).
pub const MIN_TIMEOUT_MS: u64 = 5_000;
/// Longest task timeout.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Default task timeout.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;
/// Largest prompt in bytes.
pub const MAX_PROMPT_BYTES: usize = 32 * 1024;
/// Most context files per task.
pub const MAX_CONTEXT_FILES: usize = 20;
/// Output kept per task.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TaskStatus {
    /// Waiting for a slot.
    Pending,
    /// Its process runs.
    Running,
    /// Exited 0.
    Done,
    /// Exited non-zero, timed out, or failed to start.
    Error,
    /// Cancelled before or during its run.
    Cancelled,
    /// Alive when the bridge stopped.
    Interrupted,
}

impl std::fmt::Display for TaskStatus {
    /// Its wire name (`cancelled`), as the tools and the page say it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::String(name)) => f.write_str(&name),
            _ => write!(f, "{self:?}"),
        }
    }
}

impl TaskStatus {
    /// Finished one way or another.
    pub fn is_final(self) -> bool {
        !matches!(self, TaskStatus::Pending | TaskStatus::Running)
    }
}

/// Who started a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "kind"
)]
pub enum TaskOrigin {
    /// An agent's `runClaudeTask`.
    Session {
        /// The owning session (`session_id` in task files of earlier versions).
        #[serde(alias = "session_id")]
        session_id: SessionId,
    },
    /// An automation hook.
    Automation {
        /// Hook name.
        hook: String,
        /// File the hook fired for.
        file: String,
    },
}

/// One task.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub id: TaskId,
    /// Who started it.
    pub origin: TaskOrigin,
    /// The prompt (with context file mentions appended).
    pub prompt: String,
    pub status: TaskStatus,
    pub timeout_ms: u64,
    /// Unix ms.
    pub created_at: u64,
    /// Unix ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<u64>,
    /// Unix ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<u64>,
    /// Assistant text and final result (capped).
    #[serde(default)]
    pub output: String,
    /// What went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Task {
    /// The owning session, if an agent started it.
    pub fn session(&self) -> Option<&SessionId> {
        match &self.origin {
            TaskOrigin::Session { session_id } => Some(session_id),
            TaskOrigin::Automation { .. } => None,
        }
    }

    /// Appends a piece of output (an assistant message, the result) on a line of its
    /// own, keeping the first [`MAX_OUTPUT_BYTES`].
    pub fn push_output(&mut self, text: &str) {
        if self.output.len() >= MAX_OUTPUT_BYTES {
            return;
        }
        if !self.output.is_empty() && !self.output.ends_with('\n') {
            self.output.push('\n');
        }
        let room = MAX_OUTPUT_BYTES - self.output.len();
        let mut cut = room.min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        self.output.push_str(&text[..cut]);
        if cut < text.len() {
            self.output.push_str("\n[… output truncated]");
        }
    }
}

/// Names each task process in its environment (inherited by everything it starts), so
/// that a bridge restarted after a crash can find what its predecessor left running.
pub const TASK_ENV: &str = "IDE_BRIDGE_TASK";

/// Reads the persisted tasks; tasks alive at the time become `interrupted`.
pub fn load(path: &Path, now_ms: u64) -> Vec<Task> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut tasks: Vec<Task> = match serde_json::from_str(&text) {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(path = %path.display(), %e, "ignoring an unreadable task file");
            return Vec::new();
        }
    };
    for t in &mut tasks {
        if !t.status.is_final() {
            t.status = TaskStatus::Interrupted;
            t.finished_at = Some(now_ms);
            t.error = Some("the bridge stopped while this task was alive".into());
        }
    }
    tasks
}

/// Kills every process still carrying [`TASK_ENV`] for one of `task_ids` (left behind
/// when the previous bridge was killed without a chance to stop its tasks). Returns how
/// many it killed. Processes of other users cannot be read and are never touched.
pub fn kill_leftovers(task_ids: &[TaskId]) -> usize {
    if task_ids.is_empty() {
        return 0;
    }
    let wanted: Vec<Vec<u8>> = task_ids
        .iter()
        .map(|id| format!("{TASK_ENV}={id}").into_bytes())
        .collect();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut killed = 0;
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ
            .split(|b| *b == 0)
            .any(|var| wanted.iter().any(|w| w.as_slice() == var))
        {
            // SAFETY: a plain signal to a process that carries our task marker.
            if unsafe { libc::kill(pid, libc::SIGKILL) } == 0 {
                killed += 1;
            }
        }
    }
    killed
}

/// Writes the tasks atomically.
pub fn save(path: &Path, tasks: &[Task]) -> std::io::Result<()> {
    let body = serde_json::to_vec(tasks).map_err(std::io::Error::other)?;
    ide_bridge_host::lockfile::write_atomic(path, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_is_camel_case_and_reads_the_snake_case_of_earlier_task_files() {
        let origin = TaskOrigin::Session {
            session_id: "ab12cd34".into(),
        };
        let text = serde_json::to_string(&origin).unwrap();
        assert_eq!(text, r#"{"kind":"session","sessionId":"ab12cd34"}"#);
        let earlier: TaskOrigin =
            serde_json::from_str(r#"{"kind":"session","session_id":"ab12cd34"}"#).unwrap();
        assert_eq!(earlier, origin);
    }

    fn task(status: TaskStatus) -> Task {
        Task {
            id: "t".into(),
            origin: TaskOrigin::Session {
                session_id: "s".into(),
            },
            prompt: "p".into(),
            status,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            created_at: 1,
            started_at: None,
            finished_at: None,
            output: String::new(),
            error: None,
        }
    }

    #[test]
    fn alive_tasks_come_back_interrupted() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("tasks.json");
        save(
            &p,
            &[
                task(TaskStatus::Running),
                task(TaskStatus::Pending),
                task(TaskStatus::Done),
            ],
        )
        .unwrap();
        let back = load(&p, 9);
        let s: Vec<TaskStatus> = back.iter().map(|t| t.status).collect();
        assert_eq!(
            s,
            vec![
                TaskStatus::Interrupted,
                TaskStatus::Interrupted,
                TaskStatus::Done
            ]
        );
        std::fs::write(&p, "garbage").unwrap();
        assert!(load(&p, 9).is_empty());
    }

    #[test]
    fn each_piece_of_output_is_a_line_of_its_own() {
        let mut t = task(TaskStatus::Running);
        t.push_output("thinking about it");
        t.push_output("all done\n");
        t.push_output("more");
        assert_eq!(t.output, "thinking about it\nall done\nmore");
    }

    #[test]
    fn output_is_capped() {
        let mut t = task(TaskStatus::Running);
        t.push_output(&"x".repeat(MAX_OUTPUT_BYTES + 10));
        assert!(t.output.ends_with("[… output truncated]"));
        let len = t.output.len();
        t.push_output("more");
        assert_eq!(t.output.len(), len);
    }
}
