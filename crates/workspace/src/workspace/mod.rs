//! The workspace root and confinement of every path a tool is given.

pub mod change;
mod confine;
pub mod edit;
pub mod files;
mod language;
pub mod search;
pub mod tree;

pub use confine::{is_escape, normalize_lexically, stat_at, PathError, Root};
pub use language::language_id;

use std::path::{Path, PathBuf};

/// The workspace a bridge serves: a canonical, existing directory.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: Root,
    /// What answers say about the root, worked out once (the root never changes).
    labels: std::sync::Arc<RootLabels>,
}

/// The root's name, text and URL.
#[derive(Debug)]
struct RootLabels {
    name: String,
    text: String,
    url: String,
}

impl Workspace {
    /// Canonicalises `root`, which must be an existing directory.
    pub fn open(root: &Path) -> std::io::Result<Self> {
        let root = Root::open(root)?;
        let path = root.path();
        let text = path.to_string_lossy().into_owned();
        let labels = RootLabels {
            name: path
                .file_name()
                .map_or_else(|| text.clone(), |n| n.to_string_lossy().into_owned()),
            url: file_url(path),
            text,
        };
        Ok(Self {
            root,
            labels: std::sync::Arc::new(labels),
        })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The root with its directory handle: open files beneath it
    /// ([`Root::open_beneath`]), never by path.
    pub fn dir(&self) -> &Root {
        &self.root
    }

    /// The root's display name: its last component (the whole root for `/`).
    pub fn name(&self) -> &str {
        &self.labels.name
    }

    /// The root as text (bytes that are not UTF-8 replaced by U+FFFD).
    pub fn root_text(&self) -> &str {
        &self.labels.text
    }

    /// The root's `file://` URL ([`file_url`]).
    pub fn root_url(&self) -> &str {
        &self.labels.url
    }

    /// Resolves a tool-supplied path (relative to the root, absolute, or `file://`)
    /// to a path inside the workspace, following symlinks of the target or its
    /// nearest existing parent. Fails closed.
    pub fn resolve(&self, input: &str) -> Result<PathBuf, PathError> {
        confine::resolve(&self.root, input)
    }

    /// The workspace-relative form of `input` (absolute, relative to the root, or
    /// `file://`), resolved and confined as [`Workspace::resolve`] does; `None` when it
    /// is outside the workspace or is the root itself.
    pub fn relative(&self, input: &str) -> Option<String> {
        let abs = self.resolve(input).ok()?;
        let rel = abs.strip_prefix(self.root()).ok()?.to_string_lossy();
        (!rel.is_empty()).then(|| rel.into_owned())
    }
}

/// True for a repository's own files: a path (relative to the workspace) that is
/// `.git` or inside one, of this workspace or of a repository nested in it. Changing
/// them changes history or configuration, and a hook or `core.fsmonitor` written there
/// runs on the next git command, outside every sandbox.
pub fn in_git_internals(rel: &Path) -> bool {
    rel.components().any(|c| c.as_os_str() == ".git")
}

/// `file://` URL of an absolute path (percent-encoding what a URL cannot hold; bytes
/// that are not UTF-8 are taken as U+FFFD first).
pub fn file_url(path: &Path) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let keep = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b'~');
    let text = path.to_string_lossy();
    let text = text.as_bytes();
    let mut out = Vec::with_capacity("file://".len() + text.len());
    out.extend_from_slice(b"file://");
    let mut rest = text;
    while let Some(at) = rest.iter().position(|b| !keep(b)) {
        out.extend_from_slice(&rest[..at]);
        let b = rest[at];
        out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        rest = &rest[at + 1..];
    }
    out.extend_from_slice(rest);
    String::from_utf8(out).expect("kept bytes are ASCII, the rest percent-encoded")
}

#[cfg(test)]
mod url_tests {
    use super::file_url;
    use std::path::Path;

    #[test]
    fn the_roots_labels_are_its_name_text_and_url() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("my ws");
        std::fs::create_dir(&root).unwrap();
        let ws = super::Workspace::open(&root).unwrap();
        assert_eq!(ws.name(), "my ws");
        assert_eq!(ws.root_text(), ws.root().to_str().unwrap());
        assert_eq!(ws.root_url(), file_url(ws.root()));
        assert!(ws.root_url().ends_with("/my%20ws"), "{}", ws.root_url());
        let top = super::Workspace::open(Path::new("/")).unwrap();
        assert_eq!((top.name(), top.root_url()), ("/", "file:///"));
    }

    #[test]
    fn a_file_url_keeps_unreserved_bytes_and_percent_encodes_the_rest() {
        assert_eq!(file_url(Path::new("/a/b-c_d.e~f")), "file:///a/b-c_d.e~f");
        assert_eq!(
            file_url(Path::new("/my dir/x%y#z?é")),
            "file:///my%20dir/x%25y%23z%3F%C3%A9"
        );
        assert_eq!(file_url(Path::new("/%")), "file:///%25");
        assert_eq!(file_url(Path::new("")), "file://");
        use std::os::unix::ffi::OsStrExt;
        let not_utf8 = Path::new(std::ffi::OsStr::from_bytes(b"/a\xffb"));
        assert_eq!(file_url(not_utf8), "file:///a%EF%BF%BDb");
    }
}
