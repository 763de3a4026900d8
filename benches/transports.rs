//! One `tools/call` round trip (`getWorkspaceFolders`) over the three ways in, measured
//! in the same run with interleaved batches: the WebSocket directly, through the
//! `ide-bridge mcp` stdio relay (a second process), and over streamable HTTP (`/mcp`,
//! JSON answers, one keep-alive connection). Also prints the size of the tool list a
//! model-facing client receives.
//!
//! Run: `cargo bench --bench transports` (optionally `-- --requests 20000`).

#[path = "../tests/bridge/harness.rs"]
mod harness;

use std::process::Stdio;
use std::time::{Duration, Instant};

use harness::{binary, Bridge, Options};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

const TOOL: &str = "getWorkspaceFolders";
const ROUNDS: usize = 10;
const DEFAULT_REQUESTS: usize = 6_000;

/// The relay as a child process speaking newline-delimited JSON-RPC.
struct Relay {
    stdin: tokio::process::ChildStdin,
    stdout: BufReader<tokio::process::ChildStdout>,
    _child: tokio::process::Child,
    line: String,
}

impl Relay {
    async fn start(bridge: &Bridge) -> Relay {
        let mut child = tokio::process::Command::new(binary())
            .args(["mcp", "--no-start", "--log-level", "warn"])
            .current_dir(&bridge.workspace)
            .env("CLAUDE_CONFIG_DIR", &bridge.config_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("relay starts");
        let mut relay = Relay {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            _child: child,
            line: String::new(),
        };
        relay
            .ask(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"}}}),
            )
            .await;
        relay
    }

    async fn ask(&mut self, msg: &Value) -> Value {
        let mut text = msg.to_string();
        text.push('\n');
        self.stdin.write_all(text.as_bytes()).await.unwrap();
        self.line.clear();
        self.stdout.read_line(&mut self.line).await.unwrap();
        serde_json::from_str(&self.line).unwrap()
    }
}

/// A keep-alive HTTP/1.1 client for `/mcp` (JSON answers).
struct Http {
    stream: BufReader<tokio::net::TcpStream>,
    port: u16,
    token: String,
    session: Option<String>,
}

impl Http {
    async fn start(bridge: &Bridge) -> Http {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", bridge.port))
            .await
            .unwrap();
        stream.set_nodelay(true).unwrap();
        let mut http = Http {
            stream: BufReader::new(stream),
            port: bridge.port,
            token: bridge.token.clone(),
            session: None,
        };
        http.ask(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}}}),
        )
        .await;
        http
    }

    async fn ask(&mut self, msg: &Value) -> Value {
        let body = msg.to_string();
        let session = self
            .session
            .as_ref()
            .map(|s| format!("Mcp-Session-Id: {s}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nAccept: application/json\r\n{session}\
             Content-Length: {}\r\n\r\n{body}",
            self.port,
            self.token,
            body.len()
        );
        self.stream
            .get_mut()
            .write_all(request.as_bytes())
            .await
            .unwrap();
        let mut length = 0;
        let mut line = String::new();
        loop {
            line.clear();
            self.stream.read_line(&mut line).await.unwrap();
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap(),
                    "mcp-session-id" => self.session = Some(value.trim().to_string()),
                    _ => {}
                }
            }
        }
        let mut body = vec![0; length];
        self.stream.read_exact(&mut body).await.unwrap();
        serde_json::from_slice(&body).unwrap()
    }
}

#[derive(Default)]
struct Samples(Vec<Duration>);

impl Samples {
    fn pct(&self, p: usize) -> f64 {
        let i = (self.0.len() * p / 100).min(self.0.len() - 1);
        self.0[i].as_secs_f64() * 1e6
    }
}

fn call(id: usize) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": TOOL, "arguments": {}}})
}

fn main() {
    let requests: usize = std::env::args()
        .skip_while(|a| a != "--requests")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_REQUESTS);
    let bridge = Bridge::start_with(
        Options {
            log_level: Some("warn"),
            ..Options::default()
        }
        .set("rate_limit.requests", 100_000),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut ws = bridge.ready_agent().await;
        let mut relay = Relay::start(&bridge).await;
        let mut http = Http::start(&bridge).await;
        // The tool list a model-facing client gets, all pages.
        let (mut bytes, mut tools, mut cursor, mut id) = (0, 0, None::<String>, 1_000_000);
        loop {
            let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
            let page = relay
                .ask(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params}))
                .await;
            id += 1;
            bytes += page["result"]["tools"].to_string().len();
            tools += page["result"]["tools"].as_array().unwrap().len();
            cursor = page["result"]["nextCursor"].as_str().map(str::to_string);
            if cursor.is_none() {
                break;
            }
        }
        println!("tools/list for a model-facing client: {tools} tools, {bytes} bytes of JSON\n");
        // Warm up every path.
        for i in 0..200 {
            ws.call_raw(TOOL, json!({})).await;
            relay.ask(&call(i)).await;
            http.ask(&call(i)).await;
        }
        let per_batch = requests / ROUNDS;
        let (mut a, mut b, mut c) = (Samples::default(), Samples::default(), Samples::default());
        let mut id = 1;
        for _ in 0..ROUNDS {
            for _ in 0..per_batch {
                let t = Instant::now();
                let r = ws.call_raw(TOOL, json!({})).await;
                a.0.push(t.elapsed());
                assert!(r.get("result").is_some(), "{r}");
            }
            for _ in 0..per_batch {
                id += 1;
                let t = Instant::now();
                let r = relay.ask(&call(id)).await;
                b.0.push(t.elapsed());
                assert!(r.get("result").is_some(), "{r}");
            }
            for _ in 0..per_batch {
                id += 1;
                let t = Instant::now();
                let r = http.ask(&call(id)).await;
                c.0.push(t.elapsed());
                assert!(r.get("result").is_some(), "{r}");
            }
        }
        for s in [&mut a, &mut b, &mut c] {
            s.0.sort();
        }
        println!("| path | p50 µs | p99 µs | extra p50 over WebSocket µs |");
        println!("|---|---:|---:|---:|");
        for (name, s) in [
            ("WebSocket (direct)", &a),
            ("ide-bridge mcp (stdio relay)", &b),
            ("streamable HTTP /mcp (JSON)", &c),
        ] {
            println!(
                "| {name} | {:.0} | {:.0} | {:+.0} |",
                s.pct(50),
                s.pct(99),
                s.pct(50) - a.pct(50)
            );
        }
        drop(ws);
    });
}
