//! Path confinement: lexical containment, then containment after resolving symlinks
//! of the target or its nearest existing parent. Any failure to verify is a refusal.
//!
//! The common case costs one `stat` of the root and one `lstat` per component below
//! it: when the root still is the directory the bridge opened and no component below
//! it is a symlink, the lexical path already is the canonical one. Anything else (a
//! symlink, a file in the middle of the path, an I/O error, a moved root) takes the
//! canonicalising check, so both give the same answer.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// A canonical workspace root and the identity (device, inode) it had when opened.
#[derive(Debug, Clone)]
pub struct Root {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

impl Root {
    /// Canonicalises `path` and records which directory it names.
    pub fn open(path: &Path) -> io::Result<Self> {
        let path = path.canonicalize()?;
        let meta = std::fs::metadata(&path)?;
        if !meta.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("workspace is not a directory: {}", path.display()),
            ));
        }
        Ok(Self {
            dev: meta.dev(),
            ino: meta.ino(),
            path,
        })
    }

    /// The canonical path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when the root path still names the directory that was opened.
    fn unchanged(&self) -> bool {
        std::fs::metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == (self.dev, self.ino))
    }
}

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

/// Resolves `input` against `root` and checks containment twice.
pub fn resolve(root: &Root, input: &str) -> Result<PathBuf, PathError> {
    if input.contains('\0') {
        return Err(PathError::NullByte(input.to_string()));
    }
    let raw = strip_file_scheme(input);
    if raw.is_empty() {
        return Err(PathError::Empty);
    }
    let joined = root.path.join(raw.as_ref());
    let lexical = normalize_lexically(&joined).ok_or_else(|| PathError::Escapes(input.into()))?;
    if !lexical.starts_with(&root.path) {
        return Err(PathError::Escapes(input.into()));
    }
    if plain_below_root(root, &lexical) {
        return Ok(lexical);
    }
    let root = root.path.as_path();
    let real = resolve_existing_prefix(&lexical).map_err(|e| PathError::Unverifiable {
        path: input.into(),
        reason: e.to_string(),
    })?;
    if !real.starts_with(root) {
        return Err(PathError::Escapes(input.into()));
    }
    Ok(real)
}

/// True when `lexical` (inside the root) is already canonical: the root is the
/// directory that was opened and every existing component below it is a real
/// directory (or, last, any non-symlink). Components after the first missing one
/// cannot be symlinks. False means "not shown", and the caller canonicalises.
fn plain_below_root(root: &Root, lexical: &Path) -> bool {
    let Ok(below) = lexical.strip_prefix(&root.path) else {
        return false;
    };
    if !root.unchanged() {
        return false;
    }
    let mut current = root.path.clone();
    let mut components = below.components().peekable();
    while let Some(component) = components.next() {
        current.push(component);
        match current.symlink_metadata() {
            Ok(meta) if meta.file_type().is_symlink() => return false,
            Ok(meta) if components.peek().is_some() && !meta.is_dir() => return false,
            Ok(_) => {}
            Err(e) => return e.kind() == io::ErrorKind::NotFound,
        }
    }
    true
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

    fn setup() -> (tempfile::TempDir, Root) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "fn main() {}").unwrap();
        (tmp, Root::open(&root).unwrap())
    }

    #[test]
    fn accepts_paths_inside() {
        let (_t, ws) = setup();
        let root = ws.path();
        assert_eq!(resolve(&ws, "src/a.rs").unwrap(), root.join("src/a.rs"));
        assert_eq!(
            resolve(&ws, "./src/../src/a.rs").unwrap(),
            root.join("src/a.rs")
        );
        let abs = root.join("src/a.rs");
        assert_eq!(resolve(&ws, abs.to_str().unwrap()).unwrap(), abs);
        assert_eq!(
            resolve(&ws, "new/file.txt").unwrap(),
            root.join("new/file.txt")
        );
        let url = format!("file://{}", root.join("src/a%2Ers").display());
        assert_eq!(resolve(&ws, &url).unwrap(), root.join("src/a.rs"));
        assert_eq!(resolve(&ws, ".").unwrap(), root);
    }

    #[test]
    fn refuses_escapes() {
        let (tmp, root) = setup();
        let dir = root.path();
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
        symlink(tmp.path(), dir.join("out")).unwrap();
        assert!(matches!(
            resolve(&root, "out/x"),
            Err(PathError::Escapes(_))
        ));
        symlink("/nonexistent/target", dir.join("dangling")).unwrap();
        assert!(matches!(
            resolve(&root, "dangling"),
            Err(PathError::Unverifiable { .. })
        ));
    }

    /// The walk below the root must give exactly what canonicalising gives.
    #[test]
    fn walk_agrees_with_canonicalising() {
        let (tmp, ws) = setup();
        let root = ws.path();
        std::fs::create_dir_all(root.join("lib/inner")).unwrap();
        symlink(root.join("lib"), root.join("link")).unwrap();
        symlink("inner", root.join("lib/rel")).unwrap();
        symlink(tmp.path(), root.join("lib/out")).unwrap();
        for input in [
            "src/a.rs",
            "src",
            "missing/deeper/x.rs",
            "src/missing.rs",
            "link/inner/new.rs",
            "link",
            "lib/rel/x",
            "lib/out/x",
            "lib/out",
            "src/a.rs/below",
            "link/../src/a.rs",
        ] {
            let lexical = normalize_lexically(&root.join(input)).unwrap();
            let canonical = match resolve_existing_prefix(&lexical) {
                Ok(real) if real.starts_with(root) => Ok(real),
                Ok(_) => Err(PathError::Escapes(input.into())),
                Err(e) => Err(PathError::Unverifiable {
                    path: input.into(),
                    reason: e.to_string(),
                }),
            };
            assert_eq!(resolve(&ws, input), canonical, "{input}");
        }
        assert_eq!(
            resolve(&ws, "link/inner/new.rs").unwrap(),
            root.join("lib/inner/new.rs")
        );
        assert!(matches!(
            resolve(&ws, "lib/out/x"),
            Err(PathError::Escapes(_))
        ));
        assert!(matches!(
            resolve(&ws, "src/a.rs/below"),
            Err(PathError::Unverifiable { .. })
        ));
    }

    /// A root swapped for a symlink to elsewhere after start confines nothing to
    /// the new target.
    #[test]
    fn a_swapped_root_is_noticed() {
        let (tmp, ws) = setup();
        let root = ws.path().to_path_buf();
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir_all(elsewhere.join("src")).unwrap();
        std::fs::rename(&root, tmp.path().join("moved")).unwrap();
        symlink(&elsewhere, &root).unwrap();
        assert!(matches!(
            resolve(&ws, "src/a.rs"),
            Err(PathError::Escapes(_))
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
