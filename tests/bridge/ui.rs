//! The browser page's gate and limits through the real binary, without a browser (the
//! page itself is tested in headless Chromium, tests/browser): signing in over HTTP, a
//! sign-in that outlives a panic of the Dashboard actor, the body and stream limits at
//! and just past their edge, and a bridge with the page off.

use std::io::{Read, Write};
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

/// A one-time sign-in code, asked for with the token (as `ide-bridge open` does).
fn login_code(port: u16, token: &str) -> String {
    let bearer = format!("Bearer {token}");
    let (status, _, body) = http_request(
        port,
        "POST",
        "/ui/login-code",
        &[("Authorization", &bearer)],
        b"",
    );
    assert_eq!(status, 200, "{body}");
    let link: Value = serde_json::from_str(&body).unwrap();
    link["url"]
        .as_str()
        .unwrap()
        .split_once('#')
        .unwrap()
        .1
        .to_string()
}

/// Signs in as the page does: a link from the token, its code posted from the page's
/// origin. Answers the `Cookie` header value.
fn sign_in(port: u16, token: &str) -> String {
    let code = login_code(port, token);
    let origin = format!("http://127.0.0.1:{port}");
    let (status, head, body) = http_request(
        port,
        "POST",
        "/ui/login",
        &[("Origin", &origin), ("Content-Type", "application/json")],
        json!({ "code": code }).to_string().as_bytes(),
    );
    assert_eq!(status, 200, "{body}");
    let set_cookie = head
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("set-cookie:"))
        .expect("a cookie");
    assert!(
        set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Strict"),
        "{set_cookie}"
    );
    set_cookie
        .split_once(':')
        .unwrap()
        .1
        .trim()
        .split(';')
        .next()
        .unwrap()
        .to_string()
}

/// Opens the page's live stream with `cookie`: the socket (kept open) when the bridge
/// answered 200, else `None`.
fn open_events(port: u16, cookie: &str, wait: Duration) -> Option<std::net::TcpStream> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET /ui/api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    s.set_read_timeout(Some(wait)).unwrap();
    let mut head = [0u8; 32];
    let n = s.read(&mut head).unwrap_or(0);
    String::from_utf8_lossy(&head[..n])
        .starts_with("HTTP/1.1 200")
        .then_some(s)
}

fn page_get(bridge: &Bridge, cookie: &str, path: &str) -> (u16, String) {
    let (status, _, body) = http_request(bridge.port, "GET", path, &[("Cookie", cookie)], b"");
    (status, body)
}

#[tokio::test]
async fn a_sign_in_outlives_a_panic_of_the_dashboard() {
    let bridge = Bridge::launch(Options::default()).await;
    let (port, token) = (bridge.port, bridge.token.clone());
    let cookie = off_runtime(move || sign_in(port, &token)).await;
    let mut agent = bridge.ready_agent().await;
    let crash = agent
        .call("debug_crash_actor", json!({"actor": "dashboard"}))
        .await;
    assert!(
        is_error(&crash) && text(&crash).contains("restarting"),
        "{crash}"
    );
    let (port, c) = (bridge.port, cookie.clone());
    let (status, body) = off_runtime(move || {
        let (s, _, b) = http_request(port, "GET", "/ui/api/reviews", &[("Cookie", &c)], b"");
        (s, b)
    })
    .await;
    assert_eq!(status, 200, "the browser is still signed in: {body}");
    let metrics = bridge.metrics().await;
    assert!(
        metrics.contains("ide_bridge_actor_restarts_total{actor=\"dashboard\"} 1"),
        "{metrics}"
    );
}

/// What the person asks of the page that names nothing — an agent session, a file, a
/// change or hunk that does not exist, lines backwards, a claim the tool would refuse —
/// is refused saying so, never answered as done.
#[tokio::test]
async fn page_requests_that_name_nothing_are_refused_by_name() {
    let bridge = Bridge::launch(Options::default().file("a.py", "a = 1\n")).await;
    let cookie = sign_in(bridge.port, &bridge.token);
    let port = bridge.port;
    let post = move |path: &'static str, body: Value| {
        let cookie = cookie.clone();
        off_runtime(move || {
            let origin = format!("http://127.0.0.1:{port}");
            let headers = [
                ("Cookie", cookie.as_str()),
                ("Origin", origin.as_str()),
                ("Content-Type", "application/json"),
            ];
            let (status, _, text) =
                http_request(port, "POST", path, &headers, body.to_string().as_bytes());
            let answer: Value = serde_json::from_str(&text).unwrap_or(json!({"raw": text}));
            (status, answer)
        })
    };
    let error = |answer: &Value| answer["error"].as_str().unwrap_or_default().to_string();
    // Nobody listens yet (an agent through the relay has no IDE connection, where a
    // place reaches Claude Code): the place is kept, and the answer says it was not sent.
    let mut relay = crate::hooks::relay_agent(&bridge, 94001, 781).await;
    let relay_id = json_text(&relay.call("getBridgeStatus", json!({})).await)["yourSessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, answer) = post("/ui/api/mention", json!({"path": "a.py"})).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        (answer["sent"].clone(), answer["queued"].clone()),
        (json!(false), json!(true)),
        "{answer}"
    );
    for (body, code, says) in [
        (
            json!({"path": "a.py", "sessionId": "ffffffff"}),
            404,
            "No agent session \"ffffffff\"",
        ),
        (
            json!({"path": "a.py", "sessionId": ""}),
            404,
            "No agent session \"\"",
        ),
        (json!({"path": "gone.py"}), 404, "File not found: gone.py"),
        (
            json!({"path": "a.py", "sessionId": relay_id}),
            503,
            "has no IDE connection",
        ),
        (
            json!({"path": "a.py", "start": 10, "end": 2}),
            400,
            "end (2) is before start (10)",
        ),
        (
            json!({"path": "a.py", "start": "x"}),
            400,
            "Invalid request body: invalid type: string",
        ),
    ] {
        let (status, answer) = post("/ui/api/mention", body.clone()).await;
        assert_eq!(status, code, "{body}: {answer}");
        assert!(error(&answer).contains(says), "{body}: {answer}");
    }
    let mut agent = bridge.ready_agent().await;
    let id = json_text(&agent.call("getBridgeStatus", json!({})).await)["yourSessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, answer) = post(
        "/ui/api/mention",
        json!({"path": "a.py", "start": 1, "sessionId": id}),
    )
    .await;
    assert_eq!(
        (status, answer["sent"].clone(), answer["agents"].clone()),
        (200, json!(true), json!(1)),
        "{answer}"
    );
    // The place kept while nobody listened, then the one sent to this agent.
    for _ in 0..2 {
        let m = agent
            .notification("at_mentioned", DEADLINE)
            .await
            .expect("the place");
        assert!(
            m["params"]["filePath"].as_str().unwrap().ends_with("/a.py"),
            "{m}"
        );
    }
    // No such change, hunk, file or agent: nothing to keep or undo, and the page says so.
    agent
        .call(
            "replaceBlock",
            json!({"filePath": "a.py", "oldContent": "a = 1", "newContent": "a = 2"}),
        )
        .await;
    let changes = off_runtime({
        let bridge_port = bridge.port;
        let cookie = sign_in(bridge_port, &bridge.token);
        move || {
            http_request(
                bridge_port,
                "GET",
                "/ui/api/changes",
                &[("Cookie", &cookie)],
                b"",
            )
        }
    })
    .await;
    let listed: Value = serde_json::from_str(&changes.2).unwrap();
    let change = listed[0]["id"].as_u64().expect("the agent's change");
    for (path, body, says) in [
        (
            "/ui/api/changes/undo",
            json!({"change": 99999}),
            "No change matches change 99999",
        ),
        (
            "/ui/api/changes/undo",
            json!({"change": change, "hunk": 42}),
            "there is no hunk 42",
        ),
        (
            "/ui/api/changes/undo",
            json!({"file": "../../etc/passwd"}),
            "No change matches file",
        ),
        (
            "/ui/api/changes/keep",
            json!({"session": "zz"}),
            "agent session \"zz\"",
        ),
    ] {
        let (status, answer) = post(path, body.clone()).await;
        assert_eq!(status, 404, "{body}: {answer}");
        assert!(error(&answer).contains(says), "{body}: {answer}");
    }
    let (status, answer) = post("/ui/api/changes/keep", json!({"change": change})).await;
    assert_eq!(
        (status, answer["kept"].clone()),
        (200, json!(1)),
        "{answer}"
    );
    // A claim is checked as claimFiles checks it.
    let (status, answer) = post(
        "/ui/api/claims",
        json!({"paths": ["zz.py"], "ttlMinutes": 0}),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        error(&answer).contains("ttlMinutes") && error(&answer).contains("minimum of 1"),
        "{answer}"
    );
    bridge.stop_async().await;
}

#[test]
fn request_bodies_and_streams_are_refused_just_past_their_limit() {
    let bridge = Bridge::start_with(Options::default().set("ui.max_streams", 1));
    let cookie = sign_in(bridge.port, &bridge.token);
    let origin = format!("http://127.0.0.1:{}", bridge.port);
    let headers = [
        ("Cookie", cookie.as_str()),
        ("Origin", origin.as_str()),
        ("Content-Type", "application/json"),
    ];
    // A body of exactly 8 MiB is read (and answered: nothing waits); one byte more is
    // refused before it is parsed.
    let limit = 8 * 1024 * 1024;
    let body_of = |len: usize| {
        let head = r#"{"allow":true,"pad":""#;
        let mut body = head.to_string();
        body.push_str(&"x".repeat(len - head.len() - 2));
        body.push_str(r#""}"#);
        assert_eq!(body.len(), len);
        body
    };
    let (status, _, body) = http_request(
        bridge.port,
        "POST",
        "/ui/api/approvals/7",
        &headers,
        body_of(limit).as_bytes(),
    );
    assert_eq!(status, 409, "{body}");
    let (status, _, body) = http_request(
        bridge.port,
        "POST",
        "/ui/api/approvals/7",
        &headers,
        body_of(limit + 1).as_bytes(),
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("larger than allowed"), "{body}");
    // An id that is not a number, a query that does not parse: the page's JSON 400.
    let (status, _, body) =
        http_request(bridge.port, "POST", "/ui/api/approvals/x", &headers, b"{}");
    assert_eq!(status, 400, "{body}");
    let err: serde_json::Value = serde_json::from_str(&body).expect("a JSON error");
    assert_eq!(
        err["error"],
        "/ui/api/approvals/x does not name anything here: its id must be a whole number",
        "{body}"
    );
    let (status, body) = page_get(&bridge, &cookie, "/ui/api/activity?limit=many");
    assert_eq!(status, 400, "{body}");
    let err: serde_json::Value = serde_json::from_str(&body).expect("a JSON error");
    assert!(
        err["error"].as_str().unwrap().contains("(in ?limit=many)"),
        "{body}"
    );
    // A claim that cannot be made at all is a 400; one someone else holds, a 409.
    let claim = |paths: &str| {
        let body = format!(r#"{{"paths": {paths}, "reason": "r"}}"#);
        http_request(
            bridge.port,
            "POST",
            "/ui/api/claims",
            &headers,
            body.as_bytes(),
        )
    };
    for bad in ["[]", r#"["../outside"]"#, r#"["src/[a"]"#] {
        let (status, _, body) = claim(bad);
        assert_eq!(status, 400, "{bad}: {body}");
    }
    let (status, _, body) = claim(r#"["a.txt"]"#);
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = claim(r#"["a.txt"]"#);
    assert_eq!(status, 200, "the person renews their own claim: {body}");
    // No such task: 404, to cancel as to watch.
    for (method, path) in [
        ("POST", "/ui/api/tasks/nope/cancel"),
        ("GET", "/ui/api/tasks/nope/output"),
    ] {
        let (status, _, body) = http_request(bridge.port, method, path, &headers, b"");
        assert_eq!(status, 404, "{path}: {body}");
        assert!(body.contains("No task"), "{body}");
    }
    // One page stream at a time (ui.max_streams = 1): the second is refused with why.
    let first = open_events(bridge.port, &cookie, DEADLINE).expect("the first page watches");
    wait_for("the first page to watch", DEADLINE, || {
        (bridge.get_json("/status")["page"]["watching"] == 1).then_some(())
    });
    let (status, body) = page_get(&bridge, &cookie, "/ui/api/events");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("ui.max_streams"), "{body}");
    drop(first);
    // Once the first page is gone, another may watch.
    wait_for("the first page to be gone", DEADLINE, || {
        let (port, cookie) = (bridge.port, cookie.clone());
        open_events(port, &cookie, Duration::from_secs(2)).map(drop)
    });
}

#[tokio::test]
async fn with_the_page_off_nothing_waits_for_a_browser() {
    let config = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    std::fs::write(
        config.path(),
        "[ui]\nenabled = false\n[orchestrator]\npermissions = [{ tool = \"Bash\", decision = \"ask\" }]\n",
    )
    .unwrap();
    let bridge = Bridge::launch(
        Options::default()
            .set("orchestrator.claude_binary", crate::tasks::fake_claude())
            .arg("--config")
            .arg(config.path().to_str().unwrap()),
    )
    .await;
    let bearer = format!("Bearer {}", bridge.token);
    for (method, path) in [
        ("GET", "/ui/"),
        ("POST", "/ui/login-code"),
        ("GET", "/ui/api/status"),
    ] {
        let (port, bearer) = (bridge.port, bearer.clone());
        let (status, _, body) = off_runtime(move || {
            http_request(port, method, path, &[("Authorization", &bearer)], b"")
        })
        .await;
        assert_eq!(status, 404, "{path}: {body}");
        assert!(body.contains("ui.enabled = false"), "{body}");
    }
    assert!(bridge.log().contains("page=off (ui.enabled = false)"));
    let mut agent = bridge.ready_agent().await;
    let review = agent
        .call("presentReview", json!({"review": "see src/main.rs:1"}))
        .await;
    assert!(
        is_error(&review) && text(&review).contains("ui.enabled = false"),
        "{review}"
    );
    // An `ask` rule denies at once, saying why.
    let task = agent
        .call(
            "runClaudeTask",
            json!({"prompt": "mode:permission:Bash go", "wait": true}),
        )
        .await;
    let task: Value = serde_json::from_str(text(&task)).unwrap();
    assert!(
        task["output"].as_str().unwrap().contains("permission deny"),
        "{task}"
    );
    let log = agent
        .call(
            "getActivityLog",
            json!({"includeLifecycle": true, "limit": 20}),
        )
        .await;
    assert!(text(&log).contains("the browser page is off"), "{log}");
}

#[test]
fn a_signed_in_browser_stays_signed_in_across_a_restart_and_a_signed_out_one_does_not() {
    use std::os::unix::fs::PermissionsExt;
    let place = Place::new();
    let first = Bridge::start_with(place.options());
    let kept = sign_in(first.port, &first.token);
    let ended = sign_in(first.port, &first.token);
    let origin = format!("http://127.0.0.1:{}", first.port);
    let (status, _, _) = http_request(
        first.port,
        "POST",
        "/ui/logout",
        &[("Cookie", &ended), ("Origin", &origin)],
        b"",
    );
    assert_eq!(status, 200);
    let file = place.state_dir().join("page-sessions.json");
    wait_for("the sign-ins to be kept", DEADLINE, || {
        let saved = std::fs::read_to_string(&file).ok()?;
        let cookie = |c: &str| c.split_once('=').unwrap().1.to_string();
        (saved.contains(&cookie(&kept)) && !saved.contains(&cookie(&ended))).then_some(())
    });
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    first.stop();
    let second = Bridge::start_with(place.options());
    assert_eq!(
        page_get(&second, &kept, "/ui/api/reviews").0,
        200,
        "still signed in"
    );
    assert_eq!(
        page_get(&second, &ended, "/ui/api/reviews").0,
        401,
        "signed out stays out"
    );
    assert_eq!(second.get_json("/status")["page"]["signedIn"], 1);
}

#[test]
fn signing_out_ends_the_pages_live_stream_and_the_log_holds_no_live_link() {
    let bridge = Bridge::start_with(Options::default());
    // The start-up line comes right after the lock file.
    let log = wait_for("the start-up line", DEADLINE, || {
        let log = bridge.log();
        log.contains("page=").then_some(log)
    });
    assert!(
        log.contains("page=`ide-bridge open` prints a sign-in link") && !log.contains("/ui/login#"),
        "a log written to a file gets no live code: {log}"
    );
    let cookie = sign_in(bridge.port, &bridge.token);
    let mut stream = open_events(bridge.port, &cookie, DEADLINE).expect("the page watches");
    let origin = format!("http://127.0.0.1:{}", bridge.port);
    let (status, _, _) = http_request(
        bridge.port,
        "POST",
        "/ui/logout",
        &[("Cookie", &cookie), ("Origin", &origin)],
        b"",
    );
    assert_eq!(status, 200);
    // The stream of the signed-out browser ends (the chunked body's last chunk, then EOF).
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
    let rest = String::from_utf8_lossy(&rest);
    assert!(rest.ends_with("0\r\n\r\n"), "the stream ended: {rest:?}");
    assert_eq!(bridge.get_json("/status")["page"]["watching"], 0);
}

/// Issue 31: sign-in codes that do not work are refused with 401 up to ten a minute,
/// then with 429 and `Retry-After` without being checked (a good code too, until the
/// minute has passed); the log says so twice, not once per attempt. The gate's 401
/// and 403 carry the same security headers as every other page answer.
#[test]
fn failed_sign_ins_are_throttled_and_refusals_carry_the_page_headers() {
    let bridge = Bridge::start();
    let port = bridge.port;
    let origin = format!("http://127.0.0.1:{port}");
    let attempt = |code: &str| {
        http_request(
            port,
            "POST",
            "/ui/login",
            &[("Origin", &origin), ("Content-Type", "application/json")],
            json!({ "code": code }).to_string().as_bytes(),
        )
    };
    for i in 0..10 {
        let (status, _, body) = attempt(&format!("wrong-{i}"));
        assert_eq!(status, 401, "attempt {i}: {body}");
    }
    let (status, head, body) = attempt("wrong-10");
    assert_eq!(status, 429, "{body}");
    assert!(head.to_ascii_lowercase().contains("retry-after:"), "{head}");
    assert!(body.contains("Too many sign-in attempts"), "{body}");
    // A good code waits for the window too.
    let code = login_code(port, &bridge.token);
    assert_eq!(attempt(&code).0, 429);
    let log = bridge.log();
    assert_eq!(
        log.matches("a browser presented a sign-in code that does not work")
            .count(),
        1,
        "{log}"
    );
    assert_eq!(
        log.matches("sign-ins are refused unchecked").count(),
        1,
        "{log}"
    );

    // 401 without a cookie, 403 from another origin: the page's headers on both.
    let (status, head, _) = http_request(port, "GET", "/ui/api/status", &[], b"");
    assert_eq!(status, 401);
    let (forbidden, head_403, _) = http_request(
        port,
        "POST",
        "/ui/api/claims",
        &[("Origin", "http://evil.example"), ("Cookie", "x=y")],
        b"{}",
    );
    assert!(forbidden == 403 || forbidden == 401, "{head_403}");
    for head in [head, head_403] {
        let head = head.to_ascii_lowercase();
        for header in [
            "content-security-policy: default-src 'none'",
            "x-content-type-options: nosniff",
            "cache-control: no-store",
        ] {
            assert!(head.contains(header), "{header} missing in:\n{head}");
        }
    }
}

/// The sign-in cookie lasts `ui.session_idle_ms` of idleness, as the bridge's record of
/// the browser does: every signed-in answer renews it (it was set once, at sign-in, and
/// so ran out that long after it however busy the page was).
#[test]
fn every_signed_in_answer_renews_the_cookie() {
    let bridge = Bridge::start_with(Options::default().set("ui.session_idle_ms", 600_000));
    let cookie = sign_in(bridge.port, &bridge.token);
    for path in ["/ui/api/reviews", "/ui/"] {
        let (status, head, _) = http_request(bridge.port, "GET", path, &[("Cookie", &cookie)], b"");
        assert_eq!(status, 200, "{path}");
        let renewed = head
            .lines()
            .find(|l| l.to_ascii_lowercase().starts_with("set-cookie:"))
            .unwrap_or_else(|| panic!("{path}: no Set-Cookie in {head}"));
        assert!(
            renewed.contains(&cookie)
                && renewed.contains("Max-Age=600")
                && renewed.contains("HttpOnly"),
            "{path}: {renewed}"
        );
    }
    // Refused requests renew nothing.
    let (status, head, _) = http_request(
        bridge.port,
        "GET",
        "/ui/api/reviews",
        &[("Cookie", "x=y")],
        b"",
    );
    assert_eq!(status, 401);
    assert!(!head.to_ascii_lowercase().contains("set-cookie"), "{head}");
}

/// A review an agent presented is still there after a restart, at the same id (the link
/// it gave out), and the next one gets a new id.
#[tokio::test]
async fn presented_reviews_are_kept_across_a_restart() {
    let place = Place::new();
    let opts = || place.options().file("src/lib.rs", "pub fn one() {}\n");
    let bridge = Bridge::launch(opts()).await;
    let mut agent = bridge.ready_agent().await;
    let first = agent
        .call(
            "presentReview",
            json!({"review": "# Kept\n\nsee src/lib.rs:1"}),
        )
        .await;
    assert!(
        !is_error(&first) && text(&first).contains("#review-1"),
        "{first}"
    );
    bridge.stop_async().await;

    let bridge = Bridge::launch(opts()).await;
    let (port, token) = (bridge.port, bridge.token.clone());
    let cookie = off_runtime(move || sign_in(port, &token)).await;
    let (status, body) = {
        let (port, cookie) = (bridge.port, cookie.clone());
        off_runtime(move || {
            let (status, _, body) = http_request(
                port,
                "GET",
                "/ui/api/reviews/1",
                &[("Cookie", &cookie)],
                b"",
            );
            (status, body)
        })
        .await
    };
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Kept"), "{body}");
    let mut agent = bridge.ready_agent().await;
    let second = agent
        .call(
            "presentReview",
            json!({"review": "# Next\n\nsee src/lib.rs:1"}),
        )
        .await;
    assert!(text(&second).contains("#review-2"), "{second}");
    let mode = std::fs::metadata(place.state_dir().join("reviews.json"))
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777);
    assert_eq!(mode.ok(), Some(0o600));
    bridge.stop_async().await;
}
