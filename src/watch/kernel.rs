//! Kernel events for the watcher: inotify, asked only for what changes the tree.
//!
//! Each watched directory gets one non-recursive watch for creations, deletions, writes,
//! attribute changes and moves of what it holds — not for opens, reads or closes
//! without a write, so a build, a search or an editor reading thousands of files never
//! wakes the bridge. The events come as a stream on the actor's own runtime (no thread
//! and no queue of ours: the kernel's queue is the only one, and its overflow is
//! reported as [`Change::Overflow`]).

use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use inotify::{EventMask, EventStream, Inotify, WatchDescriptor, WatchMask, Watches};

/// Bytes read from the kernel at a time (a few hundred events).
const BUFFER: usize = 16 * 1024;

/// The kernel's events, read as the actor polls them.
pub type Events = EventStream<Vec<u8>>;

/// One raw inotify event.
pub type Event = inotify::Event<OsString>;

/// What one kernel event says happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// `path` was created (`dir`: a directory).
    Created { path: PathBuf, dir: bool },
    /// A file's content or attributes changed.
    Modified(PathBuf),
    /// `path` was deleted.
    Removed { path: PathBuf, dir: bool },
    /// `path` moved away; the `MovedTo` with the same cookie, if any, says where.
    MovedFrom {
        path: PathBuf,
        cookie: u32,
        dir: bool,
    },
    /// Something moved to `path` (from `cookie`'s `MovedFrom`, or from outside).
    MovedTo {
        path: PathBuf,
        cookie: u32,
        dir: bool,
    },
    /// The kernel's queue overflowed: events were lost.
    Overflow,
}

/// Whether `event` is the second half of the move whose first half had `cookie`.
pub fn second_half(event: &Event, cookie: u32) -> bool {
    event.mask.contains(EventMask::MOVED_TO) && event.cookie == cookie
}

/// Why a directory is not watched.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The kernel's limit on watches (`fs.inotify.max_user_watches`) is reached.
    #[error("the kernel's watch limit is reached")]
    Limit,
    /// Gone, not a directory, or not readable.
    #[error(transparent)]
    Other(io::Error),
}

/// The watches of one inotify instance and the directory each stands for.
pub struct Kernel {
    watches: Watches,
    dirs: HashMap<WatchDescriptor, PathBuf>,
}

impl Kernel {
    /// A new inotify instance and its event stream (must be called on a Tokio runtime).
    pub fn open() -> io::Result<(Self, Events)> {
        let inotify = Inotify::init()?;
        let watches = inotify.watches();
        let events = inotify.into_event_stream(vec![0u8; BUFFER])?;
        let kernel = Self {
            watches,
            dirs: HashMap::new(),
        };
        Ok((kernel, events))
    }

    /// Watches what happens in `dir` (not below it). Watching a directory again (after
    /// it moved) makes its events name the new path.
    pub fn watch(&mut self, dir: &Path) -> Result<(), WatchError> {
        let mask = WatchMask::CREATE
            | WatchMask::DELETE
            | WatchMask::MODIFY
            | WatchMask::CLOSE_WRITE
            | WatchMask::ATTRIB
            | WatchMask::MOVED_FROM
            | WatchMask::MOVED_TO
            | WatchMask::ONLYDIR
            | WatchMask::DONT_FOLLOW
            | WatchMask::EXCL_UNLINK;
        match self.watches.add(dir, mask) {
            Ok(wd) => {
                self.dirs.insert(wd, dir.to_path_buf());
                Ok(())
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => Err(WatchError::Limit),
            Err(e) => Err(WatchError::Other(e)),
        }
    }

    /// Drops the watches' handle on a blocking thread: closing the instance makes the
    /// kernel wait out a grace period (~15 ms measured) that the actor need not wait
    /// for. The event stream holds the descriptor too: whichever is dropped last closes
    /// it (after a restart, this handle).
    pub fn close(self) {
        drop(tokio::task::spawn_blocking(move || drop(self)));
    }

    /// Takes down the watches of `dir` and of every directory below it.
    pub fn forget(&mut self, dir: &Path) {
        let gone: Vec<WatchDescriptor> = self
            .dirs
            .iter()
            .filter(|(_, path)| path.starts_with(dir))
            .map(|(wd, _)| wd.clone())
            .collect();
        for wd in gone {
            self.dirs.remove(&wd);
            // Already gone with its directory, or not: either way no longer watched.
            let _ = self.watches.remove(wd);
        }
    }

    /// Directories watched now.
    pub fn len(&self) -> usize {
        self.dirs.len()
    }

    /// Whether nothing is watched.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
    }

    /// What `event` says, or nothing (a watch's end, an event of a directory no longer
    /// known).
    pub fn change(&mut self, event: &Event) -> Option<Change> {
        let mask = event.mask;
        if mask.contains(EventMask::Q_OVERFLOW) {
            return Some(Change::Overflow);
        }
        if mask.contains(EventMask::IGNORED) {
            // The directory was deleted (or unmounted): its watch is gone.
            self.dirs.remove(&event.wd);
            return None;
        }
        let dir = self.dirs.get(&event.wd)?;
        let path = match &event.name {
            Some(name) => dir.join(name),
            None => dir.clone(),
        };
        let is_dir = mask.contains(EventMask::ISDIR);
        let cookie = event.cookie;
        Some(if mask.contains(EventMask::CREATE) {
            Change::Created { path, dir: is_dir }
        } else if mask.contains(EventMask::DELETE) {
            Change::Removed { path, dir: is_dir }
        } else if mask.contains(EventMask::MOVED_FROM) {
            Change::MovedFrom {
                path,
                cookie,
                dir: is_dir,
            }
        } else if mask.contains(EventMask::MOVED_TO) {
            Change::MovedTo {
                path,
                cookie,
                dir: is_dir,
            }
        } else if is_dir || event.name.is_none() {
            // A directory's own attributes: nothing a subscriber reads.
            return None;
        } else {
            Change::Modified(path)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    async fn next(kernel: &mut Kernel, events: &mut Events) -> Change {
        loop {
            let event = tokio::time::timeout(std::time::Duration::from_secs(5), events.next())
                .await
                .expect("an event within 5 s")
                .unwrap()
                .unwrap();
            if let Some(change) = kernel.change(&event) {
                return change;
            }
        }
    }

    #[tokio::test]
    async fn reads_and_opens_are_not_events_writes_and_moves_are() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        let (mut kernel, mut events) = Kernel::open().unwrap();
        kernel.watch(&root).unwrap();
        assert_eq!(kernel.len(), 1);
        // Opened and read: no event. The next event is the creation after it.
        assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "a");
        std::fs::create_dir(root.join("sub")).unwrap();
        assert_eq!(
            next(&mut kernel, &mut events).await,
            Change::Created {
                path: root.join("sub"),
                dir: true
            }
        );
        std::fs::write(root.join("a.txt"), "b").unwrap();
        assert_eq!(
            next(&mut kernel, &mut events).await,
            Change::Modified(root.join("a.txt"))
        );
        std::fs::rename(root.join("a.txt"), root.join("b.txt")).unwrap();
        // The write's truncation, writes and close each said `Modified`.
        let mut from = next(&mut kernel, &mut events).await;
        while from == Change::Modified(root.join("a.txt")) {
            from = next(&mut kernel, &mut events).await;
        }
        let to = next(&mut kernel, &mut events).await;
        let (
            Change::MovedFrom { cookie: c1, .. },
            Change::MovedTo {
                cookie: c2, path, ..
            },
        ) = (&from, &to)
        else {
            panic!("{from:?} {to:?}");
        };
        assert_eq!((c1, path), (c2, &root.join("b.txt")));
        std::fs::remove_file(root.join("b.txt")).unwrap();
        assert_eq!(
            next(&mut kernel, &mut events).await,
            Change::Removed {
                path: root.join("b.txt"),
                dir: false
            }
        );
    }

    #[tokio::test]
    async fn a_file_is_not_watched() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("f"), "x").unwrap();
        let (mut kernel, _events) = Kernel::open().unwrap();
        assert!(matches!(
            kernel.watch(&tmp.path().join("f")),
            Err(WatchError::Other(_))
        ));
        assert!(kernel.is_empty());
    }
}
