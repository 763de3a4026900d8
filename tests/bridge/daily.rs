//! Daily use through the real binary: a bridge started on demand stops by itself when
//! unused (one started by hand does not), the systemd user unit, and browser-based MCP
//! clients on allowed origins.

use std::time::Duration;

use crate::harness::*;

#[tokio::test]
async fn an_on_demand_bridge_stops_by_itself_when_unused_and_not_while_an_agent_is_there() {
    let mut bridge = Bridge::launch(
        Options::default()
            .arg("--on-demand")
            .set("server.idle_stop_ms", 1500),
    )
    .await;
    // An agent keeps it running past the limit.
    let agent = bridge.ready_agent().await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let status = bridge.status().await;
    assert_eq!(
        status["idleStop"]["afterSeconds"], 1,
        "{}",
        status["idleStop"]
    );
    assert_eq!(status["idleStop"]["idleSeconds"], 0);
    let shown = bridge.status_text().await;
    assert!(
        shown.contains("started on demand: stops by itself after 1s"),
        "{shown}"
    );
    // Unused, it stops: a clean stop (lock file removed, exit 0).
    agent.close().await;
    let exited = bridge.wait_exit_async(Duration::from_secs(20)).await;
    assert!(exited.success(), "{exited:?}");
    assert!(!bridge.lock_path.exists(), "the lock file is removed");
    assert!(
        bridge.log().contains("stopping: started on demand"),
        "{}",
        bridge.log()
    );
}

#[tokio::test]
async fn a_bridge_started_by_hand_keeps_running_unused() {
    let mut bridge = Bridge::launch(Options::default().set("server.idle_stop_ms", 500)).await;
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert!(bridge.child_alive(), "no --on-demand: it keeps running");
    assert!(bridge.status().await.get("idleStop").is_none());
    bridge.stop_async().await;
}

#[test]
fn service_install_writes_a_unit_systemd_accepts_and_remove_takes_it_out() {
    let tmp = tempfile::tempdir().unwrap();
    let xdg = tmp.path().join("xdg");
    let workspace = tmp.path().join("my project");
    std::fs::create_dir_all(&workspace).unwrap();
    let run = |args: &[&str]| {
        let out = command(&tmp.path().join("claude"))
            .args(args)
            .arg("--workspace")
            .arg(&workspace)
            .env("XDG_CONFIG_HOME", &xdg)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, printed) = run(&["service", "install", "--print"]);
    assert_eq!(code, Some(0));
    assert!(printed.contains("Restart=on-failure"), "{printed}");
    // A configuration error (exit 2) is not restarted forever; the programs the
    // installing shell finds are found by the service too.
    assert!(printed.contains("RestartPreventExitStatus=2"), "{printed}");
    assert!(printed.contains("Environment=\"PATH=/"), "{printed}");
    assert!(!xdg.exists(), "--print writes nothing");
    // A configuration its bridge would refuse is refused here, naming the key.
    let bad = tmp.path().join("bad.toml");
    std::fs::write(&bad, "[sessions]\nmax_sessions = 0\n").unwrap();
    let (code, _) = run(&[
        "service",
        "install",
        "--print",
        "--config",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2));
    let (code, _) = run(&[
        "service",
        "install",
        "--no-systemctl",
        "--config",
        "/nonexistent.toml",
    ]);
    assert_eq!(code, Some(2));
    assert!(!xdg.exists(), "nothing written for a refused configuration");
    let (code, said) = run(&["service", "install", "--no-systemctl"]);
    assert_eq!(code, Some(0), "{said}");
    let units: Vec<_> = std::fs::read_dir(xdg.join("systemd/user"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(units.len(), 1);
    let unit = &units[0];
    let name = unit.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("ide-bridge-my_project-") && name.ends_with(".service"),
        "{name}"
    );
    let text = std::fs::read_to_string(unit).unwrap();
    let canonical = workspace.canonicalize().unwrap();
    assert!(
        text.contains(&format!("--workspace \"{}\"", canonical.display())),
        "{text}"
    );
    assert!(text.contains(&format!(
        "CLAUDE_CONFIG_DIR={}",
        tmp.path().join("claude").display()
    )));
    // systemd's own check of the unit, where systemd-analyze exists (it does on Debian;
    // a user manager needs a runtime directory of its own).
    let runtime = tmp.path().join("run");
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    if let Ok(out) = std::process::Command::new("systemd-analyze")
        .args(["verify", "--user"])
        .arg(unit)
        .env("XDG_CONFIG_HOME", &xdg)
        .env("XDG_RUNTIME_DIR", &runtime)
        .output()
    {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "systemd-analyze verify: {err}");
        assert!(!err.contains(&name), "systemd-analyze verify: {err}");
    }
    let (code, status) = run(&["service", "status"]);
    assert_eq!(code, Some(0));
    assert!(status.contains(&name), "{status}");
    let (code, removed) = run(&["service", "remove", "--no-systemctl"]);
    assert_eq!(code, Some(0));
    assert!(removed.contains("Removed"), "{removed}");
    assert!(!unit.exists());
    let (code, _) = run(&["service", "status"]);
    assert_eq!(code, Some(1), "no unit any more");
}

#[tokio::test]
async fn a_browser_client_on_an_allowed_origin_gets_cors_and_others_get_403() {
    let origin = "http://localhost:6274";
    let bridge = Bridge::launch(Options::default().set("server.allowed_origins", origin)).await;
    let (port, token) = (bridge.port, bridge.token.clone());
    let ask = move |method: &'static str, origin: &'static str, body: &'static str| {
        let token = token.clone();
        off_runtime(move || {
            let bearer = format!("Bearer {token}");
            http_request(
                port,
                method,
                "/mcp",
                &[
                    ("Origin", origin),
                    ("Authorization", &bearer),
                    ("Content-Type", "application/json"),
                    ("Accept", "application/json, text/event-stream"),
                    ("Access-Control-Request-Method", "POST"),
                    (
                        "Access-Control-Request-Headers",
                        "authorization, content-type",
                    ),
                ],
                body.as_bytes(),
            )
        })
    };
    let (status, head, _) = ask("OPTIONS", origin, "").await;
    assert_eq!(status, 204, "{head}");
    let head = head.to_ascii_lowercase();
    assert!(
        head.contains("access-control-allow-origin: http://localhost:6274"),
        "{head}"
    );
    assert!(
        head.contains("access-control-allow-headers:") && head.contains("mcp-session-id"),
        "{head}"
    );
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"inspector","version":"1"}}}"#;
    let (status, head, body) = ask("POST", origin, init).await;
    assert_eq!(status, 200, "{body}");
    let head = head.to_ascii_lowercase();
    assert!(
        head.contains("access-control-allow-origin: http://localhost:6274"),
        "{head}"
    );
    assert!(
        head.contains("access-control-expose-headers: mcp-session-id"),
        "{head}"
    );
    assert!(head.contains("mcp-session-id:"), "{head}");
    // Another origin: refused, preflight and request alike.
    let (status, _, _) = ask("OPTIONS", "http://evil.example", "").await;
    assert_eq!(status, 403);
    let (status, _, body) = ask("POST", "http://evil.example", init).await;
    assert_eq!(status, 403, "{body}");
    bridge.stop_async().await;
}

#[test]
fn an_allowed_origin_must_be_an_origin() {
    let tmp = tempfile::tempdir().unwrap();
    for bad in ["*", "localhost:6274", "http://localhost:6274/path"] {
        let out = command(tmp.path())
            .args(["config", "--set", &format!("server.allowed_origins={bad}")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("server.allowed_origins"), "{bad}: {err}");
    }
}
