//! Cost of forwarding to the editor: `getHover` (forwarded to the extension simulator,
//! which answers at once) against `close_tab` (answered by the bridge), interleaved in
//! the same run, with a raw WebSocket echo round trip as the floor of what any second
//! exchange costs on this machine; then 5 agents hammering the editor simulator at once.
//!
//! Run: `cargo bench --bench editor`.

#[path = "common/echo.rs"]
mod echo;
#[path = "../tests/bridge/editor_sim.rs"]
mod editor_sim;
#[path = "../tests/bridge/harness.rs"]
mod harness;

use std::time::{Duration, Instant};

use editor_sim::{handler, EditorSim, Reply};
use harness::{cpu_time, Agent, Bridge, Options};
use serde_json::{json, Value};

const ROUNDS: usize = 20;
const PER_ROUND: usize = 500;

fn main() {
    if echo::serve_if_asked() {
        return;
    }
    let (_echo_proc, echo_port) = echo::spawn_echo_process();
    let bridge = Bridge::start_with(
        Options {
            log_level: Some("warn"),
            ..Options::default()
        }
        .set("rate_limit.requests", 100_000),
    );
    // The simulated editor runs on a thread of its own, like a real editor process.
    let (port, token) = (bridge.port, bridge.token.clone());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let editor_thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let answer = handler(|m, _| {
                (m == "extension/getHover")
                    .then(|| Reply::Ok(json!({"contents": ["fn main()"], "range": null})))
            });
            let _editor = EditorSim::connect_with_token(port, &token, answer)
                .await
                .unwrap();
            ready_tx.send(()).unwrap();
            let _ = stop_rx.await;
        });
    });
    ready_rx.recv().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut agent = bridge.ready_agent().await;
        let mut echo = Agent::connect_raw(echo_port, &[])
            .await
            .expect("echo server");
        let local = json!({"tab_name": "bench"});
        let hover = json!({"file": "src/main.rs", "line": 1, "column": 4});
        for i in 0..300 {
            echo_round_trip(&mut echo, i).await;
            call(&mut agent, i, "close_tab", &local).await;
            call(&mut agent, i, "getHover", &hover).await;
        }
        let (mut l, mut f, mut e) = (Vec::new(), Vec::new(), Vec::new());
        let (mut cpu_l, mut cpu_f) = (Duration::ZERO, Duration::ZERO);
        for _ in 0..ROUNDS {
            for i in 0..PER_ROUND {
                let t = Instant::now();
                echo_round_trip(&mut echo, i).await;
                e.push(t.elapsed());
            }
            let before = cpu_time(bridge.pid());
            for i in 0..PER_ROUND {
                let t = Instant::now();
                call(&mut agent, i, "close_tab", &local).await;
                l.push(t.elapsed());
            }
            cpu_l += cpu_time(bridge.pid()).saturating_sub(before);
            let before = cpu_time(bridge.pid());
            for i in 0..PER_ROUND {
                let t = Instant::now();
                call(&mut agent, i, "getHover", &hover).await;
                f.push(t.elapsed());
            }
            cpu_f += cpu_time(bridge.pid()).saturating_sub(before);
        }
        let per = |d: Duration| d.as_secs_f64() * 1e6 / (ROUNDS * PER_ROUND) as f64;
        l.sort();
        f.sort();
        e.sort();
        let pct =
            |v: &[Duration], p: usize| v[(v.len() * p / 100).min(v.len() - 1)].as_secs_f64() * 1e6;
        println!("| 1 agent | p50 µs | p99 µs | bridge CPU µs/call |");
        println!("|---|---:|---:|---:|");
        println!(
            "| bridge-local tool (close_tab) | {:.0} | {:.0} | {:.1} |",
            pct(&l, 50),
            pct(&l, 99),
            per(cpu_l)
        );
        println!(
            "| forwarded to the editor (getHover) | {:.0} | {:.0} | {:.1} |",
            pct(&f, 50),
            pct(&f, 99),
            per(cpu_f)
        );
        println!(
            "| extra for forwarding | {:.0} | {:.0} | {:.1} |",
            pct(&f, 50) - pct(&l, 50),
            pct(&f, 99) - pct(&l, 99),
            per(cpu_f) - per(cpu_l)
        );
        println!(
            "| raw WebSocket echo round trip (floor of any second exchange) | {:.0} | {:.0} | |",
            pct(&e, 50),
            pct(&e, 99)
        );
        println!(
            "| extra beyond one echo round trip (the bridge's own forwarding work) | {:.0} | | |",
            pct(&f, 50) - pct(&l, 50) - pct(&e, 50)
        );

        let mut agents = vec![agent];
        for _ in 0..4 {
            agents.push(bridge.ready_agent().await);
        }
        let start = Instant::now();
        let per = 2000;
        let all = futures_util::future::join_all(agents.iter_mut().map(|a| {
            let hover = hover.clone();
            async move {
                let mut s = Vec::with_capacity(per);
                for i in 0..per {
                    let t = Instant::now();
                    call(a, i, "getHover", &hover).await;
                    s.push(t.elapsed());
                }
                s
            }
        }))
        .await;
        let wall = start.elapsed();
        let mut s: Vec<Duration> = all.into_iter().flatten().collect();
        s.sort();
        println!("\n| 5 agents hammering the editor | value |");
        println!("|---|---:|");
        println!("| forwarded calls | {} |", s.len());
        println!(
            "| throughput | {:.0} calls/s |",
            s.len() as f64 / wall.as_secs_f64()
        );
        println!("| p50 / p99 | {:.0} / {:.0} µs |", pct(&s, 50), pct(&s, 99));
    });
    let _ = stop_tx.send(());
    let _ = editor_thread.join();
}

async fn call(agent: &mut Agent, id: usize, tool: &str, args: &Value) {
    agent
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}}))
        .await;
    let reply = agent.response_to(&json!(id)).await;
    assert!(reply["result"]["isError"].is_null(), "{reply}");
}

/// The same getHover request text through the raw echo server.
async fn echo_round_trip(echo: &mut Agent, id: usize) {
    let hover = json!({"file": "src/main.rs", "line": 1, "column": 4});
    echo.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "getHover", "arguments": hover}}))
        .await;
    let reply = echo.recv().await;
    assert_eq!(reply["id"], json!(id));
}
