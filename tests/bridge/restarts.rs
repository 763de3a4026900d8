//! A workstation day: restarts keep the token and the state directory, one bridge per
//! workspace, shutdown in order and fast, expected refusals not counted as failures.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::*;

fn state_files(place: &Place) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(place.state_dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn the_token_survives_restarts_until_rotated() {
    let place = Place::new();
    let first = Bridge::start_with(place.options());
    let (token, port) = (first.token.clone(), first.port);
    first.stop();
    let second = Bridge::start_with(place.options());
    assert_eq!(second.token, token, "same token after a restart");
    assert_eq!(second.port, port, "same port after a restart");
    assert!(second.log().contains("auth token kept"), "{}", second.log());
    second.stop();
    let token_file = place.state_dir().join("token");
    let mode = std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let rotated = Bridge::start_with(place.options().arg("--rotate-token"));
    assert_ne!(rotated.token, token, "--rotate-token gives a new token");
    assert_eq!(
        std::fs::read_to_string(&token_file).unwrap(),
        rotated.token,
        "and stores it"
    );
}

#[test]
fn a_second_bridge_for_the_same_workspace_refuses_to_start_and_touches_nothing() {
    let place = Place::new();
    let first = Bridge::start_with(place.options());
    let read_all = || -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(place.state_dir())
            .unwrap()
            .flatten()
            .filter(|e| {
                let n = e.file_name();
                n != "activity.jsonl" && n != "checkpoint.json"
            })
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    };
    let before = read_all();
    let lock_before = std::fs::read(&first.lock_path).unwrap();
    let out = command(&place.config_dir)
        .arg("--workspace")
        .arg(&place.workspace)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("another ide-bridge already serves")
            && stderr.contains(&format!("pid {}", first.pid()))
            && stderr.contains(&format!("port {}", first.port))
            && stderr.contains("ide-bridge stop"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("another ide-bridge").count(),
        1,
        "printed once: {stderr}"
    );
    assert_eq!(read_all(), before, "the first bridge's files are untouched");
    assert_eq!(std::fs::read(&first.lock_path).unwrap(), lock_before);
    let locks = std::fs::read_dir(place.ide_dir()).unwrap().count();
    assert_eq!(locks, 1, "no second lock file");
    // `ide-bridge stop` in the workspace stops the first one.
    let out = command(&place.config_dir)
        .arg("stop")
        .current_dir(&place.workspace)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!first.lock_path.exists());
}

#[tokio::test]
async fn sigterm_with_agents_connected_exits_within_a_second_and_admits_nobody_after() {
    let mut bridge = Bridge::launch(Options::default()).await;
    let mut agents = Vec::new();
    for _ in 0..3 {
        agents.push(bridge.ready_agent().await);
    }
    let started = Instant::now();
    bridge.signal("TERM");
    wait_for_async("the signal is handled", DEADLINE, || async {
        bridge.log().contains("SIGTERM received").then_some(())
    })
    .await;
    let headers = [
        ("x-claude-code-ide-authorization", bridge.token.as_str()),
        ("sec-websocket-protocol", "mcp"),
    ];
    let late = Agent::connect_once(bridge.port, &headers).await;
    assert!(late.is_err(), "an upgrade after the signal is refused");
    let status = bridge.wait_exit_async(DEADLINE).await;
    let took = started.elapsed();
    assert!(status.success(), "{status}");
    assert!(took < Duration::from_secs(1), "exit took {took:?}");
    assert!(!bridge.lock_path.exists());
    for agent in &mut agents {
        if let Some(frame) = agent.closed(DEADLINE).await {
            assert_eq!(u16::from(frame.code), 1001);
        }
    }
    let log = bridge.log();
    let order: Vec<usize> = ["SIGTERM received", "final checkpoint written", "stopped"]
        .iter()
        .map(|l| log.find(l).unwrap_or_else(|| panic!("{l} missing: {log}")))
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{log}");
}

#[tokio::test]
async fn twenty_start_stop_cycles_keep_one_set_of_state_files() {
    let place = Place::new();
    let mut expected = None;
    for round in 0..20 {
        let bridge = Bridge::launch(place.options()).await;
        if round % 5 == 0 {
            let mut agent = bridge.ready_agent().await;
            agent.call("getWorkspaceFolders", json!({})).await;
        }
        bridge.stop_async().await;
        let files = state_files(&place);
        match &expected {
            None => expected = Some(files),
            Some(first) => assert_eq!(&files, first, "round {round}"),
        }
    }
    let workspaces = std::fs::read_dir(place.config_dir.join("ide-bridge/workspaces"))
        .unwrap()
        .count();
    assert_eq!(workspaces, 1);
    let leftovers: Vec<_> = std::fs::read_dir(place.ide_dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(leftovers.is_empty(), "nothing left in ide/: {leftovers:?}");
    assert!(
        state_files(&place).contains(&"activity.jsonl".to_string()),
        "{:?}",
        state_files(&place)
    );
}

#[tokio::test]
async fn open_diff_without_an_editor_is_declined_not_failed() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    let result = agent
        .call(
            "openDiff",
            json!({"old_file_path": "README.md", "new_file_path": "README.md",
                   "new_file_contents": "# new\n", "tab_name": "edit"}),
        )
        .await;
    assert_eq!(result["isError"], true, "the CLI falls back on an error");
    assert!(text(&result).contains("No editor is connected"), "{result}");
    let status = bridge.status().await;
    assert_eq!(status["activity"]["toolErrors"], 0, "{status}");
    assert_eq!(status["activity"]["toolDeclined"], 1, "{status}");
    let metrics = bridge.metrics().await;
    assert!(
        metrics.contains(r#"tool_calls_total{tool="openDiff",status="declined"} 1"#),
        "{metrics}"
    );
    assert!(!metrics.contains(r#"status="error""#), "{metrics}");
}

#[test]
fn state_of_workspaces_not_served_for_long_is_pruned() {
    let place = Place::new();
    let stale = place
        .config_dir
        .join("ide-bridge/workspaces/gone-0000000000000000");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("workspace"), "/gone").unwrap();
    let old = std::time::SystemTime::now() - Duration::from_secs(40 * 86_400);
    std::fs::File::open(&stale)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let recent = place
        .config_dir
        .join("ide-bridge/workspaces/recent-0000000000000001");
    std::fs::create_dir_all(&recent).unwrap();
    let bridge = Bridge::start_with(place.options());
    assert!(!stale.exists(), "40 days old: pruned");
    assert!(recent.exists(), "recent: kept");
    assert!(bridge.log().contains("/gone"), "{}", bridge.log());
}

#[test]
fn config_shows_the_resolved_workspace_and_logs_have_no_colour_in_files() {
    let place = Place::new();
    let out = command(&place.config_dir)
        .arg("config")
        .current_dir(&place.workspace)
        .output()
        .unwrap();
    let config: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(config["workspace"], place.workspace.display().to_string());
    let bridge = Bridge::start_with(place.options());
    assert!(
        !bridge.log().contains('\u{1b}'),
        "no ANSI codes in a log file"
    );
}
