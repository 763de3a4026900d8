//! Watching the workspace: which paths count ([`rules`]: the walker's ignore rules for
//! single paths), how a window's raw events become one change per path ([`pending`]),
//! the kernel's events ([`kernel`]), and polling when they cannot cover the tree
//! ([`poll`]). The Watcher actor (`actors::watcher`) drives them.

pub mod kernel;
pub mod pending;
pub mod poll;
pub mod rules;

/// Whether `rel` (workspace-relative, `/`-separated) is one of git's files that say
/// which commit is checked out: `HEAD`, `packed-refs` or a branch ref (lock files of
/// git's own writes are not).
pub fn is_git_ref(rel: &str) -> bool {
    let Some(inside) = rel.strip_prefix(".git/") else {
        return false;
    };
    !inside.ends_with(".lock")
        && (inside == "HEAD" || inside == "packed-refs" || inside.starts_with("refs/heads/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_refs_are_head_packed_refs_and_branches() {
        assert!(is_git_ref(".git/HEAD"));
        assert!(is_git_ref(".git/packed-refs"));
        assert!(is_git_ref(".git/refs/heads/topic/x"));
        assert!(!is_git_ref(".git/refs/heads/main.lock"));
        assert!(!is_git_ref(".git/index"));
        assert!(!is_git_ref(".git/objects/ab/cdef"));
        assert!(!is_git_ref("src/.git/HEAD"));
    }
}
