//! Path confinement: lexical containment, then containment after resolving symlinks
//! of the target or its nearest existing parent. Any failure to verify is a refusal.
//!
//! The common case costs a byte-level lexical pass, one `stat` of the root and one
//! `lstat` per component below it: when the root still is the directory the bridge
//! opened and no component below it is a symlink, the lexical path already is the
//! canonical one. Anything else (a symlink, a file in the middle of the path, an I/O
//! error, a moved root) takes the canonicalising check, so both give the same answer.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A canonical workspace root, the identity (device, inode) it had when opened, and a
/// directory handle on it: files are opened beneath that handle ([`Root::open_beneath`]),
/// never by their path again, so a symlink swapped in after the check cannot lead out.
#[derive(Debug, Clone)]
pub struct Root {
    path: PathBuf,
    dev: u64,
    ino: u64,
    dir: Arc<OwnedFd>,
}

impl Root {
    /// Canonicalises `path`, opens it as a directory handle and records which
    /// directory it names.
    #[allow(clippy::useless_conversion)] // `st_dev`/`st_ino` widths vary by target
    pub fn open(path: &Path) -> io::Result<Self> {
        let path = path.canonicalize()?;
        let dir =
            open_at(libc::AT_FDCWD, &path, libc::O_PATH | libc::O_DIRECTORY, 0).map_err(|e| {
                if e.raw_os_error() == Some(libc::ENOTDIR) {
                    io::Error::new(
                        io::ErrorKind::NotADirectory,
                        format!("workspace is not a directory: {}", path.display()),
                    )
                } else {
                    e
                }
            })?;
        let meta = fstat(dir.as_raw_fd())?;
        Ok(Self {
            dev: u64::from(meta.st_dev),
            ino: u64::from(meta.st_ino),
            path,
            dir: Arc::new(dir),
        })
    }

    /// The canonical path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens `path` (absolute and inside the root, as [`resolve`] returns it, or
    /// relative to the root) beneath the root's directory handle with `flags`
    /// (`O_CLOEXEC` added; `mode` for `O_CREAT`). Where the kernel has `openat2`,
    /// resolution is `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`: symlinks that stay
    /// inside are followed, anything that would leave the root (`..`, an absolute or
    /// outward symlink, a magic link) fails. Elsewhere a walk one component at a time
    /// with `O_NOFOLLOW` refuses every symlink (the paths [`resolve`] returns have none
    /// unless one was swapped in). Leaving the root is reported as `EXDEV`
    /// ([`is_escape`]).
    pub fn open_beneath(&self, path: &Path, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
        let rel = self.relative(path)?;
        open_beneath(self.dir.as_fd_borrowed(), &rel, flags, mode)
    }

    /// Opens the directory `path` beneath the root, creating each missing component
    /// with `mkdirat` relative to the handle of its already-checked parent.
    pub fn create_dir_all(&self, path: &Path) -> io::Result<OwnedFd> {
        let rel = self.relative(path)?;
        let dir_flags = libc::O_RDONLY | libc::O_DIRECTORY;
        let mut current = open_beneath(self.dir.as_fd_borrowed(), Path::new("."), dir_flags, 0)?;
        let mut so_far = PathBuf::new();
        for component in rel.components() {
            let Component::Normal(name) = component else {
                continue;
            };
            so_far.push(name);
            let next = match open_beneath(self.dir.as_fd_borrowed(), &so_far, dir_flags, 0) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    let c = cstring(Path::new(name))?;
                    // SAFETY: a valid directory fd and a NUL-terminated name.
                    let r = unsafe { libc::mkdirat(current.as_raw_fd(), c.as_ptr(), 0o777) };
                    if r != 0 {
                        let e = io::Error::last_os_error();
                        if e.raw_os_error() != Some(libc::EEXIST) {
                            return Err(e);
                        }
                    }
                    open_beneath(self.dir.as_fd_borrowed(), &so_far, dir_flags, 0)?
                }
                other => other?,
            };
            current = next;
        }
        Ok(current)
    }

    /// The directory holding `path`, opened beneath the root (readable, so it can be
    /// fsynced), and the last component's name: for `*at` calls on that name.
    pub fn open_parent(&self, path: &Path) -> io::Result<(OwnedFd, CString)> {
        let rel = self.relative(path)?;
        let name = match rel.components().next_back() {
            Some(Component::Normal(name)) => name.to_os_string(),
            _ => return Err(io::Error::from_raw_os_error(libc::EINVAL)),
        };
        let parent = rel.parent().unwrap_or(Path::new("."));
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        let dir = open_beneath(
            self.dir.as_fd_borrowed(),
            parent,
            libc::O_RDONLY | libc::O_DIRECTORY,
            0,
        )?;
        Ok((dir, cstring(Path::new(&name))?))
    }

    /// `path` relative to the root; `EXDEV` when it is not below it.
    fn relative(&self, path: &Path) -> io::Result<PathBuf> {
        let rel = if path.is_absolute() {
            path.strip_prefix(&self.path)
                .map_err(|_| io::Error::from_raw_os_error(libc::EXDEV))?
        } else {
            path
        };
        if rel
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(io::Error::from_raw_os_error(libc::EXDEV));
        }
        Ok(if rel.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            rel.to_path_buf()
        })
    }

    /// True when the root path still names the directory that was opened.
    fn unchanged(&self) -> bool {
        std::fs::metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == (self.dev, self.ino))
    }
}

/// True when an error from [`Root::open_beneath`] and friends means the path would
/// have left the root.
pub fn is_escape(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EXDEV)
}

trait BorrowFd {
    fn as_fd_borrowed(&self) -> BorrowedFd<'_>;
}

impl BorrowFd for Arc<OwnedFd> {
    fn as_fd_borrowed(&self) -> BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.as_ref().as_fd()
    }
}

/// Set when the kernel answered `openat2` with `ENOSYS`.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

#[cfg(test)]
thread_local! {
    static FORCE_WALK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes [`Root::open_beneath`] on this thread use the component walk, as on a
/// kernel without `openat2` (tests only).
#[cfg(test)]
pub(crate) fn force_component_walk(on: bool) {
    FORCE_WALK.with(|f| f.set(on));
}

fn use_openat2() -> bool {
    #[cfg(test)]
    if FORCE_WALK.with(|f| f.get()) {
        return false;
    }
    !NO_OPENAT2.load(Ordering::Relaxed)
}

fn cstring(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn open_at(dir: libc::c_int, path: &Path, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
    let c = cstring(path)?;
    loop {
        // SAFETY: a NUL-terminated path; the fd returned is owned by the caller.
        let fd = unsafe {
            libc::openat(
                dir,
                c.as_ptr(),
                flags | libc::O_CLOEXEC,
                mode as libc::c_uint,
            )
        };
        if fd >= 0 {
            // SAFETY: a fresh fd nothing else owns.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn fstat(fd: libc::c_int) -> io::Result<libc::stat> {
    // SAFETY: a zeroed stat is a valid out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is valid for writes.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// `lstat` of `name` in `dir`; `None` when it does not exist.
pub fn stat_at(dir: &OwnedFd, name: &CString) -> io::Result<Option<libc::stat>> {
    // SAFETY: a zeroed stat is a valid out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid fd, a NUL-terminated name, `st` valid for writes.
    let r = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if r == 0 {
        return Ok(Some(st));
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::NotFound {
        Ok(None)
    } else {
        Err(e)
    }
}

fn open_beneath(
    root: BorrowedFd<'_>,
    rel: &Path,
    flags: libc::c_int,
    mode: u32,
) -> io::Result<OwnedFd> {
    if use_openat2() {
        match openat2_beneath(root, rel, flags, mode) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                NO_OPENAT2.store(true, Ordering::Relaxed);
                tracing::warn!("openat2 unavailable: confining file access by a component walk");
            }
            other => return other,
        }
    }
    walk_beneath(root, rel, flags, mode)
}

fn openat2_beneath(
    root: BorrowedFd<'_>,
    rel: &Path,
    flags: libc::c_int,
    mode: u32,
) -> io::Result<OwnedFd> {
    let c = cstring(rel)?;
    // SAFETY: open_how is plain data; zero is its default.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    how.mode = if flags & (libc::O_CREAT | libc::O_TMPFILE) != 0 {
        mode as u64
    } else {
        0
    };
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
    // EAGAIN: a concurrent rename somewhere in the filesystem made the kernel unsure
    // that `..` stayed beneath; it asks to retry.
    for _ in 0..64 {
        // SAFETY: valid fd, NUL-terminated path, `how` valid for its stated size.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                root.as_raw_fd(),
                c.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if fd >= 0 {
            // SAFETY: a fresh fd nothing else owns.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) });
        }
        let e = io::Error::last_os_error();
        if !matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR)) {
            return Err(e);
        }
    }
    Err(io::Error::from_raw_os_error(libc::EAGAIN))
}

/// The fallback: one `openat` per component with `O_NOFOLLOW`, each relative to the
/// handle of the one before; a symlink anywhere is `EXDEV`.
fn walk_beneath(
    root: BorrowedFd<'_>,
    rel: &Path,
    flags: libc::c_int,
    mode: u32,
) -> io::Result<OwnedFd> {
    let names: Vec<&OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(Ok(n)),
            Component::CurDir => None,
            _ => Some(Err(io::Error::from_raw_os_error(libc::EXDEV))),
        })
        .collect::<io::Result<_>>()?;
    let symlink_means_escape = |dir: libc::c_int, name: &OsStr, e: io::Error| -> io::Error {
        let Ok(c) = cstring(Path::new(name)) else {
            return e;
        };
        // SAFETY: a zeroed stat is a valid out-parameter.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid fd, a NUL-terminated name, `st` valid for writes.
        let r = unsafe { libc::fstatat(dir, c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
        if r == 0 && st.st_mode & libc::S_IFMT == libc::S_IFLNK {
            io::Error::from_raw_os_error(libc::EXDEV)
        } else {
            e
        }
    };
    let Some((last, middle)) = names.split_last() else {
        return open_at(root.as_raw_fd(), Path::new("."), flags, mode);
    };
    let mut current: Option<OwnedFd> = None;
    for name in middle {
        let dir = current.as_ref().map_or(root.as_raw_fd(), |d| d.as_raw_fd());
        let next = open_at(
            dir,
            Path::new(name),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW,
            0,
        )
        .map_err(|e| symlink_means_escape(dir, name, e))?;
        current = Some(next);
    }
    let dir = current.as_ref().map_or(root.as_raw_fd(), |d| d.as_raw_fd());
    open_at(dir, Path::new(last), flags | libc::O_NOFOLLOW, mode)
        .map_err(|e| symlink_means_escape(dir, last, e))
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
    let root_bytes = root.path.as_os_str().as_bytes();
    let below = lexically_below(root_bytes, raw.as_bytes())
        .ok_or_else(|| PathError::Escapes(input.into()))?;
    let (lexical, canonical) = walk_below_root(root, &below);
    if canonical {
        return Ok(lexical);
    }
    let real = resolve_existing_prefix(&lexical).map_err(|e| PathError::Unverifiable {
        path: input.into(),
        reason: e.to_string(),
    })?;
    if !real.starts_with(&root.path) {
        return Err(PathError::Escapes(input.into()));
    }
    Ok(real)
}

/// The components of `input` (absolute, or relative to `root`) below `root`, with `.`
/// removed and `..` resolved lexically; `None` when the result is not inside `root`
/// or `..` climbs above `/`. Works on bytes: it runs for every path argument.
fn lexically_below<'a>(root: &'a [u8], input: &'a [u8]) -> Option<Vec<&'a [u8]>> {
    fn segments(path: &[u8]) -> impl Iterator<Item = &[u8]> {
        path.split(|&b| b == b'/').filter(|s| !s.is_empty())
    }
    let mut parts: Vec<&[u8]> = Vec::with_capacity(16);
    if input.first() != Some(&b'/') {
        parts.extend(segments(root));
    }
    for segment in segments(input) {
        match segment {
            b"." => {}
            b".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    let depth = segments(root).count();
    let inside = parts.len() >= depth && parts.iter().zip(segments(root)).all(|(a, b)| *a == b);
    inside.then(|| parts.split_off(depth))
}

/// How far the walk below the root got.
enum Walk {
    /// Every component so far exists and is plain.
    Plain,
    /// A component does not exist: nothing after it can be a symlink.
    Missing,
    /// A symlink, an I/O error (a file mid-path gives ENOTDIR) or a moved root:
    /// canonicalise.
    Unusual,
}

/// Builds the lexical path from the root and `below`, and tells whether it already is
/// the canonical path: the root still is the directory that was opened and no
/// existing component below it is a symlink.
fn walk_below_root(root: &Root, below: &[&[u8]]) -> (PathBuf, bool) {
    let mut path = root.path.as_os_str().as_bytes().to_vec();
    path.reserve(below.iter().map(|c| c.len() + 1).sum());
    let mut walk = if root.unchanged() {
        Walk::Plain
    } else {
        Walk::Unusual
    };
    for component in below {
        if path.last() != Some(&b'/') {
            path.push(b'/');
        }
        path.extend_from_slice(component);
        if let Walk::Plain = walk {
            // A file mid-path needs no case of its own: the next lstat fails with
            // ENOTDIR, which is Unusual.
            walk = match Path::new(OsStr::from_bytes(&path)).symlink_metadata() {
                Ok(meta) if meta.file_type().is_symlink() => Walk::Unusual,
                Ok(_) => Walk::Plain,
                Err(e) if e.kind() == io::ErrorKind::NotFound => Walk::Missing,
                Err(_) => Walk::Unusual,
            };
        }
    }
    let canonical = !matches!(walk, Walk::Unusual);
    (PathBuf::from(OsString::from_vec(path)), canonical)
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
        // Paths go to the editor as text: no doubled slash under a root of `/`.
        let top = Root::open(Path::new("/")).unwrap();
        assert_eq!(resolve(&top, "tmp").unwrap().as_os_str(), "/tmp");
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

    /// The previous algorithm, kept as the reference: join, normalise lexically,
    /// check containment, canonicalise the longest existing prefix, check again.
    fn canonicalising(root: &Path, input: &str) -> Result<PathBuf, PathError> {
        let escapes = || PathError::Escapes(input.into());
        let lexical = normalize_lexically(&root.join(input)).ok_or_else(escapes)?;
        if !lexical.starts_with(root) {
            return Err(escapes());
        }
        match resolve_existing_prefix(&lexical) {
            Ok(real) if real.starts_with(root) => Ok(real),
            Ok(_) => Err(escapes()),
            Err(e) => Err(PathError::Unverifiable {
                path: input.into(),
                reason: e.to_string(),
            }),
        }
    }

    /// The lexical pass and the walk below the root must give exactly what
    /// canonicalising gives, for every combination of awkward segments.
    #[test]
    fn walk_agrees_with_canonicalising() {
        let (tmp, ws) = setup();
        let root = ws.path();
        std::fs::create_dir_all(root.join("lib/inner")).unwrap();
        std::fs::create_dir_all(tmp.path().join("ws2")).unwrap();
        symlink(root.join("lib"), root.join("link")).unwrap();
        symlink("inner", root.join("lib/rel")).unwrap();
        symlink(tmp.path(), root.join("lib/out")).unwrap();
        symlink("/nonexistent/target", root.join("dangling")).unwrap();
        let names = [
            "src", "a.rs", ".", "..", "", "link", "lib", "inner", "rel", "out", "missing", "ws",
            "ws2", "dangling",
        ];
        let mut inputs = Vec::new();
        for a in names {
            inputs.push(a.to_string());
            for b in names {
                inputs.push(format!("{a}/{b}"));
                for c in names {
                    inputs.push(format!("{a}/{b}/{c}"));
                }
            }
        }
        let absolute: Vec<String> = inputs
            .iter()
            .map(|i| format!("{}/{i}", root.display()))
            .collect();
        let mut checked = 0;
        for input in inputs.iter().chain(&absolute).filter(|i| !i.is_empty()) {
            assert_eq!(resolve(&ws, input), canonicalising(root, input), "{input}");
            checked += 1;
        }
        assert!(checked > 5000, "{checked}");
        // A few answers spelled out.
        assert_eq!(
            resolve(&ws, "link/inner/new.rs").unwrap(),
            root.join("lib/inner/new.rs")
        );
        assert_eq!(
            resolve(&ws, "../ws/./src//a.rs").unwrap(),
            root.join("src/a.rs")
        );
        for escaping in ["lib/out/x", "../ws2/a", "/..", "src/../../ws2"] {
            assert!(
                matches!(resolve(&ws, escaping), Err(PathError::Escapes(_))),
                "{escaping}"
            );
        }
        let sibling = format!("{}2/a", root.display());
        assert!(matches!(resolve(&ws, &sibling), Err(PathError::Escapes(_))));
        assert!(matches!(
            resolve(&ws, "src/a.rs/below"),
            Err(PathError::Unverifiable { .. })
        ));
    }

    /// The byte-level lexical pass on its own.
    #[test]
    fn lexical_pass_keeps_components_below_the_root() {
        let below = |root: &str, input: &str| {
            lexically_below(root.as_bytes(), input.as_bytes()).map(|parts| {
                parts
                    .iter()
                    .map(|p| String::from_utf8_lossy(p).into_owned())
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            below("/w", "a/./b//c/"),
            Some(vec!["a".into(), "b".into(), "c".into()])
        );
        assert_eq!(below("/w", "/w/a/../b"), Some(vec!["b".into()]));
        assert_eq!(below("/w", "."), Some(vec![]));
        assert_eq!(below("/w", "/wx/a"), None);
        assert_eq!(below("/w", "/"), None);
        assert_eq!(below("/w", "/../w/a"), None);
        assert_eq!(below("/", "/a"), Some(vec!["a".into()]));
        assert_eq!(below("/", ".."), None);
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
