//! Process lifecycle: signals, stale locks, the status subcommand.

use serde_json::json;

use crate::harness::*;

#[test]
fn sigterm_and_sigint_remove_the_lock_file_and_exit_zero() {
    for sig in ["TERM", "INT"] {
        let mut bridge = Bridge::start();
        assert!(bridge.lock_path.exists());
        bridge.signal(sig);
        let status = bridge.wait_exit(DEADLINE);
        assert!(status.success(), "SIG{sig}: {status}\n{}", bridge.log());
        assert!(!bridge.lock_path.exists(), "SIG{sig} left the lock file");
    }
}

#[tokio::test]
async fn sigterm_closes_agents_with_going_away() {
    let mut bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    bridge.signal("TERM");
    let frame = agent.closed(DEADLINE).await;
    if let Some(frame) = frame {
        assert_eq!(u16::from(frame.code), 1001);
    }
    assert!(bridge.wait_exit_async(DEADLINE).await.success());
}

#[test]
fn stale_locks_of_dead_processes_are_removed_at_start() {
    let tmp = tempfile::tempdir().unwrap();
    let ide = tmp.path().join("ide");
    std::fs::create_dir_all(&ide).unwrap();
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let lock = |pid: u32| {
        json!({"pid": pid, "workspaceFolders": ["/x"], "ideName": "x", "transport": "ws", "authToken": "t"}).to_string()
    };
    std::fs::write(ide.join("1.lock"), lock(dead_pid)).unwrap();
    std::fs::write(ide.join("2.lock"), lock(std::process::id())).unwrap();
    std::fs::write(ide.join("3.lock"), "garbage").unwrap();
    let bridge = Bridge::start_with(Options {
        config_dir: Some(tmp.path().to_path_buf()),
        ..Options::default()
    });
    assert!(!ide.join("1.lock").exists(), "dead pid's lock removed");
    assert!(ide.join("2.lock").exists(), "live pid's lock kept");
    assert!(ide.join("3.lock").exists(), "unreadable lock left alone");
    assert!(bridge.lock_path.exists());
}

#[tokio::test]
async fn status_subcommand_describes_the_running_bridge() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    agent
        .call("openFile", json!({"filePath": "src/main.rs"}))
        .await;
    let out = async_command(&bridge.config_dir)
        .arg("status")
        .current_dir(bridge.workspace.join("src"))
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("127.0.0.1:{}", bridge.port)),
        "{stdout}"
    );
    assert!(stdout.contains("agents: 1 of 5 sessions"), "{stdout}");
    assert!(stdout.contains("1 opened files"), "{stdout}");
    let out = async_command(&bridge.config_dir)
        .args(["status", "--json"])
        .arg("--workspace")
        .arg(&bridge.workspace)
        .output()
        .await
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["port"], bridge.port);

    let elsewhere = tempfile::tempdir().unwrap();
    let out = async_command(&bridge.config_dir)
        .arg("status")
        .current_dir(elsewhere.path())
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("No running ide-bridge serves"));
    drop(agent);
}
