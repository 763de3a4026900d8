//! The Claude Code IDE tools without an editor: exact result shapes (spec §4), one
//! happy path and one bad-argument case each.

use serde_json::json;

use crate::editor_sim::{handler, EditorSim};
use crate::harness::*;

#[tokio::test]
async fn open_file_records_the_file_and_answers_both_shapes() {
    let bridge = Bridge::start();
    let mut agent = bridge.ready_agent().await;
    let main = bridge.workspace.join("src/main.rs");
    let result = agent
        .call("openFile", json!({"filePath": "src/main.rs"}))
        .await;
    assert_eq!(text(&result), format!("Opened file: {}", main.display()));
    let result = agent
        .call(
            "openFile",
            json!({"filePath": main, "makeFrontmost": false}),
        )
        .await;
    let body = json_text(&result);
    assert_eq!(
        body,
        json!({"success": true, "filePath": main, "languageId": "rust", "lineCount": 3})
    );

    let missing = agent.call("openFile", json!({"filePath": "nope.rs"})).await;
    assert!(is_error(&missing));
    assert_eq!(text(&missing), "File not found: nope.rs");
    let escape = agent
        .call("openFile", json!({"filePath": "../../etc/passwd"}))
        .await;
    assert!(is_error(&escape));
    assert!(
        text(&escape).starts_with("Path escapes workspace"),
        "{escape}"
    );
    let bad = agent
        .call_raw("openFile", json!({"filePath": "a", "makeFrontmost": "yes"}))
        .await;
    arguments_refused(&bad);
}

#[tokio::test]
async fn get_open_editors_lists_this_sessions_files() {
    let bridge = Bridge::start();
    let mut agent = bridge.ready_agent().await;
    let empty = json_text(&agent.call("getOpenEditors", json!({})).await);
    assert_eq!(empty, json!({"tabs": []}));
    agent
        .call("openFile", json!({"filePath": "src/main.rs"}))
        .await;
    agent
        .call("openFile", json!({"filePath": "README.md"}))
        .await;
    let tabs = json_text(&agent.call("getOpenEditors", json!({})).await);
    let tabs = tabs["tabs"].as_array().unwrap();
    assert_eq!(tabs.len(), 2);
    assert_eq!(
        tabs[0]["uri"],
        format!("file://{}", bridge.workspace.join("src/main.rs").display())
    );
    assert_eq!(tabs[0]["languageId"], "rust");
    assert_eq!(
        (tabs[0]["isActive"].clone(), tabs[1]["isActive"].clone()),
        (json!(false), json!(true))
    );
    assert_eq!(tabs[1]["label"], "README.md");
    assert_eq!(tabs[1]["isDirty"], false);
    let bad = agent
        .request(
            "tools/call",
            json!({"name": "getOpenEditors", "arguments": 3}),
        )
        .await;
    assert_eq!(error_code(&bad), -32602);
}

#[tokio::test]
async fn get_workspace_folders() {
    let bridge = Bridge::start();
    let mut agent = bridge.ready_agent().await;
    let body = json_text(&agent.call("getWorkspaceFolders", json!({})).await);
    let root = bridge.workspace.display().to_string();
    assert_eq!(body["success"], true);
    assert_eq!(body["rootPath"], root);
    assert_eq!(body["folders"][0]["path"], root);
    assert_eq!(body["folders"][0]["name"], "workspace");
    assert_eq!(body["folders"][0]["uri"], format!("file://{root}"));
    let bad = agent
        .request(
            "tools/call",
            json!({"name": "getWorkspaceFolders", "arguments": []}),
        )
        .await;
    assert_eq!(error_code(&bad), -32602);
}

#[tokio::test]
async fn get_diagnostics_is_an_empty_array_while_nothing_is_known() {
    let bridge = Bridge::start();
    let mut agent = bridge.ready_agent().await;
    assert_eq!(text(&agent.call("getDiagnostics", json!({})).await), "[]");
    let uri = format!("file://{}", bridge.workspace.join("src/main.rs").display());
    assert_eq!(
        text(&agent.call("getDiagnostics", json!({"uri": uri})).await),
        "[]"
    );
    let bad = agent.call_raw("getDiagnostics", json!({"uri": 5})).await;
    arguments_refused(&bad);
}

#[tokio::test]
async fn dirty_and_save_answer_document_not_open_until_opened() {
    let bridge = Bridge::start();
    let mut agent = bridge.ready_agent().await;
    for tool in ["checkDocumentDirty", "saveDocument"] {
        let body = json_text(&agent.call(tool, json!({"filePath": "src/main.rs"})).await);
        assert_eq!(
            body,
            json!({"success": false, "message": "Document not open: src/main.rs"}),
            "{tool}"
        );
        let bad = agent.call_raw(tool, json!({})).await;
        assert!(
            arguments_refused(&bad).contains("filePath"),
            "{tool}: {bad}"
        );
    }
    agent
        .call("openFile", json!({"filePath": "src/main.rs"}))
        .await;
    let main = bridge.workspace.join("src/main.rs").display().to_string();
    let dirty = json_text(
        &agent
            .call("checkDocumentDirty", json!({"filePath": "src/main.rs"}))
            .await,
    );
    assert_eq!(
        dirty,
        json!({"success": true, "filePath": main, "isDirty": false, "isUntitled": false})
    );
    let saved = json_text(&agent.call("saveDocument", json!({"filePath": main})).await);
    assert_eq!(
        (saved["success"].clone(), saved["saved"].clone()),
        (json!(true), json!(true))
    );
}

#[tokio::test]
async fn selections_without_an_editor() {
    let bridge = Bridge::start();
    let mut agent = bridge.ready_agent().await;
    let cur = json_text(&agent.call("getCurrentSelection", json!({})).await);
    assert_eq!(
        cur,
        json!({"success": false, "message": "No active editor found"})
    );
    let latest = json_text(&agent.call("getLatestSelection", json!({})).await);
    assert_eq!(
        latest,
        json!({"success": false, "message": "No selection available"})
    );
    for tool in ["getCurrentSelection", "getLatestSelection"] {
        let bad = agent
            .request("tools/call", json!({"name": tool, "arguments": "x"}))
            .await;
        assert_eq!(error_code(&bad), -32602, "{tool}");
    }
}

#[tokio::test]
async fn tabs_and_diffs_without_an_editor() {
    let bridge = Bridge::start();
    let mut agent = bridge.ready_agent().await;
    assert_eq!(
        text(&agent.call("close_tab", json!({"tab_name": "x"})).await),
        "TAB_CLOSED"
    );
    assert_eq!(
        text(&agent.call("closeAllDiffTabs", json!({})).await),
        "CLOSED_0_DIFF_TABS"
    );
    let main = bridge.workspace.join("src/main.rs");
    let diff = agent
        .call("openDiff", json!({"old_file_path": main, "new_file_path": main,
                                 "new_file_contents": "fn main() {}\n", "tab_name": "✻ [Claude Code] main.rs"}))
        .await;
    assert!(is_error(&diff));
    assert!(text(&diff).contains("No editor is connected"), "{diff}");
    arguments_refused(&agent.call_raw("close_tab", json!({})).await);
    assert_eq!(
        error_code(
            &agent
                .request(
                    "tools/call",
                    json!({"name": "closeAllDiffTabs", "arguments": [1]})
                )
                .await
        ),
        -32602
    );
    arguments_refused(&agent.call_raw("openDiff", json!({"tab_name": "t"})).await);
}

#[tokio::test]
async fn get_bridge_status_matches_http_status() {
    let bridge = Bridge::start();
    let mut agent = bridge.ready_agent().await;
    agent
        .call("openFile", json!({"filePath": "src/main.rs"}))
        .await;
    let status = json_text(&agent.call("getBridgeStatus", json!({})).await);
    assert_eq!(status["port"], bridge.port);
    assert_eq!(status["extension"]["connected"], false);
    assert_eq!(status["sessions"][0]["id"], status["yourSessionId"]);
    assert_eq!(status["sessions"][0]["openedFiles"], 1);
    assert!(status["activity"]["toolCalls"].as_u64().unwrap() >= 1);
    let bad = agent
        .request(
            "tools/call",
            json!({"name": "getBridgeStatus", "arguments": "x"}),
        )
        .await;
    assert_eq!(error_code(&bad), -32602);
    // Every call is in the activity timeline with its session.
    let http = bridge.get_json("/status");
    let calls: Vec<_> = http["recentActivity"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "toolCall")
        .collect();
    assert!(calls.iter().any(|e| e["tool"] == "openFile"
        && e["status"] == "success"
        && e["sessionId"] == status["yourSessionId"]));
    assert!(calls
        .iter()
        .all(|e| e["durationMs"].is_u64() && e["timestamp"].is_u64()));
}

#[test]
fn metrics_count_tool_calls_by_tool_and_status() {
    let bridge = Bridge::start();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut agent = bridge.ready_agent().await;
        agent.call("close_tab", json!({"tab_name": "a"})).await;
        agent.call("openFile", json!({"filePath": "missing"})).await;
    });
    let metrics = bridge.get("/metrics").1;
    assert!(
        metrics.contains(r#"ide_bridge_tool_calls_total{tool="close_tab",status="success"} 1"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"ide_bridge_tool_calls_total{tool="openFile",status="error"} 1"#),
        "{metrics}"
    );
    assert!(
        metrics.contains("ide_bridge_tool_call_duration_seconds_bucket"),
        "{metrics}"
    );
    assert!(
        metrics.contains("ide_bridge_active_sessions 1"),
        "{metrics}"
    );
    // Series of a fixed few labels are there before anything counted them: 0, not
    // "no data".
    for zero in [
        r#"ide_bridge_claude_tasks_ended_total{state="done"} 0"#,
        r#"ide_bridge_claude_tasks{state="running"} 0"#,
        r#"ide_bridge_hooks_ignored_total{reason="unknownAgent"} 0"#,
        r#"ide_bridge_refused_connections_total{reason="unauthorized"} 0"#,
    ] {
        assert!(metrics.contains(zero), "{zero}: {metrics}");
    }
}

/// Arguments that break `schema`: a missing required property, an unknown property
/// where none are allowed, or a wrongly typed property.
/// Every tool `tools/list` shows, all pages.
async fn all_tools(agent: &mut Agent) -> Vec<serde_json::Value> {
    let mut all = Vec::new();
    let mut cursor = serde_json::Value::Null;
    loop {
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({"cursor": cursor})
        };
        let page = agent.request("tools/list", params).await;
        all.extend(page["result"]["tools"].as_array().unwrap().iter().cloned());
        cursor = page["result"]["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    all
}

fn schema_breaker(schema: &serde_json::Value) -> Option<serde_json::Value> {
    if schema["required"].as_array().is_some_and(|r| !r.is_empty()) {
        return Some(json!({}));
    }
    if schema["additionalProperties"] == json!(false) {
        return Some(json!({"__not_a_parameter__": 1}));
    }
    let (name, prop) = schema["properties"].as_object()?.iter().next()?;
    let wrong = match prop["type"].as_str() {
        Some("string") | None => json!(12345),
        Some(_) => json!("not the right type"),
    };
    Some(json!({ name: wrong }))
}

#[tokio::test]
async fn every_tool_refuses_arguments_that_break_its_schema() {
    let bridge = Bridge::start();
    let mut agent = bridge.ready_agent().await;
    let tools = serde_json::Value::Array(all_tools(&mut agent).await);
    let mut checked = 0;
    for tool in tools.as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        let Some(bad) = schema_breaker(&tool["inputSchema"]) else {
            // No parameters at all: a non-object is the only malformed input.
            let resp = agent
                .request("tools/call", json!({"name": name, "arguments": [1]}))
                .await;
            assert_eq!(error_code(&resp), -32602, "{name}");
            checked += 1;
            continue;
        };
        let resp = agent.call_raw(name, bad.clone()).await;
        assert!(
            !arguments_refused(&resp).is_empty(),
            "{name} with {bad}: {resp}"
        );
        checked += 1;
    }
    assert_eq!(checked, tools.as_array().unwrap().len());
}

/// Keywords a derived schema must not show clients: generator metadata, references
/// (every subschema is inline), the internal path marker.
const NOT_PUBLISHED: &[&str] = &[
    "$schema",
    "title",
    "$defs",
    "definitions",
    "$ref",
    "x-workspace-path",
    "format",
];

/// Where in `schema` a published keyword or a nullable type appears.
fn unpublishable(schema: &serde_json::Value, at: &str, found: &mut Vec<String>) {
    match schema {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                if NOT_PUBLISHED.contains(&k.as_str()) && !at.ends_with("/properties") {
                    found.push(format!("{at}/{k}"));
                }
                let nullable =
                    k == "type" && v.as_array().is_some_and(|t| t.contains(&json!("null")));
                if nullable && at != "/properties/value" {
                    found.push(format!("{at}: nullable"));
                }
                unpublishable(v, &format!("{at}/{k}"), found);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                unpublishable(v, &format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn derived_schemas_are_compact_and_optional_arguments_refuse_null() {
    let bridge = Bridge::start();
    let mut agent = bridge.ready_agent().await;
    let tools = all_tools(&mut agent).await;
    for tool in &tools {
        let (name, schema) = (&tool["name"], &tool["inputSchema"]);
        assert_eq!(schema["type"], "object", "{name}");
        assert!(schema["properties"].is_object(), "{name}: {schema}");
        let mut found = Vec::new();
        unpublishable(schema, "", &mut found);
        assert!(found.is_empty(), "{name}: {found:?} in {schema}");
    }
    // editText and replaceBlock always save (both with and without an editor), so
    // `save` is not an argument.
    for name in ["editText", "replaceBlock"] {
        let tool = tools.iter().find(|t| t["name"] == name).unwrap();
        assert!(
            tool["inputSchema"]["properties"].get("save").is_none(),
            "{tool}"
        );
    }
    // An optional argument is absent or of its type: null is refused, as before.
    for (name, args) in [
        (
            "readFile",
            json!({"filePath": "src/main.rs", "startLine": null}),
        ),
        ("gitLog", json!({"maxCount": null})),
        ("getTerminalOutput", json!({"name": null})),
    ] {
        let resp = agent.call_raw(name, args.clone()).await;
        assert!(
            !arguments_refused(&resp).is_empty(),
            "{name} with {args}: {resp}"
        );
    }
}

/// A forwarded tool registered with paths under keys that no other tool uses (`target`,
/// `via`): the editor receives them confined and absolute; one outside the workspace is
/// refused with the same error as any other path argument, and reaches nothing.
#[tokio::test]
async fn a_forwarded_tool_confines_paths_under_any_key() {
    let bridge = Bridge::start();
    let editor = EditorSim::connect(&bridge, handler(|_, _| None)).await;
    let mut agent = bridge.ready_agent().await;
    let root = std::fs::canonicalize(&bridge.workspace).unwrap();
    let done = agent
        .call(
            "debug_forward_paths",
            json!({"target": "src/main.rs", "via": ["README.md"], "label": "../x"}),
        )
        .await;
    assert!(!is_error(&done), "{done}");
    let sent = editor.wait_request("extension/debugLink", 0).await;
    assert_eq!(
        sent.params,
        json!({
            "target": root.join("src/main.rs"),
            "via": [root.join("README.md")],
            "label": "../x",
        })
    );

    let before = editor.requests().len();
    let confinement = text(
        &agent
            .call("readFile", json!({"filePath": "../../etc/passwd"}))
            .await,
    )
    .to_string();
    assert!(
        confinement.starts_with("Path escapes workspace"),
        "{confinement}"
    );
    for args in [
        json!({"target": "../../etc/passwd"}),
        json!({"target": "src/main.rs", "via": ["README.md", "../../etc/passwd"]}),
    ] {
        let refused = agent.call("debug_forward_paths", args.clone()).await;
        assert!(is_error(&refused), "{args}: {refused}");
        assert_eq!(text(&refused), confinement, "{args}");
    }
    assert_eq!(
        editor.requests().len(),
        before,
        "a refused call reached the editor"
    );
}

/// Every listed tool says what calling it does (MCP's `annotations`): read-only tools
/// are marked so (Claude Code runs those side by side), the others say whether they may
/// overwrite and whether they reach beyond the workspace.
#[tokio::test]
async fn every_listed_tool_says_what_calling_it_does() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    let mut page = agent.request("tools/list", json!({})).await["result"].clone();
    let mut annotations = std::collections::BTreeMap::new();
    loop {
        for tool in page["tools"].as_array().unwrap() {
            let said = tool["annotations"].clone();
            assert!(said["readOnlyHint"].is_boolean(), "{tool}");
            assert!(said["openWorldHint"].is_boolean(), "{tool}");
            annotations.insert(tool["name"].as_str().unwrap().to_string(), said);
        }
        match page.get("nextCursor").and_then(|c| c.as_str()) {
            Some(next) => {
                page =
                    agent.request("tools/list", json!({ "cursor": next })).await["result"].clone()
            }
            None => break,
        }
    }
    let read_only = json!({"readOnlyHint": true, "openWorldHint": false});
    let adds = json!({"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false});
    let changes = json!({"readOnlyHint": false, "destructiveHint": true, "openWorldHint": false});
    let runs = json!({"readOnlyHint": false, "destructiveHint": true, "openWorldHint": true});
    for (tool, expected) in [
        ("readFile", &read_only),
        ("searchWorkspace", &read_only),
        ("getHover", &read_only),
        ("ideCapability", &read_only),
        ("claimFiles", &adds),
        ("gitCommit", &adds),
        ("editText", &changes),
        ("renameSymbol", &changes),
        ("runCommand", &runs),
        ("gitPush", &runs),
    ] {
        assert_eq!(&annotations[tool], expected, "{tool}");
    }
}

/// Typed tool results (issue 26, item 4): every tool that lists an `outputSchema`
/// answers with `structuredContent` that the schema accepts, and the same JSON as text
/// for clients that read only content.
#[tokio::test]
async fn structured_results_match_their_output_schemas() {
    let bridge = Bridge::launch(crate::lsp::with_pylsp(
        Options::default().set("orchestrator.claude_binary", crate::tasks::fake_claude()),
    ))
    .await;
    let mut agent = bridge.ready_agent().await;
    let listed = agent.request("tools/list", json!({})).await;
    let mut schemas = std::collections::BTreeMap::new();
    let mut cursor = listed["result"].clone();
    loop {
        for tool in cursor["tools"].as_array().unwrap() {
            if let Some(schema) = tool.get("outputSchema") {
                assert_eq!(schema["type"], "object", "{tool}");
                schemas.insert(tool["name"].as_str().unwrap().to_string(), schema.clone());
            }
        }
        match cursor.get("nextCursor").and_then(|c| c.as_str()) {
            Some(next) => {
                cursor =
                    agent.request("tools/list", json!({ "cursor": next })).await["result"].clone()
            }
            None => break,
        }
    }
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(&bridge.workspace)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.name", "t"]);
    git(&["config", "user.email", "t@t"]);
    // A change of this agent's for keepChanges and undoChanges to select.
    let made = agent
        .call(
            "createFile",
            json!({"filePath": "kept.txt", "content": "k\n"}),
        )
        .await;
    assert!(!is_error(&made), "{made}");
    let me = json_text(&agent.call("getBridgeStatus", json!({})).await)["yourSessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let calls = [
        (
            "claimFiles",
            json!({"paths": ["README.md"], "reason": "typed"}),
        ),
        ("listClaims", json!({})),
        ("releaseFiles", json!({})),
        ("listChanges", json!({})),
        ("keepChanges", json!({ "session": me })),
        ("undoChanges", json!({ "session": me })),
        ("whoChanged", json!({"file": "README.md"})),
        ("gitStatus", json!({})),
        ("gitAdd", json!({"paths": ["README.md"]})),
        ("gitCommit", json!({"message": "first"})),
        ("gitLog", json!({})),
        ("gitBranches", json!({})),
        ("findFiles", json!({"pattern": "*.md"})),
        ("getFileTree", json!({})),
        ("searchWorkspace", json!({"query": "first"})),
        (
            "createFile",
            json!({"filePath": "typed.txt", "content": "one\ntwo\n"}),
        ),
        (
            "editText",
            json!({"filePath": "typed.txt", "edits": [{"type": "insert", "line": 1, "column": 1, "text": "zero\n"}]}),
        ),
        (
            "replaceBlock",
            json!({"filePath": "typed.txt", "oldContent": "two", "newContent": "2"}),
        ),
        (
            "renameFile",
            json!({"oldPath": "typed.txt", "newPath": "typed2.txt"}),
        ),
        ("deleteFile", json!({"filePath": "typed2.txt"})),
        (
            "checkEdit",
            json!({"filePath": "shapes.py", "newContent": "x = undefined_name\n"}),
        ),
        (
            "getSignatureHelp",
            json!({"file": "shapes.py", "line": 6, "column": 14}),
        ),
        ("runCommand", json!({"command": "git", "args": ["status"]})),
        ("runInTerminal", json!({"command": "git", "args": ["log"]})),
        ("runClaudeTask", json!({"prompt": "typed", "wait": true})),
        ("listClaudeTasks", json!({})),
        ("getActivityLog", json!({"limit": 5})),
        ("watchActivityLog", json!({"afterId": 0, "timeoutMs": 1000})),
        ("getBridgeStatus", json!({})),
    ];
    let task = json_text(
        &agent
            .call("runClaudeTask", json!({"prompt": "to cancel mode:forever"}))
            .await,
    );
    let task_id = task["taskId"].as_str().expect("a task id").to_string();
    let calls = calls.into_iter().chain([
        ("getClaudeTaskStatus", json!({ "taskId": task_id })),
        ("cancelClaudeTask", json!({ "taskId": task_id })),
    ]);
    let mut checked = std::collections::BTreeSet::new();
    for (name, args) in calls {
        checked.insert(name.to_string());
        let r = agent.call(name, args).await;
        assert!(!is_error(&r), "{name}: {r}");
        let structured = r["structuredContent"].clone();
        assert!(structured.is_object(), "{name}: {r}");
        let validator = jsonschema::validator_for(&schemas[name]).unwrap();
        let problems: Vec<String> = validator
            .iter_errors(&structured)
            .map(|e| e.to_string())
            .collect();
        assert!(problems.is_empty(), "{name}: {problems:?} in {structured}");
        assert_eq!(
            json_text(&r),
            structured,
            "{name}: the text carries the same JSON"
        );
    }
    assert_eq!(
        schemas
            .keys()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>(),
        checked,
        "each tool with an outputSchema is exercised here"
    );
}

/// A typed tool that an editor answers gives the same `structuredContent` through the
/// editor (its answer read as the tool's type, `source: "editor"`), and an editor answer
/// that is not of that type is a tool error quoting it, not a result that breaks the
/// schema.
#[tokio::test]
async fn typed_answers_through_an_editor_keep_their_schema() {
    use crate::editor_sim::Reply;
    let bridge = Bridge::launch(Options::default()).await;
    let _editor = EditorSim::connect(
        &bridge,
        handler(|m, p| match m {
            "extension/createFile" => Some(Reply::Ok(
                json!({"success": true, "filePath": p["filePath"], "created": true}),
            )),
            "extension/deleteFile" => Some(Reply::Ok(json!(true))),
            _ => None,
        }),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    let listed = agent.request("tools/list", json!({})).await;
    let schema = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "createFile")
        .map(|t| t["outputSchema"].clone())
        .expect("createFile is listed with an outputSchema");
    let r = agent
        .call(
            "createFile",
            json!({"filePath": "made.txt", "content": "x"}),
        )
        .await;
    assert!(!is_error(&r), "{r}");
    let structured = &r["structuredContent"];
    assert_eq!(structured["source"], "editor", "{r}");
    assert!(
        structured["filePath"]
            .as_str()
            .unwrap()
            .ends_with("/made.txt"),
        "{r}"
    );
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(structured), "{structured}");
    let odd = agent
        .call("deleteFile", json!({"filePath": "README.md"}))
        .await;
    assert!(is_error(&odd), "{odd}");
    assert!(odd.get("structuredContent").is_none(), "{odd}");
    let says = text(&odd);
    assert!(
        says.contains("The editor's answer to deleteFile was not understood")
            && says.contains("true"),
        "{says}"
    );
}

/// Arguments nested deeper than the bridge reads JSON (128 levels) are refused as the
/// tool's error the model reads, saying so (a JSON-RPC "recursion limit exceeded at
/// line 1 column 1462" before).
#[tokio::test]
async fn arguments_nested_too_deep_are_refused_saying_so() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    let nest = |levels: usize| {
        let mut program = json!("main");
        for _ in 0..levels {
            program = json!({ "findSymbol": program });
        }
        json!({ "request": program })
    };
    let refused = agent.call_raw("ideCapability", nest(130)).await;
    let said = arguments_refused(&refused);
    assert!(said.contains("nest more than 128 levels deep"), "{refused}");
    // Just inside serde_json's limit the tool's own limit answers (64 levels).
    let answered = agent.call_raw("ideCapability", nest(100)).await;
    assert!(
        text(&answered["result"]).contains("levels deep; at most 64"),
        "{answered}"
    );
}
