//! Claude Code's hooks through the real binary: `POST /hooks` (as `ide-bridge hook`
//! posts them) and the `hook` command itself. Agents connect as relays with a process
//! chain, as `ide-bridge mcp` does, so that a hook's process identifies its agent.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

/// An agent connected as a relay whose client process is `pid` (its parent `parent`).
pub(crate) async fn relay_agent(bridge: &Bridge, pid: u32, parent: u32) -> Agent {
    let chain = format!("{pid},{parent}");
    let mut agent = Agent::connect(bridge, &[("x-ide-bridge-relay", chain.as_str())])
        .await
        .expect("relay connects");
    agent.initialize().await;
    agent
}

/// Posts a hook input as `ide-bridge hook` would, from a shell whose parent is `pid`.
pub(crate) async fn hook(bridge: &Bridge, pid: u32, input: Value) -> (u16, Value) {
    hook_in_task(bridge, pid, input, None).await
}

/// [`hook`], from inside the Claude task `task` when given (as `ide-bridge hook` says
/// when `IDE_BRIDGE_TASK` is set).
async fn hook_in_task(
    bridge: &Bridge,
    pid: u32,
    input: Value,
    task: Option<&'static str>,
) -> (u16, Value) {
    let (port, token) = (bridge.port, bridge.token.clone());
    let chain = format!("4242,{pid}");
    let body = input.to_string();
    let (status, _, text) = off_runtime(move || {
        let bearer = format!("Bearer {token}");
        let mut headers = vec![
            ("Authorization", bearer.as_str()),
            ("Content-Type", "application/json"),
            ("x-ide-bridge-client", chain.as_str()),
        ];
        headers.extend(task.map(|t| ("x-ide-bridge-task", t)));
        http_request(port, "POST", "/hooks", &headers, body.as_bytes())
    })
    .await;
    let value = if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, value)
}

/// Runs `ide-bridge hook` as the CLI would, in project `dir`, with `$CLAUDE_PID` (and
/// `IDE_BRIDGE_HOOK_DEBUG` when `debug`).
fn run_hook(
    config_dir: &std::path::Path,
    dir: &std::path::Path,
    input: &Value,
    claude_pid: &str,
    debug: bool,
) -> std::process::Output {
    let mut cmd = command(config_dir);
    if debug {
        cmd.env("IDE_BRIDGE_HOOK_DEBUG", "1");
    }
    cmd.arg("hook")
        .env("CLAUDE_PROJECT_DIR", dir)
        .env("CLAUDE_PID", claude_pid)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

pub(crate) fn tool_event(bridge: &Bridge, event: &str, tool: &str, input: Value) -> Value {
    json!({
        "session_id": "c0ffee00-0000-4000-8000-000000000001",
        "cwd": bridge.workspace,
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "toolu_1",
        "duration_ms": 7,
    })
}

fn edit(bridge: &Bridge, event: &str, rel: &str) -> Value {
    let path = bridge.workspace.join(rel);
    tool_event(
        bridge,
        event,
        "Edit",
        json!({"file_path": path, "old_string": "a", "new_string": "b"}),
    )
}

fn read(bridge: &Bridge, rel: &str) -> Value {
    let path = bridge.workspace.join(rel);
    tool_event(bridge, "PostToolUse", "Read", json!({"file_path": path}))
}

/// The hook before a Read (where notices are given).
fn before_read(bridge: &Bridge, rel: &str) -> Value {
    let path = bridge.workspace.join(rel);
    tool_event(bridge, "PreToolUse", "Read", json!({"file_path": path}))
}

pub(crate) fn deny_reason(answer: &Value) -> Option<&str> {
    let out = &answer["hookSpecificOutput"];
    (out["permissionDecision"] == "deny")
        .then(|| out["permissionDecisionReason"].as_str())
        .flatten()
}

fn context(answer: &Value) -> Option<&str> {
    answer["hookSpecificOutput"]["additionalContext"].as_str()
}

#[tokio::test]
async fn a_write_to_a_file_another_agent_claimed_is_refused_naming_the_holder_until_released() {
    let bridge = Bridge::launch(
        Options::default()
            .file("src/a.py", "a = 1\n")
            .file("src/b.py", "b = 1\n"),
    )
    .await;
    let mut a = relay_agent(&bridge, 91001, 777).await;
    let mut b = relay_agent(&bridge, 91002, 777).await;
    let claimed = a
        .call(
            "claimFiles",
            json!({"paths": ["src/a.py"], "reason": "splitting the parser", "ttlMinutes": 5}),
        )
        .await;
    assert!(!is_error(&claimed), "{claimed}");
    let a_label = json_text(&claimed)["claimed"]["holder"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(a_label.starts_with("agent claude-code "), "{a_label}");

    // B's native Edit is refused through the pre-tool hook, naming A and its reason.
    let (status, answer) = hook(&bridge, 91002, edit(&bridge, "PreToolUse", "src/a.py")).await;
    assert_eq!(status, 200);
    let reason = deny_reason(&answer).expect("B's edit is denied");
    assert!(reason.contains(&a_label), "{reason}");
    assert!(reason.contains("splitting the parser"), "{reason}");
    assert!(reason.contains("src/a.py"), "{reason}");
    // An agent the bridge cannot name is not the holder either.
    let (_, answer) = hook(&bridge, 99999, edit(&bridge, "PreToolUse", "src/a.py")).await;
    assert!(deny_reason(&answer).is_some(), "{answer}");
    // The holder edits freely, and so does everyone else elsewhere.
    let (_, answer) = hook(&bridge, 91001, edit(&bridge, "PreToolUse", "src/a.py")).await;
    assert_eq!(answer, Value::Null);
    let (_, answer) = hook(&bridge, 91002, edit(&bridge, "PreToolUse", "src/b.py")).await;
    assert_eq!(answer, Value::Null);
    // A Bash command naming the file gets the holder's note as context, not a refusal.
    let bash = tool_event(
        &bridge,
        "PreToolUse",
        "Bash",
        json!({"command": "sed -i s/1/2/ src/a.py"}),
    );
    let (_, answer) = hook(&bridge, 91002, bash).await;
    assert!(deny_reason(&answer).is_none());
    assert!(
        context(&answer).is_some_and(|c| c.contains("splitting the parser")),
        "{answer}"
    );
    // The bridge's own write tools refuse B the same way, and B can see the claim.
    let refused = b
        .call(
            "replaceBlock",
            json!({"filePath": "src/a.py", "oldContent": "a = 1", "newContent": "a = 2"}),
        )
        .await;
    assert!(is_error(&refused), "{refused}");
    assert!(text(&refused).contains("splitting the parser"), "{refused}");
    assert_eq!(
        std::fs::read_to_string(bridge.workspace.join("src/a.py")).unwrap(),
        "a = 1\n"
    );
    let listed = json_text(&b.call("listClaims", json!({})).await);
    assert_eq!(listed["claims"][0]["patterns"], json!(["src/a.py"]));
    assert_eq!(listed["claims"][0]["yours"], false);
    // B cannot claim what A holds, by any name of it.
    let taken = b.call("claimFiles", json!({"paths": ["src"]})).await;
    assert!(
        is_error(&taken) && text(&taken).contains(&a_label),
        "{taken}"
    );
    let absolute = bridge.workspace.join("src/a.py").display().to_string();
    let taken = b.call("claimFiles", json!({"paths": [absolute]})).await;
    assert!(
        is_error(&taken) && text(&taken).contains(&a_label),
        "{taken}"
    );
    // Nothing outside the workspace can be claimed (it used to become a claim on
    // the workspace's own etc/hosts).
    for outside in ["/etc/hosts", "../elsewhere.txt", "src/../../elsewhere.txt"] {
        let refused = b.call("claimFiles", json!({"paths": [outside]})).await;
        assert!(
            is_error(&refused) && text(&refused).contains("is outside the workspace"),
            "{outside}: {refused}"
        );
    }
    // Refusals are counted and in the timeline; `ide-bridge status` shows the claim.
    let status = bridge.status().await;
    assert_eq!(status["claims"]["refusedWrites"], 3, "{}", status["claims"]);
    let shown = bridge.status_text().await;
    assert!(
        shown.contains("claims: 1 held, 3 writes refused"),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("src/a.py by {a_label}: splitting the parser")),
        "{shown}"
    );
    assert!(
        shown.contains("hooks: 5 answered (2 writes refused, 1 notes"),
        "{shown}"
    );
    // Deleting or renaming the directory holding a claimed file is refused too.
    let gone = b
        .call("deleteFile", json!({"filePath": "src", "recursive": true}))
        .await;
    assert!(
        is_error(&gone) && text(&gone).contains("splitting the parser"),
        "{gone}"
    );
    let moved = b
        .call("renameFile", json!({"oldPath": "src", "newPath": "lib"}))
        .await;
    assert!(is_error(&moved), "{moved}");
    assert!(bridge.workspace.join("src/a.py").exists());
    // Released: B's edit goes through.
    let released = a.call("releaseFiles", json!({})).await;
    assert_eq!(
        json_text(&released)["released"].as_array().unwrap().len(),
        1
    );
    let (_, answer) = hook(&bridge, 91002, edit(&bridge, "PreToolUse", "src/a.py")).await;
    assert_eq!(answer, Value::Null);
    let done = b
        .call(
            "replaceBlock",
            json!({"filePath": "src/a.py", "oldContent": "a = 1", "newContent": "a = 2"}),
        )
        .await;
    assert!(!is_error(&done), "{done}");
    bridge.stop_async().await;
}

/// The permission decision and its reason of a `PreToolUse` answer.
fn decision(answer: &Value) -> (Option<&str>, Option<&str>) {
    let out = &answer["hookSpecificOutput"];
    (
        out["permissionDecision"].as_str(),
        out["permissionDecisionReason"].as_str(),
    )
}

#[tokio::test]
async fn a_native_change_inside_git_is_put_to_the_person_and_the_files_beside_it_are_not() {
    let bridge = Bridge::launch(
        Options::default()
            .file(".gitignore", "target\n")
            .file("vendor/lib/.git/config", "[core]\n")
            .file("src/a.py", "a = 1\n"),
    )
    .await;
    std::fs::create_dir_all(bridge.workspace.join(".git/hooks")).unwrap();
    let _a = relay_agent(&bridge, 92101, 779).await;
    let write = |rel: &str| {
        tool_event(
            &bridge,
            "PreToolUse",
            "Write",
            json!({"file_path": bridge.workspace.join(rel), "content": "#!/bin/sh\n"}),
        )
    };
    for rel in [".git/hooks/pre-commit", "vendor/lib/.git/config"] {
        let (status, answer) = hook(&bridge, 92101, write(rel)).await;
        assert_eq!(status, 200);
        let (kind, reason) = decision(&answer);
        assert_eq!(kind, Some("ask"), "{rel}: {answer}");
        let reason = reason.unwrap();
        assert!(
            reason.starts_with(&format!("{rel} is inside .git")),
            "{reason}"
        );
    }
    // An Edit too, and from an agent the bridge cannot name.
    let (_, answer) = hook(&bridge, 99998, edit(&bridge, "PreToolUse", ".git/config")).await;
    assert_eq!(decision(&answer).0, Some("ask"), "{answer}");
    // A Claude task the bridge runs has nobody to ask: refused.
    let input = edit(&bridge, "PreToolUse", ".git/config");
    let (_, answer) = hook_in_task(&bridge, 92101, input, Some("t1")).await;
    assert_eq!(decision(&answer).0, Some("deny"), "{answer}");
    // Names that only look like it, and reads, are not asked about.
    for rel in [".gitignore", "src/a.py"] {
        let (_, answer) = hook(&bridge, 92101, write(rel)).await;
        assert_eq!(answer, Value::Null, "{rel}");
    }
    let (_, answer) = hook(&bridge, 92101, before_read(&bridge, ".git/config")).await;
    assert_eq!(answer, Value::Null);
    let metrics = bridge.metrics().await;
    assert!(
        metrics.contains(r#"ide_bridge_hook_events_total{event="PreToolUse",outcome="asked"} 3"#),
        "{metrics}"
    );
    bridge.stop_async().await;
}

#[tokio::test]
async fn native_calls_join_the_agents_session_in_the_timeline_and_metrics() {
    let bridge = Bridge::launch(Options::default().file("notes.md", "hi\n")).await;
    let _a = relay_agent(&bridge, 92001, 778).await;
    let status = bridge.status().await;
    let a_id = status["sessions"][0]["id"].as_str().unwrap().to_string();
    let (_, answer) = hook(&bridge, 92001, read(&bridge, "notes.md")).await;
    assert_eq!(answer, Value::Null);
    let mut failed = tool_event(
        &bridge,
        "PostToolUseFailure",
        "Bash",
        json!({"command": "cargo test"}),
    );
    failed["error"] = json!("Exit code 101");
    hook(&bridge, 92001, failed).await;
    // An edit the person refused in the CLI's permission dialog: declined, not failed.
    let mut refused = tool_event(
        &bridge,
        "PostToolUseFailure",
        "Edit",
        json!({"file_path": bridge.workspace.join("notes.md"), "old_string": "hi", "new_string": "ho"}),
    );
    refused["error"] = json!("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.");
    hook(&bridge, 92001, refused).await;
    let entries = bridge
        .wait_status("three native calls in the timeline", |s| {
            let native: Vec<Value> = s["recentActivity"]
                .as_array()?
                .iter()
                .filter(|e| e["native"] == true)
                .cloned()
                .collect();
            (native.len() == 3).then_some(native)
        })
        .await;
    assert_eq!(
        (entries[2]["tool"].as_str(), entries[2]["status"].as_str()),
        (Some("Edit"), Some("declined")),
        "{}",
        entries[2]
    );
    assert_eq!(entries[0]["tool"], "Read");
    assert_eq!(entries[0]["sessionId"], a_id);
    assert_eq!(entries[0]["summary"], "notes.md");
    assert_eq!(entries[0]["status"], "success");
    assert_eq!(entries[0]["durationMs"], 7);
    assert_eq!(entries[1]["tool"], "Bash");
    assert_eq!(entries[1]["status"], "error");
    assert!(
        entries[1]["summary"]
            .as_str()
            .unwrap()
            .contains("$ cargo test → Exit code 101"),
        "{}",
        entries[1]
    );
    let shown = bridge.status_text().await;
    assert!(
        shown.contains("own    Read notes.md (success, 7 ms)"),
        "{shown}"
    );
    assert!(
        shown.contains("(3 the agents' own, 1 failed, 1 declined)"),
        "{shown}"
    );
    assert!(
        shown.contains("Edit notes.md → the person declined it (declined,"),
        "{shown}"
    );
    let metrics = bridge.metrics().await;
    assert!(
        metrics.contains(r#"ide_bridge_native_tool_calls_total{tool="Read",status="success"} 1"#),
        "{metrics}"
    );
    assert!(metrics.contains(r#"ide_bridge_native_tool_calls_total{tool="Bash",status="error"} 1"#));
    assert!(
        !metrics.contains(r#"ide_bridge_tool_calls_total{tool="Read""#),
        "native calls are counted apart from bridge tools"
    );
    bridge.stop_async().await;
}

#[tokio::test]
async fn an_agent_that_read_a_file_another_changed_is_told_once_at_its_next_call() {
    let bridge = Bridge::launch(
        Options::default()
            .file("b.py", "x = 1\n")
            .file("c.py", "y = 1\n"),
    )
    .await;
    let mut a = relay_agent(&bridge, 93001, 779).await;
    let mut b = relay_agent(&bridge, 93002, 779).await;
    let a_id = json_text(&a.call("getBridgeStatus", json!({})).await)["yourSessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let a_label = format!("claude-code {a_id}");
    // B reads b.py natively, A edits it natively.
    hook(&bridge, 93002, read(&bridge, "b.py")).await;
    let (_, answer) = hook(&bridge, 93001, edit(&bridge, "PostToolUse", "b.py")).await;
    assert_eq!(answer, Value::Null, "A is told nothing about its own edit");
    // B's next native call carries one notice naming the file and A, then no more.
    let (_, answer) = hook(&bridge, 93002, before_read(&bridge, "c.py")).await;
    let notice = context(&answer).expect("a notice");
    assert!(
        notice.contains("b.py") && notice.contains(&a_label),
        "{notice}"
    );
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    let (_, answer) = hook(&bridge, 93002, before_read(&bridge, "c.py")).await;
    assert_eq!(answer, Value::Null, "the notice is given once");
    // Through the bridge's tools as well: B reads c.py with readFile, A edits it
    // natively, B's next bridge tool answer carries the notice as a second item.
    let r = b.call("readFile", json!({"filePath": "c.py"})).await;
    assert!(!is_error(&r));
    hook(&bridge, 93001, edit(&bridge, "PostToolUse", "c.py")).await;
    let r = b.call("getWorkspaceFolders", json!({})).await;
    let items = r["content"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{r}");
    assert!(items[1]["text"].as_str().unwrap().contains("c.py"), "{r}");
    // An agent that never read the file is told nothing.
    let (_, answer) = hook(&bridge, 93001, before_read(&bridge, "b.py")).await;
    assert_eq!(answer, Value::Null);
    bridge.stop_async().await;
}

/// The bridge may hear how a read ended only after another agent's change to the file
/// (the CLI reports a call's end at its next hook): a read that started before the
/// change still gets its notice, and one that started after it does not.
#[tokio::test]
async fn a_read_heard_of_after_a_change_it_preceded_still_gets_the_notice() {
    let bridge = Bridge::launch(
        Options::default()
            .file("b.py", "x = 1\n")
            .file("c.py", "y = 1\n")
            .file("d.py", "z = 1\n"),
    )
    .await;
    let _a = relay_agent(&bridge, 93101, 781).await;
    let mut b = relay_agent(&bridge, 93102, 781).await;
    let b_id = json_text(&b.call("getBridgeStatus", json!({})).await)["yourSessionId"]
        .as_str()
        .unwrap()
        .to_string();
    // A's calls start at their hooks (each in its transcript), and no end names a
    // duration: when a call started is what its first hook said.
    let projects = bridge.config_dir.join("projects").join("-w");
    std::fs::create_dir_all(&projects).unwrap();
    let a_transcript = projects.join("a.jsonl");
    std::fs::write(&a_transcript, "").unwrap();
    let call = |event: Value, id: &str| {
        let mut v = event;
        v["tool_use_id"] = json!(id);
        v["transcript_path"] = json!(a_transcript);
        v["duration_ms"] = json!(0);
        v
    };
    // The clock moves on between two steps the test orders.
    let tick = || {
        let from = std::time::SystemTime::now();
        wait_for("a millisecond", Duration::from_secs(1), || {
            (from.elapsed().unwrap_or_default() >= Duration::from_millis(2)).then_some(())
        });
    };
    // A starts reading b.py; B edits it; then A's read is heard to have ended.
    hook(
        &bridge,
        93101,
        call(before_read(&bridge, "b.py"), "toolu_a1"),
    )
    .await;
    tick();
    hook(&bridge, 93102, edit(&bridge, "PostToolUse", "b.py")).await;
    hook(&bridge, 93101, call(read(&bridge, "b.py"), "toolu_a1")).await;
    let (_, answer) = hook(
        &bridge,
        93101,
        call(before_read(&bridge, "c.py"), "toolu_a2"),
    )
    .await;
    let notice = context(&answer).expect("a notice for the read that preceded the change");
    assert!(
        notice.contains("b.py") && notice.contains(&b_id),
        "{notice}"
    );
    hook(&bridge, 93101, call(read(&bridge, "c.py"), "toolu_a2")).await;
    // A read of d.py that starts after B's edit of it was done knows the new text,
    // however late its end is heard.
    let mut edit_d = edit(&bridge, "PostToolUse", "d.py");
    edit_d["tool_use_id"] = json!("toolu_b2");
    hook(&bridge, 93102, edit_d).await;
    tick();
    hook(
        &bridge,
        93101,
        call(before_read(&bridge, "d.py"), "toolu_a3"),
    )
    .await;
    hook(&bridge, 93101, call(read(&bridge, "d.py"), "toolu_a3")).await;
    let (_, answer) = hook(
        &bridge,
        93101,
        call(before_read(&bridge, "b.py"), "toolu_a4"),
    )
    .await;
    assert_eq!(answer, Value::Null, "no notice for a read after the change");
    bridge.stop_async().await;
}

#[tokio::test]
async fn malformed_unknown_oversized_and_foreign_hooks_have_no_effect_and_are_counted() {
    let limit = 64 * 1024;
    let bridge = Bridge::launch(Options::default().set("hooks.max_input_bytes", limit)).await;
    let mut a = relay_agent(&bridge, 94001, 780).await;
    let (port, token) = (bridge.port, bridge.token.clone());
    let post = move |body: Vec<u8>, auth: bool| {
        let token = token.clone();
        off_runtime(move || {
            let bearer = format!("Bearer {token}");
            let mut headers = vec![("x-ide-bridge-client", "1,94001")];
            if auth {
                headers.push(("Authorization", bearer.as_str()));
            }
            http_request(port, "POST", "/hooks", &headers, &body)
        })
    };
    assert_eq!(post(b"{}".to_vec(), false).await.0, 401);
    let (status, _, body) = post(b"not json".to_vec(), true).await;
    assert_eq!(status, 400, "{body}");
    let (status, _, _) = post(br#"{"hook_event_name":5}"#.to_vec(), true).await;
    assert_eq!(status, 400);
    // An event the bridge does not handle (a hook someone added for it): nothing, and
    // no error either.
    let notification = json!({"hook_event_name": "Notification", "message": "waiting",
                               "cwd": bridge.workspace});
    let (status, _, body) = post(notification.to_string().into_bytes(), true).await;
    assert_eq!((status, body.as_str()), (200, ""));
    // At the limit it is read; one byte more is refused before it is read.
    let at_limit = |n: usize| {
        let mut v = read(&bridge, "x.txt");
        v["pad"] = json!("");
        let base = v.to_string().len();
        v["pad"] = json!("p".repeat(n - base));
        v.to_string().into_bytes()
    };
    let body = at_limit(limit);
    assert_eq!(body.len(), limit);
    assert_eq!(post(body, true).await.0, 200);
    let (status, _, body) = post(at_limit(limit + 1), true).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("hooks.max_input_bytes"), "{body}");
    // Another workspace's hook and an unknown agent's leave no trace.
    let mut foreign = read(&bridge, "x.txt");
    foreign["cwd"] = json!("/");
    assert_eq!(post(foreign.to_string().into_bytes(), true).await.0, 200);
    let (port, token) = (bridge.port, bridge.token.clone());
    let unknown = read(&bridge, "x.txt").to_string();
    off_runtime(move || {
        http_request(
            port,
            "POST",
            "/hooks",
            &[
                ("Authorization", &format!("Bearer {token}")),
                ("x-ide-bridge-client", "1,99998"),
            ],
            unknown.as_bytes(),
        )
    })
    .await;
    let metrics = bridge.metrics().await;
    for (reason, n) in [
        ("malformed", 2),
        ("tooLarge", 1),
        ("otherWorkspace", 1),
        ("unknownAgent", 1),
        ("unhandledEvent", 1),
    ] {
        let line = format!(r#"ide_bridge_hooks_ignored_total{{reason="{reason}"}} {n}"#);
        assert!(metrics.contains(&line), "{line} in\n{metrics}");
    }
    let native = bridge.status().await["recentActivity"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["native"] == true)
        .count();
    assert_eq!(
        native, 1,
        "only the hook at the limit from a known agent was recorded"
    );
    // The bridge keeps answering.
    let r = a.call("getWorkspaceFolders", json!({})).await;
    assert!(!is_error(&r));
    bridge.stop_async().await;
}

#[tokio::test]
async fn the_hook_command_hands_the_input_over_even_from_outside_and_is_silent_where_no_bridge_runs(
) {
    let bridge = Bridge::launch(Options::default().file("src/a.py", "a\n")).await;
    let mut a = relay_agent(&bridge, 95001, 781).await;
    let claimed = a
        .call(
            "claimFiles",
            json!({"paths": ["src/a.py"], "reason": "mine"}),
        )
        .await;
    assert!(!is_error(&claimed));
    let config = bridge.config_dir.clone();
    let run_debug =
        move |dir: std::path::PathBuf, input: Value, claude_pid: &'static str, debug: bool| {
            let config = config.clone();
            off_runtime(move || run_hook(&config, &dir, &input, claude_pid, debug))
        };
    let run = |dir, input, claude_pid| run_debug(dir, input, claude_pid, false);
    let ws = bridge.workspace.clone();
    let input = edit(&bridge, "PreToolUse", "src/a.py");
    let out = run(ws.clone(), input.clone(), "95002").await;
    assert!(out.status.success());
    let answer: Value = serde_json::from_slice(&out.stdout).expect("the bridge's answer");
    assert!(deny_reason(&answer).unwrap().contains("mine"), "{answer}");
    assert!(out.stderr.is_empty());
    // Under the debug switch, the hook says why the bridge did not record it, and that
    // it answered all the same (the claim is enforced whoever writes).
    let out = run_debug(ws.clone(), input.clone(), "95002", true).await;
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(
            "did not record this hook, but answered it (the claims' decision applies to every \
             writer): unknownAgent: the bridge has no session for this CLI"
        ),
        "{said}"
    );
    let answer: Value = serde_json::from_slice(&out.stdout).expect("the bridge's answer");
    assert!(deny_reason(&answer).is_some(), "{answer}");
    // A read by the same unknown CLI: nothing to answer, nothing taken notice of.
    let mut read = input.clone();
    read["tool_name"] = json!("Read");
    let out = run_debug(ws.clone(), read, "95002", true).await;
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("took no notice of this hook: unknownAgent"),
        "{said}"
    );
    // The holder's own hook: nothing printed.
    let out = run(ws.clone(), input.clone(), "95001").await;
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    // A CLI started where no bridge runs, writing into this workspace: the claim holds.
    let elsewhere = tempfile::tempdir().unwrap();
    let dir = elsewhere.path().to_path_buf();
    let mut foreign = input.clone();
    foreign["cwd"] = json!(elsewhere.path());
    let out = run(dir.clone(), foreign.clone(), "95002").await;
    assert!(out.status.success(), "{out:?}");
    let answer: Value = serde_json::from_slice(&out.stdout).expect("the bridge's answer");
    assert!(deny_reason(&answer).unwrap().contains("mine"), "{answer}");
    // … a new file in a new directory there too (what Write creates), through a link.
    let link = elsewhere.path().join("link");
    std::os::unix::fs::symlink(&ws, &link).unwrap();
    let claimed = a
        .call(
            "claimFiles",
            json!({"paths": ["new/**"], "reason": "mine too"}),
        )
        .await;
    assert!(!is_error(&claimed), "{claimed}");
    foreign["tool_name"] = json!("Write");
    foreign["tool_input"] = json!({"file_path": link.join("new/dir/b.py"), "content": "b"});
    let out = run(dir.clone(), foreign.clone(), "95002").await;
    let answer: Value = serde_json::from_slice(&out.stdout).expect("the bridge's answer");
    assert!(
        deny_reason(&answer).unwrap().contains("mine too"),
        "{answer}"
    );
    // Where no bridge runs, writing there: nothing printed, nothing on stderr, exit 0,
    // quickly.
    foreign["tool_input"]["file_path"] = json!(elsewhere.path().join("a.py"));
    let started = std::time::Instant::now();
    let out = run(dir, foreign, "95002").await;
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "{out:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    bridge.stop_async().await;
}

#[tokio::test]
async fn claims_survive_a_restart_and_end_with_their_agent() {
    let place = Place::new();
    // Grace long enough for B to connect and list on a loaded machine.
    let opts = || {
        place
            .options()
            .set("sessions.grace_period_ms", 2000)
            .file("a.txt", "a\n")
    };
    let bridge = Bridge::launch(opts()).await;
    // A live process, so that the claim is kept across the restart.
    let me = std::process::id();
    let mut a = relay_agent(&bridge, me, 782).await;
    let claimed = a
        .call("claimFiles", json!({"paths": ["a.txt"], "reason": "r"}))
        .await;
    assert!(!is_error(&claimed), "{claimed}");
    // Stopped with A connected: the final checkpoint keeps A's session, as connected
    // (the shutdown closed its connection; A did not leave), so that its grace period
    // starts with the next bridge, however long the restart takes.
    bridge.stop_async().await;
    drop(a);
    let checkpoint: Value = serde_json::from_str(
        &std::fs::read_to_string(place.state_dir().join("checkpoint.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        checkpoint["sessions"][0]["disconnectedAt"],
        Value::Null,
        "{checkpoint}"
    );
    let file = place.state_dir().join("claims.json");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&file).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);

    let bridge = Bridge::launch(opts()).await;
    let mut b = relay_agent(&bridge, 96002, 783).await;
    let listed = json_text(&b.call("listClaims", json!({})).await);
    assert_eq!(listed["claims"].as_array().unwrap().len(), 1, "{listed}");
    // A never comes back: its grace period ends and its claim with it.
    claims_end_and_b_writes(&bridge, &mut b, "A's claim ends with A's session").await;
    bridge.stop_async().await;
}

/// Waits (`what`) until no claim is held, then `b` overwrites a.txt, which the claim
/// covered.
async fn claims_end_and_b_writes(bridge: &Bridge, b: &mut Agent, what: &str) {
    bridge
        .wait_status(what, |s| {
            s["claims"]["held"].as_array()?.is_empty().then_some(())
        })
        .await;
    let r = b
        .call(
            "createFile",
            json!({"filePath": "a.txt", "content": "b\n", "overwrite": true}),
        )
        .await;
    assert!(!is_error(&r), "{r}");
}

/// An agent whose CLI process has ended cannot come back: its session ends without
/// waiting out the grace period, and its claims with it. While the process lives, the
/// session waits.
#[tokio::test]
async fn the_claims_of_an_agent_whose_process_ended_go_at_once() {
    let bridge = Bridge::launch(
        Options::default()
            .set("sessions.grace_period_ms", 600_000)
            .file("a.txt", "a\n"),
    )
    .await;
    let mut cli = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let mut a = relay_agent(&bridge, cli.id(), 784).await;
    let claimed = a
        .call("claimFiles", json!({"paths": ["a.txt"], "reason": "r"}))
        .await;
    assert!(!is_error(&claimed), "{claimed}");
    drop(a);
    let mut b = relay_agent(&bridge, 96102, 785).await;
    bridge
        .wait_status("A's session in grace", |s| {
            s["sessions"]
                .as_array()?
                .iter()
                .any(|x| x["inGrace"] == true)
                .then_some(())
        })
        .await;
    // Two checks of the client processes later, A's claim still holds: its CLI lives.
    let check = Duration::from_secs(5);
    let still = b.call("listClaims", json!({})).await;
    assert_eq!(
        json_text(&still)["claims"].as_array().unwrap().len(),
        1,
        "{still}"
    );
    let since = std::time::Instant::now();
    wait_for("two checks", check, || {
        (since.elapsed() >= Duration::from_millis(4100)).then_some(())
    });
    let still = b.call("listClaims", json!({})).await;
    assert_eq!(
        json_text(&still)["claims"].as_array().unwrap().len(),
        1,
        "{still}"
    );
    cli.kill().unwrap();
    cli.wait().unwrap();
    claims_end_and_b_writes(&bridge, &mut b, "A's claim ends with its process").await;
    let activity = b.call("getActivityLog", json!({"limit": 50})).await;
    assert!(
        activity
            .to_string()
            .contains("is gone: no agent can come back"),
        "{activity}"
    );
    bridge.stop_async().await;
}

/// What an agent knows of other agents' changes outlives a restart of the bridge: the
/// notice waiting for it, and the files it read (a change after the restart is
/// noticed).
#[tokio::test]
async fn notices_and_what_an_agent_read_survive_a_restart() {
    let place = Place::new();
    let opts = || {
        place
            .options()
            .file("b.py", "b = 1\n")
            .file("c.py", "c = 1\n")
            .file("d.py", "d = 1\n")
    };
    let bridge = Bridge::launch(opts()).await;
    // Live processes, so that both sessions are restored.
    let me = std::process::id();
    let mut cli = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let other = cli.id();
    let a = relay_agent(&bridge, me, 792).await;
    let b = relay_agent(&bridge, other, 793).await;
    // A reads b.py and c.py; B edits b.py: A's notice waits.
    hook(&bridge, me, read(&bridge, "b.py")).await;
    let mut read_c = read(&bridge, "c.py");
    read_c["tool_use_id"] = json!("toolu_c");
    hook(&bridge, me, read_c).await;
    hook(&bridge, other, edit(&bridge, "PostToolUse", "b.py")).await;
    bridge.stop_async().await;
    drop((a, b));

    let bridge = Bridge::launch(opts()).await;
    let _a = relay_agent(&bridge, me, 792).await;
    let _b = relay_agent(&bridge, other, 793).await;
    let (_, answer) = hook(&bridge, me, before_read(&bridge, "d.py")).await;
    let notice = context(&answer).expect("the notice from before the restart");
    assert!(
        notice.contains("b.py") && !notice.contains("c.py"),
        "{notice}"
    );
    // B edits c.py, which A read before the restart: A is told.
    let mut edit_c = edit(&bridge, "PostToolUse", "c.py");
    edit_c["tool_use_id"] = json!("toolu_c2");
    hook(&bridge, other, edit_c).await;
    let mut next = before_read(&bridge, "d.py");
    next["tool_use_id"] = json!("toolu_d2");
    let (_, answer) = hook(&bridge, me, next).await;
    let notice = context(&answer).expect("a notice for a file read before the restart");
    assert!(notice.contains("c.py"), "{notice}");
    cli.kill().unwrap();
    cli.wait().unwrap();
    bridge.stop_async().await;
}

#[tokio::test]
async fn claims_follow_their_agent_back_into_a_new_session_after_a_restart() {
    let place = Place::new();
    let opts = || place.options().file("a.txt", "a\n");
    let bridge = Bridge::launch(opts()).await;
    let me = std::process::id();
    let mut a = relay_agent(&bridge, me, 790).await;
    let claimed = a
        .call("claimFiles", json!({"paths": ["a.txt"], "reason": "mine"}))
        .await;
    assert!(!is_error(&claimed), "{claimed}");
    bridge.stop_async().await;
    drop(a);

    // The same client process comes back: its new session holds the claim.
    let bridge = Bridge::launch(opts()).await;
    let mut again = relay_agent(&bridge, me, 790).await;
    let mut other = relay_agent(&bridge, 96102, 791).await;
    let listed = bridge
        .wait_status("the claim is the returning agent's", |s| {
            let held = s["claims"]["held"].as_array()?;
            (held.len() == 1).then(|| held[0].clone())
        })
        .await;
    let theirs = json_text(&again.call("listClaims", json!({})).await);
    assert_eq!(theirs["claims"][0]["yours"], true, "{theirs} {listed}");
    let overwrite = json!({"filePath": "a.txt", "content": "b\n", "overwrite": true});
    let refused = other.call("createFile", overwrite.clone()).await;
    assert!(
        is_error(&refused) && text(&refused).contains("mine"),
        "{refused}"
    );
    let (_, answer) = hook(&bridge, me, edit(&bridge, "PreToolUse", "a.txt")).await;
    assert_eq!(answer, Value::Null, "the holder's native edit goes through");
    let written = again.call("createFile", overwrite).await;
    assert!(!is_error(&written), "{written}");
    bridge.stop_async().await;
}

fn with_policy(policy: &str) -> Options {
    Options::default()
        .file("automation.json", policy)
        .set("automation.policy", "automation.json")
}

pub(crate) fn stop(bridge: &Bridge, active: bool) -> Value {
    json!({
        "session_id": "c0ffee00-0000-4000-8000-000000000001",
        "cwd": bridge.workspace,
        "hook_event_name": "Stop",
        "stop_hook_active": active,
        "last_assistant_message": "all done",
    })
}

fn prompt(bridge: &Bridge, text: &str) -> Value {
    json!({
        "session_id": "c0ffee00-0000-4000-8000-000000000001",
        "cwd": bridge.workspace,
        "hook_event_name": "UserPromptSubmit",
        "prompt": text,
    })
}

#[tokio::test]
async fn a_failing_done_gate_keeps_the_agent_working_at_most_max_holds_times_per_prompt() {
    let bridge = Bridge::launch(with_policy(
        r#"{"onAgentStop": {"action": "command", "command": "git",
             "args": ["rev-parse", "--verify", "-q", "refs/tags/fixed"], "maxHolds": 2}}"#,
    ))
    .await;
    let root = bridge.workspace.clone();
    crate::automation_events::git(&root, &["init", "-q", "-b", "main"]);
    crate::automation_events::git(&root, &["commit", "-q", "--allow-empty", "-m", "first"]);
    let _a = relay_agent(&bridge, 97001, 784).await;
    let held = |answer: &Value| {
        (answer["decision"] == "block").then(|| answer["reason"].as_str().unwrap_or("").to_string())
    };
    // The check fails: the agent is kept working with the failure as the reason.
    hook(&bridge, 97001, prompt(&bridge, "p1")).await;
    let (_, answer) = hook(&bridge, 97001, stop(&bridge, false)).await;
    let reason = held(&answer).expect("held");
    assert!(reason.contains("onAgentStop"), "{reason}");
    assert!(
        reason.contains("git rev-parse --verify -q refs/tags/fixed"),
        "{reason}"
    );
    assert!(reason.contains("exited with 1"), "{reason}");
    let (_, answer) = hook(&bridge, 97001, stop(&bridge, true)).await;
    assert!(held(&answer).is_some(), "the second hold: {answer}");
    // The holds for this prompt are spent: the agent stops; no loop.
    let (_, answer) = hook(&bridge, 97001, stop(&bridge, true)).await;
    assert_eq!(answer, Value::Null);
    let record = crate::automation_events::hook(&bridge.status().await, "onAgentStop");
    assert_eq!(record["lastSkip"]["kind"], "holdsSpent", "{record}");
    // A new prompt is checked again; once fixed, the agent stops.
    hook(&bridge, 97001, prompt(&bridge, "p2")).await;
    let (_, answer) = hook(&bridge, 97001, stop(&bridge, false)).await;
    assert!(held(&answer).is_some());
    crate::automation_events::git(&root, &["tag", "fixed"]);
    let (_, answer) = hook(&bridge, 97001, stop(&bridge, true)).await;
    assert_eq!(answer, Value::Null);
    let record = crate::automation_events::hook(&bridge.status().await, "onAgentStop");
    assert_eq!(record["lastFired"]["result"], "passed", "{record}");
    let stops = bridge.status().await["recentActivity"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "agent_stopped")
        .count();
    assert_eq!(stops, 5, "each stop is in the timeline");
    bridge.stop_async().await;
}

#[tokio::test]
async fn native_work_fires_automation_hooks() {
    let bridge = Bridge::launch(
        with_policy(
            r#"{
              "onAgentEdited": {"patterns": ["src/**"], "action": "notify",
                                "message": "edited {{file}} with {{tool}} by {{agent}}", "cooldownMs": 5000},
              "onAgentCommandFailed": {"commands": ["cargo"], "action": "notify",
                                       "message": "{{program}} failed: {{error}}"},
              "onPromptSubmitted": {"action": "notify", "message": "prompt from {{session}}"},
              "onClaimRefused": {"action": "notify", "message": "{{agent}} was refused {{file}} held by {{holder}}"}
            }"#,
        )
        .file("src/a.py", "a\n"),
    )
    .await;
    let mut listener = crate::automation_events::listening_agent(&bridge).await;
    let mut a = relay_agent(&bridge, 98001, 785).await;
    let a_id = json_text(&a.call("getBridgeStatus", json!({})).await)["yourSessionId"]
        .as_str()
        .unwrap()
        .to_string();
    hook(&bridge, 98001, edit(&bridge, "PostToolUse", "src/a.py")).await;
    let n = crate::automation_events::notice(&mut listener, "edited src/a.py").await;
    assert!(
        n["message"]
            .as_str()
            .unwrap()
            .contains(&format!("with Edit by claude-code {a_id}")),
        "{n}"
    );
    let mut failed = tool_event(
        &bridge,
        "PostToolUseFailure",
        "Bash",
        json!({"command": "cargo test --all"}),
    );
    failed["error"] = json!("Exit code 101");
    hook(&bridge, 98001, failed).await;
    crate::automation_events::notice(&mut listener, "cargo failed: Exit code 101").await;
    let prompt = json!({
        "session_id": "x", "cwd": bridge.workspace, "hook_event_name": "UserPromptSubmit",
        "prompt_id": "p1", "prompt": "fix the parser"
    });
    hook(&bridge, 98001, prompt).await;
    crate::automation_events::notice(&mut listener, &format!("prompt from {a_id}")).await;
    let claimed = listener
        .call("claimFiles", json!({"paths": ["src"], "reason": "mine"}))
        .await;
    assert!(!is_error(&claimed), "{claimed}");
    let (_, answer) = hook(&bridge, 98001, edit(&bridge, "PreToolUse", "src/a.py")).await;
    assert!(deny_reason(&answer).is_some());
    crate::automation_events::notice(
        &mut listener,
        &format!("claude-code {a_id} was refused src/a.py"),
    )
    .await;
    bridge.stop_async().await;
}

#[test]
fn init_installs_the_hooks_beside_the_server_and_remove_takes_out_exactly_them() {
    let t = tempfile::tempdir().unwrap();
    let config = t.path().join("claude");
    std::fs::create_dir_all(&config).unwrap();
    let settings = config.join("settings.json");
    std::fs::write(
        &settings,
        r#"{"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}]}}"#,
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = command(&config)
            .args(args)
            .current_dir(t.path())
            .env("HOME", t.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let said = run(&["init"]);
    assert!(said.contains("Installed hooks"), "{said}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(v["model"], "opus");
    let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(
        pre[0]["hooks"][0]["command"], "audit.sh",
        "the user's hook stays first"
    );
    let ours = pre[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(ours.ends_with("ide-bridge' hook"), "{ours}");
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PermissionRequest",
        "Stop",
        "SessionEnd",
    ] {
        assert!(v["hooks"][event].is_array(), "{event}: {v}");
    }
    assert!(v["hooks"].get("PostToolUse").is_none(), "{v}");
    let claude_json: Value =
        serde_json::from_str(&std::fs::read_to_string(config.join(".claude.json")).unwrap())
            .unwrap();
    assert_eq!(
        claude_json["mcpServers"]["ide-bridge"]["args"],
        json!(["mcp"])
    );
    // No secret lands in a settings file.
    assert!(!std::fs::read_to_string(&settings)
        .unwrap()
        .contains("Bearer"));
    let again = run(&["init"]);
    assert!(again.contains("already in"), "{again}");
    let printed = run(&["init", "--print"]);
    assert!(
        printed.contains("PreToolUse") && printed.contains("\"async\": true"),
        "{printed}"
    );
    // It names the files `init` writes (the config directory's), and leaves the hooks
    // out with --no-hooks, as `init` does.
    assert!(
        printed.contains(&format!(
            "Claude Code ({}",
            config.join(".claude.json").display()
        )) && printed.contains(&settings.display().to_string()),
        "{printed}"
    );
    let printed = run(&["init", "--print", "--no-hooks"]);
    assert!(!printed.contains("PreToolUse"), "{printed}");
    // Claude Desktop starts servers outside any project: its entry names the one `init`
    // runs in (a placeholder outside one).
    assert!(printed.contains("\"/path/to/your/project\""), "{printed}");
    let project = t.path().join("proj");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join("src")).unwrap();
    let out = command(&config)
        .args(["init", "--print"])
        .current_dir(project.join("src"))
        .env("HOME", t.path())
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    let desktop = printed
        .split("Claude Desktop")
        .nth(1)
        .and_then(|rest| rest.split("Cursor").next())
        .unwrap();
    let named = format!("\"--workspace\",\n        \"{}\"", project.display());
    assert!(desktop.contains(&named), "{desktop}");
    let removed = run(&["init", "--remove"]);
    assert!(
        removed.contains("Removed the ide-bridge hooks"),
        "{removed}"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(v["model"], "opus");
    assert_eq!(
        v["hooks"],
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}]})
    );
    let only_server = run(&["init", "--no-hooks"]);
    assert!(!only_server.contains("hooks"), "{only_server}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(v["hooks"].as_object().unwrap().len(), 1);
    // No lock file is left beside the files it edited.
    let locks: Vec<_> = std::fs::read_dir(&config)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".lock"))
        .map(|e| e.file_name())
        .collect();
    assert!(locks.is_empty(), "{locks:?}");
    // A name `init` refuses is refused by --print too, as a bad argument.
    let out = command(&config)
        .args(["init", "--print", "--name", "bad name/x"])
        .env("HOME", t.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// A transcript line recording how the call `id` ended, as the CLI appends it.
pub(crate) fn result_line(id: &str, is_error: bool, text: &str) -> String {
    json!({
        "type": "user",
        "timestamp": humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
        "message": {"role": "user", "content": [
            {"tool_use_id": id, "type": "tool_result", "content": text, "is_error": is_error}
        ]},
    })
    .to_string()
}

#[tokio::test]
async fn without_hooks_after_tools_the_transcript_says_how_each_call_ended() {
    let bridge = Bridge::launch(Options::default().file("a.py", "a\n").file("b.py", "b\n")).await;
    let _a = relay_agent(&bridge, 99101, 786).await;
    let _b = relay_agent(&bridge, 99102, 786).await;
    let projects = bridge.config_dir.join("projects").join("-w");
    std::fs::create_dir_all(&projects).unwrap();
    let a_transcript = projects.join("a.jsonl");
    let b_transcript = projects.join("b.jsonl");
    std::fs::write(&a_transcript, "{\"type\":\"queue-operation\"}\n").unwrap();
    std::fs::write(&b_transcript, "").unwrap();
    let with = |mut v: Value, transcript: &std::path::Path, id: &str| {
        v["transcript_path"] = json!(transcript);
        v["tool_use_id"] = json!(id);
        v
    };
    let append = |path: &std::path::Path, line: String| {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        writeln!(f, "{line}").unwrap();
    };
    // B reads b.py: its hook before the Read, then the transcript records the result.
    hook(
        &bridge,
        99102,
        with(before_read(&bridge, "b.py"), &b_transcript, "toolu_b1"),
    )
    .await;
    append(&b_transcript, result_line("toolu_b1", false, "1\tb"));
    // A runs a failing command, then edits b.py.
    let bash = tool_event(
        &bridge,
        "PreToolUse",
        "Bash",
        json!({"command": "cargo test"}),
    );
    hook(&bridge, 99101, with(bash, &a_transcript, "toolu_a1")).await;
    append(
        &a_transcript,
        result_line("toolu_a1", true, "Exit code 101"),
    );
    hook(
        &bridge,
        99101,
        with(
            edit(&bridge, "PreToolUse", "b.py"),
            &a_transcript,
            "toolu_a2",
        ),
    )
    .await;
    append(&a_transcript, result_line("toolu_a2", false, "updated"));
    // Their stops read the transcripts: the calls end, with their outcomes.
    let stop_of = |t: &std::path::Path| {
        let mut v = stop(&bridge, false);
        v["transcript_path"] = json!(t);
        v
    };
    hook(&bridge, 99102, stop_of(&b_transcript)).await;
    hook(&bridge, 99101, stop_of(&a_transcript)).await;
    let native: Vec<Value> = bridge.status().await["recentActivity"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["native"] == true)
        .cloned()
        .collect();
    let mut calls: Vec<(String, String, String)> = native
        .iter()
        .map(|e| {
            (
                e["tool"].as_str().unwrap().to_string(),
                e["status"].as_str().unwrap().to_string(),
                e["summary"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    calls.sort();
    assert_eq!(
        calls,
        vec![
            (
                "Bash".into(),
                "error".into(),
                "$ cargo test → Exit code 101".into()
            ),
            ("Edit".into(), "success".into(), "b.py".into()),
            ("Read".into(), "success".into(), "b.py".into()),
        ],
        "{native:?}"
    );
    // A's edit of b.py, which B read: B's next call carries the notice.
    let (_, answer) = hook(
        &bridge,
        99102,
        with(before_read(&bridge, "a.py"), &b_transcript, "toolu_b2"),
    )
    .await;
    assert!(
        context(&answer).is_some_and(|c| c.contains("b.py")),
        "{answer}"
    );
    // A transcript outside the CLI's projects directory is not read.
    let outside = bridge.workspace.join("fake.jsonl");
    std::fs::write(&outside, "").unwrap();
    hook(
        &bridge,
        99101,
        with(before_read(&bridge, "a.py"), &outside, "toolu_a3"),
    )
    .await;
    append(&outside, result_line("toolu_a3", false, "x"));
    hook(&bridge, 99101, stop_of(&outside)).await;
    let reads_of_a = bridge.status().await["recentActivity"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["native"] == true && e["summary"] == "a.py")
        .count();
    assert_eq!(reads_of_a, 0);
    bridge.stop_async().await;
}

/// A call whose hook never reached the bridge (the CLI gave up on it, or it was lost)
/// is found in the transcript when the agent's next hooks read it, and recorded once.
#[tokio::test]
async fn a_call_without_its_hook_is_found_in_the_transcript() {
    let bridge = Bridge::launch(Options::default().file("a.py", "a\n").file("b.py", "b\n")).await;
    let _a = relay_agent(&bridge, 99131, 786).await;
    let projects = bridge.config_dir.join("projects").join("-w");
    std::fs::create_dir_all(&projects).unwrap();
    let transcript = projects.join("unheard.jsonl");
    let a_py = bridge.workspace.join("a.py").display().to_string();
    let used = json!({
        "type": "assistant",
        "timestamp": humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
        "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_unheard", "name": "Read", "input": {"file_path": a_py}},
            {"type": "tool_use", "id": "toolu_own", "name": "mcp__ide-bridge__readFile", "input": {}}
        ]},
    });
    std::fs::write(
        &transcript,
        format!("{used}\n{}\n", result_line("toolu_unheard", false, "1\ta")),
    )
    .unwrap();
    // The next call's hook is the first the bridge hears; then the turn ends.
    let mut read = before_read(&bridge, "b.py");
    read["transcript_path"] = json!(transcript);
    read["tool_use_id"] = json!("toolu_heard");
    hook(&bridge, 99131, read).await;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    writeln!(f, "{}", result_line("toolu_heard", false, "1\tb")).unwrap();
    drop(f);
    for _ in 0..2 {
        let mut stopped = stop(&bridge, false);
        stopped["transcript_path"] = json!(transcript);
        hook(&bridge, 99131, stopped).await;
    }
    let reads = bridge
        .wait_status("both reads in the timeline", |s| {
            let reads: Vec<String> = s["recentActivity"]
                .as_array()?
                .iter()
                .filter(|e| e["native"] == true)
                .map(|e| {
                    format!(
                        "{} {}",
                        e["tool"].as_str().unwrap_or(""),
                        e["summary"].as_str().unwrap_or("")
                    )
                })
                .collect();
            (reads.len() >= 2).then_some(reads)
        })
        .await;
    let mut sorted = reads.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        ["Read a.py", "Read b.py"],
        "once each, none of the bridge's own: {reads:?}"
    );
    bridge.stop_async().await;
}

/// An Edit whose hook the bridge never heard (the hook failed, or it came to the bridge
/// before a restart), followed only by the turn's Stop: it is found in the transcript,
/// and its change is kept hunk by hunk from the text its result says the file had.
#[tokio::test]
async fn an_edit_no_hook_announced_is_recorded_with_its_change_at_the_stop() {
    let bridge = Bridge::launch(Options::default().file("a.py", "a = 1\nb = 2\n")).await;
    let mut a = relay_agent(&bridge, 99141, 786).await;
    let projects = bridge.config_dir.join("projects").join("-w");
    std::fs::create_dir_all(&projects).unwrap();
    let transcript = projects.join("silent.jsonl");
    let a_py = bridge.workspace.join("a.py");
    let now = || humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
    let used = json!({
        "type": "assistant", "timestamp": now(),
        "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_silent", "name": "Edit",
             "input": {"file_path": a_py, "old_string": "b = 2", "new_string": "b = 3"}}
        ]},
    });
    // The CLI edits the file, then writes the result with the text it had.
    std::fs::write(&a_py, "a = 1\nb = 3\n").unwrap();
    let result = json!({
        "type": "user", "timestamp": now(),
        "message": {"role": "user", "content": [
            {"tool_use_id": "toolu_silent", "type": "tool_result", "content": "The file a.py has been updated."}
        ]},
        "toolUseResult": {"filePath": a_py, "oldString": "b = 2", "newString": "b = 3",
                          "originalFile": "a = 1\nb = 2\n"},
    });
    std::fs::write(&transcript, format!("{used}\n{result}\n")).unwrap();
    let mut stopped = stop(&bridge, false);
    stopped["transcript_path"] = json!(transcript);
    hook(&bridge, 99141, stopped).await;
    bridge
        .wait_status("the edit in the timeline", |s| {
            s["recentActivity"]
                .as_array()?
                .iter()
                .find(|e| e["native"] == true && e["tool"] == "Edit" && e["summary"] == "a.py")
                .cloned()
        })
        .await;
    let listed = json_text(&a.call("listChanges", json!({"file": "a.py"})).await);
    let hunks = &listed["changes"][0]["hunks"];
    assert_eq!(hunks[0]["old"], json!(["b = 2\n"]), "{listed}");
    assert_eq!(hunks[0]["new"], json!(["b = 3\n"]), "{listed}");
    let who = json_text(
        &a.call("whoChanged", json!({"file": "a.py", "line": 2}))
            .await,
    );
    let session = listed["changes"][0]["session"].as_str().unwrap();
    assert_eq!(who["lines"][0]["session"], session, "{who}");
    assert!(
        who["lines"][0]["by"]
            .as_str()
            .is_some_and(|b| b.ends_with(session)),
        "{who}"
    );
    bridge.stop_async().await;
}

/// A file an agent's own shell command names and changes (`sed -i`) is that agent's
/// in `whoChanged`, not the person's.
#[tokio::test]
async fn lines_an_agents_own_command_changed_are_the_agents() {
    let bridge = Bridge::launch(Options::default().file("a.py", "a = 1\nb = 2\nc = 3\n")).await;
    let mut a = relay_agent(&bridge, 99161, 786).await;
    a.call("readFile", json!({"filePath": "a.py"})).await;
    let wrote = a
        .call(
            "replaceBlock",
            json!({"filePath": "a.py", "oldContent": "b = 2", "newContent": "b = 20"}),
        )
        .await;
    assert!(!is_error(&wrote), "{wrote}");
    // The write is in the change sets before the person touches the file.
    for _ in 0..100 {
        let listed = json_text(&a.call("listChanges", json!({"file": "a.py"})).await);
        if listed["changes"].as_array().is_some_and(|c| !c.is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The person changes line 1 before the command runs: that stays the person's.
    std::fs::write(bridge.workspace.join("a.py"), "a = 100\nb = 20\nc = 3\n").unwrap();
    let sed = json!({"command": "sed -i 's/c = 3/c = 30/' a.py"});
    let mut pre = tool_event(&bridge, "PreToolUse", "Bash", sed.clone());
    pre["tool_use_id"] = json!("toolu_sed");
    hook(&bridge, 99161, pre).await;
    std::fs::write(bridge.workspace.join("a.py"), "a = 100\nb = 20\nc = 30\n").unwrap();
    let mut post = tool_event(&bridge, "PostToolUse", "Bash", sed);
    post["tool_use_id"] = json!("toolu_sed");
    hook(&bridge, 99161, post).await;
    let me = json_text(&a.call("getBridgeStatus", json!({})).await)["yourSessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let mut who = Value::Null;
    for _ in 0..100 {
        who = json_text(
            &a.call("whoChanged", json!({"file": "a.py", "line": 3}))
                .await,
        );
        if who["lines"][0]["session"] == me.as_str() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(who["lines"][0]["session"], me.as_str(), "{who}");
    assert!(
        who["lines"][0]["by"]
            .as_str()
            .is_some_and(|b| b.ends_with(&me)),
        "{who}"
    );
    let first = json_text(
        &a.call("whoChanged", json!({"file": "a.py", "line": 1}))
            .await,
    );
    assert_eq!(first["lines"][0]["by"], "the person", "{first}");
    bridge.stop_async().await;
}

/// The CLI may have written a call's result before the bridge hears the hook that
/// announced the call (the first call of a conversation on a busy machine): the first
/// read of a transcript looks back over its recent past.
#[tokio::test]
async fn a_result_written_before_its_hook_arrived_still_ends_the_call() {
    let bridge = Bridge::launch(Options::default().file("a.py", "a\n")).await;
    let _a = relay_agent(&bridge, 99121, 786).await;
    let projects = bridge.config_dir.join("projects").join("-w");
    std::fs::create_dir_all(&projects).unwrap();
    let transcript = projects.join("early.jsonl");
    // Earlier lines of the conversation, then the call's result, already on disk.
    let mut text = "{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}\n".repeat(50);
    text.push_str(&result_line("toolu_early", false, "1\ta"));
    text.push('\n');
    std::fs::write(&transcript, text).unwrap();
    let mut read = before_read(&bridge, "a.py");
    read["transcript_path"] = json!(transcript);
    read["tool_use_id"] = json!("toolu_early");
    hook(&bridge, 99121, read).await;
    let mut stopped = stop(&bridge, false);
    stopped["transcript_path"] = json!(transcript);
    hook(&bridge, 99121, stopped).await;
    bridge
        .wait_status("the early result in the timeline", |s| {
            s["recentActivity"]
                .as_array()?
                .iter()
                .find(|e| e["native"] == true && e["summary"] == "a.py" && e["status"] == "success")
                .cloned()
        })
        .await;
    bridge.stop_async().await;
}

/// The CLI may write the turn's last result well after its stop hook (a busy machine):
/// the bridge keeps looking for it in the background, past the first few seconds.
#[tokio::test]
async fn the_last_call_of_a_turn_is_recorded_when_its_result_is_written_seconds_after_the_stop() {
    let bridge = Bridge::launch(Options::default().file("a.py", "a\n")).await;
    let _a = relay_agent(&bridge, 99111, 786).await;
    let projects = bridge.config_dir.join("projects").join("-w");
    std::fs::create_dir_all(&projects).unwrap();
    let transcript = projects.join("late.jsonl");
    std::fs::write(&transcript, "").unwrap();
    let mut read = before_read(&bridge, "a.py");
    read["transcript_path"] = json!(transcript);
    read["tool_use_id"] = json!("toolu_late");
    hook(&bridge, 99111, read).await;
    let mut stopped = stop(&bridge, false);
    stopped["transcript_path"] = json!(transcript);
    hook(&bridge, 99111, stopped).await;
    let reads = || async {
        bridge.status().await["recentActivity"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["native"] == true && e["summary"] == "a.py")
            .count()
    };
    // Past the first 4 s of looking again, then the result appears.
    tokio::time::sleep(Duration::from_millis(4_500)).await;
    assert_eq!(reads().await, 0, "no result written yet");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    writeln!(f, "{}", result_line("toolu_late", false, "1\ta")).unwrap();
    drop(f);
    bridge
        .wait_status("the late result in the timeline", |s| {
            s["recentActivity"]
                .as_array()?
                .iter()
                .find(|e| e["native"] == true && e["summary"] == "a.py")
                .cloned()
        })
        .await;
    bridge.stop_async().await;
}

#[tokio::test]
async fn a_sub_agents_calls_end_from_its_own_transcript() {
    let bridge = Bridge::launch(Options::default().file("a.py", "a\n")).await;
    let _a = relay_agent(&bridge, 99201, 787).await;
    let projects = bridge.config_dir.join("projects").join("-w");
    let conversation = projects.join("c.jsonl");
    let sub_dir = projects.join("c").join("subagents");
    std::fs::create_dir_all(&sub_dir).unwrap();
    std::fs::write(&conversation, "").unwrap();
    let mut bash = tool_event(
        &bridge,
        "PreToolUse",
        "Bash",
        json!({"command": "make check"}),
    );
    bash["transcript_path"] = json!(conversation);
    bash["tool_use_id"] = json!("toolu_s1");
    bash["agent_id"] = json!("a1b2c3");
    hook(&bridge, 99201, bash.clone()).await;
    // The sub-agent's result is in its own transcript, not the conversation's.
    std::fs::write(
        sub_dir.join("agent-a1b2c3.jsonl"),
        result_line("toolu_s1", true, "Exit code 2\nmake: *** [check] Error 2") + "\n",
    )
    .unwrap();
    let mut stop = stop(&bridge, false);
    stop["transcript_path"] = json!(conversation);
    hook(&bridge, 99201, stop).await;
    let ended = bridge
        .wait_status("the sub-agent's call ended", |s| {
            s["recentActivity"]
                .as_array()?
                .iter()
                .find(|e| e["native"] == true && e["tool"] == "Bash")
                .cloned()
        })
        .await;
    assert_eq!(ended["status"], "error", "{ended}");
    assert_eq!(ended["summary"], "$ make check → Exit code 2", "{ended}");
    // An agent id that could leave the directory is not followed.
    bash["tool_use_id"] = json!("toolu_s2");
    bash["agent_id"] = json!("../../x");
    let (status, _) = hook(&bridge, 99201, bash).await;
    assert_eq!(status, 200);
    bridge.stop_async().await;
}

/// Issue 31, item 7, through the binary: ten `init` runs at once keep all ten servers;
/// a dangling `.claude.json` symlink stays a symlink and its target is written; a FIFO
/// in its place is refused at once with the reason, not waited on.
#[test]
fn init_runs_at_once_keep_every_entry_and_links_and_fifos_are_handled() {
    let t = tempfile::tempdir().unwrap();
    let config = t.path().join("claude");
    std::fs::create_dir_all(&config).unwrap();
    let children: Vec<_> = (0..10)
        .map(|i| {
            command(&config)
                .args(["init", "--no-hooks", "--name", &format!("s{i}")])
                .env("HOME", t.path())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let file = config.join(".claude.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let servers = v["mcpServers"].as_object().unwrap();
    assert_eq!(servers.len(), 10, "{v}");

    // A dangling symlink (dotfiles kept elsewhere, not written yet).
    std::fs::remove_file(&file).unwrap();
    let dotfiles = t.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::os::unix::fs::symlink(dotfiles.join("claude.json"), &file).unwrap();
    let out = command(&config)
        .args(["init", "--no-hooks"])
        .env("HOME", t.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(std::fs::symlink_metadata(&file)
        .unwrap()
        .file_type()
        .is_symlink());
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dotfiles.join("claude.json")).unwrap())
            .unwrap();
    assert!(v["mcpServers"]["ide-bridge"].is_object(), "{v}");

    // A FIFO.
    std::fs::remove_file(&file).unwrap();
    mkfifo(&file);
    let mut child = command(&config)
        .args(["init", "--no-hooks"])
        .env("HOME", t.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("init hung on a FIFO");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("FIFO"),
        "{out:?}"
    );
}

/// The transcript's last minute is read again after a restart (calls that ended while
/// the bridge was down are found there): the calls recorded before the restart are not
/// recorded a second time, in the timeline or the change sets.
async fn the_calls_of_the_last_minute_are_not_recorded_again_after(crash: bool) {
    let place = Place::new();
    let opts = || {
        place
            .options()
            .set("sessions.grace_period_ms", 60_000)
            .file("a.py", "a = 1\nb = 2\n")
    };
    let bridge = Bridge::launch(opts()).await;
    // A live process, so that the session is restored after the restart.
    let me = std::process::id();
    let _a = relay_agent(&bridge, me, 787).await;
    let projects = bridge.config_dir.join("projects").join("-w");
    std::fs::create_dir_all(&projects).unwrap();
    let transcript = projects.join("again.jsonl");
    let a_py = bridge.workspace.join("a.py");
    let now = || humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
    let used = json!({
        "type": "assistant", "timestamp": now(),
        "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_once", "name": "Edit",
             "input": {"file_path": a_py, "old_string": "b = 2", "new_string": "b = 3"}}
        ]},
    });
    let mut pre = tool_event(
        &bridge,
        "PreToolUse",
        "Edit",
        json!({"file_path": a_py, "old_string": "b = 2", "new_string": "b = 3"}),
    );
    pre["transcript_path"] = json!(transcript);
    pre["tool_use_id"] = json!("toolu_once");
    std::fs::write(&transcript, format!("{used}\n")).unwrap();
    hook(&bridge, me, pre).await;
    std::fs::write(&a_py, "a = 1\nb = 3\n").unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    writeln!(f, "{}", result_line("toolu_once", false, "updated")).unwrap();
    drop(f);
    let stop_here = || {
        let mut stopped = stop(&bridge, false);
        stopped["transcript_path"] = json!(transcript);
        stopped
    };
    hook(&bridge, me, stop_here()).await;
    let edits = |s: &Value| {
        s["recentActivity"]
            .as_array()
            .map(|all| {
                all.iter()
                    .filter(|e| e["native"] == true && e["tool"] == "Edit")
                    .count()
            })
            .unwrap_or(0)
    };
    bridge
        .wait_status("the edit recorded", |s| (edits(s) == 1).then_some(()))
        .await;
    let session = bridge.status().await["sessions"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    if crash {
        // Killed once the timeline and the change sets are on disk, before any
        // checkpoint says the call ended. The session is in the checkpoint within a
        // second of connecting, not at the next interval (30 s): the agent finds it
        // again after the crash.
        let on_disk = |file: &str, what: &str| {
            std::fs::read_to_string(place.state_dir().join(file)).is_ok_and(|t| t.contains(what))
        };
        wait_for(
            "the call, its change and the session on disk",
            DEADLINE,
            || {
                (on_disk("activity.jsonl", "toolu_once")
                    && on_disk("changes.json", "b = 3")
                    && on_disk("checkpoint.json", &session))
                .then_some(())
            },
        );
        bridge.kill9();
    } else {
        bridge.stop_async().await;
    }

    let bridge = Bridge::launch(opts()).await;
    let mut a = relay_agent(&bridge, me, 787).await;
    // The agent's next turn ends: its hook reads the transcript's last minute again.
    let mut stopped = stop(&bridge, false);
    stopped["transcript_path"] = json!(transcript);
    let (status, _) = hook(&bridge, me, stopped).await;
    assert_eq!(status, 200);
    let listed = json_text(&a.call("listChanges", json!({"file": "a.py"})).await);
    assert_eq!(listed["changes"].as_array().unwrap().len(), 1, "{listed}");
    let status = bridge.status().await;
    assert_eq!(edits(&status), 1, "{}", status["recentActivity"]);
    assert_eq!(
        status["sessions"][0]["id"], session,
        "the agent's own session again: {}",
        status["sessions"]
    );
    bridge.stop_async().await;
}

#[tokio::test]
async fn a_restart_does_not_record_the_calls_of_the_last_minute_again() {
    the_calls_of_the_last_minute_are_not_recorded_again_after(false).await;
}

/// After a crash the checkpoint may be older than the calls: the timeline (on disk at
/// once) says which were recorded. A crash recorded them, and their change, twice.
#[tokio::test]
async fn a_crash_does_not_record_the_calls_of_the_last_minute_again() {
    the_calls_of_the_last_minute_are_not_recorded_again_after(true).await;
}

/// A starting CLI's SessionStart hook (asynchronous) may reach the bridge before the
/// agent's connections do: it waits for them, and the conversation's start is in the
/// timeline.
#[tokio::test]
async fn a_session_start_before_the_agent_connects_waits_for_it() {
    let bridge = Bridge::launch(Options::default()).await;
    let start = json!({
        "session_id": "c0ffee00-0000-4000-8000-000000000009",
        "cwd": bridge.workspace,
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    // The agent connects a moment after its hook was sent.
    let ((answered, _), _agent) = tokio::join!(hook(&bridge, 99151, start), async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        relay_agent(&bridge, 99151, 786).await
    });
    assert_eq!(answered, 200);
    let status = bridge.status().await;
    let started = status["recentActivity"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| {
            e["detail"]
                .as_str()
                .is_some_and(|d| d.contains("c0ffee00-0000-4000-8000-000000000009 started"))
        });
    assert!(started, "{}", status["recentActivity"]);
    assert!(
        bridge
            .metrics()
            .await
            .contains(r#"ide_bridge_hooks_ignored_total{reason="unknownAgent"} 0"#),
        "the hook was not ignored"
    );
}
