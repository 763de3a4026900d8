//! Blocking file helpers: reading text with a line range and byte cap, content
//! fingerprints, and atomic writes that refuse hard-linked targets.

use std::fs;
use std::hash::{Hash, Hasher};
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

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
    TooLarge {
        /// Path.
        path: String,
        /// Size.
        size: u64,
    },
    /// A FIFO, device or socket: reading could block forever or never end.
    #[error("Not a regular file: {path} is {what}; only regular files can be read")]
    NotRegular {
        /// Path.
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
        /// Path.
        path: String,
        /// Link count.
        links: u64,
    },
    /// Anything else.
    #[error("{path}: {source}")]
    Io {
        /// Path.
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
}

/// Opens `path` for reading without blocking and returns the handle only when it is
/// a regular file of at most [`MAX_FILE_BYTES`], checked on the opened handle.
///
/// `O_NONBLOCK` makes opening a FIFO return at once instead of waiting for a writer
/// (which kept a blocking thread forever, and after ~255 of them every read timed out);
/// `fstat` on the handle then refuses FIFOs, devices and sockets, so the check and the
/// read concern the same file even if the path is swapped in between. For a regular
/// file `O_NONBLOCK` changes nothing.
pub fn open_regular(path: &Path) -> Result<(fs::File, u64), FileError> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| FileError::io(path, e))?;
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
pub fn read_regular(path: &Path) -> Result<Vec<u8>, FileError> {
    use std::io::Read;
    let (file, len) = open_regular(path)?;
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::io(path, e))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(FileError::TooLarge {
            path: path.display().to_string(),
            size: bytes.len() as u64,
        });
    }
    Ok(bytes)
}

/// Reads a whole text file (≤ [`MAX_FILE_BYTES`], regular files only, see
/// [`open_regular`]) and its fingerprint.
pub fn read_text(path: &Path) -> Result<(String, Fingerprint), FileError> {
    let bytes = read_regular(path)?;
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

/// Lines `start..=end` (1-based, clamped) of `text`, cut at `max_bytes` with a marker.
pub fn excerpt(text: &str, start: Option<usize>, end: Option<usize>, max_bytes: usize) -> Excerpt {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let total = lines.len();
    let start = start.unwrap_or(1).max(1);
    let end = end.unwrap_or(total).min(total);
    let mut content = String::new();
    let mut truncated = false;
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
                truncated = true;
                // The cut line is not complete: it is where to read on from.
                last = start + i - 1;
                break;
            }
            content.push_str(line);
            last = start + i;
        }
    }
    if truncated {
        content.push_str(&format!(
            "\n[… truncated at {max_bytes} bytes; read on with startLine={}]",
            last + 1
        ));
    }
    Excerpt {
        content,
        start_line: start,
        end_line: last,
        total_lines: total,
        truncated,
    }
}

/// Refuses targets with more than one hard link.
pub fn check_single_link(path: &Path) -> Result<(), FileError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() && meta.nlink() > 1 => Err(FileError::Hardlinked {
            path: path.display().to_string(),
            links: meta.nlink(),
        }),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(FileError::io(path, e)),
    }
}

/// Writes `bytes` to `path` atomically (temp file in the same directory, fsync,
/// rename), keeping the permissions of an existing file. Refuses hard-linked targets.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    check_single_link(path)?;
    let dir = path.parent().unwrap_or(Path::new("/"));
    let perms = fs::metadata(path).ok().map(|m| m.permissions());
    let tmp = temp_sibling(path);
    let result = (|| -> io::Result<()> {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        if let Some(perms) = perms {
            fs::set_permissions(&tmp, perms)?;
        }
        fs::rename(&tmp, path)?;
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(FileError::io(path, e));
    }
    Ok(())
}

fn temp_sibling(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(
        ".{name}.ide-bridge-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ))
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
        assert!(
            cut.content.starts_with("a\nbb") && cut.content.contains("read on with startLine=2")
        );
        let exact = excerpt(text, None, None, 5);
        assert_eq!((exact.end_line, exact.truncated), (2, true));
        assert!(exact.content.contains("startLine=3"));
        let empty = excerpt(text, Some(5), None, 1000);
        assert_eq!(empty.content, "");
        let utf8 = excerpt("ééé\n", None, None, 3);
        assert!(utf8.content.starts_with('é') && utf8.truncated);
    }

    #[test]
    fn atomic_writes_keep_mode_and_refuse_hard_links() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("a.sh");
        fs::write(&f, "old").unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&f, b"new").unwrap();
        assert_eq!(fs::read_to_string(&f).unwrap(), "new");
        assert_eq!(
            fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o755
        );
        fs::hard_link(&f, tmp.path().join("b.sh")).unwrap();
        assert!(matches!(
            write_atomic(&f, b"x"),
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
        let fifo = tmp.path().join("pipe");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read_text(&fifo).unwrap_err();
        assert!(err.to_string().contains("is a FIFO (named pipe)"), "{err}");
        let err = read_text(Path::new("/dev/zero")).unwrap_err();
        assert!(err.to_string().contains("a character device"), "{err}");
        let err = read_text(tmp.path()).unwrap_err();
        assert!(matches!(err, FileError::IsDirectory(_)), "{err}");
        let f = tmp.path().join("f.txt");
        fs::write(&f, "text\n").unwrap();
        assert_eq!(read_text(&f).unwrap().0, "text\n");
    }
}
