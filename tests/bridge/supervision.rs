//! Fault injection: a panic in a singleton actor restarts that actor and nothing else;
//! requests in flight get an error instead of hanging.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::editor_sim::{handler, EditorSim};
use crate::harness::*;

/// `/metrics` counts exactly one restart of `actor`.
async fn assert_restarted_once(bridge: &Bridge, actor: &str) {
    let metrics = bridge.metrics().await;
    assert!(
        metrics.contains(&format!(
            "ide_bridge_actor_restarts_total{{actor=\"{actor}\"}} 1"
        )),
        "{metrics}"
    );
}

async fn crash_with_request_in_flight(actor: &str) {
    crash_in(actor, Options::default()).await;
}

async fn crash_in(actor: &str, opts: Options) {
    let bridge = Bridge::launch(opts.set("checkpoint.interval_ms", 200)).await;
    let mut victim = bridge.ready_agent().await;
    let mut bystander = bridge.ready_agent().await;
    bystander
        .call("openFile", json!({"filePath": "src/main.rs"}))
        .await;

    // A request held in flight inside the actor for a minute…
    let id = victim.id();
    victim
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": "debug_stall_actor", "arguments": {"actor": actor, "ms": 60000}}}))
        .await;
    // Once /status counts the call, its request sits in the actor's mailbox ahead of
    // anything sent from now on.
    bridge.wait_active_calls(1).await;
    // …when the actor panics in a handler.
    let crash = bystander
        .call("debug_crash_actor", json!({"actor": actor}))
        .await;
    assert!(is_error(&crash));
    assert!(text(&crash).contains("restarting"), "{crash}");

    let started = Instant::now();
    let stalled = victim.response_to(&json!(id)).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "in-flight request answered promptly"
    );
    assert!(is_error(&stalled["result"]), "{stalled}");
    assert!(text(&stalled["result"]).contains(actor), "{stalled}");

    // Both agents stay connected and the actor serves again within a second.
    assert_eq!(victim.request("ping", json!({})).await["result"], json!({}));
    let deadline = Instant::now() + Duration::from_secs(1);
    // (The restart's record reaches the activity log on its own, just after.)
    let status = loop {
        let result = bystander.call("getBridgeStatus", json!({})).await;
        if !is_error(&result) && json_text(&result)["activity"]["actorRestarts"].as_u64() >= Some(1)
        {
            break json_text(&result);
        }
        assert!(
            Instant::now() < deadline,
            "actor not back (and its restart recorded) within a second: {result}"
        );
    };
    assert_eq!(
        status["sessions"].as_array().unwrap().len(),
        2,
        "session table survived"
    );
    let tabs = json_text(&bystander.call("getOpenEditors", json!({})).await);
    assert_eq!(
        tabs["tabs"].as_array().unwrap().len(),
        1,
        "session state untouched"
    );
    assert_restarted_once(&bridge, actor).await;
}

#[tokio::test]
async fn automation_panic_restarts_only_automation_with_its_policy() {
    let opts = Options::default()
        .file(
            "policy.toml",
            "[onFileSave]\npatterns = [\"*.rs\"]\nprompt = \"review {{file}}\"\n",
        )
        .set("automation.policy", "policy.toml");
    crash_in("automation", opts).await;
}

#[tokio::test]
async fn orchestrator_panic_restarts_only_the_orchestrator() {
    crash_with_request_in_flight("orchestrator").await;
}

#[tokio::test]
async fn registry_panic_restarts_only_the_registry() {
    crash_with_request_in_flight("registry").await;
}

#[tokio::test]
async fn activity_log_panic_restarts_only_the_activity_log() {
    crash_with_request_in_flight("activity_log").await;
}

#[tokio::test]
async fn workspace_writer_panic_restarts_only_the_writer() {
    crash_with_request_in_flight("workspace_writer").await;
}

#[tokio::test]
async fn diagnostics_panic_restarts_only_diagnostics() {
    crash_with_request_in_flight("diagnostics").await;
}

#[tokio::test]
async fn checkpoint_panic_restarts_only_the_checkpoint_actor() {
    crash_with_request_in_flight("checkpoint").await;
}

#[tokio::test]
async fn a_panicking_tool_is_a_tool_error_and_the_session_lives_on() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    let mut other = bridge.ready_agent().await;
    // At once (the session answers the call without spawning it) and after waiting
    // (the call's own task).
    for args in [json!({}), json!({"after_ms": 20})] {
        let result = agent.call("debug_panic", args).await;
        assert!(is_error(&result));
        assert!(text(&result).contains("internal error"), "{result}");
    }
    assert_eq!(
        text(&agent.call("close_tab", json!({"tab_name": "t"})).await),
        "TAB_CLOSED"
    );
    assert_eq!(
        text(&other.call("close_tab", json!({"tab_name": "t"})).await),
        "TAB_CLOSED"
    );
}

#[tokio::test]
async fn repeated_crashes_keep_being_recovered() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    for _ in 0..5 {
        let crash = agent
            .call("debug_crash_actor", json!({"actor": "registry"}))
            .await;
        assert!(is_error(&crash));
        let status = agent.call("getBridgeStatus", json!({})).await;
        assert!(!is_error(&status), "{status}");
    }
    let metrics = bridge.metrics().await;
    assert!(
        metrics.contains("ide_bridge_actor_restarts_total{actor=\"registry\"} 5"),
        "{metrics}"
    );
}

/// Makes `actor` panic, then checks that the actors it does not stand for answer as
/// before (a file tool, the activity log, the editor connection made before the panic,
/// the task list), and that `actor` itself serves again within a second.
async fn others_keep_serving(actor: &str) {
    let bridge = Bridge::launch(
        Options::default().set("orchestrator.claude_binary", crate::tasks::fake_claude()),
    )
    .await;
    let editor = EditorSim::connect(&bridge, handler(|_, _| None)).await;
    let mut agent = bridge.ready_agent().await;
    let crash = agent
        .call("debug_crash_actor", json!({"actor": actor}))
        .await;
    assert!(
        is_error(&crash) && text(&crash).contains("restarting"),
        "{crash}"
    );
    let hover = json!({"file": "src/main.rs", "line": 1, "column": 1});
    let probes: [(&str, &str, Value); 4] = [
        ("workspace", "readFile", json!({"filePath": "src/main.rs"})),
        ("activity_log", "getActivityLog", json!({"limit": 5})),
        ("extension_client", "getHover", hover),
        ("orchestrator", "listClaudeTasks", json!({})),
    ];
    for (owner, tool, args) in &probes {
        if *owner == actor {
            continue;
        }
        let result = agent.call(tool, args.clone()).await;
        assert!(
            !is_error(&result),
            "{tool} stopped answering when {actor} panicked: {result}"
        );
    }
    if actor != "extension_client" {
        // The editor connected before the panic is the one that answered.
        editor.wait_request("extension/getHover", 0).await;
    }
    // The crashed actor is back within a second.
    let (_, tool, args) = probes
        .iter()
        .find(|(owner, _, _)| *owner == actor)
        .cloned()
        .unwrap_or(("", "getBridgeStatus", json!({})));
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        let result = agent.call(tool, args.clone()).await;
        if !is_error(&result) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{actor} not back within a second: {result}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_restarted_once(&bridge, actor).await;
}

#[tokio::test]
async fn after_an_orchestrator_panic_files_activity_and_the_editor_still_answer() {
    others_keep_serving("orchestrator").await;
}

#[tokio::test]
async fn after_an_extension_client_panic_tasks_files_and_activity_still_answer() {
    others_keep_serving("extension_client").await;
}

#[tokio::test]
async fn after_an_activity_log_panic_files_tasks_and_the_editor_still_answer() {
    others_keep_serving("activity_log").await;
}

#[tokio::test]
async fn after_a_registry_panic_every_other_actor_still_answers() {
    others_keep_serving("registry").await;
}

#[tokio::test]
async fn after_a_writer_panic_every_other_actor_still_answers() {
    others_keep_serving("workspace_writer").await;
}

#[tokio::test]
async fn watcher_panic_restarts_only_the_watcher() {
    crash_with_request_in_flight("watcher").await;
}

/// After its restart the watcher walks the tree again and reports changes as before.
#[tokio::test]
async fn a_restarted_watcher_watches_again() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    let events = |s: &Value| (s["watch"]["mode"] == "events").then_some(());
    bridge.wait_status("kernel events", events).await;
    let crash = agent
        .call("debug_crash_actor", json!({"actor": "watcher"}))
        .await;
    assert!(
        is_error(&crash) && text(&crash).contains("restarting"),
        "{crash}"
    );
    bridge.wait_status("kernel events again", events).await;
    std::fs::write(bridge.workspace.join("src/after.rs"), "x").unwrap();
    bridge
        .wait_status("the change after the restart", |s| {
            s["watch"]["recent"]
                .as_array()
                .is_some_and(|r| r.iter().any(|c| c == "created src/after.rs"))
                .then_some(())
        })
        .await;
    assert_restarted_once(&bridge, "watcher").await;
}
