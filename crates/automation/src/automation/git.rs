//! What automation reads of the workspace's repository to tell a commit from a branch
//! switch when git's refs change: the current branch and commit.

use std::path::Path;
use std::time::Duration;

use ide_bridge_workspace::exec::{self, RunSpec};

/// How long one read of the repository may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The checked-out state of the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The branch, or `HEAD` when detached.
    pub branch: String,
    /// The commit checked out.
    pub commit: String,
    /// Its parents.
    pub parents: Vec<String>,
    /// Its subject line.
    pub subject: String,
}

/// What moved between two reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Moved {
    /// A commit on the same branch whose parent is the previous commit.
    Commit,
    /// Another branch is checked out.
    BranchSwitch {
        /// The branch before.
        previous: String,
    },
    /// Nothing a hook waits for (same commit, or a reset, rebase or pull).
    Other,
}

impl Head {
    /// What changed from `before` to `self`.
    pub fn moved_from(&self, before: &Head) -> Moved {
        if self.branch != before.branch {
            Moved::BranchSwitch {
                previous: before.branch.clone(),
            }
        } else if self.commit != before.commit && self.parents.contains(&before.commit) {
            Moved::Commit
        } else {
            Moved::Other
        }
    }
}

/// Reads the repository at `root` (`None` when it is not one or has no commit yet).
pub async fn read_head(root: &Path) -> Option<Head> {
    let branch = git(root, &["rev-parse", "--abbrev-ref", "HEAD"]).await?;
    let log = git(root, &["log", "-1", "--format=%H%n%P%n%s"]).await?;
    let mut lines = log.lines();
    let commit = lines.next()?.trim().to_string();
    let parents = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    Some(Head {
        branch: branch.trim().to_string(),
        commit,
        parents,
        subject: lines.next().unwrap_or_default().to_string(),
    })
}

async fn git(root: &Path, args: &[&str]) -> Option<String> {
    let (args, env) = exec::git::hardened(root, args.iter().map(|a| a.to_string()).collect());
    let spec = RunSpec {
        program: "git".into(),
        args,
        cwd: root.to_path_buf(),
        timeout: TIMEOUT,
        max_output: 64 * 1024,
        env,
        // As every git tool: reads here, writes nowhere else.
        sandbox: Some(exec::sandbox::Sandbox {
            writable: vec![root.to_path_buf()],
            network: false,
        }),
    };
    match exec::run(spec).await {
        Ok(out) if out.exit_code == Some(0) => Some(out.stdout),
        Ok(_) => None,
        Err(e) => {
            tracing::debug!(error = %e, "cannot read the repository's HEAD");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(branch: &str, commit: &str, parents: &[&str]) -> Head {
        Head {
            branch: branch.into(),
            commit: commit.into(),
            parents: parents.iter().map(|p| p.to_string()).collect(),
            subject: "s".into(),
        }
    }

    #[test]
    fn a_child_on_the_same_branch_is_a_commit_and_other_moves_are_not() {
        let a = head("main", "a", &[]);
        assert_eq!(head("main", "b", &["a"]).moved_from(&a), Moved::Commit);
        assert_eq!(head("main", "a", &[]).moved_from(&a), Moved::Other);
        // A reset to an unrelated commit.
        assert_eq!(head("main", "z", &["y"]).moved_from(&a), Moved::Other);
        assert_eq!(
            head("topic", "a", &[]).moved_from(&a),
            Moved::BranchSwitch {
                previous: "main".into()
            }
        );
    }

    #[actix_rt::test]
    async fn reads_a_real_repository() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let run = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .args(args)
                .current_dir(root)
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@t")
                .status()
                .unwrap()
                .success();
            assert!(ok, "git {args:?}");
        };
        run(&["init", "-q", "-b", "main"]);
        assert_eq!(read_head(root).await, None, "no commit yet");
        run(&["commit", "-q", "--allow-empty", "-m", "first"]);
        let first = read_head(root).await.unwrap();
        assert_eq!(
            (first.branch.as_str(), first.subject.as_str()),
            ("main", "first")
        );
        run(&["commit", "-q", "--allow-empty", "-m", "second"]);
        let second = read_head(root).await.unwrap();
        assert_eq!(second.moved_from(&first), Moved::Commit);
    }
}
