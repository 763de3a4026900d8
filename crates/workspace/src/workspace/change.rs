//! What happened to a path on disk, as the bridge's watcher reports it and automation
//! policies match it.

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
