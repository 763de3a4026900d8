//! Tool-call round trip through the real bridge binary versus a raw WebSocket echo
//! (actix-ws, the same stack) measured in the same run, at 1 and 5 concurrent agents,
//! plus the bridge's resident memory idle and with 5 sessions.
//!
//! Run: `cargo bench --bench roundtrip` (optionally `-- --requests 20000`, and
//! `--agents 5` for one scenario only: what a profiler attached to the bridge sees).

#[path = "common/baseline.rs"]
mod baseline;
#[path = "../tests/bridge/harness.rs"]
mod harness;

use std::time::{Duration, Instant};

use baseline::{spawn, Baseline};
use harness::{run_time, Agent, Bridge, Options};
use serde_json::json;

const TOOL: &str = "getWorkspaceFolders";
/// Alternating echo / tool-call batches per scenario.
const ROUNDS: usize = 10;
/// Default round trips per scenario (all agents together).
const DEFAULT_REQUESTS: usize = 20_000;

fn main() {
    if baseline::serve_if_asked() {
        return;
    }
    let requests: usize = std::env::args()
        .skip_while(|a| a != "--requests")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_REQUESTS);
    let scenarios: Vec<usize> = match std::env::args()
        .skip_while(|a| a != "--agents")
        .nth(1)
        .and_then(|n| n.parse().ok())
    {
        Some(agents) => vec![agents],
        None => vec![1, 5],
    };
    let (echo_proc, echo_port) = spawn(Baseline::Echo);
    let echo_pid = echo_proc.0.id();
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
    // Memory is measured on a bridge with the default configuration (the raised rate
    // limit above costs a 100 000-slot ring buffer per connection).
    let defaults = Bridge::start_with(Options {
        log_level: Some("warn"),
        ..Options::default()
    });
    let idle_rss = wait_idle_rss(defaults.pid());

    let (fresh_rss, _five) = rt.block_on(async {
        let mut five = Vec::new();
        for _ in 0..5 {
            five.push(connect_bridge(&defaults).await);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        (rss_kib(defaults.pid()), five)
    });
    println!("| scenario | p50 µs | p99 µs | throughput req/s | server CPU µs/req |");
    println!("|---|---:|---:|---:|---:|");
    rt.block_on(async {
        for agents in scenarios {
            // Interleave echo and tool-call batches so that machine noise hits both alike.
            let per_batch = requests / agents / ROUNDS;
            let mut echo_clients = connect_all(agents, || connect_echo(echo_port)).await;
            let mut tool_clients = connect_all(agents, || connect_bridge(&bridge)).await;
            let (mut echo, mut tool) = (Run::default(), Run::default());
            for _ in 0..ROUNDS {
                echo.add(run_batch(&mut echo_clients, per_batch, echo_pid).await);
                tool.add(run_batch(&mut tool_clients, per_batch, bridge.pid()).await);
            }
            echo.samples.sort();
            tool.samples.sort();
            print_row(&format!("raw WebSocket echo, {agents} client(s)"), &echo);
            print_row(&format!("tools/call {TOOL}, {agents} agent(s)"), &tool);
            println!(
                "| ratio tools/call ÷ echo, {agents} | {:.2}× | {:.2}× | | {:.2}× |",
                tool.p50() / echo.p50(),
                tool.p99() / echo.p99(),
                tool.cpu_per_request() / echo.cpu_per_request()
            );
        }
        // 100 more round trips on each of the 5 sessions of the default bridge.
        let mut five = _five;
        for c in five.iter_mut() {
            for i in 0..100 {
                c.round_trip(i).await;
            }
        }
        let busy_rss = rss_kib(defaults.pid());
        println!();
        println!("| memory | RSS |");
        println!("|---|---:|");
        println!("| idle | {:.1} MiB |", idle_rss as f64 / 1024.0);
        println!(
            "| 5 fresh sessions connected and initialized | {:.1} MiB |",
            fresh_rss as f64 / 1024.0
        );
        println!(
            "| the same 5 sessions after 100 tool calls each | {:.1} MiB |",
            busy_rss as f64 / 1024.0
        );
    });
}

/// Round-trip samples of one scenario.
#[derive(Default)]
struct Run {
    samples: Vec<Duration>,
    wall: Duration,
    /// CPU time the server process spent during the batches.
    server_cpu: Duration,
}

impl Run {
    fn add(&mut self, other: Run) {
        self.samples.extend(other.samples);
        self.wall += other.wall;
        self.server_cpu += other.server_cpu;
    }
    fn cpu_per_request(&self) -> f64 {
        self.server_cpu.as_secs_f64() * 1e6 / self.samples.len() as f64
    }
    fn pct(&self, p: usize) -> f64 {
        let i = (self.samples.len() * p / 100).min(self.samples.len() - 1);
        self.samples[i].as_secs_f64() * 1e6
    }
    fn p50(&self) -> f64 {
        self.pct(50)
    }
    fn p99(&self) -> f64 {
        self.pct(99)
    }
}

fn print_row(name: &str, run: &Run) {
    println!(
        "| {name} | {:.0} | {:.0} | {:.0} | {:.1} |",
        run.p50(),
        run.p99(),
        run.samples.len() as f64 / run.wall.as_secs_f64(),
        run.cpu_per_request()
    );
}

/// A client that sends the same tools/call text and waits for one reply per request.
struct Client {
    agent: Agent,
}

impl Client {
    async fn round_trip(&mut self, id: usize) {
        self.agent
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                           "params": {"name": TOOL, "arguments": {}}}))
            .await;
        let reply = self.agent.recv().await;
        assert_eq!(reply["id"], json!(id), "{reply}");
    }
}

async fn connect_bridge(bridge: &Bridge) -> Client {
    Client {
        agent: bridge.ready_agent().await,
    }
}

async fn connect_echo(port: u16) -> Client {
    Client {
        agent: Agent::connect_raw(port, &[]).await.expect("echo server"),
    }
}

async fn connect_all<F, Fut>(n: usize, connect: F) -> Vec<Client>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Client>,
{
    let mut clients = Vec::new();
    for _ in 0..n {
        let mut c = connect().await;
        for i in 0..300 {
            c.round_trip(1_000_000 + i).await; // warm-up
        }
        clients.push(c);
    }
    clients
}

/// Every client does `per_client` sequential round trips, all clients concurrently.
async fn run_batch(clients: &mut [Client], per_client: usize, server_pid: u32) -> Run {
    let cpu_before = run_time(server_pid);
    let start = Instant::now();
    let runs = futures_util::future::join_all(clients.iter_mut().map(|c| async move {
        let mut samples = Vec::with_capacity(per_client);
        for i in 0..per_client {
            let t = Instant::now();
            c.round_trip(i).await;
            samples.push(t.elapsed());
        }
        samples
    }))
    .await;
    let wall = start.elapsed();
    Run {
        samples: runs.into_iter().flatten().collect(),
        wall,
        server_cpu: run_time(server_pid).saturating_sub(cpu_before),
    }
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn wait_idle_rss(pid: u32) -> u64 {
    std::thread::sleep(Duration::from_millis(500));
    rss_kib(pid)
}
