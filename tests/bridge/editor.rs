//! The editor side through the real binary, with the extension simulator.

use std::time::Duration;

use serde_json::{json, Value};

use crate::editor_sim::*;
use crate::harness::*;

fn ok() -> Handler {
    handler(|_, _| None)
}

#[tokio::test]
async fn hello_is_shown_and_agents_hear_of_the_editor_at_once() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    let editor = EditorSim::connect(&bridge, ok()).await;
    let changed = agent
        .notification(
            "notifications/tools/list_changed",
            Duration::from_millis(1500),
        )
        .await;
    assert!(
        changed.is_some(),
        "editor connect is announced immediately, not after the 2 s debounce"
    );
    let status = wait_for_async("hello in /status", DEADLINE, || async {
        let s = bridge.status().await;
        (s["extension"]["hello"]["extensionVersion"] == "9.9.9").then_some(s)
    })
    .await;
    assert_eq!(status["extension"]["connected"], true);
    assert_eq!(status["extension"]["circuit"], "closed");
    // The editor hears about agents.
    editor
        .wait_notification("bridge/claudeConnectionChanged", |p| p["agents"] == 1)
        .await;
    drop(agent);
    editor
        .wait_notification("bridge/claudeConnectionChanged", |p| p["agents"] == 0)
        .await;
    // Wrong token: 401 like agents.
    let refused = EditorSim::connect_with_token(bridge.port, "wrong", ok()).await;
    assert!(refused.is_err());
}

#[tokio::test]
async fn a_newer_editor_replaces_the_older_one() {
    let bridge = Bridge::launch(Options::default()).await;
    let first = EditorSim::connect(&bridge, ok()).await;
    let second = EditorSim::connect(&bridge, ok()).await;
    let mut agent = bridge.ready_agent().await;
    agent
        .call(
            "getHover",
            json!({"file": "src/main.rs", "line": 1, "column": 4}),
        )
        .await;
    second.wait_request("extension/getHover", 0).await;
    assert!(
        first.requests().is_empty(),
        "the replaced editor gets nothing"
    );
}

#[tokio::test]
async fn selections_reach_agents_zero_based_and_only_on_change() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    // A model-facing MCP connection (a relay) gets none of the IDE protocol's
    // notifications: MCP SDKs log each unknown one as a validation error.
    let mut relay = crate::hooks::relay_agent(&bridge, 93001, 780).await;
    let editor = EditorSim::connect(&bridge, ok()).await;
    let file = bridge.workspace.join("src/main.rs").display().to_string();
    let sel = json!({"file": file, "startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 12, "selectedText": "println"});
    editor
        .notify("extension/selectionChanged", sel.clone())
        .await;
    let got = agent
        .notification("selection_changed", DEADLINE)
        .await
        .expect("selection_changed");
    let p = &got["params"];
    assert_eq!(p["text"], "println");
    assert!(
        relay
            .notification("selection_changed", Duration::from_millis(300))
            .await
            .is_none(),
        "not for a relay"
    );
    assert_eq!(p["filePath"], file.as_str());
    assert_eq!(p["fileUrl"], format!("file://{file}"));
    assert_eq!(
        p["selection"],
        json!({"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 11}, "isEmpty": false})
    );
    editor.notify("extension/selectionChanged", sel).await;
    assert!(
        agent
            .notification("selection_changed", Duration::from_millis(400))
            .await
            .is_none(),
        "same selection is not repeated"
    );
    let cur = json_text(&agent.call("getCurrentSelection", json!({})).await);
    assert_eq!(
        (cur["success"].clone(), cur["text"].clone()),
        (json!(true), json!("println"))
    );
    let readme = bridge.workspace.join("README.md").display().to_string();
    editor
        .notify("extension/activeFileChanged", json!({"file": readme}))
        .await;
    let active = agent
        .notification("selection_changed", DEADLINE)
        .await
        .expect("active file change");
    assert_eq!(
        (
            active["params"]["text"].clone(),
            active["params"]["filePath"].clone()
        ),
        (json!(""), json!(readme))
    );
}

#[tokio::test]
async fn at_mentions_wait_for_an_agent() {
    let bridge = Bridge::launch(Options::default()).await;
    let editor = EditorSim::connect(&bridge, ok()).await;
    let file = bridge.workspace.join("src/main.rs").display().to_string();
    editor
        .notify(
            "extension/atMentioned",
            json!({"filePath": file, "lineStart": 1, "lineEnd": 2}),
        )
        .await;
    // The mention is queued before any agent exists.
    editor.barrier(&bridge).await;
    let mut agent = bridge.ready_agent().await;
    let m = agent
        .notification("at_mentioned", DEADLINE)
        .await
        .expect("queued mention delivered");
    assert_eq!(m["params"]["filePath"], file.as_str());
}

#[tokio::test]
async fn pushed_diagnostics_answer_get_diagnostics_and_caps_hold() {
    // Over 500 pushes in a minute: raise the notification limit (500 by default).
    let bridge = Bridge::launch(Options::default().set("rate_limit.notifications", 2000)).await;
    let mut agent = bridge.ready_agent().await;
    let editor = EditorSim::connect(&bridge, ok()).await;
    let file = bridge.workspace.join("src/main.rs").display().to_string();
    editor
        .notify("extension/diagnosticsChanged", json!({"file": file, "diagnostics": [
            {"message": "expected `;`\u{1b}[0m", "severity": "error", "line": 2, "column": 5, "endLine": 2, "endColumn": 9, "source": "rust-analyzer", "code": "E0001"}
        ]}))
        .await;
    let uri = format!("file://{file}");
    editor.barrier(&bridge).await;
    let files = json_text(&agent.call("getDiagnostics", json!({"uri": uri})).await);
    assert!(!files.as_array().unwrap().is_empty(), "diagnostics cached");
    assert_eq!(files[0]["uri"], uri.as_str());
    let d = &files[0]["diagnostics"][0];
    assert_eq!(
        (
            d["severity"].clone(),
            d["message"].clone(),
            d["code"].clone()
        ),
        (json!("Error"), json!("expected `;`[0m"), json!("E0001"))
    );
    assert_eq!(d["range"]["start"], json!({"line": 1, "character": 4}));
    // 501 files: 500 kept; 201 files of AI comments: 200 kept.
    for i in 0..501 {
        editor.notify("extension/diagnosticsChanged", json!({"file": format!("/x/f{i}.rs"), "diagnostics": [{"message": "m", "severity": "warning", "line": 1, "column": 1}]})).await;
    }
    let comments: Vec<Value> = (0..201).map(|i| json!({"file": format!("/x/c{i}.rs"), "line": 1, "comment": "AI: fix", "syntax": "//", "fullLine": "// AI: fix"})).collect();
    editor
        .notify("extension/aiCommentsChanged", json!({"comments": comments}))
        .await;
    wait_for_async("caps", DEADLINE, || async {
        let e = bridge.status().await["extension"].clone();
        (e["diagnosticFiles"] == 500 && e["aiCommentFiles"] == 200).then_some(())
    })
    .await;
    // Unknown notifications are ignored, never fatal.
    editor.notify("extension/somethingNew", json!({})).await;
    assert!(!is_error(&agent.call("getBridgeStatus", json!({})).await));
}

#[tokio::test]
async fn open_diff_accept_reject_close_reuse_and_disconnects() {
    let bridge = Bridge::launch(Options::default()).await;
    let diff = |tab: &str| json!({"old_file_path": "/w/a.rs", "new_file_path": "/w/a.rs", "new_file_contents": "new", "tab_name": tab});
    let editor = EditorSim::connect(
        &bridge,
        handler(|m, _| (m == "extension/openDiff").then_some(Reply::Manual)),
    )
    .await;
    let mut agent = bridge.ready_agent().await;

    // Accepted (with the user's edits).
    let id = agent.id();
    agent.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "openDiff", "arguments": diff("t1")}})).await;
    let req = editor.wait_request("extension/openDiff", 0).await;
    assert_eq!(req.params["tabName"], "t1");
    editor
        .respond(
            &req.id,
            json!({"decision": "FILE_SAVED", "content": "edited by user"}),
        )
        .await;
    let r = agent.response_to(&json!(id)).await;
    assert_eq!(
        r["result"]["content"],
        json!([{"type": "text", "text": "FILE_SAVED"}, {"type": "text", "text": "edited by user"}])
    );

    // Rejected by the user.
    let id = agent.id();
    agent.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "openDiff", "arguments": diff("t2")}})).await;
    let req = editor.wait_request("extension/openDiff", 1).await;
    editor
        .respond(&req.id, json!({"decision": "DIFF_REJECTED"}))
        .await;
    let r = agent.response_to(&json!(id)).await;
    assert_eq!(
        r["result"]["content"],
        json!([{"type": "text", "text": "DIFF_REJECTED"}, {"type": "text", "text": "t2"}])
    );

    // close_tab for its tab rejects it, and the editor is told to close it.
    let id = agent.id();
    agent.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "openDiff", "arguments": diff("t3")}})).await;
    editor.wait_request("extension/openDiff", 2).await;
    assert_eq!(
        text(&agent.call("close_tab", json!({"tab_name": "t3"})).await),
        "TAB_CLOSED"
    );
    assert_eq!(
        agent.response_to(&json!(id)).await["result"]["content"][0]["text"],
        "DIFF_REJECTED"
    );
    editor
        .wait_notification("bridge/closeDiff", |p| p["tabName"] == "t3")
        .await;

    // A new diff reusing the tab name rejects the old one.
    let first = agent.id();
    agent.send(&json!({"jsonrpc": "2.0", "id": first, "method": "tools/call", "params": {"name": "openDiff", "arguments": diff("t4")}})).await;
    editor.wait_request("extension/openDiff", 3).await;
    let second = agent.id();
    agent.send(&json!({"jsonrpc": "2.0", "id": second, "method": "tools/call", "params": {"name": "openDiff", "arguments": diff("t4")}})).await;
    assert_eq!(
        agent.response_to(&json!(first)).await["result"]["content"][0]["text"],
        "DIFF_REJECTED"
    );

    // closeAllDiffTabs counts only this session's diffs.
    let mut other = bridge.ready_agent().await;
    let theirs = other.id();
    other.send(&json!({"jsonrpc": "2.0", "id": theirs, "method": "tools/call", "params": {"name": "openDiff", "arguments": diff("theirs")}})).await;
    editor.wait_request("extension/openDiff", 5).await;
    assert_eq!(
        text(&agent.call("closeAllDiffTabs", json!({})).await),
        "CLOSED_1_DIFF_TABS"
    );
    assert_eq!(
        agent.response_to(&json!(second)).await["result"]["content"][0]["text"],
        "DIFF_REJECTED"
    );
    assert!(
        other.try_recv(Duration::from_millis(200)).await.is_none(),
        "the other agent's diff is still pending"
    );

    // The other agent disconnects: its diff is rejected and the editor closes it.
    drop(other);
    editor
        .wait_notification("bridge/closeDiff", |p| p["tabName"] == "theirs")
        .await;

    // The editor disconnects: a pending diff is not left hanging, and nobody rejected
    // it: the agent is told to ask in the terminal (as without an editor).
    let id = agent.id();
    agent.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "openDiff", "arguments": diff("t5")}})).await;
    editor.wait_request("extension/openDiff", 6).await;
    editor.disconnect().await;
    let answer = agent.response_to(&json!(id)).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let said = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        said.contains("\"t5\" cannot be shown") && said.contains("in the terminal"),
        "{answer}"
    );
}

/// Every forwarded tool with valid arguments: the editor receives `extension/<name>`
/// with confined paths and prefixed terminal names. One malformed call each reaches
/// nothing.
#[tokio::test]
async fn every_editor_tool_maps_to_its_extension_request() {
    let bridge = Bridge::launch(Options::default().set("rate_limit.requests", 1000)).await;
    let editor = EditorSim::connect(&bridge, ok()).await;
    let mut agent = bridge.ready_agent().await;
    let main = bridge.workspace.join("src/main.rs").display().to_string();
    let f = json!({"file": "src/main.rs"});
    let at = json!({"file": "src/main.rs", "line": 2, "column": 5});
    let range = json!({"file": "src/main.rs", "startLine": 1, "startColumn": 1, "endLine": 2, "endColumn": 3});
    let cases: Vec<(&str, Value, Value)> = vec![
        ("goToDefinition", at.clone(), json!({"a": 1})),
        (
            "findReferences",
            at.clone(),
            json!({"file": "src/main.rs", "line": 0, "column": 1}),
        ),
        ("getHover", at.clone(), json!({"file": "src/main.rs"})),
        (
            "getCodeActions",
            range.clone(),
            json!({"file": "src/main.rs", "startLine": 1}),
        ),
        (
            "applyCodeAction",
            json!({"file": "src/main.rs", "startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 2, "actionTitle": "Fix"}),
            range.clone(),
        ),
        (
            "renameSymbol",
            json!({"file": "src/main.rs", "line": 1, "column": 4, "newName": "start"}),
            at.clone(),
        ),
        (
            "searchSymbols",
            json!({"query": "main", "maxResults": 200}),
            json!({"query": "main", "maxResults": 201}),
        ),
        ("getDocumentSymbols", f.clone(), json!({})),
        (
            "getCallHierarchy",
            json!({"file": "src/main.rs", "line": 1, "column": 4, "direction": "incoming"}),
            json!({"file": "src/main.rs", "line": 1, "column": 4, "direction": "up"}),
        ),
        ("listTerminals", json!({}), json!({"x": 1})),
        (
            "createTerminal",
            json!({"name": "build"}),
            json!({"name": ""}),
        ),
        (
            "disposeTerminal",
            json!({"name": "build"}),
            json!({"index": -1}),
        ),
        (
            "sendTerminalCommand",
            json!({"text": "ls", "name": "build"}),
            json!({"name": "build"}),
        ),
        (
            "executeInTerminal",
            json!({"command": "ls", "name": "build"}),
            json!({"command": ""}),
        ),
        (
            "waitForTerminalOutput",
            json!({"pattern": "done", "name": "build"}),
            json!({"pattern": "done", "timeoutMs": 1}),
        ),
        (
            "getTerminalOutput",
            json!({"name": "build"}),
            json!({"lines": 0}),
        ),
        ("getDebugState", json!({}), json!({"x": 1})),
        (
            "evaluateInDebugger",
            json!({"expression": "x"}),
            json!({"expression": ""}),
        ),
        (
            "setDebugBreakpoints",
            json!({"file": "src/main.rs", "breakpoints": [{"line": 2}]}),
            json!({"file": "src/main.rs", "breakpoints": [{"condition": "x"}]}),
        ),
        (
            "startDebugging",
            json!({"configName": "Launch"}),
            json!({"configName": 1}),
        ),
        ("stopDebugging", json!({}), json!({"x": 1})),
        ("getOpenFiles", json!({}), json!({"x": 1})),
        ("isDirty", f.clone(), json!({})),
        ("saveFile", f.clone(), json!({"file": 1})),
        ("closeTab", f.clone(), json!({})),
        ("getFileContent", f.clone(), json!({})),
        (
            "createFile",
            json!({"filePath": "made.txt", "content": "x"}),
            json!({"content": "x"}),
        ),
        ("deleteFile", json!({"filePath": "README.md"}), json!({})),
        (
            "renameFile",
            json!({"oldPath": "README.md", "newPath": "R.md"}),
            json!({"oldPath": "README.md"}),
        ),
        (
            "editText",
            json!({"filePath": "src/main.rs", "edits": [{"type": "insert", "line": 1, "column": 1, "text": "x"}]}),
            json!({"filePath": "src/main.rs", "edits": []}),
        ),
        (
            "replaceBlock",
            json!({"filePath": "src/main.rs", "oldContent": "fn", "newContent": "pub fn"}),
            json!({"filePath": "src/main.rs", "oldContent": ""}),
        ),
        ("formatDocument", f.clone(), json!({})),
        ("fixAllLintErrors", f.clone(), json!({})),
        ("organizeImports", f.clone(), json!({})),
        ("getSelection", json!({}), json!({"x": 1})),
        ("getAIComments", json!({}), json!({"x": 1})),
        (
            "watchFiles",
            json!({"id": "w", "pattern": "**/*.rs"}),
            json!({"id": "w"}),
        ),
        ("unwatchFiles", json!({"id": "w"}), json!({})),
        (
            "setDecorations",
            json!({"id": "d", "file": "src/main.rs", "decorations": [{"startLine": 1, "style": "info"}]}),
            json!({"id": "d", "file": "src/main.rs", "decorations": [{"startLine": 1, "style": "loud"}]}),
        ),
        ("clearDecorations", json!({"id": "d"}), json!({"id": 1})),
        ("readClipboard", json!({}), json!({"x": 1})),
        ("writeClipboard", json!({"text": "hi"}), json!({})),
        (
            "getInlayHints",
            json!({"file": "src/main.rs", "startLine": 1, "endLine": 3}),
            json!({"file": "src/main.rs", "startLine": 1}),
        ),
        (
            "getTypeHierarchy",
            json!({"file": "src/main.rs", "line": 1, "column": 1, "direction": "subtypes"}),
            json!({"file": "src/main.rs", "line": 1}),
        ),
        (
            "getWorkspaceSettings",
            json!({"section": "editor"}),
            json!({"section": 1}),
        ),
        (
            "setWorkspaceSetting",
            json!({"key": "editor.tabSize", "value": 4}),
            json!({"key": "editor.tabSize"}),
        ),
        (
            "executeVSCodeCommand",
            json!({"command": "workbench.action.files.save"}),
            json!({"command": ""}),
        ),
        (
            "listVSCodeCommands",
            json!({"filter": "save"}),
            json!({"filter": 1}),
        ),
        ("captureScreenshot", json!({}), json!({"x": 1})),
        (
            "openFile",
            json!({"filePath": "src/main.rs", "startLine": 2}),
            json!({"filePath": 1}),
        ),
        ("getWorkspaceFolders", json!({}), json!([1])),
        ("getOpenEditors", json!({}), json!([1])),
        (
            "checkDocumentDirty",
            json!({"filePath": "src/main.rs"}),
            json!({}),
        ),
        (
            "saveDocument",
            json!({"filePath": "src/main.rs"}),
            json!({}),
        ),
    ];
    let mut failures = Vec::new();
    for (tool, good, bad) in &cases {
        let before = editor.requests().len();
        let resp = agent
            .request("tools/call", json!({"name": tool, "arguments": bad}))
            .await;
        // Refused before reaching the editor: a non-object is the request's own shape
        // (-32602), the rest a tool error (MCP 2025-11-25).
        let refused = if bad.is_object() {
            resp["result"]["isError"] == true
        } else {
            resp["error"]["code"] == -32602
        };
        if !refused {
            failures.push(format!("{tool} malformed {bad}: {resp}"));
        }
        let result = agent.call(tool, good.clone()).await;
        let method = match *tool {
            "getOpenEditors" => "getOpenFiles",
            "checkDocumentDirty" => "isDirty",
            "saveDocument" => "saveFile",
            other => other,
        };
        let wanted = format!("extension/{method}");
        // One socket carries both calls' requests in order, and the good call was
        // answered: a request the malformed call caused would be in this list too.
        let sent: Vec<Received> = editor.requests().split_off(before);
        if sent.iter().filter(|r| r.method == wanted).count() > 1 {
            failures.push(format!("{tool}: a malformed call reached the editor"));
        }
        let Some(req) = sent.into_iter().rev().find(|r| r.method == wanted) else {
            failures.push(format!("{tool}: editor never received {wanted} ({result})"));
            continue;
        };
        for key in ["file", "filePath"] {
            if let Some(p) = req.params[key].as_str() {
                if !p.starts_with('/') {
                    failures.push(format!("{tool}: {key} not absolute: {p}"));
                }
            }
        }
        if let Some(name) = req.params["name"].as_str() {
            if !name.ends_with("-build") || name.len() != 8 + 1 + 5 {
                failures.push(format!("{tool}: terminal name not prefixed: {name}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        cases.len(),
        54,
        "52 extension methods plus the 2 routed Claude tools with other names"
    );
    let r = agent.call("getHover", at.clone()).await;
    assert!(!is_error(&r));
    let _ = main;
}

#[tokio::test]
async fn without_an_editor_editor_tools_say_how_to_connect_one() {
    // Without the bridge's own language servers, which would answer getHover.
    let bridge = Bridge::launch(Options::default().set("lsp.enabled", false)).await;
    let mut agent = bridge.ready_agent().await;
    let r = agent
        .call(
            "getHover",
            json!({"file": "src/main.rs", "line": 1, "column": 1}),
        )
        .await;
    assert!(is_error(&r));
    assert!(text(&r).contains("not connected"), "{r}");
    // Cheap, honest fallbacks say where the answer came from.
    let content = json_text(
        &agent
            .call("getFileContent", json!({"file": "src/main.rs"}))
            .await,
    );
    assert_eq!(content["source"], "workspace");
    assert!(content["content"].as_str().unwrap().contains("fn main"));
}

#[tokio::test]
async fn a_silent_editor_trips_the_circuit_breaker_and_an_answer_closes_it() {
    let bridge = Bridge::launch(Options::default().set("editor.request_timeout_ms", 300)).await;
    // The editor hangs (a modal prompt, a busy extension host) until `hung` is cleared.
    let hung = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let editor = EditorSim::connect(&bridge, {
        let hung = std::sync::Arc::clone(&hung);
        handler(move |_, _| {
            hung.load(std::sync::atomic::Ordering::SeqCst)
                .then_some(Reply::Never)
        })
    })
    .await;
    let mut agent = bridge.ready_agent().await;
    let at = json!({"file": "src/main.rs", "line": 1, "column": 1});
    let symbols = json!({"file": "src/main.rs"});
    let timed_out = agent.call("getHover", at.clone()).await;
    assert!(
        text(&timed_out).starts_with("Extension request timed out after 300 ms"),
        "{timed_out}"
    );
    let status = bridge.status().await;
    assert_eq!(status["extension"]["failures"], 1);
    let timeline = status["recentActivity"].as_array().unwrap().clone();
    assert!(timeline.iter().any(|e| e["event"] == "circuit_opened"));
    // While suspended, requests fail fast and reach nobody.
    let fast = agent.call("getDocumentSymbols", symbols.clone()).await;
    assert!(
        is_error(&fast) && text(&fast).contains("circuit breaker open"),
        "{fast}"
    );
    // After the first backoff (at most 1 s) the next request waits while the bridge
    // probes the editor with a request of its own; the probe unanswered, the request
    // fails fast after a second, and never reaches the editor.
    bridge
        .wait_status("the backoff to end", |s| {
            (s["extension"]["circuit"] == "half-open").then_some(())
        })
        .await;
    let held = agent.call("getDocumentSymbols", symbols.clone()).await;
    assert!(
        is_error(&held) && text(&held).contains("checking whether it answers again"),
        "{held}"
    );
    assert_eq!(
        editor.requests().len(),
        2,
        "the timed-out request and the probe"
    );
    assert_eq!(editor.requests()[1].method, "extension/getWorkspaceFolders");
    assert!(
        editor
            .requests()
            .iter()
            .all(|r| r.method != "extension/getDocumentSymbols"),
        "the waiting request reached nobody"
    );
    // The probe times out on its own: the breaker backs off again …
    bridge
        .wait_status("the probe to time out", |s| {
            (s["extension"]["failures"] == 2).then_some(())
        })
        .await;
    // … and once the editor answers again, the next probe's answer closes it and the
    // request that waited for it goes through.
    hung.store(false, std::sync::atomic::Ordering::SeqCst);
    let deadline = std::time::Instant::now() + Duration::from_secs(6);
    loop {
        let r = agent.call("getDocumentSymbols", symbols.clone()).await;
        if !is_error(&r) {
            break;
        }
        assert!(
            text(&r).contains("circuit breaker open") && std::time::Instant::now() < deadline,
            "{r}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(bridge.status().await["extension"]["circuit"], "closed");
}

#[tokio::test]
async fn an_editor_dropping_mid_request_fails_the_request_not_the_agent() {
    let bridge = Bridge::launch(Options::default()).await;
    let _editor = EditorSim::connect(
        &bridge,
        handler(|m, _| (m == "extension/getHover").then_some(Reply::Drop)),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    let r = agent
        .call(
            "getHover",
            json!({"file": "src/main.rs", "line": 1, "column": 1}),
        )
        .await;
    assert!(is_error(&r) && text(&r).contains("disconnected"), "{r}");
    assert_eq!(agent.request("ping", json!({})).await["result"], json!({}));
    wait_for_async("editor gone", DEADLINE, || async {
        (bridge.status().await["extension"]["connected"] == false).then_some(())
    })
    .await;
}

#[cfg(feature = "fault-injection")]
#[tokio::test]
async fn extension_client_panic_fails_in_flight_requests_and_recovers_within_a_second() {
    let bridge = Bridge::launch(Options::default()).await;
    let editor = EditorSim::connect(
        &bridge,
        handler(|m, _| (m == "extension/getHover").then_some(Reply::Never)),
    )
    .await;
    let mut victim = bridge.ready_agent().await;
    let mut bystander = bridge.ready_agent().await;
    let id = victim.id();
    victim
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": "getHover", "arguments": {"file": "src/main.rs", "line": 1, "column": 1}}}))
        .await;
    // The request is in flight: the editor holds it unanswered.
    editor.wait_request("extension/getHover", 0).await;
    let crash = bystander
        .call("debug_crash_actor", json!({"actor": "extension_client"}))
        .await;
    assert!(is_error(&crash));
    let started = std::time::Instant::now();
    let failed = victim.response_to(&json!(id)).await;
    assert!(
        is_error(&failed["result"]) && text(&failed["result"]).contains("restarted"),
        "{failed}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(victim.request("ping", json!({})).await["result"], json!({}));
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    loop {
        let r = bystander
            .call("getDocumentSymbols", json!({"file": "src/main.rs"}))
            .await;
        if !is_error(&r) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "editor client not back within a second: {r}"
        );
    }
}

/// Returns once a `watchDiagnostics` call the agent just sent is registered with the
/// editor client: the agent's next editor request is handled by the same client after
/// it, and the editor answering that one shows the client got that far.
async fn watcher_registered(agent: &mut Agent, editor: &EditorSim) {
    let before = editor.requests().len();
    let hover = agent
        .call(
            "getHover",
            json!({"file": "src/main.rs", "line": 1, "column": 1}),
        )
        .await;
    assert!(!is_error(&hover), "{hover}");
    assert!(editor.requests().len() > before);
}

#[tokio::test]
async fn watch_diagnostics_waits_for_the_next_push_and_listeners_end_with_the_editor() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    // Without an editor it watches the workspace's linters (none apply here): nothing
    // changes within the wait.
    let none = agent
        .call("watchDiagnostics", json!({"timeoutMs": 100}))
        .await;
    assert!(!is_error(&none), "{none}");
    assert_eq!(text(&none), "[]");
    let editor = EditorSim::connect(&bridge, ok()).await;
    wait_for_async("editor connected", DEADLINE, || async {
        (bridge.status().await["extension"]["connected"] == true).then_some(())
    })
    .await;
    assert_eq!(
        text(
            &agent
                .call("watchDiagnostics", json!({"timeoutMs": 100}))
                .await
        ),
        "[]"
    );
    let id = agent.id();
    agent.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "watchDiagnostics", "arguments": {"timeoutMs": 20000}}})).await;
    watcher_registered(&mut agent, &editor).await;
    editor.notify("extension/diagnosticsChanged", json!({"file": "/w/x.rs", "diagnostics": [{"message": "boom", "severity": "error", "line": 1, "column": 1}]})).await;
    let got = agent.response_to(&json!(id)).await;
    let files = json_text(&got["result"]);
    assert_eq!(files[0]["uri"], "file:///w/x.rs");
    assert_eq!(files[0]["diagnostics"][0]["message"], "boom");
    // A watcher waiting when the editor leaves gets an answer, not silence.
    let id = agent.id();
    agent.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "watchDiagnostics", "arguments": {"timeoutMs": 20000}}})).await;
    watcher_registered(&mut agent, &editor).await;
    editor.disconnect().await;
    let ended = agent.response_to(&json!(id)).await;
    assert!(is_error(&ended["result"]), "{ended}");
    assert_eq!(
        text(&ended["result"]),
        "The editor disconnected while watching diagnostics"
    );
    arguments_refused(
        &agent
            .call_raw("watchDiagnostics", json!({"timeoutMs": 60000}))
            .await,
    );
}

/// The debounce, short here so that the absence of a second announcement is proven
/// quickly (2 s by default).
const DEBOUNCE_MS: u64 = 200;

#[tokio::test]
async fn debug_file_and_comment_events_announce_a_debounced_tool_change() {
    let bridge =
        Bridge::launch(Options::default().set("tools.list_changed_debounce_ms", DEBOUNCE_MS)).await;
    let mut agent = bridge.ready_agent().await;
    let editor = EditorSim::connect(&bridge, ok()).await;
    assert!(
        agent
            .notification("notifications/tools/list_changed", DEADLINE)
            .await
            .is_some(),
        "the editor connecting is announced"
    );
    for (method, params) in [
        (
            "extension/debugSessionChanged",
            json!({"hasActiveSession": true, "isPaused": true, "breakpoints": []}),
        ),
        (
            "extension/fileChanged",
            json!({"id": "w", "type": "change", "file": "/w/a.rs"}),
        ),
        ("extension/fileSaved", json!({"file": "/w/a.rs"})),
        (
            "extension/aiCommentsChanged",
            json!({"comments": [{"file": "/w/a.rs", "line": 3, "comment": "AI: fix", "syntax": "//", "fullLine": "// AI: fix"}]}),
        ),
    ] {
        editor.notify(method, params).await;
        let got = agent
            .notification("notifications/tools/list_changed", Duration::from_secs(5))
            .await;
        assert!(got.is_some(), "{method} did not announce a tool change");
    }
    // Several events inside one debounce window make one announcement.
    editor
        .notify(
            "extension/fileChanged",
            json!({"id": "w", "type": "change", "file": "/w/b.rs"}),
        )
        .await;
    editor
        .notify("extension/fileSaved", json!({"file": "/w/b.rs"}))
        .await;
    assert!(agent
        .notification("notifications/tools/list_changed", Duration::from_secs(5))
        .await
        .is_some());
    agent
        .assert_no_notification(
            "notifications/tools/list_changed",
            Duration::from_millis(3 * DEBOUNCE_MS),
            "one announcement per debounce window",
        )
        .await;
    let comments = json_text(&agent.call("getAIComments", json!({})).await);
    assert_eq!(comments["ok"], true, "forwarded to the editor");
}

/// "Nothing here" from the editor (`"result": null`: no hover on a blank line, no
/// definition) is an answer: the call ends at once and the breaker stays closed.
#[tokio::test]
async fn a_null_answer_from_the_editor_is_an_answer_not_a_timeout() {
    let bridge = Bridge::launch(Options::default().set("editor.request_timeout_ms", 3000)).await;
    let editor = EditorSim::connect(
        &bridge,
        handler(|m, _| (m == "extension/getHover").then_some(Reply::Ok(Value::Null))),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    for _ in 0..2 {
        let started = std::time::Instant::now();
        let hover = agent
            .call(
                "getHover",
                json!({"file": "src/main.rs", "line": 2, "column": 1}),
            )
            .await;
        assert!(!text(&hover).contains("timed out"), "{hover}");
        assert!(started.elapsed() < Duration::from_millis(2500), "{hover}");
    }
    assert_eq!(editor.requests().len(), 2);
    assert_eq!(bridge.status().await["extension"]["circuit"], "closed");
}

/// A storm of cursor moves past `rate_limit.notifications` (700 in 43 s dropped the
/// last one, and the agent kept an old selection for good): selections are not counted,
/// so the last one arrives; and they do not use up the room other notifications have.
#[tokio::test]
async fn the_last_selection_of_a_storm_arrives_and_other_notifications_still_pass() {
    let bridge = Bridge::launch(Options::default().set("rate_limit.notifications", 10)).await;
    let agent = tokio::sync::Mutex::new(bridge.ready_agent().await);
    let editor = EditorSim::connect(&bridge, ok()).await;
    let file = bridge.workspace.join("src/main.rs").display().to_string();
    let selection = |line: u64| json!({"file": file, "startLine": line, "startColumn": 1, "endLine": line, "endColumn": 3, "selectedText": format!("l{line}")});
    for line in 1..=60 {
        editor
            .notify("extension/selectionChanged", selection(line))
            .await;
    }
    wait_for_async("the storm's last selection", DEADLINE, || async {
        let latest = json_text(
            &agent
                .lock()
                .await
                .call("getLatestSelection", json!({}))
                .await,
        );
        (latest["text"] == "l60").then_some(())
    })
    .await;
    // The window of ten other notifications is still free.
    editor
        .notify(
            "extension/diagnosticsChanged",
            json!({"file": file, "diagnostics": [{"message": "after the storm", "severity": "error",
                "line": 1, "column": 1, "endLine": 1, "endColumn": 2}]}),
        )
        .await;
    let uri = format!("file://{file}");
    wait_for_async("the diagnostics after the storm", DEADLINE, || async {
        let got = agent
            .lock()
            .await
            .call("getDiagnostics", json!({"uri": uri}))
            .await;
        got.to_string().contains("after the storm").then_some(())
    })
    .await;
}

/// Claude Code's Write of a file over `tools.max_argument_bytes` (1 MiB) proposes it
/// with `openDiff` on its IDE connection: the diff reaches the editor (it was refused
/// for its size, logged nowhere, and no diff showed). A model-facing call of that size
/// is still refused, and the refusal is logged.
#[tokio::test]
async fn a_diff_of_a_file_over_a_mebibyte_reaches_the_editor() {
    let bridge = Bridge::launch(Options::default()).await;
    let editor = EditorSim::connect(
        &bridge,
        handler(|m, _| (m == "extension/openDiff").then_some(Reply::Manual)),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    let big = "x = 1\n".repeat(220_000); // 1.3 MB
    let id = agent.id();
    agent.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "openDiff",
        "arguments": {"old_file_path": "/w/big.py", "new_file_path": "/w/big.py", "new_file_contents": big, "tab_name": "big"}}})).await;
    let req = editor.wait_request("extension/openDiff", 0).await;
    assert_eq!(req.params["tabName"], "big");
    assert_eq!(
        req.params["newContent"]
            .as_str()
            .or(req.params["newFileContents"].as_str())
            .map(str::len),
        Some(big.len()),
        "{}",
        req.params.to_string().chars().take(300).collect::<String>()
    );
    editor
        .respond(&req.id, json!({"decision": "DIFF_REJECTED"}))
        .await;
    let r = agent.response_to(&json!(id)).await;
    assert_eq!(r["result"]["content"][0]["text"], "DIFF_REJECTED", "{r}");

    let mut relay = crate::hooks::relay_agent(&bridge, 93002, 781).await;
    let refused = relay
        .call_raw("createFile", json!({"filePath": "big.py", "content": big}))
        .await;
    assert!(
        arguments_refused(&refused).starts_with("Tool arguments are"),
        "{refused}"
    );
    wait_for_async("the refusal in the log", DEADLINE, || async {
        bridge
            .log()
            .contains("tool call refused: its arguments are too large")
            .then_some(())
    })
    .await;
}
