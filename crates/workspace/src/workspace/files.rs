//! Blocking file helpers: reading text with a line range and byte cap, content
//! fingerprints, and atomic writes that refuse hard-linked targets.

use std::ffi::CString;
use std::fs;
use std::hash::{Hash, Hasher};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::confine::{is_escape, stat_at};
use super::Root;

use serde::Serialize;

/// Files larger than this are not read whole or edited.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Identifies one version of a file's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Fingerprint {
    /// Length in bytes.
    pub len: u64,
    /// Content hash (SipHash with fixed keys: stable within a process).
    pub hash: u64,
}

/// Fingerprint of `bytes`.
pub fn fingerprint(bytes: &[u8]) -> Fingerprint {
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new();
    bytes.hash(&mut h);
    Fingerprint {
        len: bytes.len() as u64,
        hash: h.finish(),
    }
}

/// Why a file operation failed; the text is what the agent reads.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// Missing.
    #[error("File not found: {0}")]
    NotFound(String),
    /// A directory where a file was expected.
    #[error("Is a directory: {0}")]
    IsDirectory(String),
    /// Over [`MAX_FILE_BYTES`].
    #[error("File too large: {path} is {size} bytes (limit {MAX_FILE_BYTES})")]
    TooLarge { path: String, size: u64 },
    /// A FIFO, device or socket: reading could block forever or never end.
    #[error("Not a regular file: {path} is {what}; only regular files can be read")]
    NotRegular {
        path: String,
        /// What it is instead.
        what: &'static str,
    },
    /// Not UTF-8 text.
    #[error("Not a text file (binary or not UTF-8): {0}")]
    Binary(String),
    /// More than one hard link: writing would change other paths too.
    #[error("hardlink write denied: {path} has {links} hard links")]
    Hardlinked {
        path: String,
        /// Link count.
        links: u64,
    },
    /// Opening beneath the workspace's directory handle met a way out of it (a
    /// symlink swapped in after the path was checked).
    #[error("Path escapes workspace: {0}")]
    Escapes(String),
    /// Anything else.
    #[error("{path}: {source}")]
    Io {
        path: String,
        /// Cause.
        source: io::Error,
    },
}

impl FileError {
    /// Wraps an I/O error, mapping NotFound.
    pub fn io(path: &Path, source: io::Error) -> Self {
        if source.kind() == io::ErrorKind::NotFound {
            FileError::NotFound(path.display().to_string())
        } else {
            FileError::Io {
                path: path.display().to_string(),
                source,
            }
        }
    }

    /// Wraps an error from opening beneath the root: `EXDEV` is an escape.
    pub fn beneath(path: &Path, source: io::Error) -> Self {
        if is_escape(&source) {
            FileError::Escapes(path.display().to_string())
        } else {
            Self::io(path, source)
        }
    }
}

/// Opens `path` for reading without blocking and returns the handle only when it is
/// a regular file of at most [`MAX_FILE_BYTES`], checked on the opened handle.
///
/// `O_NONBLOCK` makes opening a FIFO return at once instead of waiting for a writer
/// (which kept a blocking thread forever, and after ~255 of them every read timed out);
/// `fstat` on the handle then refuses FIFOs, devices and sockets, so the check and the
/// read concern the same file even if the path is swapped in between. For a regular
/// file `O_NONBLOCK` changes nothing. The file is opened beneath the workspace's
/// directory handle ([`Root::open_beneath`]), not by its path: a symlink swapped in
/// after confinement was checked cannot lead outside.
pub fn open_regular(root: &Root, path: &Path) -> Result<(fs::File, u64), FileError> {
    use std::os::unix::fs::FileTypeExt;
    let file = fs::File::from(
        root.open_beneath(path, libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY, 0)
            .map_err(|e| FileError::beneath(path, e))?,
    );
    let meta = file.metadata().map_err(|e| FileError::io(path, e))?;
    let kind = meta.file_type();
    if kind.is_dir() {
        return Err(FileError::IsDirectory(path.display().to_string()));
    }
    if !kind.is_file() {
        let what = if kind.is_fifo() {
            "a FIFO (named pipe)"
        } else if kind.is_char_device() {
            "a character device"
        } else if kind.is_block_device() {
            "a block device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        return Err(FileError::NotRegular {
            path: path.display().to_string(),
            what,
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(FileError::TooLarge {
            path: path.display().to_string(),
            size: meta.len(),
        });
    }
    Ok((file, meta.len()))
}

/// The bytes of a regular file of at most [`MAX_FILE_BYTES`] ([`open_regular`]); a
/// file that grows while being read is cut off at the limit plus one byte and refused.
pub fn read_regular(root: &Root, path: &Path) -> Result<Vec<u8>, FileError> {
    read_regular_max(root, path, MAX_FILE_BYTES)
}

/// [`read_regular`] with a limit of `max` bytes (at most [`MAX_FILE_BYTES`]): a larger
/// file is refused before it is read, one that grows past it while being read too.
pub fn read_regular_max(root: &Root, path: &Path, max: u64) -> Result<Vec<u8>, FileError> {
    use std::io::Read;
    let (file, len) = open_regular(root, path)?;
    let too_large = |size: u64| FileError::TooLarge {
        path: path.display().to_string(),
        size,
    };
    if len > max {
        return Err(too_large(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::io(path, e))?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Reads a whole text file (≤ [`MAX_FILE_BYTES`], regular files only, see
/// [`open_regular`]) and its fingerprint.
pub fn read_text(root: &Root, path: &Path) -> Result<(String, Fingerprint), FileError> {
    let bytes = read_regular(root, path)?;
    let fp = fingerprint(&bytes);
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Err(FileError::Binary(path.display().to_string()));
    }
    let text =
        String::from_utf8(bytes).map_err(|_| FileError::Binary(path.display().to_string()))?;
    Ok((text, fp))
}

/// A slice of a text file.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Excerpt {
    /// The lines shown.
    pub content: String,
    /// First line shown (1-based).
    pub start_line: usize,
    /// Last complete line shown (1-based, inclusive).
    pub end_line: usize,
    /// Lines in the file.
    pub total_lines: usize,
    /// True when `max_bytes` cut the excerpt.
    pub truncated: bool,
}

/// Lines `start..=end` (1-based, clamped) of `text`, cut at `max_bytes` with a marker
/// that says where to read on, or, when the first line alone is longer, that it is.
pub fn excerpt(text: &str, start: Option<usize>, end: Option<usize>, max_bytes: usize) -> Excerpt {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let total = lines.len();
    let start = start.unwrap_or(1).max(1);
    let end = end.unwrap_or(total).min(total);
    let mut content = String::new();
    // The line cut short, if any: its number, how many of its bytes are shown, its length.
    let mut cut_line: Option<(usize, usize, usize)> = None;
    let mut last = start.saturating_sub(1);
    if start <= end {
        for (i, line) in lines[start - 1..end].iter().enumerate() {
            if content.len() + line.len() > max_bytes {
                let room = max_bytes.saturating_sub(content.len());
                let mut cut = room.min(line.len());
                while !line.is_char_boundary(cut) {
                    cut -= 1;
                }
                content.push_str(&line[..cut]);
                cut_line = Some((start + i, cut, line.len()));
                break;
            }
            content.push_str(line);
            last = start + i;
        }
    }
    let truncated = cut_line.is_some();
    match cut_line {
        None => {}
        Some((n, 0, _)) if n > start => content.push_str(&format!(
            "[… truncated at {max_bytes} bytes; read on with startLine={n}]"
        )),
        Some((n, shown, len)) if n > start => content.push_str(&format!(
            "\n[… line {n} cut after {shown} of its {len} bytes (maxBytes {max_bytes}); \
             read on with startLine={n}]"
        )),
        Some((n, shown, len)) => content.push_str(&format!(
            "\n[… line {n} alone is {len} bytes, more than maxBytes ({max_bytes}): {shown} \
             shown; read it with a larger maxBytes (files.max_read_bytes is the most), or \
             find what you need in it with searchWorkspace]"
        )),
    }
    Excerpt {
        content,
        start_line: start,
        end_line: last,
        total_lines: total,
        truncated,
    }
}

/// Refuses targets with more than one hard link (looked at through the handle of its
/// directory, opened beneath the root).
pub fn check_single_link(root: &Root, path: &Path) -> Result<(), FileError> {
    let (dir, name) = root
        .open_parent(path)
        .map_err(|e| FileError::beneath(path, e))?;
    single_link(&dir, &name, path).map(|_| ())
}

/// The mode of an existing regular file `name` in `dir` (`None` when there is none),
/// refusing one with more than one hard link.
#[allow(clippy::useless_conversion)] // `st_nlink`'s width varies by target
fn single_link(dir: &OwnedFd, name: &CString, path: &Path) -> Result<Option<u32>, FileError> {
    match stat_at(dir, name) {
        Ok(Some(st)) if st.st_mode & libc::S_IFMT == libc::S_IFREG => {
            if st.st_nlink > 1 {
                return Err(FileError::Hardlinked {
                    path: path.display().to_string(),
                    links: u64::from(st.st_nlink),
                });
            }
            Ok(Some(st.st_mode & 0o7777))
        }
        Ok(_) => Ok(None),
        Err(e) => Err(FileError::io(path, e)),
    }
}

/// Writes `bytes` to `path` atomically, keeping the permissions of an existing file
/// and refusing hard-linked targets. The target's directory is opened once beneath the
/// workspace's handle; the temp file is created in it (`openat`, `O_EXCL |
/// O_NOFOLLOW`), fsynced and renamed over the target with `renameat` relative to that
/// same handle, so a directory swapped for a symlink meanwhile changes nothing outside.
pub fn write_atomic(root: &Root, path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    let (dir, name) = root
        .open_parent(path)
        .map_err(|e| FileError::beneath(path, e))?;
    let mode = single_link(&dir, &name, path)?;
    let tmp = temp_name(&name);
    let result = (|| -> io::Result<()> {
        // SAFETY: valid fd, NUL-terminated name; the fd returned is owned below.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                tmp.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o666 as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh fd nothing else owns.
        let mut file = unsafe { fs::File::from_raw_fd(fd) };
        file.write_all(bytes)?;
        if let Some(mode) = mode {
            file.set_permissions(fs::Permissions::from_mode(mode))?;
        }
        file.sync_all()?;
        // SAFETY: valid fds and NUL-terminated names.
        let r = unsafe {
            libc::renameat(
                dir.as_raw_fd(),
                tmp.as_ptr(),
                dir.as_raw_fd(),
                name.as_ptr(),
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a valid fd.
        unsafe { libc::fsync(dir.as_raw_fd()) };
        Ok(())
    })();
    if let Err(e) = result {
        // SAFETY: valid fd and NUL-terminated name.
        unsafe { libc::unlinkat(dir.as_raw_fd(), tmp.as_ptr(), 0) };
        return Err(FileError::io(path, e));
    }
    Ok(())
}

fn temp_name(name: &CString) -> CString {
    let mut bytes = b".".to_vec();
    bytes.extend_from_slice(name.as_bytes());
    bytes.extend_from_slice(
        format!(
            ".ide-bridge-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        )
        .as_bytes(),
    );
    CString::new(bytes).expect("no NUL in a checked name")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_clamp_and_truncate_with_a_marker() {
        let text = "a\nbb\nccc\n";
        let all = excerpt(text, None, None, 1000);
        assert_eq!(
            (all.content.as_str(), all.total_lines, all.end_line),
            (text, 3, 3)
        );
        let mid = excerpt(text, Some(2), Some(2), 1000);
        assert_eq!(mid.content, "bb\n");
        let past = excerpt(text, Some(3), Some(99), 1000);
        assert_eq!((past.content.as_str(), past.end_line), ("ccc\n", 3));
        let cut = excerpt(text, None, None, 4);
        assert!(cut.truncated);
        assert_eq!(
            cut.end_line, 1,
            "line 2 was cut, so line 1 is the last complete one"
        );
        assert_eq!(
            cut.content,
            "a\nbb\n[… line 2 cut after 2 of its 3 bytes (maxBytes 4); read on with startLine=2]"
        );
        let exact = excerpt(text, None, None, 5);
        assert_eq!((exact.end_line, exact.truncated), (2, true));
        assert_eq!(
            exact.content,
            "a\nbb\n[… truncated at 5 bytes; read on with startLine=3]"
        );
        // A first line longer than the cap cannot be read on from by line: said so.
        let long = excerpt("abcdefghij\nk\n", Some(1), None, 4);
        assert!(long.truncated);
        assert!(
            long.content
                .starts_with("abcd\n[… line 1 alone is 11 bytes")
                && !long.content.contains("startLine"),
            "{}",
            long.content
        );
        let empty = excerpt(text, Some(5), None, 1000);
        assert_eq!(empty.content, "");
        let utf8 = excerpt("ééé\n", None, None, 3);
        assert!(utf8.content.starts_with('é') && utf8.truncated);
    }

    #[test]
    fn atomic_writes_keep_mode_and_refuse_hard_links() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Root::open(tmp.path()).unwrap();
        let f = root.path().join("a.sh");
        fs::write(&f, "old").unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&root, &f, b"new").unwrap();
        assert_eq!(fs::read_to_string(&f).unwrap(), "new");
        assert_eq!(
            fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o755
        );
        fs::hard_link(&f, tmp.path().join("b.sh")).unwrap();
        assert!(matches!(
            write_atomic(&root, &f, b"x"),
            Err(FileError::Hardlinked { links: 2, .. })
        ));
        assert_eq!(fs::read_to_string(&f).unwrap(), "new");
        assert_eq!(
            fs::read_dir(tmp.path()).unwrap().count(),
            2,
            "no temp file left"
        );
    }

    #[test]
    fn fingerprints_differ_with_content() {
        assert_eq!(fingerprint(b"a"), fingerprint(b"a"));
        assert_ne!(fingerprint(b"a"), fingerprint(b"b"));
    }

    #[test]
    fn fifos_and_devices_are_refused_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Root::open(tmp.path()).unwrap();
        let fifo = root.path().join("pipe");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read_text(&root, &fifo).unwrap_err();
        assert!(err.to_string().contains("is a FIFO (named pipe)"), "{err}");
        let top = Root::open(Path::new("/")).unwrap();
        let err = read_text(&top, Path::new("/dev/zero")).unwrap_err();
        assert!(err.to_string().contains("a character device"), "{err}");
        let err = read_text(&root, root.path()).unwrap_err();
        assert!(matches!(err, FileError::IsDirectory(_)), "{err}");
        let f = root.path().join("f.txt");
        fs::write(&f, "text\n").unwrap();
        assert_eq!(read_text(&root, &f).unwrap().0, "text\n");
    }

    /// A symlink swapped in after the path was checked: reads and writes through it
    /// are refused as escapes, with `openat2` and with the component walk; symlinks
    /// that stay inside still work with `openat2`.
    #[test]
    fn opening_beneath_the_root_refuses_a_swapped_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret.txt"), "secret").unwrap();
        let ws = tmp.path().join("ws");
        fs::create_dir_all(ws.join("d")).unwrap();
        fs::write(ws.join("d/secret.txt"), "inside").unwrap();
        let root = Root::open(&ws).unwrap();
        let checked = root.path().join("d/secret.txt");
        let created = root.path().join("d/new.txt");
        // The swap: `d` becomes a symlink out.
        fs::rename(ws.join("d"), ws.join("d.real")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("d")).unwrap();
        for walk in [false, true] {
            crate::workspace::confine::force_component_walk(walk);
            let read = read_text(&root, &checked);
            let write = write_atomic(&root, &created, b"x");
            let dirs = root.create_dir_all(&root.path().join("d/sub"));
            crate::workspace::confine::force_component_walk(false);
            assert!(
                matches!(read, Err(FileError::Escapes(_))),
                "{walk}: {read:?}"
            );
            assert!(
                matches!(write, Err(FileError::Escapes(_))),
                "{walk}: {write:?}"
            );
            assert!(dirs.is_err_and(|e| is_escape(&e)), "{walk}");
        }
        assert!(!outside.join("new.txt").exists() && !outside.join("sub").exists());
        // A symlink inside pointing inside is followed by openat2.
        fs::remove_file(ws.join("d")).unwrap();
        std::os::unix::fs::symlink("d.real", ws.join("d")).unwrap();
        assert_eq!(read_text(&root, &checked).unwrap().0, "inside");
        write_atomic(&root, &created, b"x").unwrap();
        assert!(ws.join("d.real/new.txt").exists());
        let made = root.create_dir_all(&root.path().join("a/b/c")).unwrap();
        drop(made);
        assert!(ws.join("a/b/c").is_dir());
    }
}
