//! Cost of forwarding to the editor: `getHover` (forwarded to the extension simulator,
//! which answers at once) against `close_tab` (answered by the bridge), interleaved in
//! the same run with two floors on the same stack, each in its own process: a raw
//! WebSocket echo (one exchange) and a raw relay that passes the same request to a
//! second simulator and its answer back (two exchanges, no logic). The relay's extra
//! over the echo is what forwarding costs on this machine before the bridge does
//! anything; the bridge's extra over that is its own work. Then 5 agents hammer the
//! editor simulator at once.
//!
//! Run: `cargo bench --bench editor`.

#[path = "common/baseline.rs"]
mod baseline;
#[path = "../tests/bridge/editor_sim.rs"]
mod editor_sim;
#[path = "../tests/bridge/harness.rs"]
mod harness;

use std::time::{Duration, Instant};

use baseline::{spawn, Baseline};
use editor_sim::{handler, EditorSim, Reply};
use harness::{cpu_time, Agent, Bridge, Options};
use serde_json::{json, Value};

const ROUNDS: usize = 20;
const PER_ROUND: usize = 500;

/// Latencies and the server's CPU time of one kind of round trip.
#[derive(Default)]
struct Series {
    times: Vec<Duration>,
    cpu: Duration,
}

impl Series {
    fn pct(&mut self, p: usize) -> f64 {
        self.times.sort();
        let v = &self.times;
        v[(v.len() * p / 100).min(v.len() - 1)].as_secs_f64() * 1e6
    }

    fn cpu_per_call(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.times.len().max(1) as f64
    }

    fn row(&mut self, label: &str) {
        println!(
            "| {label} | {:.0} | {:.0} | {:.1} |",
            self.pct(50),
            self.pct(99),
            self.cpu_per_call()
        );
    }
}

/// Runs `PER_ROUND` round trips, timing each and charging `pid`'s CPU to `series`.
async fn batch(series: &mut Series, pid: u32, mut one: impl AsyncFnMut(usize)) {
    let before = cpu_time(pid);
    for i in 0..PER_ROUND {
        let t = Instant::now();
        one(i).await;
        series.times.push(t.elapsed());
    }
    series.cpu += cpu_time(pid).saturating_sub(before);
}

fn main() {
    if baseline::serve_if_asked() {
        return;
    }
    let (echo_proc, echo_port) = spawn(Baseline::Echo);
    let (relay_proc, relay_port) = spawn(Baseline::Relay);
    let (echo_pid, relay_pid) = (echo_proc.0.id(), relay_proc.0.id());
    let bridge = Bridge::start_with(
        Options {
            log_level: Some("warn"),
            ..Options::default()
        }
        .set("rate_limit.requests", 100_000),
    );
    // The simulated editors run on a thread of their own, like a real editor process:
    // one connected to the bridge, one to the relay, both answering every request with
    // the same hover result.
    let (port, token) = (bridge.port, bridge.token.clone());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let editor_thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let answer =
                handler(|_, _| Some(Reply::Ok(json!({"contents": ["fn main()"], "range": null}))));
            let _editor = EditorSim::connect_with_token(port, &token, answer.clone())
                .await
                .unwrap();
            let _relayed = EditorSim::connect_with_token(relay_port, "relay", answer)
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
        let mut relay = Agent::connect_raw(relay_port, &[])
            .await
            .expect("relay server");
        let local = json!({"tab_name": "bench"});
        let hover = json!({"file": "src/main.rs", "line": 1, "column": 4});
        for i in 0..300 {
            raw_round_trip(&mut echo, i).await;
            raw_round_trip(&mut relay, i).await;
            call(&mut agent, i, "close_tab", &local).await;
            call(&mut agent, i, "getHover", &hover).await;
        }
        let (mut l, mut f, mut e, mut r) = (
            Series::default(),
            Series::default(),
            Series::default(),
            Series::default(),
        );
        let pid = bridge.pid();
        for _ in 0..ROUNDS {
            batch(&mut e, echo_pid, async |i| raw_round_trip(&mut echo, i).await).await;
            batch(&mut r, relay_pid, async |i| raw_round_trip(&mut relay, i).await).await;
            batch(&mut l, pid, async |i| call(&mut agent, i, "close_tab", &local).await).await;
            batch(&mut f, pid, async |i| call(&mut agent, i, "getHover", &hover).await).await;
        }
        println!("| 1 agent, {} calls each | p50 µs | p99 µs | server CPU µs/call |", ROUNDS * PER_ROUND);
        println!("|---|---:|---:|---:|");
        let (l, f, e, r) = (&mut l, &mut f, &mut e, &mut r);
        l.row("bridge-local tool (close_tab)");
        f.row("forwarded to the editor (getHover)");
        let bridge_extra = (f.pct(50) - l.pct(50), f.pct(99) - l.pct(99));
        println!(
            "| **extra for forwarding** | **{:.0}** | {:.0} | {:.1} |",
            bridge_extra.0,
            bridge_extra.1,
            f.cpu_per_call() - l.cpu_per_call()
        );
        e.row("raw echo (one exchange)");
        r.row("raw relay through a second simulator (two exchanges)");
        let floor = (r.pct(50) - e.pct(50), r.pct(99) - e.pct(99));
        println!(
            "| floor: what the second exchange costs with no logic (relay − echo) | {:.0} | {:.0} | {:.1} |",
            floor.0,
            floor.1,
            r.cpu_per_call() - e.cpu_per_call()
        );
        println!(
            "| the bridge's own forwarding work (extra − floor) | {:.0} | {:.0} | |",
            bridge_extra.0 - floor.0,
            bridge_extra.1 - floor.1
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
        let mut s = Series {
            times: all.into_iter().flatten().collect(),
            cpu: Duration::ZERO,
        };
        println!("\n| 5 agents hammering the editor | value |");
        println!("|---|---:|");
        println!("| forwarded calls | {} |", s.times.len());
        println!(
            "| throughput | {:.0} calls/s |",
            s.times.len() as f64 / wall.as_secs_f64()
        );
        println!("| p50 / p99 | {:.0} / {:.0} µs |", s.pct(50), s.pct(99));
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

/// The same getHover request text through a raw baseline server (echo or relay).
async fn raw_round_trip(server: &mut Agent, id: usize) {
    let hover = json!({"file": "src/main.rs", "line": 1, "column": 4});
    server
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "getHover", "arguments": hover}}))
        .await;
    let reply = server.recv().await;
    assert_eq!(reply["id"], json!(id));
}
