//! Hostile inputs: path escapes (`..`, absolute, `file://`, symlinks, dangling links,
//! hard links, NUL bytes) against every path-taking tool, and command injections.
//! Each case asserts the exact refusal; afterwards nothing outside the workspace has
//! changed.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::harness::*;

/// Every file below `dir` with its content (the "outside" the bridge must not touch).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                out.insert(p.clone(), b"<dir>".to_vec());
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

/// Tool calls that take a path, with the hostile path substituted for `P`.
fn path_tools(p: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("readFile", json!({"filePath": p})),
        ("openFile", json!({"filePath": p})),
        (
            "createFile",
            json!({"filePath": p, "content": "pwned", "overwrite": true}),
        ),
        ("deleteFile", json!({"filePath": p, "recursive": true})),
        (
            "renameFile",
            json!({"oldPath": p, "newPath": "moved.txt", "overwrite": true}),
        ),
        (
            "renameFile",
            json!({"oldPath": "README.md", "newPath": p, "overwrite": true}),
        ),
        (
            "editText",
            json!({"filePath": p, "edits": [{"type": "insert", "line": 1, "column": 1, "text": "pwned"}]}),
        ),
        (
            "replaceBlock",
            json!({"filePath": p, "oldContent": "secret", "newContent": "pwned"}),
        ),
        ("getFileTree", json!({"path": p})),
        ("findFiles", json!({"pattern": "*", "path": p})),
        ("searchWorkspace", json!({"query": "secret", "path": p})),
        ("gitBlame", json!({"filePath": p})),
        ("gitAdd", json!({"paths": [p]})),
        ("gitDiff", json!({"path": p})),
        (
            "runCommand",
            json!({"command": "git", "args": ["status"], "cwd": p}),
        ),
    ]
}

#[tokio::test]
async fn hostile_paths_are_refused_by_every_tool_and_nothing_outside_changes() {
    // More than 200 calls on one connection: raise the request rate limit.
    let bridge = Bridge::launch(Options::default().set("rate_limit.requests", 1000)).await;
    let ws = bridge.workspace.clone();
    let outside = ws.parent().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret data\n").unwrap();
    std::fs::write(outside.join("linked.txt"), "secret linked\n").unwrap();
    symlink(&outside, ws.join("link_out")).unwrap();
    symlink(outside.join("secret.txt"), ws.join("link_file")).unwrap();
    symlink(outside.join("nonexistent"), ws.join("dangling")).unwrap();
    std::fs::hard_link(outside.join("linked.txt"), ws.join("hardlink.txt")).unwrap();
    let before = snapshot(&outside);
    let secret = outside.join("secret.txt").display().to_string();

    let escapes = "Path escapes workspace";
    let paths: Vec<(String, &str)> = vec![
        ("../outside/secret.txt".into(), escapes),
        ("../../etc/passwd".into(), escapes),
        ("/etc/passwd".into(), escapes),
        (secret.clone(), escapes),
        ("src/../../outside/secret.txt".into(), escapes),
        (format!("file://{secret}"), escapes),
        ("file://../outside/secret.txt".into(), escapes),
        ("/".into(), escapes),
        ("..".into(), escapes),
        ("link_out/secret.txt".into(), escapes),
        ("link_out".into(), escapes),
        ("link_file".into(), escapes),
        ("dangling".into(), "Cannot verify path"),
        ("a\u{0}b".into(), "Path contains a null byte"),
    ];
    let mut agent = bridge.ready_agent().await;
    let mut checked = 0;
    let mut failures = Vec::new();
    for (path, expected) in &paths {
        for (tool, args) in path_tools(path) {
            let result = agent.call(tool, args.clone()).await;
            let ok = is_error(&result) && text(&result).starts_with(expected);
            if !ok {
                failures.push(format!("{tool} {args}: {result}"));
            }
            checked += 1;
        }
    }
    // Writing through a hard link would change the file outside: refused. Reading is
    // allowed (the content is already reachable inside the workspace).
    for (tool, args) in [
        (
            "createFile",
            json!({"filePath": "hardlink.txt", "content": "pwned", "overwrite": true}),
        ),
        (
            "editText",
            json!({"filePath": "hardlink.txt", "edits": [{"type": "insert", "line": 1, "column": 1, "text": "pwned"}]}),
        ),
        (
            "replaceBlock",
            json!({"filePath": "hardlink.txt", "oldContent": "secret", "newContent": "pwned"}),
        ),
        (
            "renameFile",
            json!({"oldPath": "README.md", "newPath": "hardlink.txt", "overwrite": true}),
        ),
    ] {
        let result = agent.call(tool, args.clone()).await;
        if !(is_error(&result) && text(&result).starts_with("hardlink write denied")) {
            failures.push(format!("{tool} {args}: {result}"));
        }
        checked += 1;
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} cases not refused as expected:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= 200, "{checked} hostile path cases");
    assert_eq!(
        snapshot(&outside),
        before,
        "nothing outside the workspace changed"
    );
    assert!(
        ws.join("README.md").exists(),
        "the workspace itself is intact"
    );
}

#[tokio::test]
async fn hostile_commands_are_refused_with_the_exact_reason() {
    let bridge = Bridge::launch(Options::default()).await;
    let canary = bridge.workspace.parent().unwrap().join("pwned");
    let c = canary.display().to_string();
    let cases: Vec<(&str, Vec<String>, String)> = vec![
        (
            "sh",
            vec!["-c".into(), format!("touch {c}")],
            r#"Command not allowed: "sh" is never allowed: shells, interpreters"#.into(),
        ),
        (
            "bash",
            vec![],
            r#"Command not allowed: "bash" is never allowed: shells, interpreters"#.into(),
        ),
        ("zsh", vec![], "is never allowed".into()),
        (
            "python3",
            vec!["-c".into(), "print(1)".into()],
            "is never allowed".into(),
        ),
        ("perl", vec![], "is never allowed".into()),
        ("node", vec![], "is never allowed".into()),
        (
            "env",
            vec!["touch".into(), c.clone()],
            "is never allowed".into(),
        ),
        ("xargs", vec![], "is never allowed".into()),
        ("sudo", vec![], "is never allowed".into()),
        ("awk", vec![], "is never allowed".into()),
        (
            "/bin/sh",
            vec![],
            r#"Command must be a bare program name (no path): "/bin/sh""#.into(),
        ),
        ("./script.sh", vec![], "bare program name".into()),
        ("git status; touch x", vec![], "bare program name".into()),
        (
            "touch",
            vec![c.clone()],
            r#"Command not in allowlist: "touch""#.into(),
        ),
        (
            "rm",
            vec!["-rf".into(), "/".into()],
            "Command not in allowlist".into(),
        ),
        ("curl", vec![], "is never allowed".into()),
        (
            "git",
            vec!["-c".into(), format!("core.pager=touch {c}"), "log".into()],
            r#"Flag blocked: "-c""#.into(),
        ),
        (
            "git",
            vec![format!("-ccore.pager=touch {c}"), "log".into()],
            "Flag blocked".into(),
        ),
        (
            "git",
            vec!["--exec-path=/tmp".into(), "status".into()],
            "Flag blocked".into(),
        ),
        (
            "git",
            vec!["-C".into(), "/".into(), "status".into()],
            "Flag blocked".into(),
        ),
        (
            "git",
            vec!["--git-dir=/tmp/x".into(), "status".into()],
            "Flag blocked".into(),
        ),
        (
            "git",
            vec!["fetch".into(), "--upload-pack=touch x".into()],
            "Flag blocked".into(),
        ),
        (
            "git",
            vec!["rebase".into(), "-x".into(), "touch x".into()],
            "Flag blocked".into(),
        ),
        (
            "cargo",
            vec!["--config".into(), "build.rustc='x'".into(), "build".into()],
            "Flag blocked".into(),
        ),
        (
            "npm",
            vec!["--prefix=/".into(), "test".into()],
            "Flag blocked".into(),
        ),
        (
            "git",
            vec!["config".into(), "core.sshCommand".into(), "touch x".into()],
            "Subcommand blocked: git config".into(),
        ),
        (
            "git",
            vec!["submodule".into(), "foreach".into(), "touch x".into()],
            "Subcommand blocked".into(),
        ),
        (
            "cargo",
            vec!["install".into(), "evil".into()],
            "Subcommand blocked: cargo install".into(),
        ),
        (
            "npm",
            vec!["exec".into(), "evil".into()],
            "Subcommand blocked".into(),
        ),
        (
            "npm",
            vec!["explore".into(), "x".into()],
            "Subcommand blocked".into(),
        ),
        (
            "git",
            vec!["log".into(), format!("$(touch {c})")],
            "Shell metacharacters are not allowed".into(),
        ),
        (
            "git",
            vec!["log".into(), format!("`touch {c}`")],
            "Shell metacharacters".into(),
        ),
        (
            "git",
            vec!["log".into(), "; touch x".into()],
            "Shell metacharacters".into(),
        ),
        (
            "git",
            vec!["log".into(), "a && b".into()],
            "Shell metacharacters".into(),
        ),
        (
            "git",
            vec!["log".into(), "a | b".into()],
            "Shell metacharacters".into(),
        ),
        (
            "git",
            vec!["log".into(), format!("x > {c}")],
            "Shell metacharacters".into(),
        ),
        (
            "git",
            vec!["log".into(), "a\ntouch x".into()],
            "Shell metacharacters".into(),
        ),
        (
            "git",
            vec!["log".into(), "${HOME}".into()],
            "Shell metacharacters".into(),
        ),
        (
            "git",
            vec!["add".into(), "/etc/passwd".into()],
            "Path escapes workspace: /etc/passwd".into(),
        ),
        (
            "git",
            vec!["add".into(), "../outside".into()],
            "Path escapes workspace".into(),
        ),
        (
            "git",
            vec!["add".into(), "~/.ssh".into()],
            "Path escapes workspace".into(),
        ),
        (
            "cargo",
            vec!["build".into(), "--manifest-path=/tmp/Cargo.toml".into()],
            "Path escapes workspace".into(),
        ),
        (
            "git",
            vec!["log".into(), "a\u{0}b".into()],
            "Arguments must not contain null bytes".into(),
        ),
    ];
    let mut agent = bridge.ready_agent().await;
    let mut failures = Vec::new();
    for (program, args, expected) in &cases {
        let result = agent
            .call("runCommand", json!({"command": program, "args": args}))
            .await;
        if !(is_error(&result) && text(&result).starts_with(expected.as_str())
            || text(&result).contains(expected.as_str()) && is_error(&result))
        {
            failures.push(format!("{program} {args:?}: {result}"));
        }
        let term = agent
            .call("runInTerminal", json!({"command": program, "args": args}))
            .await;
        if !is_error(&term) {
            failures.push(format!("runInTerminal {program} {args:?}: {term}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(cases.len() >= 40);
    assert!(!canary.exists(), "no injected command ran");
}

/// Ignore files that are FIFOs (which the walk would block on for good): the watcher
/// starts, and the tree, find and search tools answer, leaving out the directory whose
/// `.gitignore` is one; a glob nested deep enough to overflow the parser's stack is
/// refused by its length. The bridge goes on answering.
#[tokio::test]
async fn fifo_ignore_files_and_deeply_nested_globs_are_refused_not_waited_on() {
    let place = Place::new();
    std::fs::create_dir_all(place.workspace.join("sub")).unwrap();
    std::fs::write(place.workspace.join("sub/hidden.txt"), "needle\n").unwrap();
    std::fs::write(place.workspace.join("seen.txt"), "needle\n").unwrap();
    mkfifo(&place.workspace.join("sub/.gitignore"));
    mkfifo(&place.workspace.join(".ignore"));
    // A nested repository whose excludes file is one.
    std::fs::create_dir_all(place.workspace.join("nested/.git/info")).unwrap();
    std::fs::write(place.workspace.join("nested/inner.txt"), "needle\n").unwrap();
    mkfifo(&place.workspace.join("nested/.git/info/exclude"));
    let bridge = Bridge::launch(place.options().set("tools.timeout_ms", 5000)).await;
    bridge
        .wait_status("the watcher started", |s| {
            (s["watch"]["mode"] == "events").then_some(())
        })
        .await;
    let mut agent = bridge.ready_agent().await;
    let tree = agent.call("getFileTree", json!({})).await;
    assert!(!is_error(&tree), "{tree}");
    let listed = text(&tree);
    assert!(
        listed.contains("seen.txt") && !listed.contains("hidden.txt"),
        "{listed}"
    );
    let found = agent
        .call("findFiles", json!({"pattern": "**/*.txt"}))
        .await;
    assert!(
        !is_error(&found) && text(&found).contains("seen.txt"),
        "{found}"
    );
    let hits = agent
        .call("searchWorkspace", json!({"query": "needle"}))
        .await;
    assert!(
        !is_error(&hits) && text(&hits).contains("seen.txt"),
        "{hits}"
    );

    let nested = format!("{}{}", "{".repeat(10_000), "}".repeat(10_000));
    for (tool, args) in [
        ("findFiles", json!({"pattern": nested})),
        ("searchWorkspace", json!({"query": "x", "glob": nested})),
    ] {
        let r = agent.call(tool, args).await;
        assert!(
            is_error(&r) && text(&r).contains("the limit is 1024 bytes"),
            "{tool}: {r}"
        );
    }
    let (status, _) = bridge.get("/health");
    assert_eq!(status, 200);
}
