//! Limits at and just past their edges: rate limit, max sessions, message size,
//! notification flood, concurrency cap, timeout, cancellation and progress.

use std::io::{Read, Write};
use std::net::TcpStream as StdTcpStream;
#[cfg(feature = "fault-injection")]
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

#[tokio::test]
async fn rate_limit_admits_200_requests_and_refuses_the_201st() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.agent().await;
    for id in 0..201 {
        agent
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await;
    }
    for id in 0..200 {
        let resp = agent.response_to(&json!(id)).await;
        assert_eq!(resp["result"], json!({}), "request {id}: {resp}");
    }
    let resp = agent.response_to(&json!(200)).await;
    assert_eq!(error_code(&resp), -32004);
    assert!(resp["error"]["message"]
        .as_str()
        .unwrap()
        .contains("200 requests per 60 s"));
    // It says when there is room again: when the first ping leaves the window.
    let retry = resp["error"]["data"]["retryAfterMs"].as_u64().unwrap();
    assert!((50_000..=60_000).contains(&retry), "{resp}");
    assert!(
        resp["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with(&format!("retry in {retry} ms")),
        "{resp}"
    );
    // The limit is per connection: a second connection is unaffected.
    let mut other = bridge.agent().await;
    assert_eq!(other.request("ping", json!({})).await["result"], json!({}));
    let metrics = bridge.metrics().await;
    assert!(
        metrics.contains("ide_bridge_rate_limit_rejections_total 1"),
        "{metrics}"
    );
    // The refused request never reached a session: 200 + 1 pings are counted.
    assert!(
        metrics.contains("ide_bridge_mcp_requests_total{method=\"ping\"} 201"),
        "{metrics}"
    );
}

#[tokio::test]
async fn notification_flood_is_dropped_and_counted_not_fatal() {
    let bridge = Bridge::launch(Options::default().set("rate_limit.notifications", 5)).await;
    let mut agent = bridge.ready_agent().await; // notifications/initialized is 1 of 5
    for _ in 0..10 {
        agent
            .notify("notifications/roots/list_changed", json!({}))
            .await;
    }
    let resp = agent.request("ping", json!({})).await;
    assert_eq!(resp["result"], json!({}));
    wait_for_async("dropped notifications counted", DEADLINE, || async {
        bridge
            .metrics()
            .await
            .contains("ide_bridge_dropped_notifications_total 6")
            .then_some(())
    })
    .await;
    assert!(
        bridge.log().contains("dropped"),
        "a log line says notifications are dropped"
    );
}

#[tokio::test]
async fn max_sessions_refuses_with_a_reason_and_evicts_sessions_in_grace() {
    let bridge = Bridge::launch(Options::default().set("sessions.max_sessions", 2)).await;
    let first = bridge.ready_agent().await;
    let mut second = bridge.ready_agent().await;
    let mut third = bridge.agent().await;
    let frame = third.closed(DEADLINE).await.expect("a close frame");
    assert_eq!(u16::from(frame.code), 1008);
    assert!(
        frame.reason.contains("Too many sessions"),
        "{}",
        frame.reason
    );
    assert_eq!(
        bridge.status().await["sessions"].as_array().unwrap().len(),
        2
    );

    // A session waiting in its grace period makes room for a new agent.
    first.close().await;
    wait_for_async("first session in grace", DEADLINE, || async {
        let s = bridge.status().await;
        s["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["inGrace"] == true)
            .then_some(())
    })
    .await;
    let mut fourth = bridge.ready_agent().await;
    assert_eq!(fourth.request("ping", json!({})).await["result"], json!({}));
    assert_eq!(second.request("ping", json!({})).await["result"], json!({}));
    let status = bridge.status().await;
    let sessions = status["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2);
    assert!(sessions.iter().all(|s| s["connected"] == true), "{status}");
    assert_eq!(status["evicted"], 1);
    assert_eq!(status["refused"], 1);
}

/// Sockets that never complete a handshake cannot keep a real agent out: within the
/// grace they hold their slots, after it a new agent takes the oldest one's.
#[tokio::test]
async fn connections_without_a_handshake_give_their_slots_up_after_the_grace() {
    let bridge = Bridge::launch(Options::default().set("sessions.max_sessions", 2)).await;
    let squatters = [bridge.agent().await, bridge.agent().await];
    let mut early = bridge.agent().await;
    let frame = early.closed(DEADLINE).await.expect("a close frame");
    assert!(
        frame.reason.contains("Too many sessions"),
        "{}",
        frame.reason
    );
    let mut admitted = wait_for_async(
        "a real agent admitted after the grace",
        Duration::from_secs(25),
        || async {
            let mut agent = bridge.agent().await;
            // Refused: the bridge closes the socket at once.
            if agent
                .closed_within(Duration::from_millis(500))
                .await
                .is_some()
            {
                return None;
            }
            agent.initialize().await;
            Some(agent)
        },
    )
    .await;
    assert_eq!(
        admitted.request("ping", json!({})).await["result"],
        json!({})
    );
    let status = bridge.status().await;
    assert_eq!(status["sessions"].as_array().unwrap().len(), 2, "{status}");
    assert_eq!(status["evicted"], 1, "{status}");
    drop(squatters);
}

#[tokio::test]
async fn oversized_messages_close_the_connection_with_1008() {
    let bridge =
        Bridge::launch(Options::default().set("server.max_message_bytes", 2 * 1024 * 1024)).await;
    let mut agent = bridge.ready_agent().await;
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x".repeat(2 * 1024 * 1024)}});
    agent.send(&big).await;
    let frame = agent.closed(DEADLINE).await.expect("close frame");
    assert_eq!(u16::from(frame.code), 1008);
    assert!(
        frame.reason.contains("max_message_bytes"),
        "{}",
        frame.reason
    );
    // The bridge itself is fine.
    let mut fresh = bridge.ready_agent().await;
    assert_eq!(fresh.request("ping", json!({})).await["result"], json!({}));
}

#[cfg(feature = "fault-injection")]
#[tokio::test]
async fn the_eleventh_concurrent_call_is_refused() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    for id in 100..110 {
        agent
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                           "params": {"name": "debug_sleep", "arguments": {"ms": 1500}}}))
            .await;
    }
    let result = agent.call("getWorkspaceFolders", json!({})).await;
    assert!(is_error(&result));
    assert_eq!(text(&result), "Too many concurrent tool calls (max 10)");
    for id in 100..110 {
        let resp = agent.response_to(&json!(id)).await;
        assert_eq!(text(&resp["result"]), "slept 1500 ms");
    }
    // Slots are free again.
    let result = agent.call("getWorkspaceFolders", json!({})).await;
    assert!(!is_error(&result));
}

#[cfg(feature = "fault-injection")]
#[tokio::test]
async fn tool_timeout_answers_a_tool_error_and_logs_a_warning() {
    let bridge = Bridge::launch(Options::default().arg("--tool-timeout-ms").arg("300")).await;
    let mut agent = bridge.ready_agent().await;
    let result = agent.call("debug_sleep", json!({"ms": 5000})).await;
    assert!(is_error(&result));
    assert_eq!(text(&result), "Tool \"debug_sleep\" timed out after 300ms");
    let log = agent
        .notification("notifications/message", DEADLINE)
        .await
        .expect("warning log");
    assert_eq!(log["params"]["level"], "warning");
    let timeline = bridge.status().await["recentActivity"].clone();
    assert!(
        timeline
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["status"] == "timeout"),
        "{timeline}"
    );
}

#[cfg(feature = "fault-injection")]
#[tokio::test]
async fn cancelled_calls_stop_send_no_response_and_free_their_id() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
                       "params": {"name": "debug_sleep", "arguments": {"ms": 30000}}}))
        .await;
    // While it runs, the same id is a duplicate.
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
                       "params": {"name": "close_tab", "arguments": {"tab_name": "t"}}}))
        .await;
    let dup = agent.response_to(&json!(77)).await;
    assert_eq!(error_code(&dup), -32600);
    assert!(dup["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Duplicate"));

    agent
        .notify(
            "notifications/cancelled",
            json!({"requestId": 77, "reason": "user"}),
        )
        .await;
    let resp = agent.request("ping", json!({})).await;
    assert_eq!(resp["result"], json!({}));
    assert!(
        agent.try_recv(Duration::from_millis(300)).await.is_none(),
        "no response for a cancelled call"
    );
    let status = bridge.status().await;
    assert_eq!(status["sessions"][0]["activeToolCalls"], 0);
    let timeline = status["recentActivity"].as_array().unwrap();
    assert!(timeline
        .iter()
        .any(|e| e["tool"] == "debug_sleep" && e["status"] == "cancelled"));
    // The id can be used again.
    let again = agent
        .request(
            "tools/call",
            json!({"name": "close_tab", "arguments": {"tab_name": "t"}}),
        )
        .await;
    assert_eq!(text(&again["result"]), "TAB_CLOSED");
}

/// Over streamable HTTP a cancelled call's own POST ends at once, with no answer: an
/// SSE stream just ends; a JSON response (the client accepts no stream) is -32800.
#[cfg(feature = "fault-injection")]
#[tokio::test]
async fn a_cancelled_call_over_http_ends_its_post_at_once() {
    let bridge = Bridge::launch(Options::default()).await;
    let bearer = format!("Bearer {}", bridge.token);
    let port = bridge.port;
    let post = move |session: Option<String>, accept: &'static str, body: serde_json::Value| {
        let bearer = bearer.clone();
        off_runtime(move || {
            let mut headers = vec![
                ("Authorization", bearer.as_str()),
                ("Content-Type", "application/json"),
                ("Accept", accept),
            ];
            if let Some(id) = &session {
                headers.push(("Mcp-Session-Id", id.as_str()));
            }
            let started = std::time::Instant::now();
            let (status, head, body) =
                http_request(port, "POST", "/mcp", &headers, body.to_string().as_bytes());
            (status, head, body, started.elapsed())
        })
    };
    let (_, head, _, _) = post(
        None,
        "application/json, text/event-stream",
        json!({"jsonrpc": "2.0", "id": 1,
        "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "canceller", "version": "0"}}}),
    )
    .await;
    let session = session_id_of(&head);
    post(
        Some(session.clone()),
        "application/json, text/event-stream",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    for (id, accept) in [
        (10, "application/json, text/event-stream"),
        (11, "application/json"),
    ] {
        let call = tokio::spawn(post(
            Some(session.clone()),
            accept,
            json!({"jsonrpc": "2.0", "id": id,
            "method": "tools/call", "params": {"name": "debug_sleep", "arguments": {"ms": 30000}}}),
        ));
        bridge.wait_active_calls(1).await;
        post(
            Some(session.clone()),
            accept,
            json!({"jsonrpc": "2.0",
            "method": "notifications/cancelled", "params": {"requestId": id}}),
        )
        .await;
        let (status, _, body, took) = call.await.unwrap();
        assert_eq!(status, 200);
        assert!(
            took < Duration::from_secs(10),
            "the POST ended with the cancellation: {took:?}"
        );
        if accept.contains("event-stream") {
            assert!(
                !body.contains("\"result\"") && !body.contains("\"error\""),
                "no answer: {body}"
            );
        } else {
            let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert_eq!(
                (answer["id"].as_i64(), error_code(&answer)),
                (Some(id), -32800),
                "{body}"
            );
        }
    }
}

#[cfg(feature = "fault-injection")]
#[tokio::test]
async fn progress_notifications_carry_the_token() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    let id = agent.id();
    agent
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": "debug_sleep", "arguments": {"ms": 60, "steps": 3},
                                  "_meta": {"progressToken": "tok-1"}}}))
        .await;
    let resp = agent.response_to(&json!(id)).await;
    assert_eq!(text(&resp["result"]), "slept 60 ms");
    let progress: Vec<_> = agent
        .inbox
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .cloned()
        .collect();
    assert_eq!(progress.len(), 3, "{progress:?}");
    for (i, p) in progress.iter().enumerate() {
        assert_eq!(p["params"]["progressToken"], "tok-1");
        assert_eq!(p["params"]["progress"], json!((i + 1) as f64));
        assert_eq!(p["params"]["total"], json!(3.0));
    }
}

#[tokio::test]
async fn a_silent_peer_is_dropped_and_a_listening_one_is_kept() {
    let bridge = Bridge::launch(
        Options::default()
            .set("server.ping_interval_ms", 1000)
            .set("server.pong_timeout_ms", 1500),
    )
    .await;
    let mut listening = bridge.ready_agent().await;
    let mut silent = bridge.ready_agent().await;
    // `listening` keeps reading (its client answers the server's pings); `silent` reads
    // nothing, so it never answers.
    assert!(listening
        .try_recv(std::time::Duration::from_millis(3500))
        .await
        .is_none());
    let frame = silent.closed(DEADLINE).await.expect("close frame");
    assert_eq!(u16::from(frame.code), 1001);
    assert_eq!(frame.reason.as_str(), "pong timeout");
    assert_eq!(
        listening.request("ping", json!({})).await["result"],
        json!({})
    );
}

#[test]
fn a_frame_header_announcing_2_pow_62_bytes_closes_before_the_body_is_buffered() {
    let bridge = Bridge::start();
    let mut ws = RawWs::connect(&bridge);
    // Let start-up allocations settle, then measure.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let before = rss_kib(bridge.pid());
    let mut writer = ws.stream.try_clone().unwrap();
    writer
        .set_write_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let sent = std::thread::spawn(move || {
        use std::io::Write;
        let mut sent = 0usize;
        if writer.write_all(&RawWs::header(true, 1, 1 << 62)).is_err() {
            return sent;
        }
        let chunk = vec![b'x'; 64 * 1024];
        // 16 MiB after the header: the bridge must not keep it.
        for _ in 0..256 {
            if writer.write_all(&chunk).is_err() {
                break;
            }
            sent += chunk.len();
        }
        sent
    });
    let (code, reason) = ws.read_close().expect("a close frame");
    assert_eq!(code, 1008, "{reason}");
    assert!(reason.contains("max_message_bytes"), "{reason}");
    let sent = sent.join().unwrap();
    let after = rss_kib(bridge.pid());
    assert!(
        after < before + 4 * 1024,
        "RSS grew from {before} KiB to {after} KiB with {sent} bytes sent after the header"
    );
    assert!(bridge.log().contains("announces 4611686018427387904 bytes"));
    // The bridge serves others as before.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut fresh = bridge.ready_agent().await;
        assert_eq!(fresh.request("ping", json!({})).await["result"], json!({}));
    });
}

#[test]
fn a_fragmented_message_over_the_limit_closes_with_1008() {
    let limit = 2 * 1024 * 1024;
    let bridge = Bridge::start_with(Options::default().set("server.max_message_bytes", limit));
    let mut ws = RawWs::connect(&bridge);
    let part = vec![b' '; 1024 * 1024];
    assert!(ws.frame(
        false,
        1,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"
    ));
    assert!(ws.frame(false, 0, &part));
    // Two fragments of 1 MiB (plus the first) cross 2 MiB at the third header.
    ws.frame(false, 0, &part);
    ws.frame(true, 0, &part);
    let (code, reason) = ws.read_close().expect("a close frame");
    assert_eq!(code, 1008, "{reason}");
    assert!(reason.contains("max_message_bytes"), "{reason}");
    assert!(bridge.log().contains("fragmented message reaches"));
}

#[test]
fn a_fragmented_message_within_the_limit_is_served() {
    let bridge = Bridge::start();
    let mut ws = RawWs::connect(&bridge);
    assert!(ws.frame(false, 1, b"{\"jsonrpc\":\"2.0\","));
    assert!(ws.frame(false, 0, b"\"id\":7,"));
    assert!(ws.frame(true, 0, b"\"method\":\"ping\"}"));
    // The answer comes back as one text frame.
    let mut h = [0u8; 2];
    std::io::Read::read_exact(&mut ws.stream, &mut h).unwrap();
    assert_eq!(h[0], 0x81);
    let mut body = vec![0u8; usize::from(h[1] & 0x7f)];
    std::io::Read::read_exact(&mut ws.stream, &mut body).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["id"], 7);
    assert_eq!(v["result"], json!({}));
}

#[test]
fn a_client_that_never_reads_is_dropped_and_rss_stays_bounded() {
    // 400 reads of a 256 KiB file: about 105 MB of replies for a peer that reads none.
    let bridge = Bridge::start_with(
        Options::default()
            .set("rate_limit.requests", 1000)
            .file("big.txt", &"x".repeat(256 * 1024)),
    );
    let mut ws = RawWs::connect(&bridge);
    ws.initialize();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let before = rss_kib(bridge.pid());
    let mut peak = before;
    for id in 0..400 {
        let sent = ws.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "readFile", "arguments": {"filePath": "big.txt"}}}));
        if !sent {
            break;
        }
        // At most 10 calls run at once per session (more are refused with a short
        // error): let each batch be served before the next, however slow the machine.
        if id % 10 == 9 {
            let dropped = wait_for("a batch of reads served", DEADLINE, || {
                peak = peak.max(rss_kib(bridge.pid()));
                let status = bridge.get_json("/status");
                if status["outboundOverflowDrops"] == 1 {
                    return Some(true);
                }
                let busy: u64 = status["sessions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s["activeToolCalls"].as_u64())
                    .sum();
                (busy == 0).then_some(false)
            });
            if dropped {
                break;
            }
        }
    }
    let status = wait_for("the never-reading client dropped", DEADLINE, || {
        peak = peak.max(rss_kib(bridge.pid()));
        let status = bridge.get_json("/status");
        (status["outboundOverflowDrops"] == 1).then_some(status)
    });
    assert_eq!(status["outboundOverflowDrops"], 1, "{status}");
    // The dropped connection ends: what is left in the socket is read, then EOF.
    ws.stream
        .set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let mut sink = Vec::new();
    let end = std::io::Read::read_to_end(&mut ws.stream, &mut sink);
    assert!(
        end.is_ok()
            || end
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
        "the bridge ended the connection: {end:?}"
    );
    assert!(
        sink.len() < 100 * 1024 * 1024,
        "only part of the replies was ever sent ({} bytes)",
        sink.len()
    );
    peak = peak.max(rss_kib(bridge.pid()));
    // 8 MiB queue + the HTTP layer's write buffer (32 KiB and one reply) + the 10 calls
    // in flight (file, escaped result, frame: ~3 × 256 KiB each) + allocator slack; all
    // 400 replies would be ~105 MB.
    eprintln!("RSS {before} KiB -> peak {peak} KiB");
    assert!(
        peak < before + 32 * 1024,
        "RSS grew from {before} KiB to {peak} KiB"
    );
    let log = bridge.log();
    assert!(log.contains("server.max_outbound_bytes"), "{log}");
    assert!(bridge
        .get("/metrics")
        .1
        .contains("ide_bridge_outbound_overflow_drops_total 1"));
    // Others are served as before.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut fresh = bridge.ready_agent().await;
        let text = text(&fresh.call("readFile", json!({"filePath": "big.txt"})).await).len();
        assert!(text >= 256 * 1024);
    });
}

/// CPU time the bridge uses during `window`.
fn cpu_used_during(pid: u32, window: std::time::Duration) -> std::time::Duration {
    let start = cpu_time(pid);
    std::thread::sleep(window);
    cpu_time(pid).saturating_sub(start)
}

#[tokio::test]
async fn regex_bombs_are_refused_and_a_timed_out_search_stops_using_cpu() {
    let line = "a".repeat(1_000_000) + "\n";
    let mut opts = Options::default().set("tools.timeout_ms", 500);
    for i in 0..40 {
        opts = opts.file(&format!("big/{i:02}.txt"), &line);
    }
    let bridge = Bridge::launch(opts).await;
    let pid = bridge.pid();
    let mut agent = bridge.ready_agent().await;
    for bomb in ["a{100000}", "(a{1000}){1000}", "(a{100}){100}"] {
        let started = std::time::Instant::now();
        let result = agent
            .call("searchWorkspace", json!({"query": bomb, "regex": true}))
            .await;
        assert!(is_error(&result), "{bomb}: {result}");
        assert!(text(&result).contains("repeats too much"), "{result}");
        assert!(started.elapsed() < std::time::Duration::from_millis(400));
    }
    let err = agent
        .call(
            "searchWorkspace",
            json!({"query": "\\w{100}x", "regex": true}),
        )
        .await;
    assert!(text(&err).contains("too complex"), "{err}");
    // Allowed but slow over 40 MB of one-line files: the call times out, and the
    // search stops with it.
    let result = agent
        .call(
            "searchWorkspace",
            json!({"query": "a{1000}b", "regex": true, "path": "big"}),
        )
        .await;
    assert!(is_error(&result), "{result}");
    assert!(text(&result).contains("timed out"), "{result}");
    let (settle, idle) = off_runtime(move || {
        (
            cpu_used_during(pid, std::time::Duration::from_millis(1000)),
            cpu_used_during(pid, std::time::Duration::from_millis(1000)),
        )
    })
    .await;
    // Measured: 10 ms in the first second, nothing in the next.
    assert!(
        settle < std::time::Duration::from_millis(250)
            && idle < std::time::Duration::from_millis(100),
        "the bridge used {idle:?} of CPU in the second after the timeout ({settle:?} in the first)"
    );
    // Searching still works.
    let ok = agent
        .call(
            "searchWorkspace",
            json!({"query": "println", "path": "src"}),
        )
        .await;
    assert!(!is_error(&ok), "{ok}");
    assert_eq!(json_text(&ok)["matches"][0]["path"], "src/main.rs", "{ok}");
}

/// Issue 27, item 2: HTTP sessions whose clients went away without DELETE (no request
/// in flight, no open stream) do not hold their slots: twenty such clients, then a new
/// one, all get in with `max_sessions` at 5; a WebSocket agent that is connected keeps
/// its slot throughout.
#[tokio::test]
async fn abandoned_http_sessions_never_lock_out_a_new_client() {
    let bridge = Bridge::launch(Options::default().set("sessions.max_sessions", 5)).await;
    let mut ws_agent = bridge.ready_agent().await;
    let (port, token) = (bridge.port, bridge.token.clone());
    // Each client initializes and leaves without DELETE; every other one keeps its GET
    // stream open (it only listens). Each is admitted at its first try.
    let client = move |listen: bool| {
        let token = token.clone();
        off_runtime(move || {
            let bearer = format!("Bearer {token}");
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "vanishing", "version": "0"}}})
            .to_string();
            let (status, head, _) = http_request(
                port,
                "POST",
                "/mcp",
                &[
                    ("Authorization", &bearer),
                    ("Content-Type", "application/json"),
                    ("Accept", "application/json, text/event-stream"),
                ],
                body.as_bytes(),
            );
            let stream = (status == 200 && listen).then(|| {
                let id = session_id_of(&head);
                let mut s = StdTcpStream::connect(("127.0.0.1", port)).unwrap();
                write!(
                    s,
                    "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: {bearer}\r\n\
                     Accept: text/event-stream\r\nMcp-Session-Id: {id}\r\n\r\n"
                )
                .unwrap();
                let mut first = [0u8; 12];
                s.read_exact(&mut first).unwrap();
                assert_eq!(&first, b"HTTP/1.1 200", "the GET stream opens");
                s
            });
            (status, stream)
        })
    };
    let mut listening = Vec::new();
    for i in 0..21 {
        let (status, stream) = client(i % 2 == 0).await;
        assert_eq!(status, 200, "client {i} admitted at its first try");
        listening.extend(stream);
    }
    let status = bridge.status().await;
    assert!(
        status["sessions"].as_array().unwrap().len() <= 5,
        "{status}"
    );
    assert!(status["evicted"].as_u64().unwrap() >= 16, "{status}");
    assert_eq!(
        ws_agent.request("ping", json!({})).await["result"],
        json!({}),
        "a WebSocket agent keeps its slot"
    );
    drop(listening);
}

/// An HTTP client that drops the response of its tool call gives the call up, in
/// either revision (JSON answer or SSE stream): the call stops and is recorded
/// cancelled, and the session's slot is not held by it.
#[cfg(feature = "fault-injection")]
#[tokio::test]
async fn a_dropped_http_response_cancels_its_tool_call() {
    let bridge = Bridge::launch(Options::default()).await;
    let (port, token) = (bridge.port, bridge.token.clone());
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "dropper", "version": "1"},
    });
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "debug_sleep", "arguments": {"ms": 30000}, "_meta": meta}})
    .to_string();
    for accept in ["application/json", "application/json, text/event-stream"] {
        let (body, token) = (body.clone(), token.clone());
        let client = off_runtime(move || {
            let mut s = StdTcpStream::connect(("127.0.0.1", port)).unwrap();
            write!(
                s,
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\
                 Content-Type: application/json\r\nAccept: {accept}\r\n\
                 MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: debug_sleep\r\n\
                 Content-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            s
        })
        .await;
        bridge.wait_active_calls(1).await;
        drop(client); // gone before the answer
        bridge.wait_active_calls(0).await;
    }
    let status = bridge.status().await;
    let cancelled = status["recentActivity"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["tool"] == "debug_sleep" && e["status"] == "cancelled")
        .count();
    assert_eq!(cancelled, 2, "{status}");
    bridge.stop_async().await;
}

/// A body trickled a byte every second is refused (408) once the body deadline (30 s)
/// is past, and its connection let go — on `/mcp` and on the page's sign-in, which needs
/// no cookie; the bridge answers others meanwhile.
#[test]
fn a_body_trickled_past_the_deadline_is_refused_with_408() {
    let bridge = Bridge::start();
    let (port, token) = (bridge.port, bridge.token.clone());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "slow", "version": "1"}}})
    .to_string();
    let trickle = move |head: String, body: String| {
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let mut s = StdTcpStream::connect(("127.0.0.1", port)).unwrap();
            write!(s, "{head}Content-Length: {}\r\n\r\n", body.len()).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
            let mut answer = Vec::new();
            for byte in body.bytes() {
                if s.write_all(&[byte]).is_err() {
                    break;
                }
                let mut buf = [0u8; 4096];
                match s.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        answer.extend_from_slice(&buf[..n]);
                        break;
                    }
                    Err(_) => {}
                }
                assert!(started.elapsed() < Duration::from_secs(45), "never refused");
            }
            (
                String::from_utf8_lossy(&answer).into_owned(),
                started.elapsed(),
            )
        })
    };
    let mcp = trickle(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        ),
        body,
    );
    let login = trickle(
        format!(
            "POST /ui/login HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n\
             Content-Type: application/json\r\n"
        ),
        json!({"code": "x".repeat(100)}).to_string(),
    );
    // Meanwhile the bridge answers.
    let (status, _) = bridge.get("/health");
    assert_eq!(status, 200);
    for (what, handle, says) in [
        ("/mcp", mcp, "not received within 30 s"),
        ("/ui/login", login, "was not received within 30 s"),
    ] {
        let (answer, took) = handle.join().unwrap();
        assert!(answer.starts_with("HTTP/1.1 408"), "{what}: {answer}");
        assert!(answer.contains(says), "{what}: {answer}");
        assert!(took >= Duration::from_secs(30), "{what}: {took:?}");
    }
}

/// An `/activity/stream` client that reads nothing is dropped once its queue is full,
/// and its connection ends: before, the bridge stopped feeding it but kept the
/// connection (and megabytes of kernel buffer) for as long as the client kept it open.
#[tokio::test]
async fn an_event_stream_client_that_reads_nothing_is_disconnected_when_dropped() {
    let bridge = Bridge::launch(Options::default().set("rate_limit.requests", 100_000)).await;
    let client = off_runtime({
        let port = bridge.port;
        let token = bridge.token.clone();
        move || never_reading_stream(port, &token)
    })
    .await;
    let mut agent = bridge.ready_agent().await;
    // Long summaries (4-byte characters) make each timeline line about a kilobyte.
    let wide = "\u{1F600}".repeat(60);
    let args = json!({"tab_name": wide, "a": wide, "b": wide, "c": wide});
    let mut calls = 0;
    while !bridge
        .log()
        .contains("dropping an activity stream subscriber")
    {
        assert!(calls < 40_000, "the stream was never dropped");
        for _ in 0..200 {
            agent.call("close_tab", args.clone()).await;
        }
        calls += 200;
    }
    // The connection ends while the client still reads nothing (reading would let the
    // bridge write again and see the stream's end by itself).
    let ended = off_runtime(move || {
        wait_for("the connection to end", DEADLINE, || {
            (tcp_state(&client) != TCP_ESTABLISHED).then_some(())
        });
        tcp_state(&client)
    })
    .await;
    assert_ne!(ended, TCP_ESTABLISHED, "after {calls} calls");
}

/// `TCP_ESTABLISHED` in the kernel's `tcp_info.tcpi_state`.
const TCP_ESTABLISHED: u8 = 1;

/// The kernel's state of a TCP socket (`tcp_info.tcpi_state`), read without reading
/// the socket.
fn tcp_state(stream: &StdTcpStream) -> u8 {
    use std::os::fd::AsRawFd;
    let mut info = [0u8; 256];
    let mut len = info.len() as libc::socklen_t;
    // SAFETY: a valid socket and a buffer of `len` bytes; the state is its first byte.
    let r = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
    info[0]
}

/// A `GET /activity/stream` on a socket whose receive buffer is 4 KiB, read no further.
fn never_reading_stream(port: u16, token: &str) -> StdTcpStream {
    use std::os::fd::FromRawFd;
    // SAFETY: a fresh socket, options of the sizes given, an address of its family.
    let stream = unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0);
        let size: libc::c_int = 4096;
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
        let address = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
            },
            sin_zero: [0; 8],
        };
        let connected = libc::connect(
            fd,
            (&address as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        assert_eq!(connected, 0, "{}", std::io::Error::last_os_error());
        StdTcpStream::from_raw_fd(fd)
    };
    let mut stream = stream;
    write!(
        stream,
        "GET /activity/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\r\n"
    )
    .unwrap();
    stream
}

/// An HTTP agent without a GET stream (idle between its requests) that ends its
/// session with DELETE has disconnected: `/status` says when.
#[tokio::test]
async fn an_idle_http_agents_delete_is_its_disconnection() {
    let bridge = Bridge::launch(Options::default()).await;
    let (_, head, _) = mcp_post(
        &bridge,
        None,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "no-stream", "version": "0"}}}),
    )
    .await;
    let session = session_id_of(&head);
    let version = Some("2025-06-18");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    mcp_post(&bridge, Some(&session), version, initialized).await;
    assert_eq!(bridge.status().await["lastDisconnectAt"], Value::Null);
    let (status, _, _) = mcp_request(&bridge, "DELETE", Some(&session), version, None).await;
    assert!(status < 300, "{status}");
    bridge
        .wait_status("the DELETE counted as a disconnection", |s| {
            s["lastDisconnectAt"].as_str().map(str::to_string)
        })
        .await;
}
