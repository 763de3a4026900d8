//! Claude Code's hooks: how the bridge sees and steers what agents do with the CLI's
//! own tools (Read, Edit, Write, Bash, …), which never pass through the bridge's tools.
//! `ide-bridge init` installs the hooks ([`install`]); each runs `ide-bridge hook`
//! ([`client`]), which posts the hook's input ([`input`]) to the bridge serving the
//! project; the bridge's answer ([`answer`]) may deny a tool call, add context for the
//! model, keep the agent working, or answer a permission dialog.

pub mod answer;
pub mod client;
pub mod input;
pub mod install;
pub mod shrink;
pub mod transcript;

pub use answer::HookAnswer;
pub use input::{HookEvent, HookInput, NativeAction};

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long an edit gate waits for its language server's verdict on a proposed Edit or
/// Write before it lets the change through (saying so).
pub const EDIT_GATE_WAIT: Duration = Duration::from_secs(20);
/// How long `ide-bridge hook` waits for the bridge's answer to the hook before a write
/// (Edit, Write, NotebookEdit): the edit gate's wait, and time to spare.
pub const WRITE_HOOK_WAIT: Duration = Duration::from_secs(EDIT_GATE_WAIT.as_secs() + 5);
/// The CLI's own timeout for the `PreToolUse` hook `init` installs (seconds): longer
/// than `ide-bridge hook` waits, so that the hook always says what it got.
pub const PRE_TOOL_USE_TIMEOUT_S: u64 = WRITE_HOOK_WAIT.as_secs() + 5;

/// `path` (absolute) with its longest existing prefix canonicalised (links followed)
/// and the rest, what a write would create, appended as written.
pub fn real_path(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(real) = existing.canonicalize() {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::real_path;

    #[test]
    fn real_path_follows_links_and_keeps_what_does_not_exist_yet() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("ws")).unwrap();
        std::os::unix::fs::symlink(real.join("ws"), real.join("link")).unwrap();
        assert_eq!(
            real_path(&real.join("link/a/b.txt")),
            real.join("ws/a/b.txt")
        );
        assert_eq!(real_path(&real.join("link")), real.join("ws"));
        assert_eq!(real_path(&real.join("ws/../ws/c")), real.join("ws/c"));
    }
}
