//! MCP 2026-07-28 (the stateless revision) beside the handshake revisions, through the
//! real binary: the per-request `_meta`, its errors, `server/discover`, results that say
//! their type, `subscriptions/listen`, and on `/mcp` the headers, statuses and one
//! session per client.

use std::io::{Read, Write};
use std::net::TcpStream as StdTcpStream;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

fn meta(client: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"},
    })
}

#[tokio::test]
async fn a_websocket_agent_speaks_either_revision_per_request() {
    let bridge = Bridge::launch(Options::default().file("a.txt", "a\n")).await;
    let mut agent = bridge.agent().await;
    // No handshake: the first request is served on its own.
    let discovered = agent
        .request("server/discover", json!({"_meta": meta("ws")}))
        .await;
    let result = &discovered["result"];
    assert_eq!(result["supportedVersions"][0], "2026-07-28", "{discovered}");
    assert!(result["supportedVersions"]
        .as_array()
        .unwrap()
        .contains(&json!("2025-11-25")));
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        (result["ttlMs"].as_u64(), result["cacheScope"].as_str()),
        (Some(0), Some("private"))
    );
    let called = agent
        .request(
            "tools/call",
            json!({"name": "readFile", "arguments": {"filePath": "a.txt"}, "_meta": meta("ws")}),
        )
        .await;
    assert_eq!(called["result"]["resultType"], "complete", "{called}");
    assert!(
        called["result"].get("ttlMs").is_none(),
        "a call is not cacheable"
    );
    assert_eq!(
        called["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "ide-bridge"
    );

    // Its errors: a version it does not speak, a missing capability object, methods
    // it dropped, and its own methods without its envelope.
    let mut old = meta("ws");
    old["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let unsupported = agent.request("tools/list", json!({"_meta": old})).await;
    assert_eq!(error_code(&unsupported), -32022, "{unsupported}");
    assert_eq!(unsupported["error"]["data"]["requested"], "1900-01-01");
    assert_eq!(unsupported["error"]["data"]["supported"][0], "2026-07-28");
    let mut bare = meta("ws");
    bare.as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let missing = agent.request("tools/list", json!({"_meta": bare})).await;
    assert_eq!(error_code(&missing), -32602, "{missing}");
    for dropped in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
    ] {
        let answer = agent.request(dropped, json!({"_meta": meta("ws")})).await;
        assert_eq!(error_code(&answer), -32601, "{dropped}: {answer}");
    }
    let no_envelope = agent.request("server/discover", json!({})).await;
    assert_eq!(error_code(&no_envelope), -32602, "{no_envelope}");

    // The handshake revision still works on the same connection.
    let initialized = agent.initialize().await;
    assert_eq!(initialized["result"]["protocolVersion"], "2025-11-25");
    let legacy = agent.request("tools/list", json!({})).await;
    assert!(
        legacy["result"].get("resultType").is_none(),
        "{}",
        legacy["result"]["tools"][0]
    );
    bridge.stop_async().await;
}

#[tokio::test]
async fn a_listen_stream_carries_tagged_notifications_until_cancelled() {
    let bridge = Bridge::launch(Options::default().file("watched.txt", "1\n")).await;
    let mut agent = bridge.agent().await;
    let uri = format!("file://{}/watched.txt", bridge.workspace.display());
    let id = agent.id();
    agent
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
            "_meta": meta("listener"),
            "notifications": {"toolsListChanged": true, "resourceSubscriptions": [uri, "file:///etc/passwd"]}}}))
        .await;
    let ack = agent
        .notification("notifications/subscriptions/acknowledged", DEADLINE)
        .await
        .expect("acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": [uri]}),
        "a file outside the workspace is not honoured"
    );
    std::fs::write(bridge.workspace.join("watched.txt"), "2\n").unwrap();
    let updated = agent
        .notification("notifications/resources/updated", DEADLINE)
        .await
        .expect("the file changed");
    assert_eq!(updated["params"]["uri"], uri);
    assert_eq!(
        updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );

    agent
        .notify("notifications/cancelled", json!({"requestId": id}))
        .await;
    // A request after the cancel is answered after it was handled.
    agent
        .request("server/discover", json!({"_meta": meta("listener")}))
        .await;
    std::fs::write(bridge.workspace.join("watched.txt"), "3\n").unwrap();
    agent
        .assert_no_notification(
            "notifications/resources/updated",
            Duration::from_secs(2),
            "the stream was cancelled",
        )
        .await;
    bridge.stop_async().await;
}

/// Where and how to reach a bridge's `/mcp` from a blocking thread.
#[derive(Clone)]
struct Http {
    port: u16,
    token: String,
}

fn http(bridge: &Bridge) -> Http {
    Http {
        port: bridge.port,
        token: bridge.token.clone(),
    }
}

/// POSTs `body` to `/mcp` with the bearer token and `headers`: status, head, body.
fn post(bridge: &Http, headers: &[(&str, &str)], body: &Value) -> (u16, String, Value) {
    let bearer = format!("Bearer {}", bridge.token);
    let mut all = vec![
        ("Authorization", bearer.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    all.extend_from_slice(headers);
    let (status, head, text) = http_request(
        bridge.port,
        "POST",
        "/mcp",
        &all,
        body.to_string().as_bytes(),
    );
    // A tools/call answers with an SSE stream: its last event is the response.
    let json = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(&text);
    (
        status,
        head,
        serde_json::from_str(json).unwrap_or(Value::Null),
    )
}

fn request(id: i64, method: &str, mut params: Value, client: &str) -> Value {
    params["_meta"] = meta(client);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test]
async fn over_http_headers_must_agree_with_the_body_and_each_client_is_one_session() {
    let bridge = Bridge::launch(Options::default().file("a.txt", "a\n")).await;
    let b = http(&bridge);
    let listed = off_runtime(move || {
        post(
            &b,
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/list"),
            ],
            &request(1, "tools/list", json!({}), "alpha"),
        )
    })
    .await;
    assert_eq!(listed.0, 200, "{:?}", listed);
    assert!(
        !listed.1.to_ascii_lowercase().contains("mcp-session-id"),
        "{}",
        listed.1
    );
    assert_eq!(listed.2["result"]["resultType"], "complete");

    let b = http(&bridge);
    let refusals = off_runtime(move || {
        let read = request(
            2,
            "tools/call",
            json!({"name": "readFile", "arguments": {"filePath": "a.txt"}}),
            "alpha",
        );
        let v = ("MCP-Protocol-Version", "2026-07-28");
        let m = ("Mcp-Method", "tools/call");
        vec![
            ("no Mcp-Method", post(&b, &[v], &read), 400, -32020),
            ("no Mcp-Name", post(&b, &[v, m], &read), 400, -32020),
            (
                "another Mcp-Name",
                post(&b, &[v, m, ("Mcp-Name", "writeFile")], &read),
                400,
                -32020,
            ),
            (
                "another version header",
                post(
                    &b,
                    &[
                        ("MCP-Protocol-Version", "2025-11-25"),
                        m,
                        ("Mcp-Name", "readFile"),
                    ],
                    &read,
                ),
                400,
                -32020,
            ),
            (
                "a header naming another version than the body",
                post(&b, &[("MCP-Protocol-Version", "1900-01-01"), m], &read),
                400,
                -32020,
            ),
            (
                "a version nobody speaks",
                post(&b, &[("MCP-Protocol-Version", "1900-01-01"), m], &{
                    let mut old = read.clone();
                    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] =
                        json!("1900-01-01");
                    old
                }),
                400,
                -32022,
            ),
            (
                "a handshake method",
                post(
                    &b,
                    &[v, ("Mcp-Method", "ping")],
                    &request(8, "ping", json!({}), "alpha"),
                ),
                404,
                -32601,
            ),
            (
                "a 2026 header without the envelope",
                post(
                    &b,
                    &[v, ("Mcp-Method", "tools/list")],
                    &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
                ),
                400,
                -32602,
            ),
            (
                "an unknown method",
                post(
                    &b,
                    &[v, ("Mcp-Method", "no/such")],
                    &request(4, "no/such", json!({}), "alpha"),
                ),
                404,
                -32601,
            ),
        ]
    })
    .await;
    for (what, (status, _, body), want_status, want_code) in refusals {
        assert_eq!(
            (status, error_code(&body)),
            (want_status, want_code),
            "{what}: {body}"
        );
        assert!(body["id"].is_number(), "{what}: the id is echoed: {body}");
    }
    // A name a header cannot hold travels as base64.
    let b = http(&bridge);
    let (status, _, called) = off_runtime(move || {
        post(
            &b,
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "=?base64?cmVhZEZpbGU=?="),
            ],
            &request(
                5,
                "tools/call",
                json!({"name": "readFile", "arguments": {"filePath": "a.txt"}}),
                "alpha",
            ),
        )
    })
    .await;
    assert_eq!(status, 200, "{called}");
    assert_eq!(called["result"]["resultType"], "complete", "{called}");

    // GET and DELETE do not exist in the revision; a notification is accepted.
    let bearer = format!("Bearer {}", bridge.token);
    let port = bridge.port;
    let (get, delete, notified) = off_runtime(move || {
        let h = [("Authorization", bearer.as_str()), ("Accept", "text/event-stream"), ("MCP-Protocol-Version", "2026-07-28")];
        let get = http_request(port, "GET", "/mcp", &h, b"").0;
        let delete = http_request(port, "DELETE", "/mcp", &h, b"").0;
        let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}});
        let notified = http_request(
            port,
            "POST",
            "/mcp",
            &[h[0], ("Content-Type", "application/json"), h[2], ("Mcp-Method", "notifications/cancelled")],
            note.to_string().as_bytes(),
        )
        .0;
        (get, delete, notified)
    })
    .await;
    assert_eq!((get, delete, notified), (405, 405, 202));

    // One session per client: alpha's requests share one, beta gets its own; delta
    // only discovers, which needs no session.
    let b = http(&bridge);
    let discovered = off_runtime(move || {
        post(
            &b,
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/list"),
            ],
            &request(6, "tools/list", json!({}), "beta"),
        );
        post(
            &b,
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "server/discover"),
            ],
            &request(7, "server/discover", json!({}), "delta"),
        )
    })
    .await;
    assert_eq!(
        discovered.2["result"]["supportedVersions"][0], "2026-07-28",
        "{discovered:?}"
    );
    let status = bridge.status().await;
    let clients: Vec<&str> = status["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["client"].as_str())
        .collect();
    assert_eq!(
        clients.iter().filter(|c| c.starts_with("alpha")).count(),
        1,
        "{status}"
    );
    assert_eq!(
        clients.iter().filter(|c| c.starts_with("beta")).count(),
        1,
        "{status}"
    );
    assert!(!clients.iter().any(|c| c.starts_with("delta")), "{status}");
    bridge.stop_async().await;
}

#[tokio::test]
async fn an_http_listen_stream_opens_with_its_acknowledgement_and_stays_open() {
    let bridge = Bridge::launch(Options::default()).await;
    let (port, token) = (bridge.port, bridge.token.clone());
    let first_event = off_runtime(move || {
        let body = request(
            7,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
            "gamma",
        )
        .to_string();
        let mut s = StdTcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(DEADLINE)).unwrap();
        write!(
            s,
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&seen).contains("acknowledged") {
            let n = s.read(&mut buf).unwrap();
            assert!(
                n > 0,
                "the stream closed: {}",
                String::from_utf8_lossy(&seen)
            );
            seen.extend_from_slice(&buf[..n]);
        }
        // Still open a moment later: nothing more, and no end.
        s.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let more = s.read(&mut buf);
        assert!(more.is_err(), "the stream stays open: {more:?}");
        String::from_utf8_lossy(&seen).into_owned()
    })
    .await;
    assert!(first_event.contains("text/event-stream"), "{first_event}");
    assert!(
        first_event.contains("\"io.modelcontextprotocol/subscriptionId\":7"),
        "{first_event}"
    );
    bridge.stop_async().await;
}

#[tokio::test]
async fn a_tool_that_waits_becomes_a_task_to_poll_and_cancel() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.agent().await;
    let mut tasks = meta("tasker");
    tasks["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let discovered = agent
        .request("server/discover", json!({"_meta": meta("tasker")}))
        .await;
    assert!(
        discovered["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"]
            .is_object(),
        "{discovered}"
    );
    let watch = |ms: u64, meta: &Value| json!({"name": "watchActivityLog", "arguments": {"timeoutMs": ms, "afterId": 999_999_999u64}, "_meta": meta});

    // A long wait: a task at once, working, then cancelled.
    let created = agent.request("tools/call", watch(50_000, &tasks)).await;
    let task = &created["result"];
    assert_eq!(task["resultType"], "task", "{created}");
    assert_eq!(task["status"], "working");
    assert!(task["ttlMs"].as_u64().is_some() && task["pollIntervalMs"].as_u64().is_some());
    let id = task["taskId"].as_str().unwrap().to_string();
    let got = agent
        .request("tasks/get", json!({"taskId": id, "_meta": tasks}))
        .await;
    assert_eq!(
        (
            got["result"]["status"].as_str(),
            got["result"]["resultType"].as_str()
        ),
        (Some("working"), Some("complete")),
        "{got}"
    );
    bridge.wait_active_calls(1).await;
    let cancelled = agent
        .request("tasks/cancel", json!({"taskId": id, "_meta": tasks}))
        .await;
    assert_eq!(cancelled["result"]["resultType"], "complete", "{cancelled}");
    bridge.wait_active_calls(0).await;
    let got = agent
        .request("tasks/get", json!({"taskId": id, "_meta": tasks}))
        .await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");

    // A short wait: polled until it completed, with the call's result.
    let created = agent.request("tools/call", watch(100, &tasks)).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let deadline = std::time::Instant::now() + DEADLINE;
    let done = loop {
        let got = agent
            .request("tasks/get", json!({"taskId": id, "_meta": tasks}))
            .await;
        if got["result"]["status"] == "completed" {
            break got;
        }
        assert_eq!(got["result"]["status"], "working", "{got}");
        assert!(
            std::time::Instant::now() < deadline,
            "the task did not complete: {got}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(done["result"]["result"]["content"].is_array(), "{done}");

    // Without the extension, or for a tool that does not wait: a plain answer.
    let plain = agent
        .request("tools/call", watch(50, &meta("tasker")))
        .await;
    assert!(plain["result"]["content"].is_array(), "{plain}");
    let quick = agent
        .request(
            "tools/call",
            json!({"name": "getWorkspaceFolders", "arguments": {}, "_meta": tasks}),
        )
        .await;
    assert_eq!(quick["result"]["resultType"], "complete", "{quick}");
    // Tasks need the extension declared; an unknown task is -32602.
    let undeclared = agent
        .request("tasks/get", json!({"taskId": id, "_meta": meta("tasker")}))
        .await;
    assert_eq!(error_code(&undeclared), -32021, "{undeclared}");
    assert!(
        undeclared["error"]["data"]["requiredCapabilities"]["extensions"]
            ["io.modelcontextprotocol/tasks"]
            .is_object()
    );
    let unknown = agent
        .request("tasks/get", json!({"taskId": "nope", "_meta": tasks}))
        .await;
    assert_eq!(error_code(&unknown), -32602, "{unknown}");
    bridge.stop_async().await;
}

#[tokio::test]
async fn two_instances_of_one_http_client_may_use_the_same_request_id_at_once() {
    // Both name themselves "twin" (one session serves them) and count their ids from 1.
    let bridge = Bridge::launch(Options::default()).await;
    let watch = |ms: u64| {
        request(
            1,
            "tools/call",
            json!({"name": "watchActivityLog", "arguments": {"timeoutMs": ms, "afterId": 999_999_999u64}}),
            "twin",
        )
    };
    let call = |b: Http, body: Value| {
        std::thread::spawn(move || {
            post(
                &b,
                &[
                    ("MCP-Protocol-Version", "2026-07-28"),
                    ("Mcp-Method", "tools/call"),
                    ("Mcp-Name", "watchActivityLog"),
                ],
                &body,
            )
        })
    };
    let first = call(http(&bridge), watch(4_000));
    bridge.wait_active_calls(1).await;
    let second = call(http(&bridge), watch(300));
    let (status, _, answer) = off_runtime(move || second.join().unwrap()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer["result"]["content"].is_array(), "{answer}");
    let status = bridge.status().await;
    assert_eq!(
        status["sessions"][0]["activeToolCalls"], 1,
        "the first still waits: {status}"
    );
    let (status, _, answer) = off_runtime(move || first.join().unwrap()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer["result"]["content"].is_array(), "{answer}");
    let sessions = bridge.status().await["sessions"].as_array().unwrap().len();
    assert_eq!(sessions, 1, "one session serves both");
    bridge.stop_async().await;
}
