//! `ide-bridge mcp` (the relay) against planted lock files and over-long lines
//! (issue 31, item 5 and the relay's smaller items).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::harness::*;

const LIMIT: usize = 2 * 1024 * 1024;

/// A relay process speaking newline-delimited JSON-RPC on its stdio.
struct Relay {
    child: tokio::process::Child,
    /// `None` once closed ([`Relay::close_stdin`]).
    stdin: Option<tokio::process::ChildStdin>,
    /// `None` once the test stopped reading it.
    stdout: Option<tokio::io::Lines<BufReader<tokio::process::ChildStdout>>>,
    stderr_path: std::path::PathBuf,
}

impl Relay {
    fn start(bridge: &Bridge, cwd: &Path) -> Relay {
        Self::start_with(bridge, cwd, &[])
    }

    /// [`Relay::start`] with more environment variables.
    fn start_with(bridge: &Bridge, cwd: &Path, env: &[(&str, &str)]) -> Relay {
        Self::spawn(bridge, cwd, env, &["mcp", "--no-start"])
    }

    /// A relay that starts a bridge when it is its job (no `--no-start`).
    fn starting(bridge: &Bridge, cwd: &Path) -> Relay {
        Self::spawn(bridge, cwd, &[], &["mcp"])
    }

    fn spawn(bridge: &Bridge, cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> Relay {
        Self::spawn_in(&bridge.config_dir, cwd, env, args)
    }

    /// A relay with `config_dir` as its `CLAUDE_CONFIG_DIR`, whether a bridge runs or not.
    fn spawn_in(config_dir: &Path, cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> Relay {
        std::fs::create_dir_all(config_dir).unwrap();
        let stderr_path = config_dir.join(format!(
            "relay-{}.log",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let mut child = async_command(config_dir)
            .args(args)
            .current_dir(cwd)
            .env("IDE_BRIDGE_SERVER__MAX_MESSAGE_BYTES", LIMIT.to_string())
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Relay {
            child,
            stdin: Some(stdin),
            stdout: Some(stdout),
            stderr_path,
        }
    }

    async fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Closes the relay's stdin (how an MCP client asks its stdio server to stop).
    fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// The relay's next message; `None` once it closed stdout.
    async fn read_message(&mut self) -> Option<Value> {
        let stdout = self.stdout.as_mut().expect("stdout is read");
        let line = stdout.next_line().await.unwrap()?;
        Some(serde_json::from_str(&line).expect("one JSON message per line"))
    }

    /// Every message the relay writes until it closes stdout, then its exit status
    /// (within `within`).
    async fn rest_and_exit(&mut self, within: Duration) -> (Vec<Value>, std::process::ExitStatus) {
        tokio::time::timeout(within, async {
            let mut messages = Vec::new();
            while let Some(msg) = self.read_message().await {
                messages.push(msg);
            }
            (messages, self.child.wait().await.unwrap())
        })
        .await
        .unwrap_or_else(|_| panic!("the relay did not exit in time; stderr: {}", self.stderr()))
    }

    /// The next message whose id is `id`.
    async fn answer(&mut self, id: Value) -> Value {
        tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                let msg = self.read_message().await.expect("the relay closed stdout");
                if msg["id"] == id {
                    return msg;
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no answer to {id} in time; stderr: {}", self.stderr()))
    }

    async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&line.to_string()).await;
        self.answer(json!(id)).await
    }

    async fn initialize(&mut self) -> Value {
        self.send_initialize().await;
        let r = self.answer(json!(1)).await;
        self.send_initialized().await;
        r
    }

    /// Sends `initialize` (id 1), without waiting for its answer.
    async fn send_initialize(&mut self) {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "relay-test", "version": "1"}}});
        self.send_line(&init.to_string()).await;
    }

    async fn send_initialized(&mut self) {
        self.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// Writes a lock file in the bridge's ide directory naming `workspace` and this test
/// process (alive, started before the lock) and a port where `listener` waits.
fn plant_lock(bridge: &Bridge, port: u16, workspace: &Path) -> std::path::PathBuf {
    let path = bridge.config_dir.join("ide").join(format!("{port}.lock"));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let body = json!({
        "pid": std::process::id(), "workspaceFolders": [workspace], "ideName": "planted",
        "transport": "ws", "authToken": "planted-token-0000000000000000000000", "isBridge": true,
        "startedAt": now,
    });
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(body.to_string().as_bytes()).unwrap();
    path
}

/// A lock file another user could have written — mode 0666, owned by another uid
/// (when the test runs as root), a FIFO — is ignored with a warning: the relay serves
/// the real bridge and the planted port sees no connection.
#[tokio::test]
async fn the_relay_ignores_lock_files_other_users_could_have_written() {
    let bridge = Bridge::launch(Options::default().set("server.max_message_bytes", LIMIT)).await;
    let sub = bridge.workspace.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let root = unsafe { libc::geteuid() } == 0;
    let mut cases = vec!["mode 0666", "FIFO"];
    if root {
        cases.push("another owner");
    }
    for case in cases {
        let lock = bridge.config_dir.join("ide").join(format!("{port}.lock"));
        let _ = std::fs::remove_file(&lock);
        let expected = match case {
            "mode 0666" => {
                plant_lock(&bridge, port, &sub);
                std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o666)).unwrap();
                "others may write it (mode 0666)"
            }
            "FIFO" => {
                let c = std::ffi::CString::new(lock.to_str().unwrap()).unwrap();
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
                "it is a FIFO, not a regular file"
            }
            _ => {
                plant_lock(&bridge, port, &sub);
                std::os::unix::fs::chown(&lock, Some(65534), Some(65534)).unwrap();
                "it is owned by uid 65534"
            }
        };
        let mut relay = Relay::start(&bridge, &sub);
        let init = relay.initialize().await;
        assert_eq!(
            init["result"]["serverInfo"]["name"], "ide-bridge",
            "{case}: {init}"
        );
        let tools = relay.request(2, "tools/list", json!({})).await;
        assert!(
            tools["result"]["tools"]
                .as_array()
                .is_some_and(|t| !t.is_empty()),
            "{case}: {tools}"
        );
        assert!(
            relay.stderr().contains(expected),
            "{case}: no warning naming why: {}",
            relay.stderr()
        );
        assert!(
            listener.accept().is_err(),
            "{case}: the relay connected to the planted port"
        );
    }
    // The bridge's own lock file, and a planted one written privately, are used: the
    // checks refuse only what another user could have written.
    let lock = bridge.config_dir.join("ide").join(format!("{port}.lock"));
    let _ = std::fs::remove_file(&lock);
    plant_lock(&bridge, port, &sub);
    std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut relay = Relay::start(&bridge, &sub);
    let listener = std::sync::Arc::new(listener);
    wait_for_blocking(
        "the relay to try the private lock's port",
        Duration::from_secs(20),
        move || listener.accept().ok().map(|_| ()),
    )
    .await;
    relay.close_stdin();
}

/// A lock naming a live process that started long before it (pid 1 here) is stale:
/// the relay does not use it, and a starting bridge removes it.
#[tokio::test]
async fn a_lock_naming_a_process_older_than_itself_is_stale() {
    let bridge = Bridge::launch(Options::default()).await;
    let sub = bridge.workspace.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let lock = plant_lock(&bridge, port, &sub);
    let mut body: Value = serde_json::from_str(&std::fs::read_to_string(&lock).unwrap()).unwrap();
    body["pid"] = json!(1);
    std::fs::write(&lock, body.to_string()).unwrap();
    std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut relay = Relay::start(&bridge, &sub);
    let init = relay.initialize().await;
    assert_eq!(init["result"]["serverInfo"]["name"], "ide-bridge", "{init}");
    assert!(listener.accept().is_err(), "the relay used the stale lock");
}

/// A request longer than `server.max_message_bytes` is answered with an error naming
/// the limit; the connection to the bridge stays, and the next request is served.
#[tokio::test]
async fn an_over_long_request_gets_an_error_and_the_connection_stays() {
    let bridge = Bridge::launch(Options::default().set("server.max_message_bytes", LIMIT)).await;
    let mut relay = Relay::start(&bridge, &bridge.workspace);
    relay.initialize().await;
    // Just within the limit: served (the bridge answers, here with a tool error).
    let within = "x".repeat(LIMIT - 300);
    let line = json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
                      "params": {"name": "getOpenEditors", "arguments": {"pad": within}}});
    assert!(line.to_string().len() <= LIMIT);
    relay.send_line(&line.to_string()).await;
    let served = relay.answer(json!(10)).await;
    assert!(
        served.get("result").is_some() || served["error"]["code"] != -32600,
        "{served}"
    );
    // Just past it, and far past it: refused by the relay with the request's id.
    // The id first, or last as the TypeScript SDK writes it.
    for (id, size, id_last) in [(11, LIMIT + 1, false), (12, 40 * 1024 * 1024, true)] {
        let pad = "y".repeat(size);
        let line = if id_last {
            format!(
                r#"{{"method":"tools/call","params":{{"name":"getOpenEditors","arguments":{{"pad":"{pad}","id":1}}}},"jsonrpc":"2.0","id":{id}}}"#
            )
        } else {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"getOpenEditors","arguments":{{"pad":"{pad}"}}}}}}"#
            )
        };
        relay.send_line(&line).await;
        let refused = relay.answer(json!(id)).await;
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("server.max_message_bytes"),
            "{refused}"
        );
    }
    let ping = relay.request(13, "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}), "{ping}");
    assert!(
        !relay.stderr().contains("lost the bridge"),
        "the connection dropped: {}",
        relay.stderr()
    );
}

/// The `_meta` every request of MCP 2026-07-28 carries.
fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "stateless-relay-test", "version": "1"},
    })
}

impl Relay {
    /// Waits for `tools/list_changed` on the listen stream `subscription`.
    async fn tools_changed_on(&mut self, subscription: &str, when: &str) {
        let changed = self
            .next(DEADLINE)
            .await
            .unwrap_or_else(|| panic!("no tools/list_changed {when}"));
        assert_eq!(
            changed["method"], "notifications/tools/list_changed",
            "{when}: {changed}"
        );
        assert_eq!(
            changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], subscription,
            "{when}"
        );
    }

    /// The next message; `None` when none comes within `wait`.
    async fn next(&mut self, wait: Duration) -> Option<Value> {
        tokio::time::timeout(wait, self.read_message()).await.ok()?
    }
}

#[tokio::test]
async fn a_stateless_client_through_the_relay_keeps_its_listen_stream_across_a_bridge_restart() {
    let place = Place::new();
    let bridge = Bridge::launch(place.options()).await;
    let mut relay = Relay::start(&bridge, &place.workspace);
    // The newest Claude Code's probe: a string id, echoed as sent.
    let probe = json!({"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover",
        "params": {"_meta": stateless_meta()}});
    relay.send_line(&probe.to_string()).await;
    let discovered = relay.answer(json!("server-discover-probe-1")).await;
    let result = &discovered["result"];
    assert_eq!(result["supportedVersions"][0], "2026-07-28", "{discovered}");
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "ide-bridge"
    );
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);

    let listen = json!({"jsonrpc": "2.0", "id": "listen:0", "method": "subscriptions/listen",
        "params": {"_meta": stateless_meta(), "notifications": {"toolsListChanged": true, "promptsListChanged": true}}});
    relay.send_line(&listen.to_string()).await;
    let ack = relay.next(DEADLINE).await.expect("the acknowledgement");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen:0"
    );
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "prompts never change here: only the tools list is honoured"
    );
    let listed = relay
        .request(2, "tools/list", json!({"_meta": stateless_meta()}))
        .await;
    assert_eq!(listed["result"]["resultType"], "complete", "{listed}");
    assert_eq!(listed["result"]["ttlMs"], 0);
    assert_eq!(listed["result"]["cacheScope"], "private");
    // A method the revision dropped is unknown in it.
    let ping = relay
        .request(3, "ping", json!({"_meta": stateless_meta()}))
        .await;
    assert_eq!(error_code(&ping), -32601, "{ping}");

    // The bridge restarts: the listen stream is not failed and not acknowledged twice;
    // the client hears the tools may have changed, and lists them again.
    bridge.stop_async().await;
    let bridge = Bridge::launch(place.options()).await;
    relay
        .tools_changed_on("listen:0", "after the restart")
        .await;
    let listed = relay
        .request(4, "tools/list", json!({"_meta": stateless_meta()}))
        .await;
    assert!(
        listed["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{listed}"
    );
    while let Some(other) = relay.next(Duration::from_millis(500)).await {
        assert_ne!(
            other["id"], "listen:0",
            "the listen stream was not answered: {other}"
        );
        assert_ne!(
            other["method"], "notifications/subscriptions/acknowledged",
            "the client already has its stream: {other}"
        );
    }
    // The new bridge has the stream: an editor connecting changes the tools list.
    let _editor =
        crate::editor_sim::EditorSim::connect(&bridge, crate::editor_sim::handler(|_, _| None))
            .await;
    relay
        .tools_changed_on("listen:0", "when an editor connects")
        .await;
    bridge.stop_async().await;
}

/// The newest Claude Code started in a directory of no project before any bridge: the
/// relay answers its probe itself and acknowledges its listen stream (it refused it, the
/// client gave up on it, and never heard of the bridge's tools); a bridge started there
/// later is found, and the stream is told the tools changed.
#[tokio::test]
async fn a_listen_stream_opened_before_any_bridge_hears_of_one_started_later() {
    let place = Place::new();
    let mut relay = Relay::spawn_in(&place.config_dir, &place.workspace, &[], &["mcp"]);
    let probe = json!({"jsonrpc": "2.0", "id": "probe", "method": "server/discover",
        "params": {"_meta": stateless_meta()}});
    relay.send_line(&probe.to_string()).await;
    let discovered = relay.answer(json!("probe")).await;
    assert_eq!(
        discovered["result"]["capabilities"]["tools"]["listChanged"], true,
        "{discovered}"
    );
    let listen = json!({"jsonrpc": "2.0", "id": "listen:0", "method": "subscriptions/listen",
        "params": {"_meta": stateless_meta(), "notifications": {"toolsListChanged": true}}});
    relay.send_line(&listen.to_string()).await;
    let ack = relay.next(DEADLINE).await.expect("the acknowledgement");
    assert_eq!(
        (
            ack["method"].clone(),
            ack["params"]["notifications"].clone()
        ),
        (
            json!("notifications/subscriptions/acknowledged"),
            json!({"toolsListChanged": true})
        ),
        "{ack}; relay: {}",
        relay.stderr()
    );
    let bridge = Bridge::launch(place.options()).await;
    relay
        .tools_changed_on("listen:0", "when a bridge started for the directory")
        .await;
    let listed = relay
        .request(2, "tools/list", json!({"_meta": stateless_meta()}))
        .await;
    assert!(
        listed["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.len() > 20),
        "{listed}"
    );
    bridge.stop_async().await;
}

/// `printf '…' | ide-bridge mcp`: what the client asked before it closed stdin is
/// answered before the relay exits (the MCP stdio shutdown closes the server's input and
/// waits for it to exit), though the bridge was not even connected when stdin closed.
#[tokio::test]
async fn requests_sent_before_stdin_closes_are_answered_before_the_relay_exits() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut relay = Relay::start(&bridge, &bridge.workspace);
    relay.send_initialize().await;
    relay.send_initialized().await;
    relay
        .send_line(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .await;
    relay
        .send_line(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"getWorkspaceFolders","arguments":{}}}"#)
        .await;
    relay.close_stdin();
    let (messages, status) = relay.rest_and_exit(Duration::from_secs(30)).await;
    assert!(status.success(), "{status}; stderr: {}", relay.stderr());
    let answer = |id: i64| {
        messages
            .iter()
            .find(|m| m["id"] == json!(id))
            .unwrap_or_else(|| {
                panic!(
                    "no answer to {id} in {messages:?}; stderr: {}",
                    relay.stderr()
                )
            })
    };
    assert_eq!(answer(1)["result"]["serverInfo"]["name"], "ide-bridge");
    assert!(answer(2)["result"]["tools"]
        .as_array()
        .is_some_and(|t| !t.is_empty()));
    let folders = answer(3)["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(folders.contains("folders"), "{}", answer(3));
}

/// A "bridge" for `sub` (a lock file naming it) that completes the WebSocket handshake
/// and reads, never answering: what it receives comes out of the channel.
async fn silent_bridge(
    bridge: &Bridge,
    sub: &Path,
) -> (
    tokio::task::JoinHandle<()>,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    silent_bridge_after(bridge, sub, std::future::ready(())).await
}

/// [`silent_bridge`] that completes no handshake before `ready`.
async fn silent_bridge_after(
    bridge: &Bridge,
    sub: &Path,
    ready: impl std::future::Future<Output = ()> + Send + 'static,
) -> (
    tokio::task::JoinHandle<()>,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    plant_lock(bridge, listener.local_addr().unwrap().port(), sub);
    let (received_tx, received) = tokio::sync::mpsc::unbounded_channel::<String>();
    let task = tokio::spawn(async move {
        ready.await;
        let (stream, _) = listener.accept().await.unwrap();
        let mut ws = tokio_tungstenite::accept_hdr_async(stream, echo_mcp_protocol)
            .await
            .unwrap();
        while let Some(Ok(frame)) = futures_util::StreamExt::next(&mut ws).await {
            if let Ok(text) = frame.into_text() {
                let _ = received_tx.send(text.to_string());
            }
        }
    });
    (task, received)
}

/// The handshake's answer names the `mcp` subprotocol the relay asks for.
#[allow(clippy::result_large_err)] // tungstenite's callback type: its error is a response
fn echo_mcp_protocol(
    _: &tokio_tungstenite::tungstenite::handshake::server::Request,
    mut response: tokio_tungstenite::tungstenite::handshake::server::Response,
) -> Result<
    tokio_tungstenite::tungstenite::handshake::server::Response,
    tokio_tungstenite::tungstenite::handshake::server::ErrorResponse,
> {
    response
        .headers_mut()
        .insert("sec-websocket-protocol", "mcp".parse().unwrap());
    Ok(response)
}

/// A request the bridge never answers holds the relay up for `tools.timeout_ms` after
/// stdin closed, not longer: then it is answered with an error saying so, and the relay
/// exits.
#[tokio::test]
async fn an_unanswered_request_is_answered_with_an_error_once_stdin_has_been_closed_for_the_tool_timeout(
) {
    let bridge = Bridge::launch(Options::default()).await;
    let sub = bridge.workspace.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let (silent, mut received) = silent_bridge(&bridge, &sub).await;
    let mut relay = Relay::start_with(&bridge, &sub, &[("IDE_BRIDGE_TOOLS__TIMEOUT_MS", "700")]);
    relay.send_initialize().await;
    let passed_on = tokio::time::timeout(Duration::from_secs(20), received.recv())
        .await
        .expect("the relay passed initialize on to the planted bridge")
        .unwrap();
    assert!(passed_on.contains("initialize"), "{passed_on}");
    let closed = std::time::Instant::now();
    relay.close_stdin();
    // (The relay waits only while someone reads its answers:
    // `a_client_that_closed_both_pipes_does_not_keep_the_relay_waiting`.)
    let (messages, status) = relay.rest_and_exit(Duration::from_secs(20)).await;
    let waited = closed.elapsed();
    assert!(status.success(), "{status}; stderr: {}", relay.stderr());
    assert!(
        waited >= Duration::from_millis(700),
        "exited after {waited:?}"
    );
    let answer = messages
        .iter()
        .find(|m| m["id"] == json!(1))
        .unwrap_or_else(|| panic!("initialize unanswered: {messages:?}"));
    let why = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        why.contains("closed stdin") && why.contains("700 ms (tools.timeout_ms)"),
        "{answer}"
    );
    silent.abort();
}

/// A client that went away altogether (its end of stdout closed too, as when it was
/// killed, or as a client that is done closes it after stdin) is not waited for: nobody
/// would read the answers.
#[tokio::test]
async fn a_client_that_closed_both_pipes_does_not_keep_the_relay_waiting() {
    let bridge = Bridge::launch(Options::default()).await;
    for stdout_first in [true, false] {
        let sub = bridge.workspace.join(format!("sub-{stdout_first}"));
        std::fs::create_dir(&sub).unwrap();
        let (silent, mut received) = silent_bridge(&bridge, &sub).await;
        let mut relay =
            Relay::start_with(&bridge, &sub, &[("IDE_BRIDGE_TOOLS__TIMEOUT_MS", "60000")]);
        relay
            .send_line(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#)
            .await;
        let passed_on = tokio::time::timeout(Duration::from_secs(20), received.recv())
            .await
            .expect("the relay passed the request on to the planted bridge")
            .unwrap();
        assert!(passed_on.contains("tools/list"), "{passed_on}");
        if stdout_first {
            drop(relay.stdout.take());
            relay.close_stdin();
        } else {
            relay.close_stdin();
            drop(relay.stdout.take());
        }
        let status = tokio::time::timeout(Duration::from_secs(10), relay.child.wait())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "stdout first: {stdout_first}: the relay waited for answers nobody reads; stderr: {}",
                    relay.stderr()
                )
            })
            .unwrap();
        assert!(status.success(), "{status}");
        silent.abort();
    }
}

/// What the bridge would refuse (a batch, a message with neither method nor result, a
/// line that is not JSON, another JSON-RPC version) is refused by the relay in the same
/// words, before it exits: nothing the client sent goes unanswered.
#[tokio::test]
async fn messages_the_bridge_would_refuse_are_answered_with_its_errors() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut relay = Relay::start(&bridge, &bridge.workspace);
    for line in [
        r#"[{"jsonrpc":"2.0","id":93,"method":"ping"}]"#,
        r#"{"jsonrpc":"2.0","id":97}"#,
        r#"{"jsonrpc":"1.0","id":98,"method":"ping"}"#,
        "not json",
        r#"{"jsonrpc":"2.0","id":99,"method":"ping"}"#,
    ] {
        relay.send_line(line).await;
    }
    relay.close_stdin();
    let (messages, status) = relay.rest_and_exit(Duration::from_secs(30)).await;
    assert!(status.success(), "{status}");
    let error = |id: Value, code: i64, says: &str| {
        assert!(
            messages.iter().any(|m| m["id"] == id
                && m["error"]["code"] == code
                && m["error"]["message"]
                    .as_str()
                    .is_some_and(|t| t.contains(says))),
            "no error {code} for {id} saying {says:?} in {messages:?}"
        );
    };
    error(Value::Null, -32600, "Batch requests are not supported");
    error(json!(97), -32600, "missing \"method\"");
    error(json!(98), -32600, "\"jsonrpc\" must be \"2.0\"");
    error(Value::Null, -32700, "Parse error");
    assert!(
        messages
            .iter()
            .any(|m| m["id"] == json!(99) && m.get("result").is_some()),
        "the well-formed ping after them was answered: {messages:?}"
    );
    assert_eq!(messages.len(), 5, "{messages:?}");
}

/// `initialize` and `initialized` sent while the bridge is not there yet both reach it
/// once it is, in order (the notification used to be dropped: the relay expected to
/// replay it, which it does only after answering `initialize` itself).
#[tokio::test]
async fn an_initialized_notification_waits_behind_its_initialize_for_the_bridge() {
    let bridge = Bridge::launch(Options::default()).await;
    let sub = bridge.workspace.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let (open, opened) = tokio::sync::oneshot::channel::<()>();
    let (silent, mut received) = silent_bridge_after(&bridge, &sub, async {
        let _ = opened.await;
    })
    .await;
    let mut relay = Relay::start(&bridge, &sub);
    relay.send_initialize().await;
    relay.send_initialized().await;
    // The relay has the two lines while no bridge answers its handshake (it reads them
    // within milliseconds; were it slower, they would go straight through, as before).
    tokio::time::sleep(Duration::from_millis(200)).await;
    open.send(()).unwrap();
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|m: &String| m.contains("notifications/initialized"))
    {
        let next = tokio::time::timeout(Duration::from_secs(20), received.recv())
            .await
            .unwrap_or_else(|_| panic!("the bridge never got initialized: {seen:?}"))
            .expect("the planted bridge runs");
        seen.push(next);
    }
    assert!(
        seen[0].contains("\"initialize\""),
        "initialize first: {seen:?}"
    );
    silent.abort();
}

/// A bridge that refuses the relay's agent (every session slot held by a connected
/// agent) says why, and the client hears it in the bridge's words.
#[tokio::test]
async fn a_refusal_for_too_many_sessions_reaches_the_client_in_the_bridges_words() {
    let bridge = Bridge::launch(Options::default().set("sessions.max_sessions", 1)).await;
    let _holder = bridge.ready_agent().await;
    let mut relay = Relay::start(&bridge, &bridge.workspace);
    relay.send_initialize().await;
    let answer = relay.answer(json!(1)).await;
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("Too many sessions") && message.contains("1008"),
        "{answer}"
    );
}

/// A bridge that crashed (killed, its lock file left behind) is started again by the
/// relay that used it, as one that never had a bridge would; a bridge stopped on purpose
/// (its lock removed) is waited for instead.
#[tokio::test]
async fn a_relay_whose_bridge_crashed_starts_another() {
    let bridge =
        Bridge::launch(Options::default().file(".git/HEAD", "ref: refs/heads/main\n")).await;
    let mut relay = Relay::starting(&bridge, &bridge.workspace);
    relay.initialize().await;
    let call = json!({"name": "getWorkspaceFolders", "arguments": {}});
    let first = relay.request(2, "tools/call", call.clone()).await;
    assert_ne!(first["result"]["isError"], true, "{first}");
    let crashed = bridge.pid();
    bridge.signal("KILL");
    let ide = bridge.config_dir.join("ide");
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    let mut id = 3;
    let answered = loop {
        let r = relay.request(id, "tools/call", call.clone()).await;
        if r["result"]["isError"] != true && r["result"].is_object() {
            break r;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no bridge came back: {r}; relay: {}",
            relay.stderr()
        );
        id += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        text(&answered["result"]).contains("\"folders\""),
        "{answered}"
    );
    assert!(
        relay
            .stderr()
            .contains("the bridge ended without removing its lock file"),
        "{}",
        relay.stderr()
    );
    // The new bridge (a process of its own, on demand): stopped here.
    let pids: Vec<u32> = std::fs::read_dir(&ide)
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .filter_map(|t| serde_json::from_str::<Value>(&t).ok())
        .filter_map(|l| l["pid"].as_u64().map(|p| p as u32))
        .filter(|p| *p != crashed)
        .collect();
    assert_eq!(pids.len(), 1, "one new bridge: {pids:?}");
    drop(relay);
    let _ = std::process::Command::new("kill")
        .arg(pids[0].to_string())
        .status();
    wait_for("the new bridge to stop", Duration::from_secs(20), || {
        (!std::path::Path::new(&format!("/proc/{}", pids[0])).exists()).then_some(())
    });
}

/// A request nested deeper than a JSON value is read (128 levels; `ideCapability`'s
/// nested calls reach that within its own limit) is passed on and answered, not dropped.
#[tokio::test]
async fn a_deeply_nested_request_is_answered_through_the_relay() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut relay = Relay::start(&bridge, &bridge.workspace);
    relay.initialize().await;
    for (id, depth) in [(20, 120), (21, 200)] {
        let deep = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"getWorkspaceFolders","arguments":{{"deep":{deep}}}}}}}"#
        );
        relay.send_line(&line).await;
        let answered = relay.answer(json!(id)).await;
        assert!(
            answered.get("result").is_some() || answered.get("error").is_some(),
            "{answered}"
        );
    }
}
