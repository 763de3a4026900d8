//! What the workspace watcher reports to the actors that react to changes on disk
//! (the Diagnostics actor re-runs linters, Automation fires file-change and git hooks).

use std::sync::Arc;

use actix::prelude::*;

pub use crate::workspace::change::{ChangeKind, FileChange};

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
