//! Durable per-workspace state: `<config dir>/ide-bridge/workspaces/<name>-<hash>/`
//! holds the auth token, the activity log, the checkpoint, the Claude tasks, the
//! bridge's log when a relay started it, and `owner.lock`, whose `flock` makes sure one
//! bridge serves a workspace at a time. Keyed by workspace, not port, so restarts reuse
//! one set of files; directories of workspaces not served for a while are pruned.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::lockfile::{self, ensure_private_dir, write_atomic};

/// File names inside a workspace's state directory.
pub mod files {
    /// The auth token the lock file carries (0600).
    pub const TOKEN: &str = "token";
    /// The activity timeline (JSONL).
    pub const ACTIVITY: &str = "activity.jsonl";
    /// The latest session checkpoint.
    pub const CHECKPOINT: &str = "checkpoint.json";
    /// Claude tasks: queue and history.
    pub const TASKS: &str = "tasks.json";
    /// What automation keeps across restarts: the diagnostics each hook saw, the
    /// firings of the last hour.
    pub const AUTOMATION: &str = "automation-state.json";
    /// Held (`flock`) by the bridge serving the workspace; names its pid and port.
    pub const OWNER: &str = "owner.lock";
    /// The workspace path, for people and for pruning.
    pub const WORKSPACE: &str = "workspace";
    /// Output of a bridge started by `ide-bridge mcp`.
    pub const LOG: &str = "bridge.log";
    /// Browsers signed in to the page: their cookies and last use (0600).
    pub const PAGE_SESSIONS: &str = "page-sessions.json";
    /// File claims held by agents and the person (0600).
    pub const CLAIMS: &str = "claims.json";
    /// What each agent changed, hunk by hunk, for the person's review (0600).
    pub const CHANGES: &str = "changes.json";
    /// The reviews agents presented on the page (`presentReview`), newest first (0600).
    pub const REVIEWS: &str = "reviews.json";

    /// Every file above: each must be a regular private file of this user's.
    pub const ALL: &[&str] = &[
        TOKEN,
        ACTIVITY,
        CHECKPOINT,
        TASKS,
        AUTOMATION,
        OWNER,
        WORKSPACE,
        LOG,
        PAGE_SESSIONS,
        CLAIMS,
        CHANGES,
        REVIEWS,
    ];
}

/// Why the state directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Creating, reading or writing it failed.
    #[error("state directory {dir}: {source}")]
    Io {
        /// The directory.
        dir: PathBuf,
        /// Cause.
        source: io::Error,
    },
    /// A live bridge already serves this workspace.
    #[error(
        "another ide-bridge already serves {workspace}{owner}; stop it first \
         (`ide-bridge stop` in the workspace, or kill its pid) or use that one"
    )]
    AlreadyServed {
        workspace: String,
        /// ` (pid N, port P)` when known.
        owner: String,
    },
}

/// `<config dir>/ide-bridge/workspaces`.
pub fn root_dir() -> PathBuf {
    lockfile::config_dir().join("ide-bridge").join("workspaces")
}

/// A stable, readable key for a workspace: its last path component (sanitised, at
/// most 40 bytes) and a 64-bit FNV-1a hash of the whole path.
pub fn workspace_key(workspace: &Path) -> String {
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in workspace.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{name}-{hash:016x}")
}

/// The state directory of `workspace` (not created).
pub fn dir_for(workspace: &Path) -> PathBuf {
    root_dir().join(workspace_key(workspace))
}

/// The state directory of a workspace, owned by this bridge for its lifetime.
#[derive(Debug)]
pub struct WorkspaceState {
    dir: PathBuf,
    /// Holds the `flock`; released when the process exits, however it exits.
    owner: File,
}

impl WorkspaceState {
    /// Creates (0700) and claims the state directory of `workspace`. Fails with
    /// [`StateError::AlreadyServed`] when a live bridge holds it, touching nothing.
    pub fn claim(workspace: &Path) -> Result<Self, StateError> {
        let dir = dir_for(workspace);
        let io_err = |source| StateError::Io {
            dir: dir.clone(),
            source,
        };
        ensure_private_dir(&dir).map_err(io_err)?;
        // A link, FIFO or foreign file planted in place of a state file would be
        // followed, hang start-up or hand over the token: removed, and said so.
        for (name, why) in crate::private_file::sweep(&dir, files::ALL) {
            tracing::warn!(file = %dir.join(&name).display(), "removed a state file that was not this user's own regular file: {why}");
        }
        let mut owner = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(dir.join(files::OWNER))
            .map_err(io_err)?;
        // SAFETY: flock on a descriptor we own; LOCK_NB never blocks.
        let rc = unsafe { libc::flock(owner.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let mut text = String::new();
            let _ = owner.read_to_string(&mut text);
            let owner = text
                .split_once(' ')
                .map(|(pid, port)| format!(" (pid {}, port {})", pid.trim(), port.trim()))
                .unwrap_or_default();
            return Err(StateError::AlreadyServed {
                workspace: workspace.display().to_string(),
                owner,
            });
        }
        let path = workspace.display().to_string();
        write_atomic(&dir.join(files::WORKSPACE), path.as_bytes()).map_err(io_err)?;
        Ok(Self { dir, owner })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of one of its [`files`].
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Records who owns the directory (`<pid> <port>`), for the message a second
    /// bridge prints.
    pub fn record_owner(&mut self, port: u16) -> io::Result<()> {
        self.owner.set_len(0)?;
        let line = format!("{} {port}", std::process::id());
        std::os::unix::fs::FileExt::write_at(&self.owner, line.as_bytes(), 0)?;
        self.owner.flush()
    }

    /// The workspace's auth token: the stored one, or a new one (stored 0600) when
    /// there is none, it is malformed, or `rotate` asks for a fresh one.
    pub fn auth_token(&self, rotate: bool) -> io::Result<(String, TokenSource)> {
        let path = self.path(files::TOKEN);
        if !rotate {
            if let Ok(text) = crate::private_file::read(&path, 4096) {
                let token = text.trim();
                if token.len() >= 32 && token.bytes().all(|b| b.is_ascii_graphic()) {
                    return Ok((token.to_string(), TokenSource::Kept));
                }
            }
        }
        let token = uuid::Uuid::new_v4().to_string();
        write_atomic(&path, token.as_bytes())?;
        let source = if rotate {
            TokenSource::Rotated
        } else {
            TokenSource::New
        };
        Ok((token, source))
    }

    /// Touches the directory so that pruning sees it in use.
    pub fn touch(&self) {
        let _ = File::open(&self.dir).and_then(|d| d.set_modified(SystemTime::now()));
    }
}

/// Where this run's auth token came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenSource {
    /// Kept from an earlier run of this workspace: connected clients keep working.
    Kept,
    /// The first run of this workspace (or the stored token was unusable).
    New,
    /// `--rotate-token` asked for a fresh one.
    Rotated,
}

/// Removes state directories (other than `keep`) not used for `max_age` and not held
/// by a live bridge. Returns the workspaces whose state was removed.
pub fn prune(keep: &Path, max_age: Duration) -> Vec<String> {
    let Ok(entries) = fs::read_dir(root_dir()) else {
        return Vec::new();
    };
    let now = SystemTime::now();
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let dir = entry.path();
        if dir == keep || !dir.is_dir() {
            continue;
        }
        let age = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok());
        if age.is_none_or(|a| a < max_age) || held(&dir) {
            continue;
        }
        let workspace = fs::read_to_string(dir.join(files::WORKSPACE)).unwrap_or_default();
        if fs::remove_dir_all(&dir).is_ok() {
            removed.push(workspace);
        }
    }
    removed
}

/// True when a live bridge serves `workspace` (holds its state directory's lock).
pub fn is_served(workspace: &Path) -> bool {
    held(&dir_for(workspace))
}

/// True when a live bridge holds `dir`'s owner lock.
fn held(dir: &Path) -> bool {
    let Ok(file) = crate::private_file::open(&dir.join(files::OWNER)) else {
        return false;
    };
    // SAFETY: flock on a descriptor we own; LOCK_NB never blocks.
    let free = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    if free {
        // SAFETY: as above; releases what we just took.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
    }
    !free
}

/// Writes `text` to a 0600 file (used for the bridge log a relay starts).
pub fn open_log(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    crate::private_file::check(&file.metadata()?)
        .map_err(|why| io::Error::other(format!("{}: {why}", path.display())))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_readable_and_distinct() {
        let a = workspace_key(Path::new("/home/u/my project"));
        assert!(a.starts_with("my_project-"), "{a}");
        assert_eq!(a, workspace_key(Path::new("/home/u/my project")));
        assert_ne!(a, workspace_key(Path::new("/home/v/my project")));
        assert_eq!(a.len(), "my_project-".len() + 16);
        assert!(workspace_key(Path::new("/")).starts_with("root-"));
    }
}
