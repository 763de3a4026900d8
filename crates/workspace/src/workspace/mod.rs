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
}

impl Workspace {
    /// Canonicalises `root`, which must be an existing directory.
    pub fn open(root: &Path) -> std::io::Result<Self> {
        Ok(Self {
            root: Root::open(root)?,
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

    /// The root's display name (last component).
    pub fn name(&self) -> String {
        self.root()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.root().display().to_string())
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

/// `file://` URL of an absolute path (percent-encoding what a URL cannot hold).
pub fn file_url(path: &Path) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let text = path.to_string_lossy();
    let mut out = String::with_capacity("file://".len() + text.len());
    out.push_str("file://");
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => {
                out.push('%');
                out.push(HEX[usize::from(b >> 4)] as char);
                out.push(HEX[usize::from(b & 15)] as char);
            }
        }
    }
    out
}

#[cfg(test)]
mod url_tests {
    use super::file_url;
    use std::path::Path;

    #[test]
    fn a_file_url_keeps_unreserved_bytes_and_percent_encodes_the_rest() {
        assert_eq!(file_url(Path::new("/a/b-c_d.e~f")), "file:///a/b-c_d.e~f");
        assert_eq!(
            file_url(Path::new("/my dir/x%y#z?é")),
            "file:///my%20dir/x%25y%23z%3F%C3%A9"
        );
    }
}
