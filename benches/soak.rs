//! Soak: 5 agents calling tools at the rate limit plus one client that never reads its
//! answers, against the release binary with the default configuration, for N minutes
//! (loopback only; stops by itself). Every 30 s it prints the bridge's RSS, open file
//! descriptors, calls answered and connections dropped for not reading. Not run by the
//! test script; results go to docs/benchmarks.md.
//!
//! Run: `cargo bench --bench soak -- --minutes 30`

#[path = "../tests/bridge/harness.rs"]
mod harness;

use std::time::{Duration, Instant};

use futures_util::SinkExt;
use harness::{Bridge, Options};
use serde_json::json;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// Connects, asks for `n` large reads, and never reads a byte back.
async fn never_reader(port: u16, token: &str, n: usize) {
    let mut req = format!("ws://127.0.0.1:{port}/")
        .into_client_request()
        .unwrap();
    req.headers_mut()
        .insert("x-claude-code-ide-authorization", token.parse().unwrap());
    let Ok((mut ws, _)) = tokio_tungstenite::connect_async(req).await else {
        return;
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "never-reads", "version": "0"}}});
    let _ = ws.send(Message::text(init.to_string())).await;
    for i in 1..=n {
        let call = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "readFile", "arguments": {"filePath": "big.txt"}}});
        if ws.send(Message::text(call.to_string())).await.is_err() {
            return;
        }
    }
    // Hold the socket without reading until the bridge drops it (or a minute passes).
    tokio::time::sleep(Duration::from_secs(60)).await;
}

fn main() {
    let minutes: u64 = std::env::args()
        .skip_while(|a| a != "--minutes")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let big = "x".repeat(255) + "\n";
    let bridge = Bridge::start_with(Options {
        log_level: Some("warn"),
        files: vec![("big.txt".into(), big.repeat(1024))],
        ..Options::default()
    });
    let pid = bridge.pid();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let end = Instant::now() + Duration::from_secs(minutes * 60);
        let calls = std::rc::Rc::new(std::cell::Cell::new(0u64));
        let local = tokio::task::LocalSet::new();
        for a in 0..5 {
            let mut agent = bridge.ready_agent().await;
            let calls = calls.clone();
            local.spawn_local(async move {
                // 200 requests per minute per connection: one every 300 ms.
                let mut tick = tokio::time::interval(Duration::from_millis(300));
                let mut i = 0u64;
                while Instant::now() < end {
                    tick.tick().await;
                    let (tool, args) = match (i + a) % 3 {
                        0 => (
                            "readFile",
                            json!({"filePath": "big.txt", "maxBytes": 65536}),
                        ),
                        1 => ("searchWorkspace", json!({"query": "xxxx"})),
                        _ => ("getWorkspaceFolders", json!({})),
                    };
                    agent.call_raw(tool, args).await;
                    calls.set(calls.get() + 1);
                    i += 1;
                }
            });
        }
        let (port, token) = (bridge.port, bridge.token.clone());
        local.spawn_local(async move {
            while Instant::now() < end {
                never_reader(port, &token, 190).await;
            }
        });
        println!("| minute | RSS MiB | fds | calls answered | dropped non-readers |");
        println!("|---:|---:|---:|---:|---:|");
        local
            .run_until(async {
                let start = Instant::now();
                while Instant::now() < end {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    let status = bridge.get_json("/status");
                    println!(
                        "| {:.1} | {:.1} | {} | {} | {} |",
                        start.elapsed().as_secs_f64() / 60.0,
                        rss_kib(pid) as f64 / 1024.0,
                        fds(pid),
                        calls.get(),
                        status["outboundOverflowDrops"]
                    );
                }
            })
            .await;
    });
}
