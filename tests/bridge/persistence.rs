//! ActivityLog and Checkpoint: state that survives restarts, crashes and corrupt files.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::harness::*;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

async fn session_id(agent: &mut Agent) -> String {
    json_text(&agent.call("getBridgeStatus", json!({})).await)["yourSessionId"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn tabs(agent: &mut Agent) -> Vec<String> {
    let t = json_text(&agent.call("getOpenEditors", json!({})).await);
    t["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["label"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn activity_and_sessions_survive_a_graceful_restart() {
    let place = Place::new();
    let first = Bridge::launch(place.options()).await;
    let port = first.port;
    let anchor = [("x-claude-code-session-id", "cli-restart")];
    let mut agent = Agent::connect(&first, &anchor).await.unwrap();
    agent.initialize().await;
    let id = session_id(&mut agent).await;
    agent
        .call("openFile", json!({"filePath": "README.md"}))
        .await;
    agent
        .call("close_tab", json!({"tab_name": "before-restart"}))
        .await;
    let left_after = now_ms();
    drop(agent);
    first
        .wait_status("the agent gone, its session in grace", |s| {
            (s["sessions"][0]["inGrace"] == true).then_some(())
        })
        .await;
    first.stop_async().await;
    let checkpoint: Value = serde_json::from_str(
        &std::fs::read_to_string(place.state_dir().join("checkpoint.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        checkpoint["workspace"],
        place.workspace.display().to_string()
    );
    assert_eq!(checkpoint["sessions"][0]["sessionId"], id.as_str());
    // When the agent left, so that its grace period goes on from there.
    let left = checkpoint["sessions"][0]["disconnectedAt"]
        .as_u64()
        .unwrap();
    assert!((left_after..=now_ms()).contains(&left), "{checkpoint}");

    let second = Bridge::launch(place.options()).await;
    assert_eq!(
        second.port, port,
        "a restarted bridge keeps its port when it is free"
    );
    let status = second.status().await;
    assert_eq!(status["sessions"][0]["id"], id.as_str(), "restored session");
    assert_eq!(status["sessions"][0]["inGrace"], true);
    assert!(status["activity"]["loadedFromDisk"].as_u64().unwrap() >= 2);

    let mut back = Agent::connect(&second, &anchor).await.unwrap();
    back.initialize().await;
    assert_eq!(session_id(&mut back).await, id);
    assert_eq!(tabs(&mut back).await, vec!["README.md"]);
    let log = json_text(
        &back
            .call("getActivityLog", json!({"tool": "close_tab"}))
            .await,
    );
    let entries = log["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert!(entries[0]["summary"]
        .as_str()
        .unwrap()
        .contains("before-restart"));
    let ids_in = |log: &Value| -> Vec<u64> {
        log["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_u64().unwrap())
            .collect()
    };
    let all = json_text(&back.call("getActivityLog", json!({"limit": 500})).await);
    let ids = ids_in(&all);
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "ids stay monotonic across restarts: {ids:?}"
    );
    // Paging with the last id seen walks the whole log, without gaps.
    let mut paged: Vec<u64> = Vec::new();
    let mut after = 0;
    loop {
        let page = json_text(
            &back
                .call("getActivityLog", json!({"afterId": after, "limit": 2}))
                .await,
        );
        let got = ids_in(&page);
        paged.extend(&got);
        if page["more"] != true {
            break;
        }
        after = *got.last().unwrap();
    }
    assert_eq!(
        paged[..ids.len()],
        ids[..],
        "paged {paged:?}, whole {ids:?}"
    );
    assert!(all["entries"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["event"] == "session_restored"));
}

/// A small deterministic generator for "random" kill moments.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}

#[tokio::test]
async fn kill_dash_nine_at_random_moments_never_corrupts_or_loses_old_entries() {
    const ROUNDS: usize = 50;
    const INTERVAL_MS: u64 = 300;
    const FLUSH_MS: u64 = 50;
    // What a machine busy with the rest of the suite may add to a timer's wake-up and a
    // write (a checkpoint is a file written, synced and renamed): an entry is judged
    // only when it is older than its flush or checkpoint by this much at the kill.
    const SLACK_MS: u64 = 500;
    let place = Place::new();
    for i in 0..ROUNDS * 2 {
        std::fs::write(place.workspace.join(format!("f{i}.txt")), "x\n").unwrap();
    }
    let opts = || {
        place
            .options()
            .set("checkpoint.interval_ms", INTERVAL_MS)
            .set("activity.flush_ms", FLUSH_MS)
    };
    let mut rng = Lcg(42);
    let started = Instant::now();
    // (marker, acknowledged at, round) for every call the bridge answered, and the
    // files opened; each is judged against the kill that followed it.
    let mut acked: Vec<(String, Instant, usize)> = Vec::new();
    let mut opened: Vec<(String, Instant, usize)> = Vec::new();
    let mut kills: Vec<Instant> = Vec::new();
    // How many files and entries were old enough at their kill to be judged: the kill
    // moments must leave some on that side of the line, or the test judges nothing.
    let (mut files_judged, mut entries_judged) = (0, std::collections::HashSet::new());
    for round in 0..ROUNDS {
        let mut opts = opts();
        opts.log_level = Some("warn");
        let bridge = Bridge::launch(opts).await;
        let anchor = [("x-claude-code-session-id", "crash-agent")];
        let mut agent = Agent::connect(&bridge, &anchor).await.unwrap();
        agent.initialize().await;

        // The restored session holds every file opened well before the last kill, and
        // nothing that was never opened.
        if round > 0 {
            let restored = tabs(&mut agent).await;
            // Files of the previous round opened a checkpoint interval before its kill
            // are back (earlier rounds' files were checked in their own round).
            for (file, at, r) in opened.iter().filter(|o| o.2 == round - 1) {
                if *at + Duration::from_millis(INTERVAL_MS + SLACK_MS) < kills[*r] {
                    files_judged += 1;
                    assert!(
                        restored.contains(file),
                        "round {round}: {file} lost; restored {restored:?}"
                    );
                }
            }
            assert!(
                restored
                    .iter()
                    .all(|f| opened.iter().any(|(o, _, _)| o == f)),
                "round {round}: {restored:?}"
            );
        }
        for k in 0..2 {
            let file = format!("f{}.txt", round * 2 + k);
            agent.call("openFile", json!({"filePath": file})).await;
            opened.push((file, Instant::now(), round));
            let marker = format!("r{round}k{k}");
            agent.call("close_tab", json!({"tab_name": marker})).await;
            acked.push((marker, Instant::now(), round));
        }
        tokio::time::sleep(Duration::from_millis(rng.next(3 * INTERVAL_MS + SLACK_MS))).await;
        let kill = Instant::now();
        bridge.kill9();
        kills.push(kill);

        // Every file on disk parses; at most a torn last line of the JSONL is skipped.
        let state = place.state_dir();
        let mut all_activity = String::new();
        for entry in std::fs::read_dir(&state).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            let text = std::fs::read_to_string(entry.path()).unwrap();
            if name == "checkpoint.json" {
                serde_json::from_str::<Value>(&text)
                    .unwrap_or_else(|e| panic!("round {round}: {name} corrupt: {e}"));
            }
            if name.starts_with("activity.jsonl") {
                let lines: Vec<&str> = text.lines().collect();
                for (i, line) in lines.iter().enumerate() {
                    let ok = serde_json::from_str::<Value>(line).is_ok();
                    assert!(
                        ok || i + 1 == lines.len(),
                        "round {round}: {name} line {i} corrupt: {line}"
                    );
                }
                all_activity.push_str(&text);
            }
        }
        // No entry acknowledged a flush (and the slack) before its kill is lost.
        for (marker, at, r) in &acked {
            if *at + Duration::from_millis(FLUSH_MS + SLACK_MS) < kills[*r] {
                entries_judged.insert(marker.clone());
                assert!(
                    all_activity.contains(&format!("tab_name={marker}")),
                    "round {round}: {marker} acknowledged {:?} before its kill is lost",
                    kills[*r] - *at
                );
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(240),
            "crash rounds are bounded in time"
        );
    }
    assert!(
        files_judged >= 10 && entries_judged.len() >= 20,
        "too few kills came late enough to judge anything: {files_judged} files, {} entries",
        entries_judged.len()
    );
}

/// A long activity log (8 MiB: near where it rotates by default) is read back keeping
/// only the newest entries as it goes: the bridge's memory after start-up does not grow
/// with the file's length (it held every line parsed: 12 MB per MiB, for good).
#[tokio::test]
async fn a_long_activity_log_is_read_back_in_bounded_memory() {
    let place = Place::new();
    std::fs::create_dir_all(place.state_dir()).unwrap();
    let padding = "p".repeat(8);
    let mut log = String::new();
    let mut id = 0u64;
    while log.len() < 8 * 1024 * 1024 {
        id += 1;
        log.push_str(
            &json!({"id": id, "timestamp": now_ms(), "kind": "toolCall", "tool": "openFile", "sessionId": "abcd0123", "status": "success", "durationMs": 2, "summary": format!("call-{id} {padding}")})
                .to_string(),
        );
        log.push('\n');
    }
    std::fs::write(place.state_dir().join("activity.jsonl"), &log).unwrap();
    let bridge = Bridge::launch(place.options()).await;
    let status = bridge.status().await;
    assert_eq!(status["activity"]["loadedFromDisk"], id, "{status}");
    let anon_kib = proc_status(bridge.pid(), "RssAnon");
    assert!(
        anon_kib < 30 * 1024,
        "{anon_kib} KiB of anonymous memory after reading {id} entries"
    );
    // The newest are the ones kept, the next entry continues after them.
    let mut agent = bridge.ready_agent().await;
    let kept = json_text(
        &agent
            .call("getActivityLog", json!({"tool": "openFile", "limit": 1}))
            .await,
    );
    let newest = kept["entries"][0]["summary"].as_str().unwrap_or_default();
    assert!(newest.starts_with(&format!("call-{id} ")), "{kept}");
    agent.call("close_tab", json!({"tab_name": "after"})).await;
    let after = json_text(
        &agent
            .call("getActivityLog", json!({"tool": "close_tab"}))
            .await,
    );
    assert!(after["entries"][0]["id"].as_u64().unwrap() > id, "{after}");
}

#[tokio::test]
async fn corrupt_activity_lines_are_skipped_and_counted() {
    let place = Place::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::create_dir_all(place.state_dir()).unwrap();
    let checkpoint =
        json!({"savedAt": now_ms(), "workspace": place.workspace, "port": port, "sessions": []});
    std::fs::write(
        place.state_dir().join("checkpoint.json"),
        checkpoint.to_string(),
    )
    .unwrap();
    let good = |id: u64| {
        json!({"id": id, "timestamp": now_ms(), "kind": "toolCall", "tool": "openFile", "sessionId": "abcd0123", "status": "success", "durationMs": 2, "summary": format!("good-{id}")}).to_string()
    };
    let lines = [
        good(1),
        "this is not json".to_string(),
        json!({"id": 2, "timestamp": "noon", "kind": "toolCall", "tool": "t", "status": "success"}).to_string(),
        json!({"id": 3, "timestamp": 1, "kind": "toolCall", "tool": "t", "status": 404}).to_string(),
        json!({"id": 4, "timestamp": 1, "kind": "toolCall", "tool": "t", "status": "success", "durationMs": "slow"}).to_string(),
        format!(r#"{{"id":5,"timestamp":1,"kind":"lifecycle","event":"agent_connected","detail":"{}"}}"#, "x".repeat(10 * 1024 * 1024)),
        good(6),
        r#"{"id":7,"timestamp":1,"kind":"toolCa"#.to_string(),
    ];
    std::fs::write(place.state_dir().join("activity.jsonl"), lines.join("\n")).unwrap();
    let bridge = Bridge::launch(place.options()).await;
    assert_eq!(bridge.port, port);
    let status = bridge.status().await;
    assert_eq!(status["activity"]["skippedOnLoad"], 6, "{status}");
    assert_eq!(status["activity"]["loadedFromDisk"], 2);
    let mut agent = bridge.ready_agent().await;
    let log = json_text(
        &agent
            .call("getActivityLog", json!({"tool": "openFile"}))
            .await,
    );
    let summaries: Vec<&str> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["summary"].as_str().unwrap())
        .collect();
    assert_eq!(summaries, vec!["good-1", "good-6"]);
    // New entries continue after the highest id on disk and land on a fresh line.
    agent.call("close_tab", json!({"tab_name": "after"})).await;
    let newest = json_text(
        &agent
            .call("getActivityLog", json!({"tool": "close_tab"}))
            .await,
    );
    assert!(newest["entries"][0]["id"].as_u64().unwrap() > 7);
}

async fn restored_sessions(checkpoint: Value) -> usize {
    let place = Place::new();
    std::fs::create_dir_all(place.state_dir()).unwrap();
    let mut text = checkpoint.to_string();
    text = text.replace("WORKSPACE", &place.workspace.display().to_string());
    std::fs::write(place.state_dir().join("checkpoint.json"), text).unwrap();
    let bridge = Bridge::launch(place.options()).await;
    bridge.status().await["sessions"].as_array().unwrap().len()
}

/// A restored session nobody came back to keeps, in the next checkpoint, when its agent
/// left: a second restart does not lengthen its grace period.
#[tokio::test]
async fn a_restored_session_keeps_when_its_agent_left_across_another_restart() {
    let place = Place::new();
    std::fs::create_dir_all(place.state_dir()).unwrap();
    let left = now_ms() - 5_000;
    let checkpoint = json!({"savedAt": now_ms(), "workspace": place.workspace.display().to_string(),
        "sessions": [{"sessionId": "0a1b2c3d", "openedFiles": [], "disconnectedAt": left}]});
    let file = place.state_dir().join("checkpoint.json");
    std::fs::write(&file, checkpoint.to_string()).unwrap();
    let bridge = Bridge::launch(place.options()).await;
    assert_eq!(
        bridge.status().await["sessions"].as_array().unwrap().len(),
        1
    );
    bridge.stop_async().await;
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let again = saved["sessions"][0]["disconnectedAt"].as_u64().unwrap();
    assert!(
        again.abs_diff(left) < 1_000,
        "{left} became {again}: {saved}"
    );
}

#[tokio::test]
async fn checkpoints_from_the_future_other_workspaces_or_broken_files_are_ignored() {
    let session = json!([{"sessionId": "0a1b2c3d", "openedFiles": []}]);
    let now = now_ms();
    assert_eq!(
        restored_sessions(json!({"savedAt": now, "workspace": "WORKSPACE", "sessions": session}))
            .await,
        1
    );
    assert_eq!(
        restored_sessions(json!({"savedAt": now, "sessions": session})).await,
        1,
        "legacy, no workspace"
    );
    assert_eq!(
        restored_sessions(
            json!({"savedAt": now + 60_000, "workspace": "WORKSPACE", "sessions": session})
        )
        .await,
        0,
        "future"
    );
    assert_eq!(
        restored_sessions(
            json!({"savedAt": now + 4_000, "workspace": "WORKSPACE", "sessions": session})
        )
        .await,
        1,
        "within 5 s"
    );
    assert_eq!(
        restored_sessions(json!({"savedAt": now, "workspace": "/elsewhere", "sessions": session}))
            .await,
        0,
        "other workspace"
    );
    assert_eq!(
        restored_sessions(
            json!({"savedAt": now - 2 * 86_400_000, "workspace": "WORKSPACE", "sessions": session})
        )
        .await,
        0,
        "too old"
    );
    assert_eq!(
        restored_sessions(json!({"workspace": "WORKSPACE", "sessions": session})).await,
        0,
        "missing savedAt"
    );
    assert_eq!(restored_sessions(json!({"savedAt": now, "workspace": "WORKSPACE", "sessions": [{"sessionId": "../../x", "openedFiles": []}]})).await, 0, "bad session id");
    // A session whose agent had left: its grace period (120 s by default) went on
    // while the bridge was down, and is not started again.
    let left = |ago: u64| {
        json!({"savedAt": now, "workspace": "WORKSPACE", "sessions": [
            {"sessionId": "0a1b2c3d", "openedFiles": [], "disconnectedAt": now - ago}]})
    };
    assert_eq!(restored_sessions(left(1_000)).await, 1, "1 s of 120 gone");
    assert_eq!(restored_sessions(left(121_000)).await, 0, "grace over");
    let place = Place::new();
    std::fs::create_dir_all(place.state_dir()).unwrap();
    std::fs::write(place.state_dir().join("checkpoint.json"), "{ not json").unwrap();
    let bridge = Bridge::launch(place.options()).await;
    assert!(bridge.status().await["sessions"]
        .as_array()
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn watch_activity_log_long_polls() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut watcher = bridge.ready_agent().await;
    let mut actor = bridge.ready_agent().await;
    let quiet = json_text(
        &watcher
            .call("watchActivityLog", json!({"timeoutMs": 200}))
            .await,
    );
    assert_eq!(
        (
            quiet["entries"].as_array().unwrap().len(),
            quiet["timedOut"].clone()
        ),
        (0, json!(true))
    );
    let last = quiet["lastId"].clone();
    let id = watcher.id();
    watcher
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": "watchActivityLog", "arguments": {"tool": "close_tab", "timeoutMs": 20000}}}))
        .await;
    // Counted in /status, the watch has asked the activity log before the next call.
    bridge.wait_active_calls(1).await;
    actor
        .call("close_tab", json!({"tab_name": "watched"}))
        .await;
    let got = watcher.response_to(&json!(id)).await;
    let body = json_text(&got["result"]);
    assert_eq!(body["entries"][0]["tool"], "close_tab", "{body}");
    // A timed-out watch says where to go on from: nothing after it is lost.
    assert!(last.is_u64(), "{quiet}");
    let again = json_text(
        &watcher
            .call(
                "watchActivityLog",
                json!({"afterId": last, "tool": "close_tab", "timeoutMs": 200}),
            )
            .await,
    );
    assert_eq!(again["entries"][0]["tool"], "close_tab", "{again}");
    assert_eq!(again["lastId"], body["lastId"], "{again} {body}");
    arguments_refused(
        &watcher
            .call_raw("watchActivityLog", json!({"timeoutMs": 60000}))
            .await,
    );
    arguments_refused(
        &watcher
            .call_raw("getActivityLog", json!({"status": "weird"}))
            .await,
    );
    let errors = json_text(
        &watcher
            .call("getActivityLog", json!({"status": "success", "limit": 1}))
            .await,
    );
    assert_eq!(errors["entries"].as_array().unwrap().len(), 1);
}

/// A loop of watches, each from the last one's `lastId`, waits: reads of the timeline
/// (the watcher's own previous watch, recorded as it ended, another agent's watch) are
/// no news to it; another agent's other call is.
#[tokio::test]
async fn a_loop_of_watches_waits_for_news_not_for_its_own_polls() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut watcher = bridge.ready_agent().await;
    let mut other = bridge.ready_agent().await;
    let first = json_text(
        &watcher
            .call("watchActivityLog", json!({"timeoutMs": 100}))
            .await,
    );
    assert_eq!(first["timedOut"], true, "{first}");
    let looked = json_text(&watcher.call("getActivityLog", json!({"limit": 1})).await);
    assert!(looked["entries"].is_array(), "{looked}");
    other
        .call("watchActivityLog", json!({"timeoutMs": 50}))
        .await;
    // Its first watch, its read of the log and the other agent's watch are in the
    // timeline now, after lastId.
    let started = std::time::Instant::now();
    let second = json_text(
        &watcher
            .call(
                "watchActivityLog",
                json!({"afterId": first["lastId"], "timeoutMs": 400}),
            )
            .await,
    );
    assert_eq!(
        (second["timedOut"].clone(), second["entries"].clone()),
        (json!(true), json!([])),
        "{second}"
    );
    assert!(started.elapsed() >= std::time::Duration::from_millis(400));
    // Another agent's call ends the next one at once, with only that call.
    other.call("getWorkspaceFolders", json!({})).await;
    let third = json_text(
        &watcher
            .call(
                "watchActivityLog",
                json!({"afterId": second["lastId"], "timeoutMs": 20000}),
            )
            .await,
    );
    let tools: Vec<&str> = third["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["tool"].as_str())
        .collect();
    assert_eq!(tools, ["getWorkspaceFolders"], "{third}");
}

#[test]
fn the_activity_stream_sends_new_entries_and_is_bounded() {
    use std::io::{Read, Write};
    let bridge = Bridge::start_with(Options::default().set("activity.max_stream_subscribers", 1));
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", bridge.port)).unwrap();
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    write!(
        stream,
        "GET /activity/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\n\r\n",
        bridge.token
    )
    .unwrap();
    let mut head = [0u8; 256];
    let n = stream.read(&mut head).unwrap();
    assert!(String::from_utf8_lossy(&head[..n]).contains("text/event-stream"));
    assert_eq!(
        http_get(
            bridge.port,
            "/activity/stream",
            &[("Authorization", &format!("Bearer {}", bridge.token))]
        )
        .0,
        503,
        "one subscriber max"
    );
    assert_eq!(http_get(bridge.port, "/activity/stream", &[]).0, 401);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut agent = bridge.ready_agent().await;
        agent
            .call("close_tab", json!({"tab_name": "streamed"}))
            .await;
    });
    let mut seen = String::new();
    let deadline = Instant::now() + DEADLINE;
    let mut buf = [0u8; 4096];
    while !seen.contains("streamed") && Instant::now() < deadline {
        let n = stream.read(&mut buf).unwrap_or(0);
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(
        seen.contains("data: {") && seen.contains("tab_name=streamed"),
        "{seen}"
    );
}

/// Issue 31: links, FIFOs and files open to others planted in place of state files
/// neither hang start-up nor are followed: each is removed with a warning, the token
/// is a fresh one (not the planted file's), and the link's target is untouched.
#[tokio::test]
async fn planted_state_files_are_removed_not_followed() {
    use std::os::unix::fs::PermissionsExt;
    let place = Place::new();
    let state = place.state_dir();
    std::fs::create_dir_all(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let known = outside.path().join("known-token");
    std::fs::write(&known, "planted-token-that-everyone-can-read-0000").unwrap();
    std::fs::set_permissions(&known, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::os::unix::fs::symlink(&known, state.join("token")).unwrap();
    let target = outside.path().join("checkpoint-target");
    std::fs::write(&target, "untouched").unwrap();
    std::os::unix::fs::symlink(&target, state.join("checkpoint.json")).unwrap();
    for fifo in ["activity.jsonl", "claims.json", "owner.lock"] {
        let c = std::ffi::CString::new(state.join(fifo).to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }
    std::fs::write(state.join("tasks.json"), "[]").unwrap();
    std::fs::set_permissions(
        state.join("tasks.json"),
        std::fs::Permissions::from_mode(0o666),
    )
    .unwrap();

    let bridge = Bridge::launch(place.options()).await;
    assert_ne!(bridge.token, "planted-token-that-everyone-can-read-0000");
    let log = bridge.log();
    for (name, why) in [
        ("token", "symbolic link"),
        ("checkpoint.json", "symbolic link"),
        ("activity.jsonl", "FIFO"),
        ("owner.lock", "FIFO"),
    ] {
        assert!(
            log.lines()
                .any(|l| l.contains("removed a state file") && l.contains(name) && l.contains(why)),
            "{name}: {log}"
        );
    }
    let mut agent = bridge.ready_agent().await;
    assert!(!is_error(
        &agent.call("getWorkspaceFolders", json!({})).await
    ));
    drop(agent);
    bridge.stop_async().await;
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched");
    assert_eq!(
        std::fs::read_to_string(&known).unwrap(),
        "planted-token-that-everyone-can-read-0000"
    );
    // Ours but group-writable (a umask of 002): kept, made private.
    let tasks = std::fs::symlink_metadata(state.join("tasks.json")).unwrap();
    assert_eq!(tasks.permissions().mode() & 0o777, 0o600);
    let token = std::fs::symlink_metadata(state.join("token")).unwrap();
    assert!(token.file_type().is_file() && token.permissions().mode() & 0o077 == 0);
}
