//! WorkspaceWriter actor: every change the bridge makes to workspace files goes
//! through this one mailbox, on its own thread, so that check-then-write is atomic with
//! respect to every other agent. It re-checks confinement, refuses hard-linked targets,
//! detects concurrent modification and writes atomically.

use std::fs;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use actix::prelude::*;

use super::activity_log::ActivityLog;
use super::supervise::{guard, restarted, ActorFault};
use crate::metrics::Metrics;
use crate::workspace::edit::{apply_edits, replace_block, EditError, LineEdit};
use crate::workspace::files::{check_single_link, read_text, write_atomic, FileError, Fingerprint};
use crate::workspace::{PathError, Workspace};

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "workspace_writer";

/// A change to one path.
#[derive(Debug)]
pub enum WriteOp {
    /// Create a file with content, or a directory.
    Create {
        /// File content (ignored for directories).
        content: String,
        /// Create a directory instead.
        directory: bool,
        /// Replace an existing file.
        overwrite: bool,
    },
    /// Delete a file or directory.
    Delete {
        /// Allow deleting a non-empty directory.
        recursive: bool,
    },
    /// Move to another path inside the workspace.
    Rename {
        /// Destination (already resolved).
        to: PathBuf,
        /// Replace an existing destination.
        overwrite: bool,
    },
    /// Replace the single occurrence of a block.
    Replace {
        /// Exact text to find.
        old: String,
        /// Replacement.
        new: String,
    },
    /// Apply line/column edits.
    Edit { edits: Vec<LineEdit> },
}

/// Apply `op` to `path`, provided the file still has the `expected` content.
#[derive(Debug, Message)]
#[rtype(result = "Result<Written, WriteError>")]
pub struct Write {
    /// Resolved path inside the workspace.
    pub path: PathBuf,
    /// The version the caller last read; `None` when it never read the file.
    pub expected: Option<Fingerprint>,
    /// What to do.
    pub op: WriteOp,
}

/// [`Written::detail`] of a directory that was there already.
pub const DIRECTORY_EXISTED: &str = "directory already existed";
/// [`Written::detail`] of a file that was there already and was replaced.
pub const FILE_OVERWRITTEN: &str = "file overwritten";

/// A successful write.
#[derive(Debug)]
pub struct Written {
    /// The new content's fingerprint (files only).
    pub fingerprint: Option<Fingerprint>,
    /// What happened, for the tool result.
    pub detail: String,
}

/// Why a write was refused; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The file changed since the caller last read it.
    #[error("File was modified concurrently: {0} changed since this session last read it; read it again and retry")]
    Concurrent(String),
    /// A file-level failure.
    #[error(transparent)]
    File(#[from] FileError),
    /// The edit does not apply.
    #[error(transparent)]
    Edit(#[from] EditError),
    /// Confinement failed on the re-check.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The target exists.
    #[error("Already exists: {0} (pass overwrite: true to replace it)")]
    Exists(String),
    /// A file asked for where a directory is, or a directory where a file is.
    #[error(
        "{path} is a {is}: overwrite replaces files only; delete it first to make it a {wanted}"
    )]
    OtherKind {
        path: String,
        is: &'static str,
        wanted: &'static str,
    },
    /// The workspace root itself.
    #[error("Refusing to {0} the workspace root")]
    Root(&'static str),
    /// A repository's own files (`.git` and what is in it).
    #[error(
        "Refusing to change {0}: .git holds the repository's history and configuration \
         (a hook or config there runs code on the next git command); git's own commands \
         (gitCommit, gitCheckout, …) change it"
    )]
    GitInternals(String),
    /// A non-empty directory without `recursive`.
    #[error("Directory not empty: {0} (pass recursive: true to delete it with its contents)")]
    NotEmpty(String),
    /// The actor failed.
    #[error(transparent)]
    Fault(#[from] ActorFault),
}

/// Applies every workspace write, one at a time, on a thread of its own.
pub struct WorkspaceWriter {
    workspace: Workspace,
    activity: Addr<ActivityLog>,
    metrics: Arc<Metrics>,
}

impl WorkspaceWriter {
    /// A writer for `workspace`.
    pub fn new(workspace: Workspace, activity: Addr<ActivityLog>, metrics: Arc<Metrics>) -> Self {
        Self {
            workspace,
            activity,
            metrics,
        }
    }

    /// Confinement again, at the moment of writing (a symlink may have appeared).
    fn recheck(&self, path: &Path) -> Result<PathBuf, WriteError> {
        let again = self.workspace.resolve(&path.to_string_lossy())?;
        if again != path {
            return Err(PathError::Escapes(path.display().to_string()).into());
        }
        Ok(again)
    }

    /// Refuses a path inside a repository's `.git` (or `.git` itself), in this
    /// workspace or a repository nested in it.
    fn outside_git(&self, path: &Path) -> Result<(), WriteError> {
        let rel = path.strip_prefix(self.workspace.root()).unwrap_or(path);
        if crate::workspace::in_git_internals(rel) {
            return Err(WriteError::GitInternals(rel.display().to_string()));
        }
        Ok(())
    }

    fn apply(&self, msg: Write) -> Result<Written, WriteError> {
        let path = self.recheck(&msg.path)?;
        self.outside_git(&path)?;
        if let WriteOp::Rename { to, .. } = &msg.op {
            self.outside_git(to)?;
        }
        let root = self.workspace.dir();
        let shown = path.display().to_string();
        if let Some(expected) = msg.expected {
            if path.is_file() {
                let (_, current) = read_text(root, &path)?;
                if current != expected {
                    return Err(WriteError::Concurrent(shown));
                }
            }
        }
        match msg.op {
            WriteOp::Create {
                content,
                directory,
                overwrite,
            } => {
                let exists = fs::symlink_metadata(&path).is_ok();
                if directory {
                    if exists && !path.is_dir() {
                        return Err(WriteError::OtherKind {
                            path: shown,
                            is: "file",
                            wanted: "directory",
                        });
                    }
                    root.create_dir_all(&path)
                        .map_err(|e| FileError::beneath(&path, e))?;
                    return Ok(Written {
                        fingerprint: None,
                        detail: if exists {
                            DIRECTORY_EXISTED
                        } else {
                            "directory created"
                        }
                        .into(),
                    });
                }
                if exists && path.is_dir() {
                    return Err(WriteError::OtherKind {
                        path: shown,
                        is: "directory",
                        wanted: "file",
                    });
                }
                if exists && !overwrite {
                    return Err(WriteError::Exists(shown));
                }
                if let Some(parent) = path.parent() {
                    root.create_dir_all(parent)
                        .map_err(|e| FileError::beneath(parent, e))?;
                }
                write_atomic(root, &path, content.as_bytes())?;
                Ok(Written {
                    fingerprint: Some(crate::workspace::files::fingerprint(content.as_bytes())),
                    detail: if exists {
                        FILE_OVERWRITTEN
                    } else {
                        "file created"
                    }
                    .into(),
                })
            }
            WriteOp::Delete { recursive } => {
                if path == self.workspace.root() {
                    return Err(WriteError::Root("delete"));
                }
                // Through the handle of the parent directory, opened beneath the root;
                // a directory's contents through a handle on it (its /proc/self/fd
                // name), so no path is resolved from the root again.
                let (dir, name) = root
                    .open_parent(&path)
                    .map_err(|e| FileError::beneath(&path, e))?;
                let meta = crate::workspace::stat_at(&dir, &name)
                    .map_err(|e| FileError::io(&path, e))?
                    .ok_or_else(|| FileError::NotFound(shown.clone()))?;
                let mut flags = 0;
                if meta.st_mode & libc::S_IFMT == libc::S_IFDIR {
                    flags = libc::AT_REMOVEDIR;
                    let handle = root
                        .open_beneath(&path, libc::O_RDONLY | libc::O_DIRECTORY, 0)
                        .map_err(|e| FileError::beneath(&path, e))?;
                    let via = PathBuf::from(format!("/proc/self/fd/{}", handle.as_raw_fd()));
                    let entries: Vec<_> = fs::read_dir(&via)
                        .map_err(|e| FileError::io(&path, e))?
                        .collect::<Result<_, _>>()
                        .map_err(|e| FileError::io(&path, e))?;
                    if !entries.is_empty() && !recursive {
                        return Err(WriteError::NotEmpty(shown));
                    }
                    for entry in entries {
                        let inner = via.join(entry.file_name());
                        let kind = entry.file_type().map_err(|e| FileError::io(&path, e))?;
                        if kind.is_dir() {
                            fs::remove_dir_all(&inner)
                        } else {
                            fs::remove_file(&inner)
                        }
                        .map_err(|e| FileError::io(&path, e))?;
                    }
                }
                // SAFETY: a valid directory fd and a NUL-terminated name.
                if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) } != 0 {
                    return Err(FileError::io(&path, std::io::Error::last_os_error()).into());
                }
                Ok(Written {
                    fingerprint: None,
                    detail: "deleted".into(),
                })
            }
            WriteOp::Rename { to, overwrite } => {
                if path == self.workspace.root() {
                    return Err(WriteError::Root("move"));
                }
                let to = self.recheck(&to)?;
                fs::symlink_metadata(&path).map_err(|e| FileError::io(&path, e))?;
                if fs::symlink_metadata(&to).is_ok() {
                    if !overwrite {
                        return Err(WriteError::Exists(to.display().to_string()));
                    }
                    check_single_link(root, &to)?;
                }
                if let Some(parent) = to.parent() {
                    root.create_dir_all(parent)
                        .map_err(|e| FileError::beneath(parent, e))?;
                }
                // Both ends through handles on their directories, opened beneath the
                // root: a directory swapped for a symlink meanwhile leads nowhere.
                let (from_dir, from_name) = root
                    .open_parent(&path)
                    .map_err(|e| FileError::beneath(&path, e))?;
                let (to_dir, to_name) = root
                    .open_parent(&to)
                    .map_err(|e| FileError::beneath(&to, e))?;
                // SAFETY: valid directory fds and NUL-terminated names.
                let r = unsafe {
                    libc::renameat(
                        from_dir.as_raw_fd(),
                        from_name.as_ptr(),
                        to_dir.as_raw_fd(),
                        to_name.as_ptr(),
                    )
                };
                if r != 0 {
                    return Err(FileError::io(&path, std::io::Error::last_os_error()).into());
                }
                Ok(Written {
                    fingerprint: None,
                    detail: format!("moved to {}", to.display()),
                })
            }
            WriteOp::Replace { old, new } => {
                let (text, _) = read_text(root, &path)?;
                let updated = replace_block(&text, &old, &new, &shown)?;
                write_atomic(root, &path, updated.as_bytes())?;
                Ok(Written {
                    fingerprint: Some(crate::workspace::files::fingerprint(updated.as_bytes())),
                    detail: "block replaced".into(),
                })
            }
            WriteOp::Edit { edits } => {
                let (text, _) = read_text(root, &path)?;
                let updated = apply_edits(&text, &edits)?;
                write_atomic(root, &path, updated.as_bytes())?;
                Ok(Written {
                    fingerprint: Some(crate::workspace::files::fingerprint(updated.as_bytes())),
                    detail: format!("{} edits applied", edits.len()),
                })
            }
        }
    }
}

impl Actor for WorkspaceWriter {
    type Context = Context<Self>;
}

impl Supervised for WorkspaceWriter {
    fn restarting(&mut self, _: &mut Context<Self>) {
        restarted(
            NAME,
            &self.metrics,
            &self.activity.clone().recipient(),
            "the failed write was answered with the fault",
        );
    }
}

impl Handler<Write> for WorkspaceWriter {
    type Result = Result<Written, WriteError>;
    fn handle(&mut self, msg: Write, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| act.apply(msg))?
    }
}

#[cfg(feature = "fault-injection")]
crate::actors::fault::fault_handlers!(WorkspaceWriter, NAME);
