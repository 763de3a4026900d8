//! Test harness: starts the real `ide-bridge` binary with a temporary
//! `CLAUDE_CONFIG_DIR`, workspace and port 0, and talks to it over real sockets.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::TcpStream as StdTcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tempfile::TempDir;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue, Response};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Default wait for anything the bridge should do promptly.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// Polls `f` until it returns Some or the deadline passes.
pub fn wait_for<T>(what: &str, deadline: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + deadline;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Async variant of [`wait_for`].
pub async fn wait_for_async<T, F, Fut>(what: &str, deadline: Duration, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let end = Instant::now() + deadline;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Runs a blocking check (a process listing, a synchronous HTTP request) on the
/// blocking pool, so that an async test's runtime keeps serving its other tasks.
pub async fn off_runtime<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f)
        .await
        .expect("blocking check panicked")
}

/// Async [`wait_for`] over a blocking check, each try run by [`off_runtime`].
pub async fn wait_for_blocking<T: Send + 'static>(
    what: &str,
    deadline: Duration,
    f: impl Fn() -> Option<T> + Send + Sync + Clone + 'static,
) -> T {
    wait_for_async(what, deadline, || off_runtime(f.clone())).await
}

/// Options for starting a bridge.
#[derive(Default)]
pub struct Options {
    /// Extra command-line arguments.
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// Use this config dir instead of a fresh one.
    pub config_dir: Option<PathBuf>,
    /// `--log-level` (default debug).
    pub log_level: Option<&'static str>,
    /// Files written into the workspace before the bridge starts (path, content).
    pub files: Vec<(String, String)>,
    /// Use this workspace (kept across restarts) instead of a fresh one.
    pub workspace: Option<PathBuf>,
    /// Run the bridge as this uid (and gid), owning its workspace and config dir; the
    /// tests run as root to use it.
    pub run_as: Option<u32>,
}

impl Options {
    /// Adds `--set key=value`.
    pub fn set(mut self, key: &str, value: impl ToString) -> Self {
        self.args.push("--set".into());
        self.args.push(format!("{key}={}", value.to_string()));
        self
    }
    /// Writes a workspace file before start-up.
    pub fn file(mut self, path: &str, content: &str) -> Self {
        self.files.push((path.into(), content.into()));
        self
    }
    /// Adds raw arguments.
    pub fn arg(mut self, a: &str) -> Self {
        self.args.push(a.into());
        self
    }
}

/// A config dir and workspace that outlive several bridges (restart tests).
pub struct Place {
    _tmp: TempDir,
    /// `CLAUDE_CONFIG_DIR`.
    pub config_dir: PathBuf,
    /// The workspace.
    pub workspace: PathBuf,
}

impl Place {
    /// Fresh directories.
    pub fn new() -> Place {
        let tmp = tempfile::tempdir().unwrap();
        let config_dir = tmp.path().join("claude");
        let workspace = tmp.path().join("workspace");
        std::fs::create_dir_all(&workspace).unwrap();
        let workspace = workspace.canonicalize().unwrap();
        Place {
            _tmp: tmp,
            config_dir,
            workspace,
        }
    }

    /// Options that start a bridge here.
    pub fn options(&self) -> Options {
        Options {
            config_dir: Some(self.config_dir.clone()),
            workspace: Some(self.workspace.clone()),
            ..Options::default()
        }
    }

    /// `<config dir>/ide`.
    pub fn ide_dir(&self) -> PathBuf {
        self.config_dir.join("ide")
    }

    /// The workspace's state directory (token, activity, checkpoint, tasks).
    pub fn state_dir(&self) -> PathBuf {
        self.config_dir
            .join("ide-bridge/workspaces")
            .join(ide_bridge::state::workspace_key(&self.workspace))
    }
}

/// A running bridge process.
pub struct Bridge {
    child: Child,
    pub port: u16,
    pub token: String,
    pub lock_path: PathBuf,
    pub lock: Value,
    pub config_dir: PathBuf,
    pub workspace: PathBuf,
    pub log_path: PathBuf,
    _tmp: TempDir,
}

/// Whether npm is installed (tests that need it skip, saying so, when it is not).
pub fn npm_installed() -> bool {
    let found = std::process::Command::new("npm")
        .arg("--version")
        .output()
        .is_ok();
    if !found {
        eprintln!("npm not installed: skipped");
    }
    found
}

/// Path of the binary under test: the one Cargo built, or for the benchmarks comparing
/// builds, `BENCH_BRIDGE_BIN`.
pub fn binary() -> &'static str {
    static CHOSEN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CHOSEN.get_or_init(|| {
        std::env::var("BENCH_BRIDGE_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_ide-bridge").to_string())
    })
}

/// A command for the binary with a clean environment for configuration.
pub fn command(config_dir: &Path) -> Command {
    let mut cmd = Command::new(binary());
    for (key, _) in std::env::vars() {
        if key.starts_with("IDE_BRIDGE_") {
            cmd.env_remove(key);
        }
    }
    cmd.env("CLAUDE_CONFIG_DIR", config_dir)
        .env_remove("RUST_LOG");
    cmd
}

/// [`command`] for async tests: its output is awaited, not waited for.
pub fn async_command(config_dir: &Path) -> tokio::process::Command {
    tokio::process::Command::from(command(config_dir))
}

impl Bridge {
    /// Starts a bridge with defaults.
    pub fn start() -> Bridge {
        Self::start_with(Options::default())
    }

    /// Starts a bridge with options and waits for its lock file.
    pub fn start_with(opts: Options) -> Bridge {
        let tmp = tempfile::tempdir().expect("tempdir");
        let workspace = opts
            .workspace
            .clone()
            .unwrap_or_else(|| tmp.path().join("workspace"));
        if !workspace.join("src/main.rs").exists() {
            std::fs::create_dir_all(workspace.join("src")).unwrap();
            std::fs::write(
                workspace.join("src/main.rs"),
                "fn main() {\n    println!(\"hi\");\n}\n",
            )
            .unwrap();
            std::fs::write(workspace.join("README.md"), "# fixture\n").unwrap();
        }
        for (path, content) in &opts.files {
            let path = workspace.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, content).unwrap();
            if path.to_string_lossy().contains("/.bin/") {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        let workspace = workspace.canonicalize().unwrap();
        let config_dir = opts
            .config_dir
            .clone()
            .unwrap_or_else(|| tmp.path().join("claude"));
        let log_path = tmp.path().join("bridge.log");
        let log = std::fs::File::create(&log_path).unwrap();
        let mut cmd = command(&config_dir);
        if let Some(uid) = opts.run_as {
            use std::os::unix::fs::PermissionsExt;
            use std::os::unix::process::CommandExt;
            std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::create_dir_all(&config_dir).unwrap();
            let status = Command::new("chown")
                .args(["-R", &format!("{uid}:{uid}")])
                .arg(&workspace)
                .arg(&config_dir)
                .status()
                .unwrap();
            assert!(status.success());
            cmd.uid(uid).gid(uid).env("HOME", &config_dir);
        }
        cmd.arg("--workspace")
            .arg(&workspace)
            .arg("--log-level")
            .arg(opts.log_level.unwrap_or("debug"))
            .args(&opts.args)
            .envs(opts.env.iter().cloned())
            .stdout(Stdio::null())
            .stderr(log);
        let mut child = cmd.spawn().expect("spawn ide-bridge");
        let pid = child.id();
        let ide_dir = config_dir.join("ide");
        let found = {
            let end = Instant::now() + DEADLINE;
            loop {
                if let Some(found) = find_lock(&ide_dir, pid) {
                    break found;
                }
                if let Ok(Some(status)) = child.try_wait() {
                    panic!(
                        "ide-bridge exited with {status} before writing its lock file:\n{}",
                        std::fs::read_to_string(&log_path).unwrap_or_default()
                    );
                }
                assert!(Instant::now() < end, "no lock file for pid {pid}");
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        let (port, lock_path, lock) = found;
        Bridge {
            child,
            port,
            token: lock["authToken"].as_str().unwrap().to_string(),
            lock_path,
            lock,
            config_dir,
            workspace,
            log_path,
            _tmp: tmp,
        }
    }

    /// [`Bridge::start_with`] for async tests: the start-up wait runs off the runtime.
    pub async fn launch(opts: Options) -> Bridge {
        off_runtime(move || Bridge::start_with(opts)).await
    }

    /// [`Bridge::stop`] for async tests.
    pub async fn stop_async(self) {
        off_runtime(move || self.stop()).await
    }

    /// `ws://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("ws://127.0.0.1:{}/", self.port)
    }

    /// Stops with SIGTERM and waits for a clean exit.
    pub fn stop(mut self) {
        self.signal("TERM");
        let status = self.wait_exit(DEADLINE);
        assert!(status.success(), "{status}: {}", self.log());
    }

    /// Kills with SIGKILL (no cleanup at all).
    pub fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends a signal to the bridge.
    pub fn signal(&self, sig: &str) {
        let status = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// [`Bridge::wait_exit`] for async tests.
    pub async fn wait_exit_async(&mut self, deadline: Duration) -> ExitStatus {
        let end = Instant::now() + deadline;
        loop {
            if let Some(status) = self.child.try_wait().ok().flatten() {
                return status;
            }
            assert!(Instant::now() < end, "timed out waiting for bridge exit");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// True while the process runs.
    pub fn child_alive(&mut self) -> bool {
        self.child.try_wait().ok().flatten().is_none()
    }

    /// Waits for the process to exit.
    pub fn wait_exit(&mut self, deadline: Duration) -> ExitStatus {
        let child = &mut self.child;
        wait_for("bridge exit", deadline, || child.try_wait().ok().flatten())
    }

    /// The bridge's stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// Connects an agent with the right token.
    pub async fn agent(&self) -> Agent {
        Agent::connect(self, &[]).await.expect("agent connects")
    }

    /// Connects and completes the MCP handshake.
    pub async fn ready_agent(&self) -> Agent {
        let mut agent = self.agent().await;
        agent.initialize().await;
        agent
    }

    /// GET with the bearer token.
    pub fn get(&self, path: &str) -> (u16, String) {
        http_get(
            self.port,
            path,
            &[("Authorization", &format!("Bearer {}", self.token))],
        )
    }

    /// [`Bridge::get`] for async tests.
    pub async fn get_async(&self, path: &str) -> (u16, String) {
        let (port, auth, path) = (
            self.port,
            format!("Bearer {}", self.token),
            path.to_string(),
        );
        off_runtime(move || http_get(port, &path, &[("Authorization", &auth)])).await
    }

    /// [`Bridge::get_json`] for async tests.
    pub async fn get_json_async(&self, path: &str) -> Value {
        let (status, body) = self.get_async(path).await;
        assert_eq!(status, 200, "{path}: {body}");
        serde_json::from_str(&body).unwrap()
    }

    /// `/status`, for async tests.
    pub async fn status(&self) -> Value {
        self.get_json_async("/status").await
    }

    /// What `ide-bridge status` prints for this bridge's workspace.
    pub async fn status_text(&self) -> String {
        let out = async_command(&self.config_dir)
            .arg("status")
            .arg("--workspace")
            .arg(&self.workspace)
            .output()
            .await
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `/metrics`, for async tests.
    pub async fn metrics(&self) -> String {
        self.get_async("/metrics").await.1
    }

    /// Polls `/status` until `f` accepts it.
    pub async fn wait_status<T>(&self, what: &str, f: impl Fn(&Value) -> Option<T>) -> T {
        wait_for_async(what, DEADLINE, || async { f(&self.status().await) }).await
    }

    /// Waits until exactly `n` tool calls run across all sessions (a call sent but not
    /// yet started, or one still finishing, keeps the wait going).
    pub async fn wait_active_calls(&self, n: u64) {
        self.wait_status(&format!("{n} tool calls running"), |s| {
            let running: u64 = s["sessions"]
                .as_array()?
                .iter()
                .filter_map(|x| x["activeToolCalls"].as_u64())
                .sum();
            (running == n).then_some(())
        })
        .await
    }

    /// GET and parse JSON.
    pub fn get_json(&self, path: &str) -> Value {
        let (status, body) = self.get(path);
        assert_eq!(status, 200, "{path}: {body}");
        serde_json::from_str(&body).unwrap()
    }
}

impl Drop for Bridge {
    /// SIGTERM first (the bridge stops its tasks' processes), SIGKILL after 3 s.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(self.child.id().to_string())
                .status();
            let end = Instant::now() + Duration::from_secs(3);
            while Instant::now() < end && matches!(self.child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Finds the lock file written by `pid`.
pub fn find_lock(ide_dir: &Path, pid: u32) -> Option<(u16, PathBuf, Value)> {
    for entry in std::fs::read_dir(ide_dir).ok()?.flatten() {
        let path = entry.path();
        let name = path.file_name()?.to_str()?.to_string();
        let Some(port) = name
            .strip_suffix(".lock")
            .and_then(|p| p.parse::<u16>().ok())
        else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(lock) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if lock["pid"].as_u64() == Some(u64::from(pid)) {
            return Some((port, path, lock));
        }
    }
    None
}

/// A raw HTTP/1.1 GET with arbitrary headers (a `Host` header is added unless given).
pub fn http_get(port: u16, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let (status, _, body) = http_request(port, "GET", path, headers, b"");
    (status, body)
}

/// One request to `/mcp` (`POST` a JSON-RPC message, `DELETE` the session) with the
/// bridge's token, the session and protocol version headers when given: status, head,
/// body.
pub async fn mcp_request(
    bridge: &Bridge,
    method: &'static str,
    session: Option<&str>,
    version: Option<&str>,
    body: Option<Value>,
) -> (u16, String, String) {
    let (port, bearer) = (bridge.port, format!("Bearer {}", bridge.token));
    let (session, version) = (session.map(str::to_string), version.map(str::to_string));
    off_runtime(move || {
        let mut headers = vec![
            ("Authorization", bearer.as_str()),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if let Some(id) = &session {
            headers.push(("Mcp-Session-Id", id.as_str()));
        }
        if let Some(v) = &version {
            headers.push(("MCP-Protocol-Version", v.as_str()));
        }
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        http_request(port, method, "/mcp", &headers, body.as_bytes())
    })
    .await
}

/// The `Mcp-Session-Id` a response's head gives (the bridge writes header names in
/// lower case).
pub fn session_id_of(head: &str) -> String {
    head.lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("a session id")
        .trim()
        .to_string()
}

/// One JSON-RPC message POSTed to `/mcp` ([`mcp_request`]).
pub async fn mcp_post(
    bridge: &Bridge,
    session: Option<&str>,
    version: Option<&str>,
    body: Value,
) -> (u16, String, String) {
    mcp_request(bridge, "POST", session, version, Some(body)).await
}

/// A raw HTTP/1.1 request with arbitrary headers (a `Host` header is added unless
/// given) and body: status, response head, body (de-chunked).
pub fn http_request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String, String) {
    let mut s = StdTcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || method != "GET" {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    // A server may answer (and close) before reading a large body.
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    (status, head.to_string(), body)
}

/// [`http_get`] for async tests.
pub async fn http_get_async(port: u16, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let path = path.to_string();
    let headers: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    off_runtime(move || {
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        http_get(port, &path, &headers)
    })
    .await
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n.min(rest.len())]);
        body = rest.get(n + 2..).unwrap_or("");
    }
    out
}

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// An MCP client over a real WebSocket.
pub struct Agent {
    ws: Ws,
    next_id: i64,
    /// Messages received while waiting for something else.
    pub inbox: VecDeque<Value>,
    /// The upgrade response.
    pub response: Response<Option<Vec<u8>>>,
}

impl Agent {
    /// Connects with the bridge's token, the `mcp` subprotocol and extra headers.
    pub async fn connect(
        bridge: &Bridge,
        extra: &[(&str, &str)],
    ) -> Result<Agent, tokio_tungstenite::tungstenite::Error> {
        let mut headers: Vec<(&str, &str)> = vec![
            ("x-claude-code-ide-authorization", bridge.token.as_str()),
            ("sec-websocket-protocol", "mcp"),
        ];
        headers.extend_from_slice(extra);
        Self::connect_raw(bridge.port, &headers).await
    }

    /// Connects with exactly these headers, waiting and retrying while the bridge
    /// answers 429 (connections too close together), as a well-behaved client does.
    pub async fn connect_raw(
        port: u16,
        headers: &[(&str, &str)],
    ) -> Result<Agent, tokio_tungstenite::tungstenite::Error> {
        let end = Instant::now() + DEADLINE;
        loop {
            match Self::connect_once(port, headers).await {
                Err(tokio_tungstenite::tungstenite::Error::Http(resp))
                    if resp.status().as_u16() == 429 && Instant::now() < end =>
                {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                other => return other,
            }
        }
    }

    /// One connection attempt with exactly these headers (no retry on 429).
    pub async fn connect_once(
        port: u16,
        headers: &[(&str, &str)],
    ) -> Result<Agent, tokio_tungstenite::tungstenite::Error> {
        let mut req = format!("ws://127.0.0.1:{port}/").into_client_request()?;
        for (k, v) in headers {
            req.headers_mut().insert(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        let (ws, response) = tokio_tungstenite::connect_async(req).await?;
        Ok(Agent {
            ws,
            next_id: 0,
            inbox: VecDeque::new(),
            response,
        })
    }

    /// The underlying WebSocket (for peers that are not agents).
    pub fn into_ws(self) -> Ws {
        self.ws
    }

    /// Sends a raw text frame.
    pub async fn send_text(&mut self, text: impl Into<String>) {
        self.ws
            .send(Message::text(text.into()))
            .await
            .expect("send");
    }

    /// Sends a binary frame.
    pub async fn send_binary(&mut self, data: Vec<u8>) {
        self.ws.send(Message::binary(data)).await.expect("send");
    }

    /// Sends a JSON message.
    pub async fn send(&mut self, v: &Value) {
        self.send_text(v.to_string()).await;
    }

    /// Next JSON message (or panics after the deadline / on close).
    pub async fn recv(&mut self) -> Value {
        self.try_recv(DEADLINE)
            .await
            .expect("a message before the deadline")
    }

    /// Next JSON message within `wait`, None on timeout or close.
    pub async fn try_recv(&mut self, wait: Duration) -> Option<Value> {
        if let Some(v) = self.inbox.pop_front() {
            return Some(v);
        }
        self.recv_wire(wait).await
    }

    async fn recv_wire(&mut self, wait: Duration) -> Option<Value> {
        let end = Instant::now() + wait;
        loop {
            let left = end.checked_duration_since(Instant::now())?;
            match tokio::time::timeout(left, self.ws.next()).await {
                Err(_) => return None,
                Ok(None) => return None,
                Ok(Some(Err(_))) => return None,
                Ok(Some(Ok(Message::Text(t)))) => {
                    return Some(serde_json::from_str(t.as_str()).expect("bridge sends JSON"))
                }
                Ok(Some(Ok(Message::Close(_)))) => return None,
                Ok(Some(Ok(_))) => continue,
            }
        }
    }

    /// Waits for the response with `id`, keeping other messages in the inbox.
    pub async fn response_to(&mut self, id: &Value) -> Value {
        self.response_within(id, DEADLINE).await
    }

    /// [`Agent::response_to`], waiting up to `wait` for each message.
    pub async fn response_within(&mut self, id: &Value, wait: Duration) -> Value {
        if let Some(pos) = self
            .inbox
            .iter()
            .position(|m| &m["id"] == id && m.get("method").is_none())
        {
            return self.inbox.remove(pos).unwrap();
        }
        loop {
            let msg = self
                .recv_wire(wait)
                .await
                .unwrap_or_else(|| panic!("no response to id {id}"));
            if &msg["id"] == id && msg.get("method").is_none() {
                return msg;
            }
            self.inbox.push_back(msg);
        }
    }

    /// Waits up to `wait` for a notification with `method`, keeping other messages.
    pub async fn notification(&mut self, method: &str, wait: Duration) -> Option<Value> {
        if let Some(pos) = self.inbox.iter().position(|m| m["method"] == method) {
            return self.inbox.remove(pos);
        }
        let end = Instant::now() + wait;
        loop {
            let left = end.checked_duration_since(Instant::now())?;
            let msg = self.recv_wire(left).await?;
            if msg["method"] == method {
                return Some(msg);
            }
            self.inbox.push_back(msg);
        }
    }

    /// Asserts that no notification with `method` comes within `wait` (a wait kept
    /// short by configuring the debounce that would send one).
    pub async fn assert_no_notification(&mut self, method: &str, wait: Duration, why: &str) {
        let got = self.notification(method, wait).await;
        assert!(got.is_none(), "{why}: {got:?}");
    }

    /// Allocates an id.
    pub fn id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Sends a request and returns the whole response message.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.id();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.response_to(&json!(id)).await
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// initialize + notifications/initialized, like the Claude Code CLI.
    pub async fn initialize(&mut self) -> Value {
        self.initialize_as("2025-11-25").await
    }

    /// [`Agent::initialize`] asking for protocol revision `version`.
    pub async fn initialize_as(&mut self, version: &str) -> Value {
        let resp = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": {"roots": {}, "elicitation": {}},
                    "clientInfo": {"name": "claude-code", "version": "2.1.0"}
                }),
            )
            .await;
        assert!(resp.get("result").is_some(), "initialize failed: {resp}");
        self.notify("notifications/initialized", json!({})).await;
        resp
    }

    /// Writes workspace files with `createFile` (overwriting), each must succeed.
    pub async fn create_files(&mut self, files: &[(&str, &str)]) {
        for (path, content) in files {
            let r = self
                .call(
                    "createFile",
                    json!({"filePath": path, "content": content, "overwrite": true}),
                )
                .await;
            assert!(!is_error(&r), "createFile {path}: {r}");
        }
    }

    /// Calls a tool and returns the `result` (panics on a protocol error).
    pub async fn call(&mut self, name: &str, args: Value) -> Value {
        let resp = self.call_raw(name, args).await;
        resp.get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{name} failed: {resp}"))
    }

    /// Calls a tool and returns the whole response message.
    pub async fn call_raw(&mut self, name: &str, args: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": args}))
            .await
    }

    /// Waits for the server to close the socket; returns the close frame if any.
    pub async fn closed(&mut self, wait: Duration) -> Option<CloseFrame> {
        self.closed_within(wait)
            .await
            .unwrap_or_else(|| panic!("socket still open after {wait:?}"))
    }

    /// Waits up to `wait` for the server to close the socket: `Some` when it did (with
    /// the close frame if any), `None` when it is still open.
    pub async fn closed_within(&mut self, wait: Duration) -> Option<Option<CloseFrame>> {
        let end = Instant::now() + wait;
        loop {
            let left = end.checked_duration_since(Instant::now())?;
            match tokio::time::timeout(left, self.ws.next()).await {
                Err(_) => return None,
                Ok(None) | Ok(Some(Err(_))) => return Some(None),
                Ok(Some(Ok(Message::Close(frame)))) => return Some(frame),
                Ok(Some(Ok(_))) => continue,
            }
        }
    }

    /// Closes the socket.
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}

/// The first text item of a tool result.
pub fn text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {result}"))
}

/// The first text item parsed as JSON.
pub fn json_text(result: &Value) -> Value {
    serde_json::from_str(text(result)).unwrap_or_else(|e| panic!("not JSON ({e}): {result}"))
}

/// True when the result is a tool error.
pub fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}

/// Makes a FIFO (named pipe) at `path`.
pub fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "{}",
        path.display()
    );
}

/// The text of a tool error answering arguments the tool refused (MCP 2025-11-25 and
/// later answer them as a result, SEP-1303); panics on any other response.
pub fn arguments_refused(resp: &Value) -> &str {
    let result = &resp["result"];
    assert!(is_error(result), "not a tool error: {resp}");
    let said = text(result);
    // Refused before the tool ran, not a tool that ran and failed.
    assert!(
        said.starts_with("Invalid arguments for tool \"")
            || said.starts_with("Tool arguments are "),
        "not a refusal of the arguments: {resp}"
    );
    said
}

/// The JSON-RPC error code of a response.
pub fn error_code(resp: &Value) -> i64 {
    resp["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {resp}"))
}

/// User + system CPU time of a process (all threads), from /proc/<pid>/stat.
pub fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the parenthesised command name come fields 3 (state), 4, …; utime and
    // stime are fields 14 and 15, i.e. indices 11 and 12 here.
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let ticks = field(11) + field(12);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_micros(ticks * 1_000_000 / hz)
}

/// CPU time of a process, to the nanosecond: its CPU clock (`clock_getcpuclockid`),
/// which counts every thread it ran, ended ones too; [`cpu_time`]'s clock ticks (10 ms
/// apart) where that clock cannot be read.
pub fn run_time(pid: u32) -> Duration {
    let mut clock: libc::clockid_t = 0;
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: each call writes one value through a pointer to a live local.
    let read = unsafe {
        libc::clock_getcpuclockid(pid as libc::pid_t, &mut clock) == 0
            && libc::clock_gettime(clock, &mut now) == 0
    };
    if read {
        Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
    } else {
        cpu_time(pid)
    }
}

/// A field of /proc/<pid>/status as a number (`VmRSS` in KiB, `Threads`).
pub fn proc_status(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// Resident set size of a process in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    proc_status(pid, "VmRSS")
}

/// A WebSocket spoken byte by byte: the upgrade is done, frames are written and read
/// raw, so tests can send what no well-behaved client library would.
pub struct RawWs {
    pub stream: StdTcpStream,
}

impl RawWs {
    /// Upgrades an agent connection with the bridge's token.
    pub fn connect(bridge: &Bridge) -> RawWs {
        let mut stream = StdTcpStream::connect(("127.0.0.1", bridge.port)).unwrap();
        stream.set_read_timeout(Some(DEADLINE)).unwrap();
        write!(
            stream,
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
             Sec-WebSocket-Protocol: mcp\r\nx-claude-code-ide-authorization: {}\r\n\r\n",
            bridge.port, bridge.token
        )
        .unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            stream.read_exact(&mut byte).expect("upgrade response");
            head.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&head);
        assert!(head.starts_with("HTTP/1.1 101"), "{head}");
        RawWs { stream }
    }

    /// A client frame header (masked with a zero key, so the payload goes as is).
    pub fn header(fin: bool, opcode: u8, len: u64) -> Vec<u8> {
        let mut h = vec![(u8::from(fin) << 7) | opcode];
        if len < 126 {
            h.push(0x80 | len as u8);
        } else if len <= u64::from(u16::MAX) {
            h.push(0x80 | 126);
            h.extend_from_slice(&(len as u16).to_be_bytes());
        } else {
            h.push(0x80 | 127);
            h.extend_from_slice(&len.to_be_bytes());
        }
        h.extend_from_slice(&[0, 0, 0, 0]);
        h
    }

    /// Writes a whole frame; false when the bridge already closed the socket.
    pub fn frame(&mut self, fin: bool, opcode: u8, payload: &[u8]) -> bool {
        let mut f = Self::header(fin, opcode, payload.len() as u64);
        f.extend_from_slice(payload);
        self.stream.write_all(&f).is_ok()
    }

    /// Writes one JSON-RPC message as a text frame.
    pub fn send_json(&mut self, v: &Value) -> bool {
        self.frame(true, 1, v.to_string().as_bytes())
    }

    /// Reads server frames until a text frame and returns it (None on close, end or
    /// timeout). Pings are skipped unanswered.
    pub fn read_text(&mut self) -> Option<String> {
        loop {
            let mut h = [0u8; 2];
            self.stream.read_exact(&mut h).ok()?;
            let mut len = u64::from(h[1] & 0x7f);
            if len == 126 {
                let mut b = [0u8; 2];
                self.stream.read_exact(&mut b).ok()?;
                len = u64::from(u16::from_be_bytes(b));
            } else if len == 127 {
                let mut b = [0u8; 8];
                self.stream.read_exact(&mut b).ok()?;
                len = u64::from_be_bytes(b);
            }
            let mut payload = vec![0u8; len as usize];
            self.stream.read_exact(&mut payload).ok()?;
            match h[0] & 0x0f {
                1 => return Some(String::from_utf8(payload).expect("UTF-8 text")),
                8 => return None,
                _ => continue,
            }
        }
    }

    /// `initialize` and `notifications/initialized`, reading the one response.
    pub fn initialize(&mut self) {
        self.send_json(
            &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        );
        let resp = self.read_text().expect("initialize response");
        assert!(resp.contains("\"result\""), "{resp}");
        self.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// Reads server frames until a close frame; returns its code and reason (None if
    /// the socket ends or times out first). Other frames are skipped.
    pub fn read_close(&mut self) -> Option<(u16, String)> {
        loop {
            let mut h = [0u8; 2];
            self.stream.read_exact(&mut h).ok()?;
            let mut len = u64::from(h[1] & 0x7f);
            if len == 126 {
                let mut b = [0u8; 2];
                self.stream.read_exact(&mut b).ok()?;
                len = u64::from(u16::from_be_bytes(b));
            } else if len == 127 {
                let mut b = [0u8; 8];
                self.stream.read_exact(&mut b).ok()?;
                len = u64::from_be_bytes(b);
            }
            let mut payload = vec![0u8; len as usize];
            self.stream.read_exact(&mut payload).ok()?;
            if h[0] & 0x0f == 8 {
                let code = payload
                    .get(..2)
                    .map_or(1005, |c| u16::from_be_bytes([c[0], c[1]]));
                let reason = String::from_utf8_lossy(payload.get(2..).unwrap_or(&[])).to_string();
                return Some((code, reason));
            }
        }
    }
}
