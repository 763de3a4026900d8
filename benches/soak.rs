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

use harness::{Bridge, Options};
use serde_json::json;

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

/// A masked client text frame.
fn frame(text: &str) -> Vec<u8> {
    let data = text.as_bytes();
    let mut out = vec![0x81u8];
    match data.len() {
        n if n < 126 => out.push(0x80 | n as u8),
        n => {
            out.push(0x80 | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
    }
    let mask = [0x12u8, 0x34, 0x56, 0x78];
    out.extend_from_slice(&mask);
    out.extend(data.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

/// Connects (with a small receive buffer), asks for `n` large reads, and never reads
/// the answers; gives up the socket after `hold`.
fn never_reader(port: u16, token: &str, n: usize, hold: Duration) {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return;
    };
    // Loopback receive buffers grow to 32 MiB here: keep this one small, so that what
    // the bridge sends waits in the bridge, as with a client that really stopped reading.
    let small: libc::c_int = 4096;
    // SAFETY: setsockopt on a socket we own, with a correctly sized int.
    unsafe {
        libc::setsockopt(
            std::os::fd::AsRawFd::as_raw_fd(&s),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&small as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
    let upgrade = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
         x-claude-code-ide-authorization: {token}\r\n\r\n"
    );
    let mut head = [0u8; 512];
    if s.write_all(upgrade.as_bytes()).is_err() || s.read(&mut head).is_err() {
        return;
    }
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "never-reads", "version": "0"}}});
    let _ = s.write_all(&frame(&init.to_string()));
    for i in 1..=n {
        let call = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "readFile", "arguments": {"filePath": "big.txt"}}});
        if s.write_all(&frame(&call.to_string())).is_err() {
            return;
        }
    }
    std::thread::sleep(hold);
}

fn main() {
    let minutes: u64 = std::env::args()
        .skip_while(|a| a != "--minutes")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let big = "x".repeat(255) + "\n";
    // Defaults, but room for the non-reader beside the five agents (its sessions wait
    // in grace after each drop and are evicted for the next one).
    let bridge = Bridge::start_with(
        Options {
            log_level: Some("warn"),
            files: vec![("big.txt".into(), big.repeat(1024))],
            ..Options::default()
        }
        .set("sessions.max_sessions", 7),
    );
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
        std::thread::spawn(move || {
            while Instant::now() < end {
                never_reader(port, &token, 190, Duration::from_secs(20));
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
