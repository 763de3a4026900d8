//! Issue 31: what a sandboxed command can still reach — metadata outside the workspace,
//! the bridge's own environment, processes that leave the call's process group.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::harness::*;

/// A secret in the bridge's environment that no command may read.
const SECRET: &str = "sk-ide-bridge-test-secret-31";

/// A package whose `x` script runs `x.sh`.
const PACKAGE_JSON: &str = r#"{"name": "x", "version": "1.0.0", "scripts": {"x": "sh x.sh"}}"#;

/// Runs `script` (sh) as the agent-written `npm run -s x` and returns its stdout.
async fn npm_run(bridge: &Bridge, script: &str) -> String {
    let mut agent = bridge.ready_agent().await;
    agent
        .create_files(&[("package.json", PACKAGE_JSON), ("x.sh", script)])
        .await;
    let r = agent
        .call(
            "runCommand",
            json!({"command": "npm", "args": ["run", "-s", "x"], "timeoutMs": 20000}),
        )
        .await;
    assert!(!is_error(&r), "{r}");
    json_text(&r)["stdout"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn mode_of(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn launch() -> Options {
    let mut opts = Options::default();
    opts.env
        .push(("IDE_BRIDGE_COMMANDS__ALLOW".into(), "npm".into()));
    opts.env
        .push(("BRIDGE_TEST_SECRET_TOKEN".into(), SECRET.into()));
    opts
}

/// `chmod`, `touch -d`, `chown` and `setxattr` of a file outside the workspace fail;
/// the same calls on a file inside the workspace work.
#[tokio::test]
async fn commands_cannot_change_metadata_outside_the_workspace() {
    if !npm_installed() {
        return;
    }
    let bridge = Bridge::launch(launch()).await;
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "x").unwrap();
    std::fs::set_permissions(&victim, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let mtime = std::fs::metadata(&victim).unwrap().modified().unwrap();
    std::fs::write(bridge.workspace.join("mine"), "x").unwrap();
    let v = victim.display();
    let script = format!(
        r#"try() {{ label=$1; shift; if "$@" 2>/dev/null; then echo "$label:ok"; else echo "$label:denied"; fi; }}
try out-chmod chmod 777 {v}
try out-touch touch -d 2001-01-01 {v}
try out-chown chown {uid}:{uid} {v}
try out-xattr /usr/bin/python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.x", b"1")' {v}
try in-chmod chmod 700 mine
try in-touch touch -d 2001-01-01 mine
"#,
        uid = unsafe { libc::geteuid() },
    );
    let out = npm_run(&bridge, &script).await;
    eprintln!("{out}");
    for denied in ["out-chmod", "out-touch", "out-chown", "out-xattr"] {
        assert!(out.contains(&format!("{denied}:denied")), "{denied}: {out}");
    }
    assert!(
        out.contains("in-chmod:ok") && out.contains("in-touch:ok"),
        "{out}"
    );
    assert_eq!(mode_of(&victim), 0o600);
    assert_eq!(
        std::fs::metadata(&victim).unwrap().modified().unwrap(),
        mtime
    );
    assert_eq!(mode_of(&bridge.workspace.join("mine")), 0o700);
}

/// The bridge's `/proc/<pid>/environ` (and its memory) cannot be read by a command,
/// although the command runs as the same user.
#[tokio::test]
async fn commands_cannot_read_the_bridges_environment() {
    if !npm_installed() {
        return;
    }
    let bridge = Bridge::launch(launch()).await;
    let pid = bridge.pid();
    let lock = bridge.lock_path.display();
    let state = bridge.config_dir.join("ide-bridge").display().to_string();
    let script = format!(
        "tr '\\0' '\\n' < /proc/{pid}/environ 2>/dev/null && echo environ:read || echo environ:denied\n\
         head -c 1 /proc/{pid}/mem >/dev/null 2>&1 && echo mem:read || echo mem:denied\n\
         cat {lock} 2>/dev/null; cat {state}/workspaces/*/token 2>/dev/null; echo\n"
    );
    let out = npm_run(&bridge, &script).await;
    assert!(!out.contains(SECRET), "the secret leaked: {out}");
    // The Claude config dir (lock files, their tokens) and the bridge's state are hidden.
    assert!(!out.contains(&bridge.token), "the token leaked: {out}");
    assert!(
        out.contains("environ:denied") && out.contains("mem:denied"),
        "{out}"
    );
}

/// Host pids of processes whose command line holds `mark`.
fn marked(mark: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(mark))
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// The processes marked `pattern` still running after up to 10 s; each is then killed,
/// so that a failing run leaves nothing behind either.
async fn left_after_waiting(pattern: &str) -> Vec<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut left = marked(pattern);
    while !left.is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        left = marked(pattern);
    }
    for pid in &left {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid])
            .status();
    }
    left
}

/// A process that leaves the call's process group (`setsid`, a double fork) ends with
/// the call.
#[tokio::test]
async fn processes_that_leave_the_process_group_end_with_the_call() {
    if !npm_installed() {
        return;
    }
    let bridge = Bridge::launch(launch()).await;
    // A sleep nobody else runs, to find them from outside.
    let mark = format!("600.{}{}", std::process::id(), bridge.pid());
    let script = format!(
        "setsid sh -c 'echo $$ > escaped1.pid; exec sleep {mark}' </dev/null >/dev/null 2>&1 &\n\
         (setsid sh -c 'echo $$ > escaped2.pid; exec sleep {mark}' </dev/null >/dev/null 2>&1 &)\n\
         while [ ! -s escaped1.pid ] || [ ! -s escaped2.pid ]; do sleep 0.05; done\n\
         echo started\n"
    );
    let out = npm_run(&bridge, &script).await;
    assert!(out.contains("started"), "{out}");
    let left = left_after_waiting(&format!("sleep\0{mark}")).await;
    assert!(left.is_empty(), "still running after the call: {left:?}");
}

/// Where the kernel gives no unprivileged user namespaces (simulated: fault-injection
/// builds read `BRIDGE_TEST_NO_NAMESPACES`), commands are refused by default and the
/// log, `/status` and the refusal say why; `commands.run_unsandboxed` runs them under
/// Landlock alone and says that too.
#[cfg(feature = "fault-injection")]
#[tokio::test]
async fn without_namespaces_commands_are_refused_unless_opted_in() {
    let opts = || {
        let mut opts = Options::default();
        opts.env
            .push(("IDE_BRIDGE_COMMANDS__ALLOW".into(), "seq".into()));
        opts.env
            .push(("BRIDGE_TEST_NO_NAMESPACES".into(), "1".into()));
        opts
    };
    let bridge = Bridge::launch(opts()).await;
    let status = bridge.status().await;
    assert_eq!(status["commandSandbox"]["namespaces"], false, "{status}");
    assert_eq!(status["commandSandbox"]["enforced"], false, "{status}");
    assert!(bridge.log().contains(
        "no unprivileged user namespaces in this kernel: runCommand and runInTerminal are refused"
    ));
    let mut agent = bridge.ready_agent().await;
    let r = agent
        .call("runCommand", json!({"command": "seq", "args": ["2"]}))
        .await;
    assert!(
        is_error(&r) && text(&r).contains("no unprivileged user namespaces"),
        "{r}"
    );
    drop(agent);
    drop(bridge);

    let bridge = Bridge::launch(opts().set("commands.run_unsandboxed", true)).await;
    assert!(bridge.log().contains("PARTLY CONFINED"));
    let mut agent = bridge.ready_agent().await;
    let r = agent
        .call("runCommand", json!({"command": "seq", "args": ["2"]}))
        .await;
    assert_eq!(json_text(&r)["stdout"], "1\n2\n", "{r}");
}

/// A command not allowed the network cannot send UDP either (DNS included): it runs in
/// a network namespace of its own. One whose program is in `commands.network` can.
#[tokio::test]
async fn commands_without_the_network_send_no_udp() {
    if !npm_installed() {
        return;
    }
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let port = udp.local_addr().unwrap().port();
    let script = format!(
        "/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"leak\", (\"127.0.0.1\", {port}))' 2>/dev/null && echo udp:sent || echo udp:refused\n"
    );
    let bridge = Bridge::launch(launch()).await;
    let out = npm_run(&bridge, &script).await;
    assert!(out.contains("udp:refused"), "{out}");
    let mut buf = [0u8; 16];
    assert!(udp.recv(&mut buf).is_err(), "a datagram left the sandbox");
    drop(bridge);

    let mut opts = launch();
    opts.env
        .push(("IDE_BRIDGE_COMMANDS__NETWORK".into(), "npm".into()));
    let bridge = Bridge::launch(opts).await;
    let out = npm_run(&bridge, &script).await;
    assert!(out.contains("udp:sent"), "{out}");
    assert_eq!(udp.recv(&mut buf).ok(), Some(4));
}

/// The same sandbox for a bridge run by an ordinary user (not root): namespaces are
/// there, metadata outside stays as it was, the bridge's environment stays unreadable.
#[tokio::test]
async fn a_bridge_run_by_an_ordinary_user_sandboxes_its_commands_too() {
    if !npm_installed() || unsafe { libc::geteuid() } != 0 {
        eprintln!("needs root to start a bridge as another user: skipped");
        return;
    }
    let mut opts = launch();
    opts.run_as = Some(65534);
    let bridge = Bridge::launch(opts).await;
    let status = bridge.status().await;
    assert_eq!(status["commandSandbox"]["namespaces"], true, "{status}");
    assert_eq!(status["commandSandbox"]["enforced"], true, "{status}");
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "x").unwrap();
    std::os::unix::fs::chown(&victim, Some(65534), Some(65534)).unwrap();
    std::fs::set_permissions(
        outside.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::set_permissions(&victim, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let pid = bridge.pid();
    let script = format!(
        "chmod 666 {} 2>/dev/null && echo chmod:ok || echo chmod:denied\n\
         tr '\\0' '\\n' < /proc/{pid}/environ 2>/dev/null || echo environ:denied\n\
         id -u\n",
        victim.display()
    );
    let out = npm_run(&bridge, &script).await;
    assert!(out.contains("chmod:denied"), "{out}");
    assert!(
        out.contains("environ:denied") && !out.contains(SECRET),
        "{out}"
    );
    assert!(out.contains("65534"), "{out}");
    assert_eq!(mode_of(&victim), 0o600);
}

/// A command running when the bridge is killed (SIGKILL: no clean-up of its own) ends
/// with it, escaped processes included.
#[tokio::test]
async fn nothing_outlives_a_killed_bridge() {
    if !npm_installed() {
        return;
    }
    let bridge = Bridge::launch(launch()).await;
    let mark = format!("700.{}{}", std::process::id(), bridge.pid());
    let script = format!(
        "setsid sh -c 'exec sleep {mark}' </dev/null >/dev/null 2>&1 &\nexec sleep {mark}\n"
    );
    let mut agent = bridge.ready_agent().await;
    agent
        .create_files(&[("package.json", PACKAGE_JSON), ("x.sh", &script)])
        .await;
    let call = tokio::spawn(async move {
        agent
            .call_raw(
                "runCommand",
                json!({"command": "npm", "args": ["run", "-s", "x"], "timeoutMs": 60000}),
            )
            .await
    });
    let pattern = format!("sleep\0{mark}");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while marked(&pattern).len() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the command did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bridge.kill9();
    let left = left_after_waiting(&pattern).await;
    call.abort();
    assert!(
        left.is_empty(),
        "still running after the bridge was killed: {left:?}"
    );
}
