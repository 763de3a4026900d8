//! Lock file, WebSocket handshake and the MCP handshake.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::harness::*;

#[test]
fn lock_file_is_exactly_what_the_cli_reads() {
    let bridge = Bridge::start();
    let name = bridge
        .lock_path
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(name, format!("{}.lock", bridge.port));
    assert_eq!(
        bridge.lock_path.parent().unwrap(),
        bridge.config_dir.join("ide")
    );
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&bridge.lock_path), 0o600);
    assert_eq!(mode(&bridge.config_dir.join("ide")), 0o700);
    let lock = &bridge.lock;
    assert_eq!(lock["pid"], json!(bridge.pid()));
    assert_eq!(
        lock["workspaceFolders"],
        json!([bridge.workspace.display().to_string()])
    );
    assert_eq!(lock["ideName"], "ide-bridge");
    assert_eq!(lock["transport"], "ws");
    assert_eq!(lock["isBridge"], true);
    assert!(lock["startedAt"].as_u64().unwrap() > 1_700_000_000_000);
    let token = lock["authToken"].as_str().unwrap();
    let uuid = uuid::Uuid::parse_str(token).expect("token is a UUID");
    assert_eq!(uuid.get_version_num(), 4);
    // No temp files are left next to the lock.
    let leftovers: Vec<_> = std::fs::read_dir(bridge.config_dir.join("ide"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[tokio::test]
async fn echoes_the_mcp_subprotocol_and_negotiates_versions() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.agent().await;
    assert_eq!(
        agent
            .response
            .headers()
            .get("sec-websocket-protocol")
            .unwrap(),
        "mcp"
    );
    let resp = agent.initialize().await;
    let result = &resp["result"];
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(result["capabilities"]["logging"], json!({}));
    assert!(result["capabilities"]["prompts"].is_object());
    assert_eq!(result["serverInfo"]["name"], "ide-bridge");
    assert_eq!(resp["id"], 0, "id 0 is echoed");

    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-06-18", "2025-06-18"),
        ("2099-01-01", "2025-11-25"),
    ] {
        let resp = agent
            .request(
                "initialize",
                json!({"protocolVersion": asked, "capabilities": {}}),
            )
            .await;
        assert_eq!(resp["result"]["protocolVersion"], answered, "{asked}");
    }
}

#[tokio::test]
async fn claude_code_handshake_sequence_lists_every_spec_tool() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.agent().await;
    agent.initialize().await;
    agent.notify("ide_connected", json!({"pid": 4242})).await;
    let resp = agent.request("tools/list", json!({})).await;
    let first_page: Vec<String> = resp["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    for claude_tool in [
        "openFile",
        "openDiff",
        "close_tab",
        "closeAllDiffTabs",
        "getDiagnostics",
    ] {
        assert!(
            first_page.iter().any(|n| n == claude_tool),
            "{claude_tool} must be on the first page"
        );
    }
    let mut tools = resp["result"]["tools"].as_array().unwrap().clone();
    let mut cursor = resp["result"]["nextCursor"].clone();
    while let Some(c) = cursor.as_str().map(str::to_string) {
        let page = agent.request("tools/list", json!({"cursor": c})).await;
        tools.extend(page["result"]["tools"].as_array().unwrap().iter().cloned());
        cursor = page["result"]["nextCursor"].clone();
    }
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for expected in [
        "openFile",
        "openDiff",
        "close_tab",
        "closeAllDiffTabs",
        "getCurrentSelection",
        "getLatestSelection",
        "getOpenEditors",
        "getWorkspaceFolders",
        "getDiagnostics",
        "checkDocumentDirty",
        "saveDocument",
        "getBridgeStatus",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    for tool in &tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{}", tool["name"]);
        assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()));
    }
    assert!(tools.len() > 50, "the catalogue spans more than one page");
    let status = bridge.status().await;
    assert_eq!(status["sessions"][0]["clientPid"], 4242);
    assert_eq!(status["sessions"][0]["client"], "claude-code 2.1.0");
}

#[tokio::test]
async fn tools_list_pages_hold_at_most_fifty_and_cursors_are_checked() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let resp = agent.request("tools/list", params).await;
        let page = resp["result"]["tools"].as_array().unwrap();
        assert!(page.len() <= 50);
        seen.extend(page.iter().map(|t| t["name"].as_str().unwrap().to_string()));
        match resp["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    let unique: std::collections::HashSet<_> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "no tool listed twice");
    let resp = agent
        .request("tools/list", json!({"cursor": "not-a-cursor"}))
        .await;
    assert_eq!(error_code(&resp), -32602);
}

#[tokio::test]
async fn prompts_list_and_get() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    let resp = agent.request("prompts/list", json!({})).await;
    let prompts = resp["result"]["prompts"].as_array().unwrap();
    assert!(prompts.iter().any(|p| p["name"] == "review_file"));
    let resp = agent
        .request(
            "prompts/get",
            json!({"name": "review_file", "arguments": {"file": "src/main.rs"}}),
        )
        .await;
    let msg = &resp["result"]["messages"][0];
    assert_eq!(msg["role"], "user");
    assert!(msg["content"]["text"]
        .as_str()
        .unwrap()
        .contains("src/main.rs"));
    let resp = agent
        .request(
            "prompts/get",
            json!({"name": "review_file", "arguments": {}}),
        )
        .await;
    assert_eq!(error_code(&resp), -32602, "missing required argument");
    let resp = agent
        .request("prompts/get", json!({"name": "no_such_prompt"}))
        .await;
    assert_eq!(
        error_code(&resp),
        -32602,
        "unknown prompt (MCP: invalid params)"
    );
}

#[tokio::test]
async fn ping_works_before_initialize_but_tools_do_not() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.agent().await;
    let resp = agent.request("ping", json!({})).await;
    assert_eq!(resp["result"], json!({}));
    for method in [
        "tools/list",
        "tools/call",
        "prompts/list",
        "logging/setLevel",
    ] {
        let resp = agent.request(method, json!({})).await;
        assert_eq!(error_code(&resp), -32600, "{method}: {resp}");
        assert!(resp["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not initialized"));
    }
}

#[tokio::test]
async fn string_ids_are_echoed_exactly() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.agent().await;
    agent
        .send(&json!({"jsonrpc": "2.0", "id": "req-ü-1", "method": "ping"}))
        .await;
    let resp = agent.recv().await;
    assert_eq!(resp["id"], "req-ü-1");
}

#[tokio::test]
async fn logging_set_level_filters_notifications() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut listener = bridge.ready_agent().await;
    let mut quiet = bridge.ready_agent().await;
    let resp = listener
        .request("logging/setLevel", json!({"level": "info"}))
        .await;
    assert_eq!(resp["result"], json!({}));
    let resp = listener
        .request("logging/setLevel", json!({"level": "loud"}))
        .await;
    assert_eq!(error_code(&resp), -32602);
    // A third agent joining is logged at level info.
    let _third = bridge.ready_agent().await;
    let msg = listener
        .notification("notifications/message", DEADLINE)
        .await
        .expect("info log reaches the agent that asked for info");
    assert_eq!(msg["params"]["level"], "info");
    assert_eq!(msg["params"]["data"]["event"], "agent_connected");
    // The default level is notice: the quiet agent hears nothing of it (info).
    let ping = quiet.request("ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
    assert!(
        quiet
            .inbox
            .iter()
            .all(|m| m["method"] != "notifications/message"),
        "{:?}",
        quiet.inbox
    );
}
