//! Path confinement: lexical containment, then containment after resolving symlinks
//! of the target or its nearest existing parent. Any failure to verify is a refusal.

use std::io;
use std::path::{Component, Path, PathBuf};

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The input held a NUL byte.
    #[error("Path contains a null byte: {0:?}")]
    NullByte(String),
    /// The input was empty.
    #[error("Path is empty")]
    Empty,
    /// The path leaves the workspace, lexically or through a symlink.
    #[error("Path escapes workspace: {0}")]
    Escapes(String),
    /// Containment could not be verified.
    #[error("Cannot verify path {path}: {reason}")]
    Unverifiable {
        /// The input.
        path: String,
        /// The I/O error.
        reason: String,
    },
}

/// Resolves `input` against `root` (canonical) and checks containment twice.
pub fn resolve(root: &Path, input: &str) -> Result<PathBuf, PathError> {
    if input.contains('\0') {
        return Err(PathError::NullByte(input.to_string()));
    }
    let raw = strip_file_scheme(input);
    if raw.is_empty() {
        return Err(PathError::Empty);
    }
    let joined = root.join(raw.as_ref());
    let lexical = normalize_lexically(&joined).ok_or_else(|| PathError::Escapes(input.into()))?;
    if !lexical.starts_with(root) {
        return Err(PathError::Escapes(input.into()));
    }
    let real = resolve_existing_prefix(&lexical).map_err(|e| PathError::Unverifiable {
        path: input.into(),
        reason: e.to_string(),
    })?;
    if !real.starts_with(root) {
        return Err(PathError::Escapes(input.into()));
    }
    Ok(real)
}

/// Removes `.` and resolves `..` without touching the filesystem. `None` when `..`
/// climbs above the filesystem root.
pub fn normalize_lexically(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::Prefix(_) | Component::RootDir => out.push(comp.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    return None;
                }
            }
            Component::Normal(c) => out.push(c),
        }
    }
    Some(out)
}

/// Canonicalises the longest existing prefix of `path` and appends the rest.
fn resolve_existing_prefix(path: &Path) -> io::Result<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(real) => {
                let mut out = real;
                for part in rest.iter().rev() {
                    out.push(part);
                }
                return Ok(out);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A dangling symlink must not be treated as a missing file.
                if existing.symlink_metadata().is_ok() {
                    return Err(io::Error::other("dangling symbolic link"));
                }
                let Some(name) = existing.file_name() else {
                    return Err(e);
                };
                rest.push(name.to_os_string());
                if !existing.pop() {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
}

fn strip_file_scheme(input: &str) -> std::borrow::Cow<'_, str> {
    match input.strip_prefix("file://") {
        Some(rest) => std::borrow::Cow::Owned(percent_decode(rest)),
        None => std::borrow::Cow::Borrowed(input),
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "fn main() {}").unwrap();
        let root = root.canonicalize().unwrap();
        (tmp, root)
    }

    #[test]
    fn accepts_paths_inside() {
        let (_t, root) = setup();
        assert_eq!(resolve(&root, "src/a.rs").unwrap(), root.join("src/a.rs"));
        assert_eq!(
            resolve(&root, "./src/../src/a.rs").unwrap(),
            root.join("src/a.rs")
        );
        let abs = root.join("src/a.rs");
        assert_eq!(resolve(&root, abs.to_str().unwrap()).unwrap(), abs);
        assert_eq!(
            resolve(&root, "new/file.txt").unwrap(),
            root.join("new/file.txt")
        );
        let url = format!("file://{}", root.join("src/a%2Ers").display());
        assert_eq!(resolve(&root, &url).unwrap(), root.join("src/a.rs"));
    }

    #[test]
    fn refuses_escapes() {
        let (tmp, root) = setup();
        for bad in [
            "../x",
            "src/../../x",
            "/etc/passwd",
            "file:///etc/passwd",
            "/",
            "../ws2/a",
        ] {
            assert!(
                matches!(resolve(&root, bad), Err(PathError::Escapes(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            resolve(&root, "a\0b"),
            Err(PathError::NullByte(_))
        ));
        assert!(matches!(resolve(&root, ""), Err(PathError::Empty)));
        symlink(tmp.path(), root.join("out")).unwrap();
        assert!(matches!(
            resolve(&root, "out/x"),
            Err(PathError::Escapes(_))
        ));
        symlink("/nonexistent/target", root.join("dangling")).unwrap();
        assert!(matches!(
            resolve(&root, "dangling"),
            Err(PathError::Unverifiable { .. })
        ));
    }

    #[test]
    fn percent_decoding_handles_edges() {
        assert_eq!(percent_decode("a%20b"), "a b");
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(percent_decode("%zz"), "%zz");
        assert_eq!(percent_decode("%a\u{e9}"), "%a\u{e9}");
    }
}
