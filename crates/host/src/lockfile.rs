//! Discovery lock file (protocol spec §1): `<config dir>/ide/<port>.lock`.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The lock file body. Field names are what the Claude Code CLI reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockFile {
    /// A process that lives as long as the server.
    pub pid: u32,
    /// Absolute workspace paths.
    pub workspace_folders: Vec<String>,
    /// Shown by the CLI.
    pub ide_name: String,
    /// Always `ws`.
    pub transport: String,
    /// Sent back by clients in `x-claude-code-ide-authorization`.
    pub auth_token: String,
    /// Marks a bridge (as opposed to an IDE-owned lock).
    #[serde(default)]
    pub is_bridge: bool,
    /// Unix milliseconds at start-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<u64>,
    /// Which process wrote it, exactly: `<boot id>:<start time in clock ticks>` of
    /// `pid` ([`process_identity`]); a live pid with another identity is a reused one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
}

/// `<boot id>:<start ticks>` of process `pid`, from `/proc`: the same for as long as
/// that process lives, whatever the wall clock does.
pub fn process_identity(pid: u32) -> Option<String> {
    let boot = fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(format!("{}:{}", boot.trim(), start_ticks(pid)?))
}

/// Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks since boot.
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

/// `$CLAUDE_CONFIG_DIR` when set, else `~/.claude`.
pub fn config_dir() -> PathBuf {
    match std::env::var_os("CLAUDE_CONFIG_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => home_dir().join(".claude"),
    }
}

fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// `<config dir>/ide`.
pub fn ide_dir() -> PathBuf {
    config_dir().join("ide")
}

/// Creates `dir` with mode 0700 (and tightens an existing one we own); one owned by
/// another user is refused.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let meta = fs::metadata(dir)?;
    // SAFETY: a plain getter.
    let me = unsafe { libc::geteuid() };
    if std::os::unix::fs::MetadataExt::uid(&meta) != me {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is owned by uid {}, not by this user (uid {me}); refusing to use it",
                dir.display(),
                std::os::unix::fs::MetadataExt::uid(&meta)
            ),
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically: a 0600 temp file in the same directory,
/// fsync, rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        // A fresh file: never through a link or FIFO left at the temp name.
        let _ = fs::remove_file(&tmp);
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Path of the lock file for `port` in `dir`.
pub fn lock_path(dir: &Path, port: u16) -> PathBuf {
    dir.join(format!("{port}.lock"))
}

/// Writes the lock file for `port` atomically with mode 0600.
pub fn write(dir: &Path, port: u16, lock: &LockFile) -> io::Result<PathBuf> {
    ensure_private_dir(dir)?;
    let path = lock_path(dir, port);
    let body = serde_json::to_vec_pretty(lock).map_err(io::Error::other)?;
    write_atomic(&path, &body)?;
    Ok(path)
}

/// True when a process with `pid` exists (signal 0; EPERM means it exists) and has not
/// exited: a zombie (ended, not yet reaped by its parent) serves nothing.
pub fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 sends nothing; it only checks the pid.
    let rc = unsafe { libc::kill(pid, 0) };
    let exists = rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    exists && !is_zombie(pid)
}

/// True when `/proc` says the process ended and waits to be reaped (state `Z`).
fn is_zombie(pid: libc::pid_t) -> bool {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the command name, which is in parentheses and may hold any.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .is_some_and(|state| state == "Z")
}

/// Largest lock file read (a real one is a few hundred bytes).
const MAX_LOCK_BYTES: u64 = 64 * 1024;

/// Lock files in `dir` with their parsed bodies and ports. Unparseable files are
/// skipped; so are files another user could have written (owned by someone else,
/// writable by others, a link, a FIFO…), with a warning once per file: a lock file
/// decides where an agent's requests go.
pub fn list(dir: &Path) -> Vec<(u16, PathBuf, LockFile)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(port) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".lock"))
            .and_then(|p| p.parse::<u16>().ok())
        else {
            continue;
        };
        let text = match crate::private_file::read(&path, MAX_LOCK_BYTES) {
            Ok(text) => text,
            Err(crate::private_file::ReadError::Untrusted(why)) => {
                warn_once(&path, &why);
                continue;
            }
            Err(_) => continue,
        };
        if let Ok(lock) = serde_json::from_str::<LockFile>(&text) {
            out.push((port, path, lock));
        }
    }
    out.sort_by_key(|(port, _, _)| *port);
    out
}

fn warn_once(path: &Path, why: &crate::private_file::Untrusted) {
    static WARNED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let Ok(mut warned) = WARNED.lock() else {
        return;
    };
    if warned.iter().any(|p| p == path) || warned.len() >= 1024 {
        return;
    }
    warned.push(path.to_path_buf());
    tracing::warn!(
        file = %path.display(),
        "ignoring a lock file: {why} (only this user's own private lock files are used)"
    );
}

/// When the process `pid` started, in Unix milliseconds (from `/proc`).
fn process_started_ms(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 22, counted after the command name's closing parenthesis.
    let ticks: u64 = stat
        .rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()?;
    let boot_s: u64 = fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    // SAFETY: a plain getter.
    let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) })
        .ok()?
        .max(1);
    Some(boot_s * 1000 + ticks * 1000 / hz)
}

/// True when the lock's process is alive and is the one that wrote it. With
/// [`LockFile::process`] (every bridge writes it) that is exact; an older lock is
/// judged by `startedAt`: a process that started well after the lock (its pid reused)
/// or long before it (pid 1, a login shell named by a planted lock) is not its writer.
pub fn is_live(lock: &LockFile) -> bool {
    if !pid_alive(lock.pid) {
        return false;
    }
    if let Some(process) = &lock.process {
        return process_identity(lock.pid).as_ref() == Some(process);
    }
    let (Some(written), Some(started)) = (lock.started_at, process_started_ms(lock.pid)) else {
        return true;
    };
    const REUSED_AFTER_MS: u64 = 60_000;
    const PREDATES_BY_MS: u64 = 10 * 60_000;
    started <= written + REUSED_AFTER_MS && written <= started + PREDATES_BY_MS
}

/// Removes lock files whose pid is dead (cleanStale). Returns what was removed.
pub fn clean_stale(dir: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for (_, path, lock) in list(dir) {
        if !is_live(&lock) && fs::remove_file(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// True when a bridge's lock for a workspace containing `dir` is still there but its
/// process is not: that bridge ended without removing it (it crashed, or was killed),
/// where a bridge stopped on purpose removes its lock.
pub fn crashed_bridge_for(ide_dir: &Path, dir: &Path) -> bool {
    list(ide_dir).into_iter().any(|(_, _, lock)| {
        lock.is_bridge
            && !is_live(&lock)
            && lock.workspace_folders.iter().any(|w| dir.starts_with(w))
    })
}

/// The live bridge lock whose workspace contains `dir` (deepest workspace wins).
pub fn find_bridge_for(ide_dir: &Path, dir: &Path) -> Option<(u16, LockFile)> {
    list(ide_dir)
        .into_iter()
        .filter(|(_, _, lock)| lock.is_bridge && is_live(lock))
        .filter_map(|(port, _, lock)| {
            let depth = lock
                .workspace_folders
                .iter()
                .filter(|w| dir.starts_with(w))
                .map(|w| w.len())
                .max()?;
            Some((depth, port, lock))
        })
        .max_by_key(|(depth, _, _)| *depth)
        .map(|(_, port, lock)| (port, lock))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(pid: u32, ws: &str) -> LockFile {
        LockFile {
            pid,
            workspace_folders: vec![ws.into()],
            ide_name: "t".into(),
            transport: "ws".into(),
            auth_token: "tok".into(),
            is_bridge: true,
            started_at: Some(now_ms()),
            process: None,
        }
    }

    fn now_ms() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    }

    #[test]
    fn a_live_pid_is_the_locks_only_when_it_started_about_then() {
        let me = std::process::id();
        assert!(is_live(&sample(me, "/w")), "this process, just written");
        let mut old = sample(1, "/w");
        assert!(!is_live(&old), "pid 1 started long before the lock");
        old.started_at = None;
        assert!(is_live(&old), "without startedAt only the pid is checked");
        let mut early = sample(me, "/w");
        early.started_at = Some(1);
        assert!(
            !is_live(&early),
            "a lock older than its process: the pid was reused"
        );
    }

    #[test]
    fn writes_private_files_and_cleans_dead_pids() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ide");
        let path = write(&dir, 4242, &sample(std::process::id(), "/w")).unwrap();
        assert_eq!(
            fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        write(&dir, 4243, &sample(i32::MAX as u32, "/w")).unwrap();
        fs::write(dir.join("4244.lock"), "not json").unwrap();
        let removed = clean_stale(&dir);
        assert_eq!(removed, vec![lock_path(&dir, 4243)]);
        assert!(path.exists());
        assert!(
            dir.join("4244.lock").exists(),
            "unparseable locks are left alone"
        );
    }

    #[test]
    fn finds_the_deepest_workspace_for_a_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let me = std::process::id();
        write(tmp.path(), 1, &sample(me, "/a")).unwrap();
        write(tmp.path(), 2, &sample(me, "/a/b")).unwrap();
        assert_eq!(
            find_bridge_for(tmp.path(), Path::new("/a/b/c")).unwrap().0,
            2
        );
        assert_eq!(find_bridge_for(tmp.path(), Path::new("/a/x")).unwrap().0, 1);
        assert!(find_bridge_for(tmp.path(), Path::new("/z")).is_none());
    }
}
