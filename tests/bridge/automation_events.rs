//! Automation events that need no editor, through the real binary: Claude tasks
//! ending, agents coming and going, failed `runCommand`s, files changing on disk, git
//! commits; and the `notify` and `command` actions.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;
use crate::tasks::fake_claude;

fn with_policy(policy: &str) -> Options {
    Options::default()
        .set("orchestrator.claude_binary", fake_claude())
        .file("automation.json", policy)
        .set("automation.policy", "automation.json")
}

/// The named hook's record in `/status` (null when there is none).
pub(crate) fn hook(status: &Value, name: &str) -> Value {
    status["automation"]["hooks"]
        .as_array()
        .and_then(|hooks| hooks.iter().find(|h| h["name"] == name))
        .cloned()
        .unwrap_or(Value::Null)
}

/// An agent that never called `logging/setLevel`: automation notices reach it at the
/// default level (issue 31, item 6).
pub(crate) async fn listening_agent(bridge: &Bridge) -> Agent {
    bridge.ready_agent().await
}

/// The `data` of the next automation notice (waits up to 30 s).
pub(crate) async fn next_notice(agent: &mut Agent) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline
            .checked_duration_since(std::time::Instant::now())
            .expect("an automation notice in time");
        let n = agent
            .notification("notifications/message", left)
            .await
            .expect("an automation notice in time");
        if n["params"]["data"]["event"] == "automation_notice" {
            assert_eq!(n["params"]["level"], "notice", "{n}");
            return n["params"]["data"].clone();
        }
    }
}

/// Waits for an automation notice whose message contains `needle`.
pub(crate) async fn notice(agent: &mut Agent, needle: &str) -> Value {
    loop {
        let data = next_notice(agent).await;
        if data["message"].as_str().is_some_and(|m| m.contains(needle)) {
            return data;
        }
    }
}

pub(crate) fn git(dir: &Path, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

#[tokio::test]
async fn task_hooks_notify_and_start_tasks_and_never_loop() {
    let bridge = Bridge::launch(with_policy(
        r#"{
          "onTaskFinished": {"origins": ["agent"], "action": "notify",
                             "message": "task {{taskId}} {{status}}\n{{output}}"},
          "onTaskFailed": {"prompt": "mode:echo follow up on {{taskId}} ({{status}})"}
        }"#,
    ))
    .await;
    let mut agent = listening_agent(&bridge).await;
    let done = json_text(
        &agent
            .call("runClaudeTask", json!({"prompt": "hello", "wait": true}))
            .await,
    );
    let id = done["taskId"].as_str().unwrap().to_string();
    let data = notice(&mut agent, &format!("task {id} done")).await;
    assert_eq!(data["hook"], "onTaskFinished");
    assert!(
        data["message"]
            .as_str()
            .unwrap()
            .contains("--- BEGIN OUTPUT DATA "),
        "{data}"
    );
    // A failing task starts a follow-up task; the follow-up's own end is automation's
    // doing, which the notify hook's origins leave out.
    let failed = json_text(
        &agent
            .call(
                "runClaudeTask",
                json!({"prompt": "mode:fail", "wait": true}),
            )
            .await,
    );
    let failed_id = failed["taskId"].as_str().unwrap().to_string();
    let status = bridge
        .wait_status("the follow-up task ran and the hook saw it end", |s| {
            let on_failed = hook(s, "onTaskFailed");
            let on_finished = hook(s, "onTaskFinished");
            (on_failed["lastFired"]["task"].is_string()
                && on_finished["lastSkip"]["kind"] == "filter"
                && s["automation"]["inFlight"] == json!([]))
            .then(|| s.clone())
        })
        .await;
    let on_failed = hook(&status, "onTaskFailed");
    assert_eq!(
        on_failed["lastFired"]["subject"],
        format!("task:{failed_id}"),
        "{on_failed}"
    );
    let metrics = bridge.metrics().await;
    assert!(
        metrics.contains(
            r#"ide_bridge_automation_hooks_total{hook="onTaskFailed",outcome="fired"} 1"#
        ) && metrics.contains(
            r#"ide_bridge_automation_hooks_total{hook="onTaskFinished",outcome="filter"}"#
        ),
        "{metrics}"
    );
    let follow_up = on_failed["lastFired"]["task"].as_str().unwrap();
    let listed = json_text(&agent.call("listClaudeTasks", json!({})).await);
    assert!(
        !listed.to_string().contains(follow_up),
        "automation tasks belong to no agent"
    );
    let timeline = status["recentActivity"].to_string();
    assert!(
        timeline.contains(&format!("→ task {follow_up}")),
        "{timeline}"
    );
    assert_ne!(follow_up, failed_id);
    assert_eq!(status["automation"]["fired"], 2, "{status}");
}

#[tokio::test]
async fn agents_coming_and_going_for_good_notify_the_others() {
    let bridge = Bridge::launch(
        with_policy(
            r#"{
              "onAgentConnected": {"clients": ["claude*"], "action": "notify",
                                   "message": "hello {{agent}} in {{session}}", "cooldownMs": 5000},
              "onAgentDisconnected": {"action": "notify", "message": "bye {{session}}"}
            }"#,
        )
        .set("sessions.grace_period_ms", 300),
    )
    .await;
    let mut first = listening_agent(&bridge).await;
    // At the default level an agent hears its own greeting too.
    let own = notice(&mut first, "hello claude-code in ").await;
    let second = bridge.ready_agent().await;
    let hello = notice(&mut first, "hello claude-code in ").await;
    let session = hello["subject"].as_str().unwrap().to_string();
    assert_ne!(own["subject"], hello["subject"]);
    second.close().await;
    notice(&mut first, &format!("bye {session}")).await;
    // A reconnect within the grace period is not a new agent: no second hello.
    let status = bridge.status().await;
    let connected = hook(&status, "onAgentConnected");
    assert_eq!(
        connected["fired"], 2,
        "both agents were greeted: {connected}"
    );
    assert_eq!(hook(&status, "onAgentDisconnected")["fired"], 1);
    let timeline = status["recentActivity"].to_string();
    assert!(timeline.contains("automation_notice"), "{timeline}");
}

#[tokio::test]
async fn a_failed_run_command_runs_an_allowlisted_command_hook() {
    let bridge = Bridge::launch(with_policy(
        r#"{
          "onCommandFailed": {"commands": ["git"], "action": "command",
                              "command": "git", "args": ["tag", "after-{{program}}-failed"]}
        }"#,
    ))
    .await;
    let root = bridge.workspace.clone();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["commit", "-q", "--allow-empty", "-m", "first"]);
    let mut agent = bridge.ready_agent().await;
    let out = json_text(
        &agent
            .call(
                "runCommand",
                json!({"command": "git", "args": ["rev-parse", "--verify", "nosuchref"]}),
            )
            .await,
    );
    assert_ne!(out["exitCode"], 0, "{out}");
    let status = bridge
        .wait_status("the command hook ran", |s| {
            let h = hook(s, "onCommandFailed");
            (h["lastFired"]["result"] == "exit 0").then(|| h.clone())
        })
        .await;
    assert_eq!(status["action"], "command");
    assert!(
        root.join(".git/refs/tags/after-git-failed").exists(),
        "the hook's command ran in the workspace"
    );
    // The hook's own command is not a runCommand: it cannot set the hook off again.
    assert_eq!(status["fired"], 1);
}
