//! Activity persistence cost: tool-call round trips against two bridges, one with the
//! JSONL activity log on and one with it off, interleaved in the same run; and the
//! sustained rate at which the ActivityLog actor absorbs entries and gets them to disk.
//!
//! Run: `cargo bench --bench persistence`.

#[path = "../tests/bridge/harness.rs"]
mod harness;

use std::time::{Duration, Instant};

use actix::prelude::*;
use harness::{cpu_time, Agent, Bridge, Options};
use ide_bridge::actors::activity_log::{
    ActivityLog, CallStatus, FlushNow, PersistConfig, RecordToolCall,
};
use ide_bridge::metrics::Metrics;
use serde_json::json;

const ROUNDS: usize = 20;
const PER_ROUND: usize = 1000;
const ENTRIES: usize = 200_000;

fn main() {
    let bridge = |persist: bool| {
        Bridge::start_with(
            Options {
                log_level: Some("warn"),
                ..Options::default()
            }
            .set("rate_limit.requests", 100_000)
            .set("activity.persist", persist),
        )
    };
    let (on, off) = (bridge(true), bridge(false));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mut with, mut without, cpu_on, cpu_off) = rt.block_on(async {
        let mut a = on.ready_agent().await;
        let mut b = off.ready_agent().await;
        let (mut sa, mut sb) = (Vec::new(), Vec::new());
        let (mut ca, mut cb) = (Duration::ZERO, Duration::ZERO);
        warm(&mut a).await;
        warm(&mut b).await;
        for _ in 0..ROUNDS {
            let before = cpu_time(on.pid());
            sa.extend(batch(&mut a).await);
            ca += cpu_time(on.pid()).saturating_sub(before);
            let before = cpu_time(off.pid());
            sb.extend(batch(&mut b).await);
            cb += cpu_time(off.pid()).saturating_sub(before);
        }
        (sa, sb, ca, cb)
    });
    let per_call = |cpu: Duration| cpu.as_secs_f64() * 1e6 / (ROUNDS * PER_ROUND) as f64;
    with.sort();
    without.sort();
    let pct =
        |v: &[Duration], p: usize| v[(v.len() * p / 100).min(v.len() - 1)].as_secs_f64() * 1e6;
    println!("| activity persistence | p50 µs | p99 µs | server CPU µs/call |");
    println!("|---|---:|---:|---:|");
    println!(
        "| off | {:.0} | {:.0} | {:.1} |",
        pct(&without, 50),
        pct(&without, 99),
        per_call(cpu_off)
    );
    println!(
        "| on (JSONL, flush every 200 ms) | {:.0} | {:.0} | {:.1} |",
        pct(&with, 50),
        pct(&with, 99),
        per_call(cpu_on)
    );
    println!(
        "| on ÷ off | {:.2}× | {:.2}× | {:.2}× |",
        pct(&with, 50) / pct(&without, 50),
        pct(&with, 99) / pct(&without, 99),
        per_call(cpu_on) / per_call(cpu_off)
    );
    let lines = std::fs::read_to_string(
        on.config_dir
            .join(format!("ide/activity-{}.jsonl", on.port)),
    )
    .map(|t| t.lines().count())
    .unwrap_or(0);
    println!("\n(entries on disk after the run: {lines})\n");
    absorb_rate();
}

async fn warm(agent: &mut Agent) {
    for i in 0..200 {
        call(agent, i).await;
    }
}

async fn call(agent: &mut Agent, id: usize) {
    agent
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": "close_tab", "arguments": {"tab_name": "bench"}}}))
        .await;
    let reply = agent.recv().await;
    assert_eq!(reply["id"], json!(id));
}

async fn batch(agent: &mut Agent) -> Vec<Duration> {
    let mut out = Vec::with_capacity(PER_ROUND);
    for i in 0..PER_ROUND {
        let t = Instant::now();
        call(agent, i).await;
        out.push(t.elapsed());
    }
    out
}

/// Pushes entries into a persistent ActivityLog as fast as a sender can, then waits until
/// they are all on disk.
fn absorb_rate() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("activity.jsonl");
    let p2 = path.clone();
    let elapsed = actix_rt::System::new().block_on(async move {
        let log = ActivityLog::new(500, std::sync::Arc::new(Metrics::new())).persistent(
            PersistConfig {
                path: p2,
                max_file_bytes: 1 << 30,
                flush_every: Duration::from_millis(200),
            },
            8,
        );
        let addr = log.start();
        let start = Instant::now();
        for i in 0..ENTRIES {
            addr.do_send(RecordToolCall {
                tool: "openFile".into(),
                session_id: "abcd0123".into(),
                status: CallStatus::Success,
                duration_ms: 1,
                summary: format!("filePath=src/file{i}.rs"),
                native: false,
                call_id: None,
            });
        }
        addr.send(FlushNow).await.unwrap();
        start.elapsed()
    });
    let lines = std::fs::read_to_string(&path).unwrap().lines().count();
    assert_eq!(lines, ENTRIES, "every entry reached the disk");
    println!("| activity log absorption | value |");
    println!("|---|---:|");
    println!("| entries recorded and fsynced | {ENTRIES} |");
    println!("| wall time | {:.0} ms |", elapsed.as_secs_f64() * 1e3);
    println!(
        "| sustained rate | {:.0} entries/s |",
        ENTRIES as f64 / elapsed.as_secs_f64()
    );
}
