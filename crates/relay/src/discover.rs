//! Finding (or starting) the bridge that serves a directory, for `ide-bridge mcp`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ide_bridge_host::lockfile::{self, LockFile};
use ide_bridge_host::state;

/// Markers of a version-control root.
const PROJECT_MARKERS: &[&str] = &[".git", ".hg", ".jj", ".svn"];

/// The live bridge whose workspace contains `dir` (deepest wins).
pub fn find_bridge(dir: &Path) -> Option<(u16, LockFile)> {
    lockfile::find_bridge_for(&lockfile::ide_dir(), dir)
}

/// True when the bridge that served `dir` ended without removing its lock file (it
/// crashed or was killed), not stopped on purpose.
pub fn bridge_crashed(dir: &Path) -> bool {
    lockfile::crashed_bridge_for(&lockfile::ide_dir(), dir)
}

/// The project containing `dir`: the nearest directory with a version-control marker,
/// unless that is the home directory or `/` (a dotfiles repository is not a project).
pub fn project_root(dir: &Path) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let root = dir
        .ancestors()
        .find(|d| PROJECT_MARKERS.iter().any(|m| d.join(m).exists()))?;
    let too_wide = root == Path::new("/") || home.as_deref() == Some(root);
    (!too_wide).then(|| root.to_path_buf())
}

/// Starts a bridge for `workspace`, detached (own session, stdin closed), writing its
/// log to the workspace's state directory. Returns the log's path.
pub fn start_bridge(
    binary: &Path,
    workspace: &Path,
    config: Option<&Path>,
) -> std::io::Result<PathBuf> {
    let dir = state::dir_for(workspace);
    lockfile::ensure_private_dir(&dir)?;
    let log_path = dir.join(state::files::LOG);
    let log = state::open_log(&log_path)?;
    let mut command = Command::new(binary);
    // Nobody started it by hand: it stops by itself once unused (server.idle_stop_ms).
    command.arg("--workspace").arg(workspace).arg("--on-demand");
    if let Some(config) = config {
        command.arg("--config").arg(config);
    }
    command
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .env_remove("IDE_BRIDGE_TASK");
    // SAFETY: setsid is async-signal-safe; the child leaves our session and process
    // group so that the client closing the relay does not take the bridge with it.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = command.spawn()?;
    // Reap it when it exits so that it never lingers as a zombie of the relay.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(log_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_root_is_the_nearest_marker_but_never_home_or_slash() {
        let t = tempfile::tempdir().unwrap();
        let repo = t.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("a/b")).unwrap();
        assert_eq!(project_root(&repo.join("a/b")), Some(repo.clone()));
        let plain = t.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        // tempdirs live under /tmp, which has no marker above it.
        assert_eq!(project_root(&plain), None);
    }
}
