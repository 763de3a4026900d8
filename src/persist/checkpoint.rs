//! Checkpoints: `checkpoint-<port>.json` with `savedAt`, `workspace` and each session's
//! id and opened files, written atomically; `load_latest` picks the newest usable one.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::coordination::awareness::Remembered;
use crate::protocol::id::SessionId;

/// A `savedAt` further in the future than this is refused.
pub const FUTURE_TOLERANCE_MS: u64 = 5_000;

/// One session in a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionState {
    /// 8-hex id.
    pub session_id: SessionId,
    /// Files the session opened.
    pub opened_files: Vec<String>,
    /// The agent's `X-Claude-Code-Session-Id`, for reattaching.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
    /// How the agent last introduced itself (`clientInfo`): an HTTP client resuming its
    /// session after a restart does not say it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<crate::protocol::mcp::Implementation>,
    /// The `tool_use_id`s of the agent's own tool calls that ended lately: the
    /// transcript read again after a restart does not record them a second time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ended_calls: Vec<String>,
    /// When the session was made (ISO 8601): it is the same session after a restart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The CLI's pid from `ide_connected`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ide_pid: Option<u32>,
    /// A relay's parent process and its ancestors, nearest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relay_pids: Vec<u32>,
    /// When its last connection went (Unix ms; absent while one was open): its grace
    /// period goes on from there across a restart, instead of starting again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disconnected_at: Option<u64>,
    /// What the agent knows of other agents' changes: the files it read, the notices
    /// waiting for it.
    #[serde(default, skip_serializing_if = "Remembered::is_empty")]
    pub awareness: Remembered,
}

impl SessionState {
    /// The agent's process, when the session knows it.
    pub fn client_pid(&self) -> Option<u32> {
        self.ide_pid.or(self.relay_pids.first().copied())
    }

    /// False when the session knows its client process and that process is gone: no
    /// agent can come back to it.
    pub fn client_may_return(&self) -> bool {
        self.client_pid().is_none_or(crate::lockfile::pid_alive)
    }
}

/// The checkpoint document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointData {
    /// Unix milliseconds.
    pub saved_at: u64,
    /// Workspace of the bridge that wrote it (absent in legacy checkpoints).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Port of the bridge that wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    pub sessions: Vec<SessionState>,
}

/// `checkpoint-<port>.json` in `dir`.
pub fn path_for(dir: &Path, port: u16) -> PathBuf {
    dir.join(format!("checkpoint-{port}.json"))
}

/// Writes atomically (temp file, fsync, rename), mode 0600.
pub fn save(path: &Path, data: &CheckpointData) -> std::io::Result<()> {
    let body = serde_json::to_vec_pretty(data).map_err(std::io::Error::other)?;
    crate::lockfile::write_atomic(path, &body)
}

/// The newest checkpoint in `dir` for `workspace`: other workspaces are skipped
/// (legacy ones without a workspace still load), a `savedAt` more than 5 s in the future
/// is refused with a warning, ones older than `max_age` are ignored, and unreadable or
/// malformed files are skipped.
pub fn load_latest(
    dir: &Path,
    workspace: &str,
    now_ms: u64,
    max_age: Duration,
) -> Option<(PathBuf, CheckpointData)> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut best: Option<(PathBuf, CheckpointData)> = None;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let named = name == "checkpoint.json"
            || (name.starts_with("checkpoint-") && name.ends_with(".json"));
        if !named {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let data: CheckpointData = match serde_json::from_str(&text) {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(path = %path.display(), %e, "skipping an unreadable checkpoint");
                continue;
            }
        };
        if data.workspace.as_deref().is_some_and(|w| w != workspace) {
            continue;
        }
        if data.saved_at > now_ms + FUTURE_TOLERANCE_MS {
            tracing::warn!(path = %path.display(), saved_at = data.saved_at, "ignoring a checkpoint saved in the future (clock skew?)");
            continue;
        }
        if now_ms.saturating_sub(data.saved_at) > max_age.as_millis() as u64 {
            continue;
        }
        if best
            .as_ref()
            .is_none_or(|(_, b)| data.saved_at > b.saved_at)
        {
            best = Some((path, data));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Duration = Duration::from_secs(86_400);

    fn write(dir: &Path, name: &str, body: &str) {
        std::fs::write(dir.join(name), body).unwrap();
    }

    #[test]
    fn picks_the_newest_for_this_workspace() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        let now = 10_000_000;
        write(
            d,
            "checkpoint-1.json",
            &format!(
                r#"{{"savedAt":{},"workspace":"/w","sessions":[{{"sessionId":"a","openedFiles":["x"]}}]}}"#,
                now - 100
            ),
        );
        write(
            d,
            "checkpoint-2.json",
            &format!(
                r#"{{"savedAt":{},"workspace":"/w","sessions":[]}}"#,
                now - 50
            ),
        );
        write(
            d,
            "checkpoint-3.json",
            &format!(
                r#"{{"savedAt":{},"workspace":"/other","sessions":[]}}"#,
                now - 10
            ),
        );
        write(
            d,
            "checkpoint-4.json",
            &format!(
                r#"{{"savedAt":{},"workspace":"/w","sessions":[]}}"#,
                now + 6_000
            ),
        );
        write(d, "checkpoint-5.json", "{not json");
        write(
            d,
            "checkpoint-6.json",
            r#"{"workspace":"/w","sessions":[]}"#,
        );
        let (path, best) = load_latest(d, "/w", now, DAY).unwrap();
        assert_eq!(path.file_name().unwrap(), "checkpoint-2.json");
        assert_eq!(best.saved_at, now - 50);
    }

    #[test]
    fn legacy_without_workspace_loads_and_old_ones_are_ignored() {
        let t = tempfile::tempdir().unwrap();
        let now = 10_000_000_000;
        write(
            t.path(),
            "checkpoint-7.json",
            &format!(r#"{{"savedAt":{},"sessions":[]}}"#, now - 1000),
        );
        assert!(load_latest(t.path(), "/w", now, DAY).is_some());
        assert!(load_latest(t.path(), "/w", now, Duration::from_millis(500)).is_none());
        write(
            t.path(),
            "checkpoint-8.json",
            &format!(r#"{{"savedAt":{},"sessions":[]}}"#, now + 4_000),
        );
        assert_eq!(
            load_latest(t.path(), "/w", now, DAY).unwrap().1.saved_at,
            now + 4_000,
            "within 5 s is fine"
        );
    }

    #[test]
    fn saves_atomically_and_round_trips() {
        let t = tempfile::tempdir().unwrap();
        let p = path_for(t.path(), 9);
        let data = CheckpointData {
            saved_at: 1,
            workspace: Some("/w".into()),
            port: Some(9),
            sessions: vec![SessionState {
                session_id: "ab".into(),
                opened_files: vec!["f".into()],
                anchor: Some("c".into()),
                client: Some(crate::protocol::mcp::Implementation {
                    name: "agent".into(),
                    version: "1".into(),
                }),
                ended_calls: vec!["toolu_1".into()],
                created_at: Some("2026-11-27T10:00:00Z".into()),
                ide_pid: Some(7),
                relay_pids: vec![7, 1],
                disconnected_at: Some(5),
                awareness: Remembered::default(),
            }],
        };
        save(&p, &data).unwrap();
        let back: CheckpointData =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(back, data);
    }
}
