//! Git tools through the git CLI.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::harness::*;

fn git(dir: &Path, args: &[&str]) {
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

fn init_repo(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "Test"]);
    git(dir, &["config", "user.email", "test@example.com"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "initial"]);
}

#[tokio::test]
async fn outside_a_repository_the_error_is_clear() {
    let bridge = Bridge::start();
    let mut agent = bridge.ready_agent().await;
    let r = agent.call("gitStatus", json!({})).await;
    assert!(is_error(&r));
    assert!(text(&r).starts_with("Not a git repository"), "{r}");
}

#[tokio::test]
async fn status_add_commit_log_diff_show_blame_branches() {
    let bridge = Bridge::start();
    init_repo(&bridge.workspace);
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

    assert_eq!(
        error_code(&agent.call_raw("gitCommit", json!({"message": ""})).await),
        -32602
    );
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
    assert_eq!(
        error_code(&agent.call_raw("gitAdd", json!({"paths": []})).await),
        -32602
    );
    assert_eq!(
        error_code(&agent.call_raw("gitLog", json!({"maxCount": 0})).await),
        -32602
    );
    assert_eq!(
        error_code(&agent.call_raw("gitBlame", json!({})).await),
        -32602
    );
}

#[tokio::test]
async fn push_is_off_by_default_and_guards_main() {
    let remote = tempfile::tempdir().unwrap();
    git(remote.path(), &["init", "-q", "--bare"]);
    let url = remote.path().display().to_string();

    let bridge = Bridge::start();
    init_repo(&bridge.workspace);
    git(&bridge.workspace, &["remote", "add", "origin", &url]);
    let mut agent = bridge.ready_agent().await;
    let off = agent.call("gitPush", json!({})).await;
    assert!(text(&off).starts_with("Push is disabled"), "{off}");
    drop(agent);
    drop(bridge);

    let bridge = Bridge::start_with(Options::default().set("git.allow_push", true));
    init_repo(&bridge.workspace);
    git(&bridge.workspace, &["remote", "add", "origin", &url]);
    let mut agent = bridge.ready_agent().await;
    let main = agent.call("gitPush", json!({})).await;
    assert!(text(&main).starts_with("Push to main refused"), "{main}");
    git(&bridge.workspace, &["checkout", "-q", "-b", "feature"]);
    let pushed = agent.call("gitPush", json!({"force": true})).await;
    assert!(!is_error(&pushed), "{pushed}");
    let refs = Command::new("git")
        .args(["branch", "--list"])
        .current_dir(remote.path())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&refs.stdout).contains("feature"));
    let bad = agent
        .call("gitPush", json!({"remote": "--receive-pack=evil"}))
        .await;
    assert!(text(&bad).starts_with("Invalid remote"));
}
