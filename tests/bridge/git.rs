//! Git tools through the git CLI.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::harness::*;

async fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

async fn init_repo(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]).await;
    git(dir, &["config", "user.name", "Test"]).await;
    git(dir, &["config", "user.email", "test@example.com"]).await;
    git(dir, &["add", "."]).await;
    git(dir, &["commit", "-q", "-m", "initial"]).await;
}

/// A repository without commits yet has an empty log, not git's error.
#[tokio::test]
async fn a_repository_without_commits_has_an_empty_log() {
    let bridge = Bridge::launch(Options::default()).await;
    git(&bridge.workspace, &["init", "-q", "-b", "main"]).await;
    let mut agent = bridge.ready_agent().await;
    let log = agent.call("gitLog", json!({})).await;
    assert!(!is_error(&log), "{log}");
    assert_eq!(json_text(&log)["commits"], json!([]));
    // A revision that does not exist is still git's error.
    let bad = agent.call("gitLog", json!({"ref": "main"})).await;
    assert!(is_error(&bad), "{bad}");
    // Blame says what is missing, not git's "fatal: no such ref: HEAD".
    std::fs::write(bridge.workspace.join("new.txt"), "new\n").unwrap();
    let blame = agent.call("gitBlame", json!({"filePath": "new.txt"})).await;
    assert!(is_error(&blame), "{blame}");
    assert!(
        text(&blame).starts_with("The repository has no commits yet: git blame"),
        "{blame}"
    );
}

#[tokio::test]
async fn outside_a_repository_the_error_is_clear() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    let r = agent.call("gitStatus", json!({})).await;
    assert!(is_error(&r));
    assert!(text(&r).starts_with("Not a git repository"), "{r}");
}

#[tokio::test]
async fn status_add_commit_log_diff_show_blame_branches() {
    let bridge = Bridge::launch(Options::default()).await;
    init_repo(&bridge.workspace).await;
    let mut agent = bridge.ready_agent().await;
    let clean = json_text(&agent.call("gitStatus", json!({})).await);
    assert_eq!(clean["clean"], true);
    assert!(clean["branch"].as_str().unwrap().starts_with("main"));

    std::fs::write(bridge.workspace.join("new.txt"), "one\n").unwrap();
    std::fs::write(bridge.workspace.join("README.md"), "# changed\n").unwrap();
    let dirty = json_text(&agent.call("gitStatus", json!({})).await);
    let files = dirty["files"].as_array().unwrap();
    assert!(
        files
            .iter()
            .any(|f| f["path"] == "new.txt" && f["worktree"] == "?"),
        "{dirty}"
    );
    assert!(files
        .iter()
        .any(|f| f["path"] == "README.md" && f["worktree"] == "M"));

    let diff = agent.call("gitDiff", json!({})).await;
    assert!(text(&diff).contains("+# changed"), "{diff}");
    agent
        .call("gitAdd", json!({"paths": ["new.txt", "README.md"]}))
        .await;
    let staged = agent
        .call("gitDiff", json!({"staged": true, "path": "new.txt"}))
        .await;
    assert!(text(&staged).contains("+one"));
    assert_eq!(
        text(&agent.call("gitDiff", json!({})).await),
        "No differences."
    );

    arguments_refused(&agent.call_raw("gitCommit", json!({"message": ""})).await);
    let blank = agent.call("gitCommit", json!({"message": "   "})).await;
    assert_eq!(text(&blank), "A commit message is required");
    let commit = json_text(
        &agent
            .call("gitCommit", json!({"message": "second: add new.txt"}))
            .await,
    );
    let hash = commit["commit"].as_str().unwrap().to_string();
    assert_eq!(hash.len(), 40);

    let log = json_text(&agent.call("gitLog", json!({"maxCount": 5})).await);
    let commits = log["commits"].as_array().unwrap();
    assert_eq!(
        (commits.len(), commits[0]["hash"].as_str()),
        (2, Some(hash.as_str()))
    );
    assert_eq!(commits[0]["subject"], "second: add new.txt");
    let between = agent
        .call("gitDiff", json!({"from": "HEAD~1", "to": "HEAD"}))
        .await;
    assert!(text(&between).contains("new.txt"));
    let show = agent.call("gitShow", json!({"ref": "HEAD"})).await;
    assert!(text(&show).contains("second: add new.txt") && text(&show).contains("+one"));
    let blame = agent
        .call(
            "gitBlame",
            json!({"filePath": "src/main.rs", "startLine": 1, "endLine": 1}),
        )
        .await;
    assert!(
        text(&blame).contains("Test") && text(&blame).contains("fn main()"),
        "{blame}"
    );
    let branches = json_text(&agent.call("gitBranches", json!({})).await);
    assert_eq!(branches["current"], "main");
    // A detached HEAD is on no branch: no current one, and not listed as one.
    git(&bridge.workspace, &["checkout", "-q", "--detach"]).await;
    let detached = json_text(&agent.call("gitBranches", json!({})).await);
    assert_eq!(detached["current"], Value::Null, "{detached}");
    assert_eq!(detached["branches"], json!(["main"]), "{detached}");
    git(&bridge.workspace, &["checkout", "-q", "main"]).await;

    for bad in [
        json!({"from": "--output=/tmp/x"}),
        json!({"from": "-p"}),
        json!({"to": "a b"}),
    ] {
        let r = agent.call("gitDiff", bad.clone()).await;
        assert!(
            is_error(&r) && text(&r).starts_with("Invalid revision"),
            "{bad}: {r}"
        );
    }
    assert!(text(&agent.call("gitShow", json!({"ref": "--help"})).await)
        .starts_with("Invalid revision"));
    arguments_refused(&agent.call_raw("gitAdd", json!({"paths": []})).await);
    arguments_refused(&agent.call_raw("gitLog", json!({"maxCount": 0})).await);
    arguments_refused(&agent.call_raw("gitBlame", json!({})).await);
}

#[tokio::test]
async fn push_is_off_by_default_and_guards_main() {
    let remote = tempfile::tempdir().unwrap();
    git(remote.path(), &["init", "-q", "--bare"]).await;
    let url = remote.path().display().to_string();

    let bridge = Bridge::launch(Options::default()).await;
    init_repo(&bridge.workspace).await;
    git(&bridge.workspace, &["remote", "add", "origin", &url]).await;
    let mut agent = bridge.ready_agent().await;
    let off = agent.call("gitPush", json!({})).await;
    assert!(text(&off).starts_with("Push is disabled"), "{off}");
    drop(agent);
    drop(bridge);

    let bridge = Bridge::launch(Options::default().set("git.allow_push", true)).await;
    init_repo(&bridge.workspace).await;
    git(&bridge.workspace, &["remote", "add", "origin", &url]).await;
    let mut agent = bridge.ready_agent().await;
    let main = agent.call("gitPush", json!({})).await;
    assert!(text(&main).starts_with("Push to main refused"), "{main}");
    git(&bridge.workspace, &["checkout", "-q", "-b", "feature"]).await;
    let pushed = agent.call("gitPush", json!({"force": true})).await;
    assert!(!is_error(&pushed), "{pushed}");
    let refs = tokio::process::Command::new("git")
        .args(["branch", "--list"])
        .current_dir(remote.path())
        .output()
        .await
        .unwrap();
    assert!(String::from_utf8_lossy(&refs.stdout).contains("feature"));
    let bad = agent
        .call("gitPush", json!({"remote": "--receive-pack=evil"}))
        .await;
    assert!(text(&bad).starts_with("Invalid remote"));
}

#[tokio::test]
async fn a_workspace_inside_a_larger_repository_exposes_nothing_above_it() {
    let place = Place::new();
    // The outer repository is the workspace's parent; the workspace has no .git.
    let outer = place.workspace.parent().unwrap().to_path_buf();
    std::fs::write(outer.join("secret.txt"), "TOPSECRET\n").unwrap();
    std::fs::write(place.workspace.join("inside.txt"), "inside\n").unwrap();
    git(&outer, &["init", "-q", "-b", "main"]).await;
    git(&outer, &["config", "user.name", "Test"]).await;
    git(&outer, &["config", "user.email", "test@example.com"]).await;
    git(&outer, &["add", "secret.txt", "workspace/inside.txt"]).await;
    git(&outer, &["commit", "-q", "-m", "outer"]).await;
    std::fs::write(outer.join("secret.txt"), "TOPSECRET changed\n").unwrap();
    std::fs::write(outer.join("unstaged.txt"), "x\n").unwrap();
    let bridge = Bridge::launch(place.options()).await;
    let mut agent = bridge.ready_agent().await;
    let calls = [
        ("gitStatus", json!({})),
        ("gitShow", json!({"ref": "HEAD:secret.txt"})),
        ("gitShow", json!({"ref": "HEAD"})),
        ("gitDiff", json!({})),
        ("gitDiff", json!({"from": "HEAD"})),
        ("gitLog", json!({})),
        ("gitBranches", json!({})),
        ("gitBlame", json!({"filePath": "inside.txt"})),
        ("gitAdd", json!({"paths": [":(top)unstaged.txt"]})),
        ("gitAdd", json!({"paths": [":/unstaged.txt"]})),
        ("gitAdd", json!({"paths": ["inside.txt"]})),
        ("gitCommit", json!({"message": "x", "all": true})),
    ];
    for (tool, args) in calls {
        let result = agent.call_raw(tool, args.clone()).await;
        let shown = result.to_string();
        assert!(!shown.contains("TOPSECRET"), "{tool} {args}: {shown}");
        assert!(!shown.contains("secret.txt") || shown.contains("HEAD:secret.txt"));
        assert!(is_error(&result["result"]), "{tool} {args}: {shown}");
    }
    // Nothing was staged or committed in the outer repository.
    let staged = tokio::process::Command::new("git")
        .args(["diff", "--cached", "--name-only"])
        .current_dir(&outer)
        .output()
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&staged.stdout), "");
    let log = tokio::process::Command::new("git")
        .args(["rev-list", "--count", "HEAD"])
        .current_dir(&outer)
        .output()
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&log.stdout).trim(), "1");
}

#[tokio::test]
async fn pathspec_magic_is_refused_inside_the_workspace_repository() {
    let bridge = Bridge::launch(Options::default()).await;
    init_repo(&bridge.workspace).await;
    std::fs::write(bridge.workspace.join("a.txt"), "a\n").unwrap();
    let mut agent = bridge.ready_agent().await;
    for magic in [":(top)a.txt", ":/a.txt", ":!README.md", ":(glob)*.txt"] {
        let r = agent.call("gitAdd", json!({"paths": [magic]})).await;
        assert!(is_error(&r), "{magic}: {r}");
        assert!(text(&r).contains("Pathspec magic is not allowed"), "{r}");
    }
    // A plain path still works, and a glob character is taken literally.
    let ok = agent.call("gitAdd", json!({"paths": ["a.txt"]})).await;
    assert!(!is_error(&ok), "{ok}");
    let star = agent.call("gitAdd", json!({"paths": ["*.md"]})).await;
    assert!(is_error(&star), "a literal `*.md` matches no file: {star}");
}

#[tokio::test]
async fn repository_config_cannot_make_git_tools_run_programs() {
    let bridge = Bridge::launch(Options::default()).await;
    init_repo(&bridge.workspace).await;
    let sentinel_dir = tempfile::tempdir().unwrap();
    let sentinel = sentinel_dir.path().join("ran");
    // What an agent could write with createFile: a hook and config keys that run code.
    let hooks = bridge.workspace.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in [
        "pre-commit",
        "commit-msg",
        "post-commit",
        "post-index-change",
    ] {
        let path = hooks.join(hook);
        std::fs::write(&path, format!("#!/bin/sh\ntouch {}\n", sentinel.display())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let touch = format!("touch {}", sentinel.display());
    git(&bridge.workspace, &["config", "core.fsmonitor", &touch]).await;
    git(&bridge.workspace, &["config", "commit.gpgSign", "true"]).await;
    git(&bridge.workspace, &["config", "gpg.program", &touch]).await;
    git(&bridge.workspace, &["config", "core.pager", &touch]).await;
    git(&bridge.workspace, &["config", "diff.external", &touch]).await;
    git(&bridge.workspace, &["config", "diff.evil.textconv", &touch]).await;
    std::fs::write(bridge.workspace.join(".gitattributes"), "*.md diff=evil\n").unwrap();
    std::fs::write(bridge.workspace.join("README.md"), "# changed\n").unwrap();
    std::fs::write(bridge.workspace.join("b.txt"), "b\n").unwrap();
    let mut agent = bridge.ready_agent().await;
    let status = agent.call("gitStatus", json!({})).await;
    assert!(!is_error(&status), "{status}");
    agent.call("gitAdd", json!({"paths": ["b.txt"]})).await;
    let commit = agent.call("gitCommit", json!({"message": "b"})).await;
    assert!(!is_error(&commit), "{commit}");
    agent.call("gitLog", json!({})).await;
    for (tool, args) in [
        ("gitDiff", json!({"from": "HEAD~1"})),
        ("gitDiff", json!({})),
        ("gitShow", json!({"ref": "HEAD~1"})),
        ("gitShow", json!({"ref": "HEAD:README.md"})),
    ] {
        let r = agent.call(tool, args.clone()).await;
        assert!(!is_error(&r), "{tool} {args}: {r}");
    }
    assert!(
        !sentinel.exists(),
        "a git tool ran a program from the repository config"
    );
}

/// Issue 17, item 5: a filter driver in the repository's configuration (which the
/// agent can write with createFile) runs under the git tools' Landlock sandbox: it
/// may write in the workspace but not outside it.
#[tokio::test]
async fn a_filter_driver_run_by_git_add_cannot_write_outside() {
    let bridge = Bridge::launch(Options::default()).await;
    init_repo(&bridge.workspace).await;
    let outside = tempfile::tempdir().unwrap();
    let sentinel = outside.path().join("sentinel");
    let inside = bridge.workspace.join("filter-ran");
    let clean = format!(
        "touch {}; touch {}; cat",
        inside.display(),
        sentinel.display()
    );
    git(&bridge.workspace, &["config", "filter.x.clean", &clean]).await;
    std::fs::write(bridge.workspace.join(".gitattributes"), "*.txt filter=x\n").unwrap();
    std::fs::write(bridge.workspace.join("a.txt"), "a\n").unwrap();
    let mut agent = bridge.ready_agent().await;
    let added = agent.call("gitAdd", json!({"paths": ["a.txt"]})).await;
    assert!(inside.exists(), "the filter did not run: {added}");
    assert!(!sentinel.exists(), "the filter wrote outside: {added}");
}
