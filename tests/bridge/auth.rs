//! Token, Host and Origin checks on the upgrade and the HTTP endpoints.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use tokio_tungstenite::tungstenite::Error as WsError;

use crate::harness::*;

fn http_status(err: WsError) -> u16 {
    match err {
        WsError::Http(resp) => resp.status().as_u16(),
        other => panic!("expected an HTTP rejection, got {other:?}"),
    }
}

#[tokio::test]
async fn missing_or_wrong_token_is_401_before_the_upgrade() {
    let bridge = Bridge::launch(Options::default()).await;
    let err = Agent::connect_raw(bridge.port, &[("sec-websocket-protocol", "mcp")])
        .await
        .err()
        .unwrap();
    assert_eq!(http_status(err), 401);
    let wrong = format!("{}x", &bridge.token[..bridge.token.len() - 1]);
    let err = Agent::connect_raw(bridge.port, &[("x-claude-code-ide-authorization", &wrong)])
        .await
        .err()
        .unwrap();
    assert_eq!(http_status(err), 401);
    let err = Agent::connect_raw(bridge.port, &[("x-claude-code-ide-authorization", "")])
        .await
        .err()
        .unwrap();
    assert_eq!(http_status(err), 401);
    // Rejected attempts are counted.
    let metrics = bridge.metrics().await;
    assert!(
        metrics.contains("ide_bridge_rejected_connections_total 3"),
        "{metrics}"
    );
}

#[test]
fn token_header_name_is_case_insensitive() {
    let bridge = Bridge::start();
    let mut s = TcpStream::connect(("127.0.0.1", bridge.port)).unwrap();
    s.set_read_timeout(Some(DEADLINE)).unwrap();
    write!(
        s,
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Protocol: mcp\r\nX-Claude-Code-IDE-Authorization: {}\r\n\r\n",
        bridge.port, bridge.token
    )
    .unwrap();
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf).unwrap();
    let head = String::from_utf8_lossy(&buf[..n]);
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("sec-websocket-protocol: mcp"),
        "{head}"
    );
}

#[tokio::test]
async fn foreign_host_and_web_origins_are_403() {
    let bridge = Bridge::launch(Options::default()).await;
    let token = bridge.token.clone();
    for host in [
        "evil.example",
        "evil.example:80",
        "10.0.0.5",
        "localhost.evil.example",
    ] {
        let err = Agent::connect(&bridge, &[("host", host)])
            .await
            .err()
            .unwrap();
        assert_eq!(http_status(err), 403, "{host}");
    }
    for origin in ["http://evil.example", "https://localhost:3000", "null"] {
        let err = Agent::connect(&bridge, &[("origin", origin)])
            .await
            .err()
            .unwrap();
        assert_eq!(http_status(err), 403, "{origin}");
    }
    // Loopback spellings are fine.
    for host in ["localhost", &format!("localhost:{}", bridge.port), "[::1]"] {
        let agent = Agent::connect(&bridge, &[("host", host)]).await;
        assert!(agent.is_ok(), "{host}");
    }
    assert_eq!(
        http_get_async(
            bridge.port,
            "/status",
            &[
                ("Host", "evil.example"),
                ("Authorization", &format!("Bearer {token}"))
            ]
        )
        .await
        .0,
        403
    );
    assert_eq!(
        http_get_async(bridge.port, "/health", &[("Origin", "http://evil.example")])
            .await
            .0,
        403
    );
    // Another port of this host is another site; the bridge's own address is its page.
    let other_port = format!("http://127.0.0.1:{}", bridge.port.wrapping_add(1));
    assert_eq!(
        http_get_async(bridge.port, "/health", &[("Origin", &other_port)])
            .await
            .0,
        403
    );
    let own = format!("http://127.0.0.1:{}", bridge.port);
    assert_eq!(
        http_get_async(bridge.port, "/health", &[("Origin", &own)])
            .await
            .0,
        200
    );
}

/// Sends `GET <path>` with these raw header bytes and returns (status, body).
fn raw_get(port: u16, path: &str, headers: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut req = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n").into_bytes();
    req.extend_from_slice(headers);
    req.extend_from_slice(b"\r\n");
    s.write_all(&req).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

#[tokio::test]
async fn dns_rebinding_host_forms_are_403_everywhere() {
    let bridge = Bridge::launch(Options::default()).await;
    let port = bridge.port;
    let bearer = format!("Bearer {}", bridge.token);
    let other_port = if port == 65535 { 1 } else { port + 1 };
    let mut refused: Vec<String> = Vec::new();
    for name in [
        "127.0.0.1.evil.com",
        "127.0.0.1evil.com",
        "127.0.0.1%2eevil.com",
        "localhost.evil.com",
        "[::1].evil.com",
        "127.1",
        "0x7f000001",
    ] {
        refused.push(name.to_string());
        refused.push(format!("{name}:{port}"));
    }
    refused.extend([
        format!("127.0.0.1:{other_port}"),
        format!("localhost:{other_port}"),
        format!("[::1]:{other_port}"),
        format!("127.0.0.1:{port}x"),
        format!("127.0.0.1:{port}:{port}"),
        "127.0.0.1:".to_string(),
        "[::1]x".to_string(),
        "::1".to_string(),
    ]);
    for host in &refused {
        let err = Agent::connect(&bridge, &[("host", host)])
            .await
            .err()
            .unwrap_or_else(|| panic!("{host} upgraded"));
        assert_eq!(http_status(err), 403, "{host}");
        for path in ["/health", "/status"] {
            let (code, body) =
                http_get_async(port, path, &[("Host", host), ("Authorization", &bearer)]).await;
            assert_eq!(code, 403, "{host} {path}: {body}");
            assert!(body.contains("is not allowed"), "{host} {path}: {body}");
        }
    }
    // A non-ASCII Host is refused as not allowed, not as missing.
    for host in [&b"127.0.0.1\xc3\xa9"[..], b"\xff", b"localhost\xe2\x80\x8b"] {
        let mut headers = b"Host: ".to_vec();
        headers.extend_from_slice(host);
        headers.extend_from_slice(b"\r\n");
        let (code, body) = raw_get(port, "/health", &headers);
        assert_eq!(code, 403, "{body}");
        assert!(body.contains("is not allowed"), "{body}");
        assert!(body.contains("not ASCII"), "{body}");
        assert!(!body.contains("Missing"), "{body}");
    }
    // Exact loopback forms, with the bridge's own port or none, get through.
    for host in [
        "127.0.0.1".to_string(),
        format!("127.0.0.1:{port}"),
        format!("127.9.8.7:{port}"),
        "localhost".to_string(),
        format!("localhost:{port}"),
        format!("agent.localhost:{port}"),
        "[::1]".to_string(),
        format!("[::1]:{port}"),
    ] {
        let agent = Agent::connect(&bridge, &[("host", &host)]).await;
        assert!(agent.is_ok(), "{host}");
        let (code, body) = http_get_async(
            port,
            "/status",
            &[("Host", &host), ("Authorization", &bearer)],
        )
        .await;
        assert_eq!(code, 200, "{host}: {body}");
    }
}

#[test]
fn allowed_origins_can_be_configured() {
    let mut opts = Options::default();
    opts.env.push((
        "IDE_BRIDGE_SERVER__ALLOWED_ORIGINS".into(),
        "vscode-file://vscode-app,app://x".into(),
    ));
    let bridge = Bridge::start_with(opts);
    let ok = http_get(
        bridge.port,
        "/health",
        &[("Origin", "vscode-file://vscode-app")],
    );
    assert_eq!(ok.0, 200, "{}", ok.1);
    assert_eq!(
        http_get(bridge.port, "/health", &[("Origin", "http://evil.example")]).0,
        403
    );
}

#[test]
fn health_is_open_status_and_metrics_need_the_bearer_token() {
    let bridge = Bridge::start();
    let (code, body) = http_get(bridge.port, "/health", &[]);
    assert_eq!(code, 200);
    let health: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(health["status"], "ok");
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));
    assert!(health["uptimeSeconds"].is_u64());

    for path in ["/status", "/metrics"] {
        assert_eq!(
            http_get(bridge.port, path, &[]).0,
            401,
            "{path} without token"
        );
        assert_eq!(
            http_get(bridge.port, path, &[("Authorization", "Bearer nope")]).0,
            401,
            "{path} wrong token"
        );
        assert_eq!(
            http_get(bridge.port, path, &[("Authorization", &bridge.token)]).0,
            401,
            "{path} not bearer"
        );
        assert_eq!(bridge.get(path).0, 200, "{path} with token");
    }
    let (status, _, body) = http_request(bridge.port, "GET", "/nope", &[], b"");
    assert_eq!(status, 404);
    assert!(
        body.contains("GET /ui/"),
        "the page is among the routes: {body}"
    );
    // Another method on /mcp: 405 with what it takes, in JSON like every error.
    let bearer = format!("Bearer {}", bridge.token);
    let (status, head, body) = http_request(
        bridge.port,
        "PUT",
        "/mcp",
        &[("Authorization", &bearer)],
        b"",
    );
    assert_eq!(status, 405, "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("allow: post, get, delete, options"),
        "{head}"
    );
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("PUT is not a method of /mcp"),
        "{body}"
    );
    // The routes of one method say which.
    for (method, path, allow) in [
        ("POST", "/health", "GET"),
        ("DELETE", "/status", "GET"),
        ("POST", "/metrics", "GET"),
        ("GET", "/hooks", "POST"),
    ] {
        let (status, head, body) = http_request(
            bridge.port,
            method,
            path,
            &[("Authorization", &bearer)],
            b"",
        );
        assert_eq!(status, 405, "{method} {path}: {head}");
        assert!(
            head.to_ascii_lowercase()
                .contains(&format!("allow: {}", allow.to_ascii_lowercase())),
            "{head}"
        );
        assert!(body.contains(&format!("use {allow}")), "{body}");
    }
}

#[tokio::test]
async fn a_burst_is_paced_and_only_what_would_wait_too_long_gets_429() {
    // 200 ms apart, at most 500 ms of waiting: of four upgrades at once, the first goes
    // through, two are held (200 and 400 ms), the fourth (600 ms) is refused.
    let bridge = Bridge::launch(
        Options::default()
            .set("server.min_connect_interval_ms", 200)
            .set("server.max_connect_wait_ms", 500),
    )
    .await;
    let headers = [
        ("x-claude-code-ide-authorization", bridge.token.as_str()),
        ("sec-websocket-protocol", "mcp"),
    ];
    let started = std::time::Instant::now();
    let attempts = futures_util::future::join_all((0..4).map(|_| async {
        let r = Agent::connect_once(bridge.port, &headers).await;
        (r, started.elapsed())
    }))
    .await;
    let mut admitted: Vec<Duration> = Vec::new();
    let mut refused = Vec::new();
    for (result, at) in attempts {
        match result {
            Ok(_) => admitted.push(at),
            Err(WsError::Http(resp)) => refused.push(resp),
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(admitted.len(), 3, "three admitted: {admitted:?}");
    admitted.sort();
    assert!(
        admitted[2] >= Duration::from_millis(390),
        "the third waited for its slot: {admitted:?}"
    );
    assert_eq!(refused.len(), 1);
    let resp = &refused[0];
    assert_eq!(resp.status().as_u16(), 429);
    assert_eq!(resp.headers()["retry-after"], "1");
    let body = String::from_utf8(resp.body().clone().unwrap()).unwrap();
    assert!(
        body.contains("one every 200 ms") && body.contains("at most 500 ms"),
        "{body}"
    );
    // Authentication comes first: a wrong token is 401, never held.
    let err = Agent::connect_once(bridge.port, &[("x-claude-code-ide-authorization", "nope")])
        .await
        .err()
        .unwrap();
    assert_eq!(http_status(err), 401);
    let metrics = bridge.metrics().await;
    assert!(
        metrics.contains("ide_bridge_rejected_connections_total 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"ide_bridge_refused_connections_total{reason="burst"} 1"#),
        "{metrics}"
    );
    let status = bridge.status().await;
    assert_eq!(status["refusedConnections"]["burst"], 1, "{status}");
    assert_eq!(status["refusedConnections"]["unauthorized"], 1, "{status}");
    assert!(bridge.log().contains("429"), "the refusal is logged");
}

#[tokio::test]
async fn ten_upgrades_in_one_burst_are_all_admitted_within_a_second() {
    let bridge = Bridge::launch(Options::default().set("sessions.max_sessions", 10)).await;
    let headers = [
        ("x-claude-code-ide-authorization", bridge.token.as_str()),
        ("sec-websocket-protocol", "mcp"),
    ];
    let started = std::time::Instant::now();
    let results =
        futures_util::future::join_all((0..10).map(|_| Agent::connect_once(bridge.port, &headers)))
            .await;
    let elapsed = started.elapsed();
    let ok = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(
        ok,
        10,
        "{:?}",
        results
            .iter()
            .filter_map(|r| r.as_ref().err())
            .collect::<Vec<_>>()
    );
    assert!(elapsed < Duration::from_secs(1), "took {elapsed:?}");
    let status = bridge.status().await;
    assert_eq!(status["sessions"].as_array().unwrap().len(), 10, "{status}");
    assert_eq!(status["refusedConnections"]["burst"], 0, "{status}");
}

#[tokio::test]
async fn agents_connecting_at_once_all_get_in_by_retrying() {
    // The default interval (50 ms) with five agents connecting together: the harness
    // retries on 429 like a real client, and every one ends up with a session.
    let bridge = Bridge::launch(Options::default()).await;
    let agents = futures_util::future::join_all((0..5).map(|_| bridge.ready_agent())).await;
    let status = bridge.status().await;
    assert_eq!(status["sessions"].as_array().unwrap().len(), 5, "{status}");
    drop(agents);
}
