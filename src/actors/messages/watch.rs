//! What the workspace watcher reports to the actors that react to changes on disk
//! (the Diagnostics actor re-runs linters, Automation fires file-change and git hooks).

use std::sync::Arc;

use actix::prelude::*;

/// What happened to one path during a debounce window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeKind {
    /// The path did not exist before the window.
    Created,
    /// Its content or metadata changed.
    Modified,
    /// It no longer exists.
    Removed,
    /// It was moved here from `from` (workspace-relative, `/`-separated).
    Renamed {
        /// The old path.
        from: String,
    },
}

impl ChangeKind {
    /// The name used in policies, templates and `/status` (`created`, `modified`,
    /// `removed`, `renamed`).
    pub fn name(&self) -> &'static str {
        match self {
            ChangeKind::Created => "created",
            ChangeKind::Modified => "modified",
            ChangeKind::Removed => "removed",
            ChangeKind::Renamed { .. } => "renamed",
        }
    }
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Workspace-relative, `/`-separated; never ignored by the walker's rules.
    pub path: String,
    /// What happened to it (coalesced over the window: created then modified is
    /// `Created`; created then removed is not reported at all).
    pub kind: ChangeKind,
}

/// The changes of one debounce window, each path once. Sent to every subscriber.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct WorkspaceChanged {
    /// At most the watcher's batch bound, sorted by path.
    pub changes: Arc<[FileChange]>,
    /// Changes in the window beyond the bound, counted but not listed.
    pub overflowed: usize,
    /// Git's `HEAD`, a branch ref or `packed-refs` changed (a commit, a checkout, a
    /// reset): whoever cares reads the repository state again.
    pub git_refs: bool,
}
