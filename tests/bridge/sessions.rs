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
