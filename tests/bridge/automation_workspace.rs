//! Automation without an editor, fed by the workspace itself, through the real binary:
//! files written on disk (and not ignored ones, and once per write), git commits and
//! branch switches, the bridge's own linters on a Rust crate, a storm of changes; and
//! with the editor simulator connected, its diagnostics winning over the linters'.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::automation_events::{hook, listening_agent, next_notice};
use crate::editor_sim::{handler, EditorSim};
use crate::harness::*;
use crate::tasks::fake_claude;

fn with_policy(policy: &str) -> Options {
    Options::default()
        .set("orchestrator.claude_binary", fake_claude())
        .file("automation.json", policy)
        .file(".gitignore", "ignored/\n*.log\ntarget/\n")
        .set("automation.policy", "automation.json")
}

/// Waits until `name`'s record satisfies `pred`; returns it.
async fn wait_hook(
    bridge: &Bridge,
    what: &str,
    name: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    bridge
        .wait_status(what, |s| {
            let h = hook(s, name);
            pred(&h).then_some(h)
        })
        .await
}

/// Waits until `name`'s last skip is of `kind` and about `subject`; returns the hook's
/// record. (A file may be reported twice, created then modified, so an earlier file's
/// second report can be the last skip for a moment: waiting on the kind alone is not
/// enough.)
async fn wait_skip(bridge: &Bridge, name: &str, kind: &str, subject: &str) -> Value {
    let what = format!("{name} skipping {subject} ({kind})");
    wait_hook(bridge, &what, name, |h| {
        h["lastSkip"]["kind"] == kind && h["lastSkip"]["subject"] == subject
    })
    .await
}

/// The next automation notice's message.
async fn next_message(agent: &mut Agent) -> String {
    next_notice(agent).await["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn a_file_written_on_disk_fires_once_and_ignored_files_never() {
    let bridge = Bridge::launch(with_policy(
        r#"{"onFileChange": {"patterns": ["src/**"], "action": "notify",
                             "message": "{{change}} {{file}}", "cooldownMs": 60000}}"#,
    ))
    .await;
    let mut agent = listening_agent(&bridge).await;
    let root = bridge.workspace.clone();
    // Ignored by .gitignore: never reported.
    write(&root, "src/debug.log", "noise\n");
    write(&root, "ignored/src/x.rs", "noise\n");
    // One write of a new file (create, modify, close): one firing.
    write(&root, "src/new.rs", "pub fn f() {}\n");
    assert_eq!(next_message(&mut agent).await, "created src/new.rs");
    // A later change to another file is the next notice: nothing came in between.
    write(&root, "src/other.rs", "pub fn g() {}\n");
    assert_eq!(next_message(&mut agent).await, "created src/other.rs");
    let h = hook(&bridge.status().await, "onFileChange");
    assert_eq!(h["fired"], 2, "{h}");
    assert_eq!(h["skipped"], 0, "ignored files never reach the hook: {h}");
    // The same file again within the cooldown: skipped, and /status says why.
    write(&root, "src/new.rs", "pub fn f() -> u8 { 1 }\n");
    let h = wait_skip(&bridge, "onFileChange", "cooldown", "src/new.rs").await;
    assert_eq!(h["fired"], 2);
    // Outside the patterns: a filter skip.
    write(&root, "README.md", "# changed\n");
    wait_skip(&bridge, "onFileChange", "filter", "README.md").await;
}

#[tokio::test]
async fn the_loop_guard_and_the_hourly_cap_each_hold_a_firing_back() {
    let bridge = Bridge::launch(with_policy(
        r#"{"maxTasksPerHour": 2,
            "onFileChange": {"patterns": ["*.txt"], "prompt": "mode:slow {{file}}"}}"#,
    ))
    .await;
    let root = bridge.workspace.clone();
    write(&root, "a.txt", "a\n");
    wait_hook(&bridge, "the first task", "onFileChange", |h| {
        h["lastFired"]["task"].is_string()
    })
    .await;
    // While it runs (mode:slow, 3 s), a change is taken as automation's doing.
    write(&root, "b.txt", "b\n");
    let h = wait_skip(&bridge, "onFileChange", "loopGuard", "b.txt").await;
    assert_eq!(h["fired"], 1, "{h}");
    bridge
        .wait_status("the task ends and the quiet period passes", |s| {
            (s["automation"]["quiet"] == false).then_some(())
        })
        .await;
    write(&root, "c.txt", "c\n");
    wait_hook(&bridge, "the second task", "onFileChange", |h| {
        h["fired"] == 2
    })
    .await;
    bridge
        .wait_status("quiet again", |s| {
            (s["automation"]["quiet"] == false).then_some(())
        })
        .await;
    write(&root, "d.txt", "d\n");
    let h = wait_hook(&bridge, "the cap", "onFileChange", |h| {
        h["lastSkip"]["kind"] == "hourlyCap"
    })
    .await;
    assert_eq!(h["fired"], 2, "{h}");
    let s = bridge.status().await;
    assert_eq!(s["automation"]["firedLastHour"], 2);
}

#[tokio::test]
async fn commits_and_branch_switches_fire_the_git_hooks() {
    let place = Place::new();
    let root = place.workspace.clone();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    write(&root, "README.md", "# fixture\n");
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.name", "Test"]);
    git(&["config", "user.email", "test@example.com"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "initial"]);
    let opts = place
        .options()
        .set("orchestrator.claude_binary", fake_claude())
        .file(
            "automation.json",
            r#"{"onGitCommit": {"branches": ["main"], "action": "notify",
                                "message": "commit on {{branch}}: {{subject}}"},
                "onBranchSwitch": {"action": "notify", "message": "{{previousBranch}} -> {{branch}}"}}"#,
        )
        .set("automation.policy", "automation.json");
    let bridge = Bridge::launch(opts).await;
    let mut agent = listening_agent(&bridge).await;
    bridge
        .wait_status("automation read HEAD", |s| {
            s["automation"]["gitHead"]
                .as_str()
                .filter(|h| h.starts_with("main@"))
                .map(|_| ())
        })
        .await;
    write(&root, "new.txt", "new\n");
    agent.call("gitAdd", json!({"paths": ["new.txt"]})).await;
    let committed = agent
        .call("gitCommit", json!({"message": "add new.txt"}))
        .await;
    assert!(!is_error(&committed), "{committed}");
    assert_eq!(
        next_message(&mut agent).await,
        "commit on main: add new.txt"
    );
    git(&["checkout", "-q", "-b", "topic"]);
    assert_eq!(next_message(&mut agent).await, "main -> topic");
    // A commit on a branch the hook does not list: a filter skip.
    git(&["commit", "-q", "--allow-empty", "-m", "on topic"]);
    wait_skip(&bridge, "onGitCommit", "filter", "topic").await;
}

#[tokio::test]
async fn a_storm_of_changes_starts_at_most_the_cap_and_the_bridge_keeps_answering() {
    let bridge = Bridge::launch(with_policy(
        r#"{"maxTasksPerHour": 3,
            "onFileChange": {"patterns": ["storm/**"], "prompt": "mode:ok {{file}}"}}"#,
    ))
    .await;
    let root = bridge.workspace.clone();
    std::fs::create_dir_all(root.join("storm")).unwrap();
    let writer = {
        let root = root.clone();
        tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            for i in 0..10_000 {
                std::fs::write(root.join(format!("storm/f{i}.txt")), "x").unwrap();
            }
            started.elapsed()
        })
    };
    // An agent's round trips during the storm are answered.
    let mut agent = bridge.ready_agent().await;
    let mut slowest = Duration::ZERO;
    let mut round_trips = 0;
    // At most 100: the per-connection rate limit is 200 requests a minute.
    while (!writer.is_finished() || round_trips == 0) && round_trips < 100 {
        let asked = Instant::now();
        let listed = agent.request("tools/list", json!({})).await;
        assert!(listed["result"]["tools"].is_array(), "{listed}");
        slowest = slowest.max(asked.elapsed());
        round_trips += 1;
    }
    let took = writer.await.unwrap();
    assert!(
        slowest < Duration::from_secs(5),
        "the slowest of {round_trips} round trips during the storm took {slowest:?}"
    );
    eprintln!(
        "10 000 files written in {took:?}; {round_trips} round trips during the storm, slowest {slowest:?}"
    );
    let s = bridge
        .wait_status("the storm is through the watcher and has fired", |s| {
            let reported = s["watch"]["changesReported"].as_u64().unwrap_or(0)
                + s["watch"]["changesOverflowed"].as_u64().unwrap_or(0);
            let fired = s["automation"]["fired"].as_u64().unwrap_or(0);
            (reported >= 10_000 && fired >= 1).then(|| s.clone())
        })
        .await;
    let fired = s["automation"]["fired"].as_u64().unwrap();
    assert!(
        (1..=3).contains(&fired),
        "fired {fired}: {}",
        s["automation"]
    );
    let status = agent.call("getBridgeStatus", json!({})).await;
    assert!(!is_error(&status));
    let rss = rss_kib(bridge.pid());
    eprintln!("RSS after the storm: {} MiB", rss / 1024);
    assert!(rss < 200 * 1024, "RSS after the storm: {rss} KiB");
}

/// A crate that builds offline (no dependencies).
fn crate_files(opts: Options) -> Options {
    opts.file(
        "Cargo.toml",
        "[package]\nname = \"fixture\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\npath = \"src/lib.rs\"\n",
    )
    .file("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n")
    .set("diagnostics.linters", "cargo")
    .set("diagnostics.rerun_debounce_ms", 200)
}

#[tokio::test]
async fn a_compile_error_written_on_disk_fires_the_diagnostics_hooks_without_an_editor() {
    let bridge = Bridge::launch(crate_files(with_policy(
        r#"{"onDiagnosticsError": {"action": "notify", "message": "broken {{file}} {{diagnostics}}"},
            "onDiagnosticsStateChange": {"state": "cleared", "action": "notify", "message": "clean {{file}}"}}"#,
    )))
    .await;
    let mut agent = listening_agent(&bridge).await;
    let root = bridge.workspace.clone();
    write(
        &root,
        "src/lib.rs",
        "pub fn answer() -> u32 {\n    \"forty-two\"\n}\n",
    );
    let broken = next_message(&mut agent).await;
    assert!(
        broken.starts_with("broken src/lib.rs --- BEGIN DIAGNOSTIC DATA"),
        "{broken}"
    );
    assert!(broken.contains("mismatched types"), "{broken}");
    write(&root, "src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    assert_eq!(next_message(&mut agent).await, "clean src/lib.rs");
}

#[tokio::test]
async fn editor_diagnostics_win_over_the_linters_for_the_same_file() {
    let bridge = Bridge::launch(crate_files(with_policy(
        r#"{"onDiagnosticsStateChange": {"state": "error", "action": "notify",
                                        "message": "error in {{file}} {{diagnostics}}"}}"#,
    )))
    .await;
    let mut agent = listening_agent(&bridge).await;
    let editor = EditorSim::connect(&bridge, handler(|_, _| None)).await;
    let file = bridge.workspace.join("src/lib.rs").display().to_string();
    editor
        .notify(
            "extension/diagnosticsChanged",
            json!({"file": file, "diagnostics": [
                {"message": "mismatched types (from the editor)", "severity": "error", "line": 2, "column": 5}
            ]}),
        )
        .await;
    let first = next_message(&mut agent).await;
    assert!(first.contains("(from the editor)"), "{first}");
    // The same error on disk: the linters see it too, but the editor reports this file.
    let root = bridge.workspace.clone();
    write(
        &root,
        "src/lib.rs",
        "pub fn answer() -> u32 {\n    \"forty-two\"\n}\n",
    );
    let h = wait_skip(
        &bridge,
        "onDiagnosticsStateChange",
        "editorWins",
        "src/lib.rs",
    )
    .await;
    assert_eq!(h["fired"], 1, "{h}");
    assert_eq!(bridge.status().await["automation"]["editorFiles"], 1);
}

/// A new error reported while automation's own task runs is held back (its edits may
/// be the cause), not taken as reported: once the task settled, the hook fires for it,
/// though no other report of the file came.
#[tokio::test]
async fn an_error_reported_while_automation_works_fires_once_it_settled() {
    let bridge = Bridge::launch(with_policy(
        r#"{"onFileChange": {"patterns": ["trigger.txt"], "prompt": "mode:slow {{file}}"},
            "onDiagnosticsStateChange": {"state": "error", "prompt": "mode:ok fix {{file}}"}}"#,
    ))
    .await;
    let editor = EditorSim::connect(&bridge, handler(|_, _| None)).await;
    write(&bridge.workspace, "trigger.txt", "go\n");
    wait_hook(&bridge, "the slow task", "onFileChange", |h| {
        h["lastFired"]["task"].is_string()
    })
    .await;
    let file = bridge.workspace.join("src/main.rs").display().to_string();
    editor
        .notify(
            "extension/diagnosticsChanged",
            json!({"file": file, "diagnostics": [
                {"message": "mismatched types", "severity": "error", "line": 2, "column": 5}
            ]}),
        )
        .await;
    let h = wait_skip(
        &bridge,
        "onDiagnosticsStateChange",
        "loopGuard",
        "src/main.rs",
    )
    .await;
    assert_eq!(h["fired"], 0, "{h}");
    let h = wait_hook(
        &bridge,
        "the held-back error to fire",
        "onDiagnosticsStateChange",
        |h| h["fired"] == 1,
    )
    .await;
    assert_eq!(h["lastFired"]["subject"], "src/main.rs", "{h}");
}

/// What automation knows survives a restart: an error its hook already reported is not
/// new to the next bridge, and the firings of the last hour still count.
#[tokio::test]
async fn a_restarted_bridge_remembers_the_errors_it_reported_and_the_hours_firings() {
    let place = Place::new();
    let policy = r#"{"maxTasksPerHour": 5,
        "onDiagnosticsStateChange": {"state": "error", "prompt": "mode:ok fix {{file}}"}}"#;
    let launch = || {
        Bridge::launch(
            place
                .options()
                .set("orchestrator.claude_binary", fake_claude())
                .file("automation.json", policy)
                .set("automation.policy", "automation.json"),
        )
    };
    let error_in = |bridge: &Bridge, rel: &str| {
        let file = bridge.workspace.join(rel).display().to_string();
        json!({"file": file, "diagnostics": [
            {"message": format!("mismatched types in {rel}"), "severity": "error", "line": 2, "column": 5}
        ]})
    };
    let first = launch().await;
    let editor = EditorSim::connect(&first, handler(|_, _| None)).await;
    editor
        .notify(
            "extension/diagnosticsChanged",
            error_in(&first, "src/main.rs"),
        )
        .await;
    wait_hook(
        &first,
        "the first error's task",
        "onDiagnosticsStateChange",
        |h| h["fired"] == 1,
    )
    .await;
    let kept = place.state_dir().join("automation-state.json");
    wait_for_blocking("automation's state written", DEADLINE, move || {
        std::fs::read_to_string(&kept)
            .ok()
            .filter(|t| t.contains("src/main.rs"))
    })
    .await;
    drop(editor);
    first.stop_async().await;

    let second = launch().await;
    let editor = EditorSim::connect(&second, handler(|_, _| None)).await;
    // The same error again: nothing new. Another file's: a firing.
    editor
        .notify(
            "extension/diagnosticsChanged",
            error_in(&second, "src/main.rs"),
        )
        .await;
    editor
        .notify(
            "extension/diagnosticsChanged",
            error_in(&second, "src/lib.rs"),
        )
        .await;
    let h = wait_hook(
        &second,
        "the new error's task",
        "onDiagnosticsStateChange",
        |h| h["fired"] == 1,
    )
    .await;
    assert_eq!(h["lastFired"]["subject"], "src/lib.rs", "{h}");
    let status = second.status().await;
    assert_eq!(
        status["automation"]["firedLastHour"], 2,
        "{}",
        status["automation"]
    );
}
