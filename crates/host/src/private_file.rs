//! Reading files only this user should be able to have written: lock files (which
//! tell the relay and the hooks where to send a session's requests) and the state
//! directory's files (the token among them). One is used only when it is a regular
//! file (not a symlink, FIFO or device: opened with `O_NOFOLLOW | O_NONBLOCK`, so a
//! FIFO never hangs the reader), owned by this user, and not writable by group or
//! others; otherwise it is refused with the reason.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Why a file is not trusted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Untrusted {
    /// A symbolic link where a file was expected.
    #[error("it is a symbolic link")]
    Symlink,
    /// A FIFO, socket, device or directory.
    #[error("it is a {0}, not a regular file")]
    NotRegular(&'static str),
    /// Owned by another user.
    #[error("it is owned by uid {owner}, not by this user (uid {me})")]
    Foreign {
        /// Its owner.
        owner: u32,
        /// This process's effective uid.
        me: u32,
    },
    /// Group or others may write it.
    #[error("others may write it (mode {0:04o})")]
    Writable(u32),
    /// Larger than any such file should be.
    #[error("it is larger than {0} bytes")]
    TooLarge(u64),
}

/// Why [`read`] returned nothing.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// It cannot be opened or read (missing included).
    #[error(transparent)]
    Io(#[from] io::Error),
    /// It is not to be trusted.
    #[error(transparent)]
    Untrusted(#[from] Untrusted),
}

fn kind(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_fifo() {
        "FIFO"
    } else if t.is_socket() {
        "socket"
    } else if t.is_block_device() || t.is_char_device() {
        "device"
    } else if t.is_dir() {
        "directory"
    } else {
        "special file"
    }
}

/// Whether `meta` (not followed through a link) describes a file this user may trust.
pub fn check(meta: &Metadata) -> Result<(), Untrusted> {
    if meta.file_type().is_symlink() {
        return Err(Untrusted::Symlink);
    }
    if !meta.file_type().is_file() {
        return Err(Untrusted::NotRegular(kind(meta)));
    }
    // SAFETY: a plain getter.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(Untrusted::Foreign {
            owner: meta.uid(),
            me,
        });
    }
    if meta.mode() & 0o022 != 0 {
        return Err(Untrusted::Writable(meta.mode() & 0o7777));
    }
    Ok(())
}

/// Opens `path` for reading without following a link or blocking on a FIFO, and
/// checks what was opened.
pub fn open(path: &Path) -> Result<File, ReadError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            // O_NOFOLLOW on a link fails with ELOOP: say what it is.
            if e.raw_os_error() == Some(libc::ELOOP) {
                ReadError::Untrusted(Untrusted::Symlink)
            } else {
                ReadError::Io(e)
            }
        })?;
    check(&file.metadata()?)?;
    Ok(file)
}

/// Reads `path` as text when it is trusted and at most `max` bytes long.
pub fn read(path: &Path, max: u64) -> Result<String, ReadError> {
    let file = open(path)?;
    let len = file.metadata()?.len();
    if len > max {
        return Err(Untrusted::TooLarge(max).into());
    }
    let mut text = String::new();
    file.take(max).read_to_string(&mut text)?;
    Ok(text)
}

/// Makes the entries of `dir` named in `names` trusted files: one of ours that others
/// may write (a umask of 002 made it 0664) is tightened to 0600; any other that is not
/// trusted is removed (a link, not what it points to). Returns each removal with the
/// reason.
pub fn sweep(dir: &Path, names: &[&str]) -> Vec<(String, Untrusted)> {
    use std::os::unix::fs::PermissionsExt;
    let mut removed = Vec::new();
    for name in names {
        let path = dir.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if let Err(Untrusted::Writable(_)) = check(&meta) {
            if std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).is_ok() {
                continue;
            }
        }
        if let Err(why) = check(&meta) {
            let gone = if meta.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            if gone.is_ok() {
                removed.push((name.to_string(), why));
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_private_regular_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("ok");
        std::fs::write(&ok, "x").unwrap();
        std::fs::set_permissions(&ok, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read(&ok, 10).unwrap(), "x");
        assert!(matches!(
            read(&ok, 0),
            Err(ReadError::Untrusted(Untrusted::TooLarge(0)))
        ));

        let open_to_all = dir.path().join("open");
        std::fs::write(&open_to_all, "x").unwrap();
        std::fs::set_permissions(&open_to_all, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(matches!(
            read(&open_to_all, 10),
            Err(ReadError::Untrusted(Untrusted::Writable(0o666)))
        ));

        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&ok, &link).unwrap();
        assert!(matches!(
            read(&link, 10),
            Err(ReadError::Untrusted(Untrusted::Symlink))
        ));

        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a fresh path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Returns at once (a blocking open would hang here).
        assert!(matches!(
            read(&fifo, 10),
            Err(ReadError::Untrusted(Untrusted::NotRegular("FIFO")))
        ));

        let swept = sweep(dir.path(), &["ok", "open", "link", "fifo", "missing"]);
        let names: Vec<_> = swept.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["link", "fifo"]);
        assert!(ok.exists(), "a link's target is not removed");
        // Ours but open to others: kept, made private.
        assert_eq!(read(&open_to_all, 10).unwrap(), "x");
    }
}
