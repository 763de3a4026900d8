//! Claude tasks through the real binary, with the fake Claude in tests/fixtures.

use std::time::Duration;

use serde_json::{json, Value};

use crate::editor_sim::{handler, EditorSim};
use crate::harness::*;

pub(crate) fn fake_claude() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fake-claude").to_string()
}

/// Options that start a bridge in `place` with the fake Claude.
fn fake_at(place: &Place) -> Options {
    place
        .options()
        .set("orchestrator.claude_binary", fake_claude())
}

fn with_fake() -> Options {
    Options::default().set("orchestrator.claude_binary", fake_claude())
}

async fn run(agent: &mut Agent, prompt: &str) -> Value {
    json_text(
        &agent
            .call("runClaudeTask", json!({"prompt": prompt, "wait": true}))
            .await,
    )
}

/// Starts a task without waiting for it.
async fn submit(agent: &mut Agent, args: Value) -> Value {
    json_text(&agent.call("runClaudeTask", args).await)
}

async fn status(agent: &mut Agent, id: &str) -> Value {
    json_text(
        &agent
            .call("getClaudeTaskStatus", json!({"taskId": id}))
            .await,
    )
}

async fn wait_running(agent: &mut Agent, id: &str) {
    let end = std::time::Instant::now() + DEADLINE;
    while status(agent, id).await["status"] != "running" {
        assert!(std::time::Instant::now() < end, "task {id} never ran");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Asserts that a task's output contains `needle`.
fn assert_output(task: &Value, needle: &str) {
    let output = task["output"].as_str().unwrap_or_default();
    assert!(output.contains(needle), "{needle:?} not in {task}");
}

/// How many `sleep <marker>` processes started by fake tasks exist.
fn children(marker: &str) -> usize {
    let ps = std::process::Command::new("pgrep")
        .args(["-f", &format!("sleep {marker}")])
        .output()
        .unwrap();
    String::from_utf8_lossy(&ps.stdout).lines().count()
}

/// True while a `sleep <marker>` started by a fake task exists.
fn alive(marker: &str) -> bool {
    children(marker) > 0
}

async fn no_orphans(marker: &'static str) {
    wait_for_blocking("the task's process group is gone", DEADLINE, move || {
        (!alive(marker)).then_some(())
    })
    .await;
}

/// Waits until a `sleep <marker>` started by a fake task exists.
async fn child_started(marker: &'static str) {
    wait_for_blocking("the forever task's child exists", DEADLINE, move || {
        alive(marker).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_task_runs_to_done_and_streams_progress_and_editor_output() {
    let mut opts = with_fake();
    opts.env.push(("CLAUDECODE".into(), "1".into()));
    let bridge = Bridge::launch(opts).await;
    let editor = EditorSim::connect(&bridge, handler(|_, _| None)).await;
    let mut agent = bridge.ready_agent().await;
    let id = agent.id();
    agent
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "runClaudeTask", "arguments": {"prompt": "say hello", "wait": true, "contextFiles": ["src/main.rs"]},
            "_meta": {"progressToken": "task-progress"}}}))
        .await;
    let resp = agent.response_to(&json!(id)).await;
    assert!(!is_error(&resp["result"]), "{resp}");
    let task = json_text(&resp["result"]);
    assert_eq!(
        task["status"], "done",
        "CLAUDECODE is removed from the task's environment: {task}"
    );
    // The assistant's text and the result, each on a line of its own; a result that
    // repeats the last text (as the real CLI's does) is shown once.
    assert_eq!(
        task["output"], "working on: say hello\ndone: say hello",
        "{task}"
    );
    let echoed = json_text(
        &agent
            .call(
                "runClaudeTask",
                json!({"prompt": "mode:echo just once", "wait": true}),
            )
            .await,
    );
    assert_eq!(echoed["output"], "mode:echo just once", "{echoed}");
    // The status counts them and names the latest, as `ide-bridge status` says it.
    let status = bridge.get_json_async("/status").await;
    let tasks = &status["tasks"];
    assert_eq!(
        (tasks["done"].clone(), tasks["running"].clone()),
        (json!(2), json!(0)),
        "{tasks}"
    );
    assert_eq!(
        tasks["recent"][0]["prompt"], "mode:echo just once",
        "{tasks}"
    );
    assert!(
        tasks["recent"][0]["origin"]
            .as_str()
            .unwrap()
            .starts_with("session "),
        "{tasks}"
    );
    let out = async_command(&bridge.config_dir)
        .args(["status", "--workspace"])
        .arg(&bridge.workspace)
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(
            "claude tasks: 0 running (at most 10), 0 waiting, 2 done, 0 failed, 0 cancelled\n"
        ),
        "{said}"
    );
    assert!(agent
        .inbox
        .iter()
        .any(|m| m["method"] == "notifications/progress"
            && m["params"]["progressToken"] == "task-progress"));
    let task_id = task["taskId"].as_str().unwrap().to_string();
    editor
        .wait_notification("bridge/claudeTaskOutput", |p| {
            p["taskId"] == task_id.as_str() && p["chunk"].is_string()
        })
        .await;
    editor
        .wait_notification("bridge/claudeTaskOutput", |p| {
            p["taskId"] == task_id.as_str() && p["status"] == "done"
        })
        .await;
}

/// With `wait: true` the agent follows the task from its queueing on: the first line of
/// a task that prints at once (the fake answers as soon as it reads the prompt) is its
/// first progress notification, every time.
#[tokio::test]
async fn a_waiting_agent_sees_the_first_line_of_a_task_that_prints_at_once() {
    let bridge = Bridge::launch(with_fake()).await;
    let mut agent = bridge.ready_agent().await;
    for round in 0..5 {
        let token = format!("first-line-{round}");
        let id = agent.id();
        agent
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "runClaudeTask", "arguments": {"prompt": format!("round {round}"), "wait": true},
                "_meta": {"progressToken": token}}}))
            .await;
        let resp = agent.response_to(&json!(id)).await;
        assert_eq!(json_text(&resp["result"])["status"], "done", "{resp}");
        let progress: Vec<Value> = agent
            .inbox
            .iter()
            .filter(|m| {
                m["method"] == "notifications/progress"
                    && m["params"]["progressToken"] == token.as_str()
            })
            .cloned()
            .collect();
        let first = progress
            .first()
            .unwrap_or_else(|| panic!("round {round}: no progress at all"));
        assert_eq!(
            (
                first["params"]["progress"].clone(),
                first["params"]["message"].clone()
            ),
            (json!(1.0), json!(format!("working on: round {round}"))),
            "round {round}: {progress:?}"
        );
        agent.inbox.clear();
    }
}

#[tokio::test]
async fn failing_and_crashing_runs_end_in_error() {
    let bridge = Bridge::launch(with_fake()).await;
    let mut agent = bridge.ready_agent().await;
    let failed = run(&mut agent, "mode:fail").await;
    assert_eq!(failed["status"], "error");
    assert!(
        failed["error"]
            .as_str()
            .unwrap()
            .contains("exited with code 1"),
        "{failed}"
    );
    let crashed = run(&mut agent, "mode:crash").await;
    assert_eq!(crashed["status"], "error");
    assert!(
        crashed["error"].as_str().unwrap().contains("code 2"),
        "{crashed}"
    );
    let missing =
        Bridge::launch(Options::default().set("orchestrator.claude_binary", "/nonexistent/claude"))
            .await;
    let mut a = missing.ready_agent().await;
    // Refused at once, naming the setting, whether the agent waits or not.
    for wait in [true, false] {
        let r = a
            .call("runClaudeTask", json!({"prompt": "hi", "wait": wait}))
            .await;
        assert!(is_error(&r), "{r}");
        assert!(
            text(&r).contains("orchestrator.claude_binary \"/nonexistent/claude\" is not found;"),
            "{r}"
        );
    }
    // There, but it cannot be started (its interpreter is missing): the task says so.
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("claude");
    std::fs::write(&broken, "#!/nonexistent/interpreter\n").unwrap();
    std::fs::set_permissions(&broken, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let unstartable =
        Bridge::launch(Options::default().set("orchestrator.claude_binary", broken.display()))
            .await;
    let mut a = unstartable.ready_agent().await;
    let r = run(&mut a, "hi").await;
    assert_eq!(r["status"], "error", "{r}");
    assert!(r["error"].as_str().unwrap().contains("cannot start"), "{r}");
}

/// How a run ends is the CLI's exit and its `result`: not a quiet exit, not a chatty
/// stderr, not bytes that are not UTF-8, not a process it left holding its stdout.
#[tokio::test]
async fn a_run_ends_with_its_result_whatever_else_it_writes_or_leaves_behind() {
    let bridge = Bridge::launch(with_fake()).await;
    let mut agent = bridge.ready_agent().await;
    // 64 KiB on stderr (Node warnings, MCP server logs): read, not a broken pipe.
    let chatty = run(&mut agent, "mode:chatty").await;
    assert_eq!(chatty["status"], "done", "{chatty}");
    assert_output(&chatty, "done: mode:chatty");
    let odd = run(&mut agent, "mode:badutf8").await;
    assert_eq!(odd["status"], "done", "{odd}");
    assert_output(&odd, "done: mode:badutf8");
    // Exit 0 without a result is not success (a wrong claude_binary, a CLI that broke).
    let quiet = run(&mut agent, "mode:noresult").await;
    assert_eq!(quiet["status"], "error", "{quiet}");
    assert!(
        quiet["error"]
            .as_str()
            .unwrap()
            .contains("exited without a result"),
        "{quiet}"
    );
    // A background process keeps the CLI's stdout open: the run still ends when the CLI
    // exits, with its result, and the process goes with the task's group.
    let lingering = agent
        .call(
            "runClaudeTask",
            json!({"prompt": "mode:lingering marker:3137", "wait": true, "timeoutMs": 20000}),
        )
        .await;
    let lingering = json_text(&lingering);
    assert_eq!(lingering["status"], "done", "{lingering}");
    assert_output(&lingering, "done: mode:lingering");
    no_orphans("3137").await;
    // How they ended, and that none runs, in the metrics.
    let metrics = bridge.metrics().await;
    for line in [
        r#"ide_bridge_claude_tasks_ended_total{state="done"} 3"#,
        r#"ide_bridge_claude_tasks_ended_total{state="error"} 1"#,
        r#"ide_bridge_claude_tasks{state="running"} 0"#,
        r#"ide_bridge_claude_tasks{state="queued"} 0"#,
    ] {
        assert!(metrics.contains(line), "{line} in {metrics}");
    }
}

/// A process a task started outside its group (`setsid`) ends with the task, however
/// the task ends: cancelled here, done below.
#[tokio::test]
async fn what_a_task_left_outside_its_process_group_ends_with_it() {
    let bridge = Bridge::launch(with_fake()).await;
    let mut agent = bridge.ready_agent().await;
    let started = submit(
        &mut agent,
        json!({"prompt": "mode:forever marker:3141 escape:3142"}),
    )
    .await;
    let id = started["taskId"].as_str().unwrap().to_string();
    child_started("3142").await;
    let cancelled = agent.call("cancelClaudeTask", json!({"taskId": id})).await;
    assert!(!is_error(&cancelled), "{cancelled}");
    no_orphans("3142").await;
    no_orphans("3141").await;
    let done = run(&mut agent, "mode:ok escape:3143").await;
    assert_eq!(done["status"], "done", "{done}");
    no_orphans("3143").await;
}

#[tokio::test]
async fn limits_on_timeout_prompt_and_context_files() {
    let bridge = Bridge::launch(with_fake()).await;
    let mut agent = bridge.ready_agent().await;
    for bad in [4999, 600_001] {
        arguments_refused(
            &agent
                .call_raw("runClaudeTask", json!({"prompt": "x", "timeoutMs": bad}))
                .await,
        );
    }
    let edge = json_text(
        &agent
            .call("runClaudeTask", json!({"prompt": "x", "timeoutMs": 5000}))
            .await,
    );
    assert_eq!(edge["timeoutMs"], 5000);
    let at = json_text(
        &agent
            .call("runClaudeTask", json!({"prompt": "p".repeat(32 * 1024)}))
            .await,
    );
    assert!(at["taskId"].is_string());
    let over = agent
        .call(
            "runClaudeTask",
            json!({"prompt": "p".repeat(32 * 1024 + 1)}),
        )
        .await;
    assert_eq!(
        text(&over),
        "Prompt is 32769 bytes; the limit is 32768 bytes"
    );
    let files = |n: usize| vec!["src/main.rs".to_string(); n];
    assert!(!is_error(
        &agent
            .call(
                "runClaudeTask",
                json!({"prompt": "x", "contextFiles": files(20)})
            )
            .await
    ));
    arguments_refused(
        &agent
            .call_raw(
                "runClaudeTask",
                json!({"prompt": "x", "contextFiles": files(21)}),
            )
            .await,
    );
    let escape = agent
        .call(
            "runClaudeTask",
            json!({"prompt": "x", "contextFiles": ["../../etc/passwd"]}),
        )
        .await;
    assert!(text(&escape).starts_with("Path escapes workspace"));
    let slow = submit(
        &mut agent,
        json!({"prompt": "mode:forever marker:4141", "timeoutMs": 5000, "wait": true}),
    )
    .await;
    assert_eq!(slow["status"], "error");
    assert!(
        slow["error"]
            .as_str()
            .unwrap()
            .contains("timed out after 5000 ms"),
        "{slow}"
    );
    no_orphans("4141").await;
}

#[tokio::test]
async fn queue_full_cancel_pending_and_running_without_orphans() {
    let bridge = Bridge::launch(
        with_fake()
            .set("orchestrator.max_concurrent", 1)
            .set("orchestrator.max_queue", 1),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    let running = submit(
        &mut agent,
        json!({"prompt": "mode:forever marker:5151", "timeoutMs": 600000}),
    )
    .await;
    let pending = submit(&mut agent, json!({"prompt": "mode:forever marker:5252"})).await;
    assert_eq!(pending["status"], "pending");
    let full = agent.call("runClaudeTask", json!({"prompt": "x"})).await;
    assert!(
        is_error(&full) && text(&full).starts_with("Task queue is full"),
        "{full}"
    );
    let (r, p) = (
        running["taskId"].as_str().unwrap(),
        pending["taskId"].as_str().unwrap(),
    );
    wait_running(&mut agent, r).await;
    child_started("5151").await;
    let c = json_text(&agent.call("cancelClaudeTask", json!({"taskId": p})).await);
    assert_eq!(c["status"], "cancelled");
    let c = json_text(&agent.call("cancelClaudeTask", json!({"taskId": r})).await);
    assert_eq!(c["status"], "cancelled");
    no_orphans("5151").await;
    assert!(
        !off_runtime(|| alive("5252")).await,
        "the cancelled pending task never started"
    );
    let again = agent.call("cancelClaudeTask", json!({"taskId": r})).await;
    assert!(text(&again).contains("already finished"));
}

#[tokio::test]
async fn default_limits_run_ten_queue_twenty_and_refuse_the_thirty_first() {
    let bridge = Bridge::launch(with_fake()).await;
    let mut agent = bridge.ready_agent().await;
    let mut ids = Vec::new();
    for i in 0..30 {
        let t = submit(
            &mut agent,
            json!({"prompt": "mode:forever marker:7171", "timeoutMs": 600000}),
        )
        .await;
        // A free slot starts the task while it is queued, before the answer.
        let expected = if i < 10 { "running" } else { "pending" };
        assert_eq!(t["status"], expected, "task {i}: {t}");
        ids.push(t["taskId"].as_str().unwrap().to_string());
    }
    let full = agent.call("runClaudeTask", json!({"prompt": "x"})).await;
    assert_eq!(
        text(&full),
        "Task queue is full: 10 tasks running and 20 waiting (max 20); try again when one finishes"
    );
    let listed = json_text(&agent.call("listClaudeTasks", json!({})).await);
    let count = |status: &str| {
        listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["status"] == status)
            .count()
    };
    assert_eq!((count("running"), count("pending")), (10, 20), "{listed}");
    wait_for_blocking(
        "ten running tasks each started their child",
        DEADLINE,
        || (children("7171") == 10).then_some(()),
    )
    .await;
    // Cancel the queue first so that nothing new starts, then the running ones.
    for id in ids.iter().rev() {
        let c = json_text(&agent.call("cancelClaudeTask", json!({"taskId": id})).await);
        assert_eq!(c["status"], "cancelled", "{c}");
    }
    no_orphans("7171").await;
}

#[tokio::test]
async fn other_sessions_tasks_are_refused_and_history_is_bounded() {
    let bridge = Bridge::launch(with_fake().set("orchestrator.max_history", 2)).await;
    let mut owner = bridge.ready_agent().await;
    let mut stranger = bridge.ready_agent().await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let t = run(&mut owner, &format!("task {i}")).await;
        ids.push(t["taskId"].as_str().unwrap().to_string());
    }
    for tool in ["getClaudeTaskStatus", "cancelClaudeTask"] {
        let r = stranger.call(tool, json!({"taskId": ids[2]})).await;
        assert!(
            is_error(&r) && text(&r).contains("belongs to another session"),
            "{tool}: {r}"
        );
    }
    let theirs = json_text(&stranger.call("listClaudeTasks", json!({})).await);
    assert!(theirs["tasks"].as_array().unwrap().is_empty());
    let mine = json_text(
        &owner
            .call("listClaudeTasks", json!({"status": "done"}))
            .await,
    );
    let listed: Vec<&str> = mine["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        vec![ids[1].as_str(), ids[2].as_str()],
        "the oldest finished task was evicted"
    );
    assert!(text(
        &owner
            .call("getClaudeTaskStatus", json!({"taskId": ids[0]}))
            .await
    )
    .starts_with("No task"));
}

#[tokio::test]
async fn tasks_alive_at_a_stop_come_back_interrupted() {
    let place = Place::new();
    let opts = || fake_at(&place);
    let anchor = [("x-claude-code-session-id", "task-owner")];
    let first = Bridge::launch(opts()).await;
    let mut agent = Agent::connect(&first, &anchor).await.unwrap();
    agent.initialize().await;
    let t = submit(
        &mut agent,
        json!({"prompt": "mode:forever marker:6161", "timeoutMs": 600000}),
    )
    .await;
    let id = t["taskId"].as_str().unwrap().to_string();
    wait_running(&mut agent, &id).await;
    child_started("6161").await;
    drop(agent);
    first.stop_async().await;
    no_orphans("6161").await;
    // Automation hears of it as a failure (`interrupted`).
    let policy = r#"{"onTaskFailed": {"action": "notify", "message": "{{taskId}} {{status}}"}}"#;
    let second = Bridge::launch(
        opts()
            .file("automation.json", policy)
            .set("automation.policy", "automation.json"),
    )
    .await;
    let mut back = Agent::connect(&second, &anchor).await.unwrap();
    back.initialize().await;
    let s = status(&mut back, &id).await;
    assert_eq!(s["status"], "interrupted", "{s}");
    let fired = second
        .wait_status("onTaskFailed for the interrupted task", |s| {
            let h = crate::automation_events::hook(s, "onTaskFailed");
            (h["fired"] == 1).then_some(h)
        })
        .await;
    assert_eq!(
        fired["lastFired"]["subject"],
        format!("task:{id}"),
        "{fired}"
    );
}

#[tokio::test]
async fn a_crashed_bridge_leaves_no_task_processes_behind() {
    let place = Place::new();
    let opts = || fake_at(&place);
    let first = Bridge::launch(opts()).await;
    let mut agent = first.ready_agent().await;
    let t = submit(
        &mut agent,
        json!({"prompt": "mode:forever marker:8181", "timeoutMs": 600000}),
    )
    .await;
    let id = t["taskId"].as_str().unwrap().to_string();
    wait_running(&mut agent, &id).await;
    child_started("8181").await;
    // Once the (debounced) task file records the run, kill the bridge outright.
    let (file, run_id) = (place.state_dir().join("tasks.json"), id.clone());
    wait_for_blocking("the task file records the run", DEADLINE, move || {
        let text = std::fs::read_to_string(&file).ok()?;
        let saved: Value = serde_json::from_str(&text).ok()?;
        saved
            .as_array()?
            .iter()
            .any(|t| t["id"] == run_id.as_str() && t["status"] == "running")
            .then_some(())
    })
    .await;
    drop(agent);
    first.kill9();
    // The task process got SIGTERM from the kernel (parent death); its own child
    // (`sleep 8181`) was orphaned. The next bridge finds it by its marker and kills it.
    assert!(
        off_runtime(|| alive("8181")).await,
        "the grandchild outlives a SIGKILLed bridge"
    );
    let second = Bridge::launch(opts()).await;
    no_orphans("8181").await;
    assert!(
        second.log().contains("killed processes left running"),
        "{}",
        second.log()
    );
    let mut back = second.ready_agent().await;
    let listed = json_text(&back.call("listClaudeTasks", json!({})).await);
    assert!(listed["tasks"].as_array().unwrap().is_empty(), "{listed}");
}

#[tokio::test]
async fn the_permission_policy_allows_denies_and_denies_by_default() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("bridge.toml");
    std::fs::write(
        &config,
        "[orchestrator]\npermissions = [\n  { tool = \"Write\", decision = \"deny\" },\n  { tool = \"Bash\", pattern = \"ls\", decision = \"allow\" },\n]\n",
    )
    .unwrap();
    let bridge = Bridge::launch(with_fake().arg("--config").arg(config.to_str().unwrap())).await;
    let mut agent = bridge.ready_agent().await;
    let allowed = run(&mut agent, "mode:permission:Bash").await;
    assert_output(&allowed, "permission allow");
    let denied = run(&mut agent, "mode:permission:Write").await;
    assert_output(&denied, "permission deny");
    let default = run(&mut agent, "mode:permission:Read").await;
    assert_output(&default, "permission deny");
    let log = json_text(&agent.call("getActivityLog", json!({"limit": 100})).await);
    let decisions: Vec<&str> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "permission_decision")
        .map(|e| e["detail"].as_str().unwrap())
        .collect();
    assert_eq!(decisions.len(), 3, "{decisions:?}");
    assert!(decisions
        .iter()
        .any(|d| d.contains("Read denied (default deny)")));
}

#[test]
fn a_bad_permission_rule_stops_start_up() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("bridge.toml");
    std::fs::write(
        &config,
        "[orchestrator]\npermissions = [{ tool = \"Bash\", decision = \"maybe\" }]\n",
    )
    .unwrap();
    let out = command(tmp.path())
        .args(["config", "--config", config.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("orchestrator.permissions[0].decision"));
}
