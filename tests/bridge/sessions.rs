//! Sessions: isolation, reattach within the grace period, expiry, list_changed.

#[cfg(feature = "fault-injection")]
use std::time::Duration;

use serde_json::json;

use crate::harness::*;

async fn my_session_id(agent: &mut Agent) -> String {
    let status = json_text(&agent.call("getBridgeStatus", json!({})).await);
    status["yourSessionId"].as_str().unwrap().to_string()
}

async fn open_tabs(agent: &mut Agent) -> Vec<String> {
    let tabs = json_text(&agent.call("getOpenEditors", json!({})).await);
    tabs["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["label"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn each_agent_has_its_own_session_and_files() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut a = bridge.ready_agent().await;
    let mut b = bridge.ready_agent().await;
    let (ida, idb) = (my_session_id(&mut a).await, my_session_id(&mut b).await);
    assert_ne!(ida, idb);
    for id in [&ida, &idb] {
        assert_eq!(id.len(), 8);
        assert!(id.bytes().all(|c| c.is_ascii_hexdigit()), "{id}");
    }
    a.call("openFile", json!({"filePath": "src/main.rs"})).await;
    assert_eq!(open_tabs(&mut a).await, vec!["main.rs"]);
    assert!(open_tabs(&mut b).await.is_empty());
    let status = bridge.status().await;
    let prefixes: Vec<_> = status["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["terminalPrefix"].as_str().unwrap().to_string())
        .collect();
    assert!(
        prefixes.contains(&format!("{ida}-")) && prefixes.contains(&format!("{idb}-")),
        "{prefixes:?}"
    );
}

#[tokio::test]
async fn an_agent_reconnecting_within_grace_gets_its_session_back() {
    let bridge = Bridge::launch(Options::default()).await;
    let anchor = [("x-claude-code-session-id", "cli-session-42")];
    let mut agent = Agent::connect(&bridge, &anchor).await.unwrap();
    agent.initialize().await;
    let id = my_session_id(&mut agent).await;
    agent
        .call("openFile", json!({"filePath": "README.md"}))
        .await;
    agent.close().await;
    wait_for_async("session in grace", DEADLINE, || async {
        let s = bridge.status().await;
        (s["sessions"][0]["inGrace"] == true && s["sessions"][0]["connected"] == false)
            .then_some(())
    })
    .await;

    let mut back = Agent::connect(&bridge, &anchor).await.unwrap();
    back.initialize().await;
    assert_eq!(my_session_id(&mut back).await, id);
    assert_eq!(open_tabs(&mut back).await, vec!["README.md"]);
    let status = bridge.status().await;
    assert_eq!(status["reconnects"], 1);
    assert_eq!(status["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(status["sessions"][0]["inGrace"], false);

    // The bridge's own session id works as an anchor too.
    back.close().await;
    let mut by_id = Agent::connect(&bridge, &[("x-claude-code-session-id", &id)])
        .await
        .unwrap();
    by_id.initialize().await;
    assert_eq!(my_session_id(&mut by_id).await, id);

    // Without an anchor a reconnect is a new session.
    let mut fresh = bridge.ready_agent().await;
    assert_ne!(my_session_id(&mut fresh).await, id);
    assert!(open_tabs(&mut fresh).await.is_empty());
}

#[tokio::test]
async fn a_second_connection_with_the_same_anchor_replaces_the_first() {
    let bridge = Bridge::launch(Options::default()).await;
    let anchor = [("x-claude-code-session-id", "dup")];
    let mut first = Agent::connect(&bridge, &anchor).await.unwrap();
    first.initialize().await;
    let mut second = Agent::connect(&bridge, &anchor).await.unwrap();
    let frame = first.closed(DEADLINE).await.expect("old connection closed");
    assert_eq!(u16::from(frame.code), 1000);
    second.initialize().await;
    assert_eq!(second.request("ping", json!({})).await["result"], json!({}));
}

#[tokio::test]
async fn sessions_end_when_the_grace_period_expires() {
    let bridge = Bridge::launch(Options::default().arg("--grace-period-ms").arg("300")).await;
    let anchor = [("x-claude-code-session-id", "short-lived")];
    let mut agent = Agent::connect(&bridge, &anchor).await.unwrap();
    agent.initialize().await;
    let id = my_session_id(&mut agent).await;
    agent.close().await;
    wait_for_async("session removed after grace", DEADLINE, || async {
        bridge.status().await["sessions"]
            .as_array()
            .unwrap()
            .is_empty()
            .then_some(())
    })
    .await;
    let timeline = bridge.status().await["recentActivity"].clone();
    assert!(
        timeline
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["event"] == "grace_expired" && e["sessionId"] == id.as_str()),
        "{timeline}"
    );
    // Reconnecting after expiry is a new session.
    let mut again = Agent::connect(&bridge, &anchor).await.unwrap();
    again.initialize().await;
    assert_ne!(my_session_id(&mut again).await, id);
}

#[cfg(feature = "fault-injection")]
#[tokio::test]
async fn list_changed_is_debounced_into_one_notification() {
    // A short debounce (2 s by default) proves the absence of a second one quickly.
    const DEBOUNCE_MS: u64 = 300;
    let bridge =
        Bridge::launch(Options::default().set("tools.list_changed_debounce_ms", DEBOUNCE_MS)).await;
    let mut agent = bridge.ready_agent().await;
    for _ in 0..3 {
        agent.call("debug_list_changed", json!({})).await;
    }
    let first = agent
        .notification("notifications/tools/list_changed", Duration::from_secs(5))
        .await;
    assert!(first.is_some(), "debounced notification arrives");
    agent
        .assert_no_notification(
            "notifications/tools/list_changed",
            Duration::from_millis(3 * DEBOUNCE_MS),
            "three changes within the debounce make one notification",
        )
        .await;
    agent
        .call("debug_list_changed", json!({"immediate": true}))
        .await;
    assert!(agent
        .notification(
            "notifications/tools/list_changed",
            Duration::from_millis(1000)
        )
        .await
        .is_some());
}

#[cfg(feature = "fault-injection")]
#[tokio::test]
async fn list_changed_waits_for_a_listener_when_nobody_listens() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    agent.call("debug_list_changed", json!({})).await;
    agent.close().await;
    wait_for_async("pending flag set", DEADLINE, || async {
        (bridge.status().await["pendingListChanged"] == true).then_some(())
    })
    .await;
    let mut next = bridge.agent().await;
    next.initialize().await;
    assert!(next
        .notification("notifications/tools/list_changed", Duration::from_secs(2))
        .await
        .is_some());
    assert_eq!(bridge.status().await["pendingListChanged"], false);
}

/// The protocol version the HTTP tests' client speaks.
const HTTP_VERSION: &str = "2025-06-18";

/// `initialize` and `notifications/initialized` over HTTP: the `Mcp-Session-Id`.
async fn http_handshake(bridge: &Bridge) -> String {
    let (status, head, body) = mcp_post(
        bridge,
        None,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": HTTP_VERSION, "capabilities": {},
            "clientInfo": {"name": "http-agent", "version": "0"}}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let mcp_id = session_id_of(&head);
    mcp_post(
        bridge,
        Some(&mcp_id),
        Some(HTTP_VERSION),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    mcp_id
}

/// The structured answer of a `tools/call` POSTed with JSON or SSE.
fn call_result(body: &str) -> serde_json::Value {
    let json = body
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(body);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// An HTTP client keeps its `Mcp-Session-Id` across a restart of the bridge: the
/// restored session is taken up again (its claims and files with it), without a new
/// `initialize`, which the client would not send (it is told nothing of the restart).
#[tokio::test]
async fn an_http_client_carries_on_after_a_restart_in_its_session() {
    let place = Place::new();
    let opts = || {
        place
            .options()
            .set("sessions.grace_period_ms", 60_000)
            .file("a.txt", "a\n")
    };
    let bridge = Bridge::launch(opts()).await;
    let mcp_id = http_handshake(&bridge).await;
    let v = Some(HTTP_VERSION);
    let call = |id: u64, name: &str, args: serde_json::Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": args}})
    };
    let (_, _, body) = mcp_post(
        &bridge,
        Some(&mcp_id),
        v,
        call(2, "getBridgeStatus", json!({})),
    )
    .await;
    let before = json_text(&call_result(&body)["result"])["yourSessionId"].clone();
    let created = bridge.status().await["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == before)
        .map(|s| s["createdAt"].clone())
        .unwrap();
    let (_, _, body) = mcp_post(
        &bridge,
        Some(&mcp_id),
        v,
        call(
            3,
            "claimFiles",
            json!({"paths": ["a.txt"], "reason": "mine"}),
        ),
    )
    .await;
    assert!(!is_error(&call_result(&body)["result"]), "{body}");
    bridge.stop_async().await;

    let bridge = Bridge::launch(opts()).await;
    // Another agent is refused the claimed file: the claim came back with its session.
    let mut other = bridge.ready_agent().await;
    let refused = other
        .call(
            "createFile",
            json!({"filePath": "a.txt", "content": "b\n", "overwrite": true}),
        )
        .await;
    assert!(is_error(&refused), "{refused}");
    // The client carries on with the id it has: the same session, its claim its own.
    let (status, _, body) = mcp_post(
        &bridge,
        Some(&mcp_id),
        v,
        call(4, "getBridgeStatus", json!({})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let after = json_text(&call_result(&body)["result"])["yourSessionId"].clone();
    assert_eq!(after, before);
    // Named as it introduced itself before the restart, on the page and in status.
    let status = bridge.status().await;
    let resumed = status["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == after)
        .cloned()
        .unwrap_or_default();
    assert_eq!(resumed["client"], "http-agent 0", "{status}");
    assert_eq!(resumed["createdAt"], created, "the same session: {status}");
    let (_, _, body) = mcp_post(
        &bridge,
        Some(&mcp_id),
        v,
        call(
            5,
            "createFile",
            json!({"filePath": "a.txt", "content": "mine\n", "overwrite": true}),
        ),
    )
    .await;
    assert!(!is_error(&call_result(&body)["result"]), "{body}");
    assert_eq!(
        std::fs::read_to_string(bridge.workspace.join("a.txt")).unwrap(),
        "mine\n"
    );
    // An id no session had is still a 404: the client initializes anew.
    let (status, _, body) = mcp_post(
        &bridge,
        Some("0123456789abcdef0123456789abcdef"),
        v,
        call(6, "getBridgeStatus", json!({})),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("initialize a new one"), "{body}");
}

/// An HTTP agent between requests (its session idle, no stream open) still gets an
/// automation notice at its next tool call, as a connected WebSocket agent does.
#[tokio::test]
async fn an_http_agent_between_requests_gets_the_automation_notice_at_its_next_call() {
    let bridge = Bridge::launch(
        Options::default()
            .file(
                "automation.json",
                r#"{"onFileChange": {"patterns": ["*.txt"], "action": "notify",
                                     "message": "{{change}} {{file}}"}}"#,
            )
            .set("automation.policy", "automation.json"),
    )
    .await;
    let v = Some(HTTP_VERSION);
    let mcp_id = http_handshake(&bridge).await;
    let call = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "getWorkspaceFolders", "arguments": {}}})
    };
    mcp_post(&bridge, Some(&mcp_id), v, call(2)).await;
    std::fs::write(bridge.workspace.join("d.txt"), "z\n").unwrap();
    bridge
        .wait_status("the notice", |s| {
            let hooks = s["automation"]["hooks"].as_array()?;
            hooks
                .iter()
                .any(|h| h["name"] == "onFileChange" && h["fired"] == 1)
                .then_some(())
        })
        .await;
    let (_, _, body) = mcp_post(&bridge, Some(&mcp_id), v, call(3)).await;
    assert!(
        body.contains("ide-bridge automation (onFileChange): created d.txt"),
        "{body}"
    );
}
