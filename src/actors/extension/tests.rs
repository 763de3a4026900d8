//! In-process tests of the ExtensionClient: the editor is an outbound channel the test
//! reads and frames the test sends; the registry and automation are capturing actors;
//! the breaker runs on a clock the test sets.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use serde_json::{json, Value};
use tokio::sync::mpsc::UnboundedReceiver;

use super::breaker::{Clock, Jitter};
use super::*;
use crate::actors::activity_log::ActivityLog;
use crate::actors::messages::registry::{Broadcast, Mention};
use crate::actors::messages::session::SessionId;
use crate::actors::outbound::{FrameReceiver, Outbound};
use crate::actors::test_support::{next_json, next_matching, Capture, DEADLINE};
use crate::protocol::editor::Method;
use crate::protocol::jsonrpc::classify;

/// A clock that moves only when the test says so.
#[derive(Clone, Default)]
struct ManualClock(Arc<AtomicU64>);

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Always the longest backoff allowed.
struct Longest;

impl Jitter for Longest {
    fn pick(&mut self, _: u64, hi: u64) -> u64 {
        hi
    }
}

struct Fixture {
    client: Addr<ExtensionClient>,
    clock: ManualClock,
    tools_changed: UnboundedReceiver<ToolsChanged>,
    editor_connected: UnboundedReceiver<EditorConnected>,
    broadcasts: UnboundedReceiver<Broadcast>,
    _mentions: UnboundedReceiver<Mention>,
    automation: UnboundedReceiver<EditorEvent>,
}

fn fixture() -> Fixture {
    let metrics = Arc::new(Metrics::new());
    let (tools_changed, tools_rx) = Capture::start();
    let (editor_connected, connected_rx) = Capture::start();
    let (broadcast, broadcast_rx) = Capture::start();
    let (mention, mention_rx) = Capture::start();
    let (automation, automation_rx) = Capture::start();
    let links = ExtensionLinks {
        registry: RegistryHandle {
            tools_changed,
            editor_connected,
            broadcast,
            mention,
        },
        automation: Some(automation),
        activity: ActivityLog::new(100, Arc::clone(&metrics)).start(),
    };
    let clock = ManualClock::default();
    let config = ExtensionConfig {
        request_timeout: Duration::from_secs(30),
    };
    let client = ExtensionClient::new(config, links, metrics)
        .with_clock(Box::new(clock.clone()), Box::new(Longest))
        .start();
    Fixture {
        client,
        clock,
        tools_changed: tools_rx,
        editor_connected: connected_rx,
        broadcasts: broadcast_rx,
        _mentions: mention_rx,
        automation: automation_rx,
    }
}

/// Connects an editor: its generation and what the client writes to it.
fn connect(client: &Addr<ExtensionClient>) -> (Generation, FrameReceiver) {
    let (outbound, frames) = Outbound::channel(1 << 20);
    let generation = Generation::next();
    client.do_send(EditorAttach {
        generation,
        outbound,
    });
    (generation, frames)
}

fn frame(client: &Addr<ExtensionClient>, generation: Generation, message: Value) {
    client.do_send(EditorFrame {
        generation,
        message: classify(&message.to_string()),
    });
}

async fn call(
    client: &Addr<ExtensionClient>,
    method: Method,
    timeout: Option<Duration>,
) -> tokio::sync::oneshot::Receiver<Result<Value, ExtError>> {
    let (reply, rx) = tokio::sync::oneshot::channel();
    client
        .send(Call {
            method,
            params: json!({}),
            timeout,
            reply,
        })
        .await
        .expect("client alive");
    rx
}

async fn settled(
    rx: tokio::sync::oneshot::Receiver<Result<Value, ExtError>>,
) -> Result<Value, ExtError> {
    tokio::time::timeout(DEADLINE, rx)
        .await
        .expect("settled in time")
        .expect("answered")
}

#[actix_rt::test]
async fn a_request_settles_once_with_the_editors_answer() {
    let mut f = fixture();
    let refused = settled(call(&f.client, Method::OpenFile, None).await).await;
    assert!(matches!(refused, Err(ExtError::NotConnected)));

    let (generation, mut editor) = connect(&f.client);
    assert!(
        next_matching(&mut f.tools_changed, |_| true)
            .await
            .immediate
    );
    next_matching(&mut f.editor_connected, |_| true).await;

    let pending = call(&f.client, Method::OpenFile, None).await;
    let request = next_json(&mut editor).await;
    assert_eq!(request["method"], "extension/openFile");
    // An answer from an older connection is not taken for this one's.
    frame(
        &f.client,
        Generation::next(),
        json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "stale": true } }),
    );
    frame(
        &f.client,
        generation,
        json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "opened": true } }),
    );
    assert_eq!(
        settled(pending).await.expect("answered"),
        json!({ "opened": true })
    );
    assert_eq!(f.client.send(GetStatus).await.unwrap().pending_requests, 0);
}

#[actix_rt::test]
async fn a_timeout_opens_the_breaker_until_its_backoff_has_passed() {
    tokio::time::pause();
    let f = fixture();
    let (generation, mut editor) = connect(&f.client);
    let first = call(&f.client, Method::IsDirty, Some(Duration::from_millis(50))).await;
    next_json(&mut editor).await;
    assert!(matches!(
        settled(first).await,
        Err(ExtError::Timeout { ms: 50, .. })
    ));

    // Suspended: requests fail at once, the editor sees none.
    let refused = settled(call(&f.client, Method::GetOpenFiles, None).await).await;
    let Err(ExtError::CircuitOpen {
        failures: 1,
        retry_in_ms,
    }) = refused
    else {
        panic!("expected the breaker open, got {refused:?}");
    };
    assert_eq!(retry_in_ms, 1000, "the longest first backoff");

    // The backoff over, the next request waits while a probe of the bridge's own goes
    // out; its answer closes the breaker and the request follows.
    f.clock.0.store(1000, Ordering::SeqCst);
    let waiting = call(&f.client, Method::GetOpenFiles, None).await;
    let probe = next_json(&mut editor).await;
    assert_eq!(probe["method"], super::rpc::PROBE_METHOD.wire());
    frame(
        &f.client,
        generation,
        json!({ "jsonrpc": "2.0", "id": probe["id"], "result": [] }),
    );
    let request = next_json(&mut editor).await;
    assert_eq!(request["method"], Method::GetOpenFiles.wire());
    frame(
        &f.client,
        generation,
        json!({ "jsonrpc": "2.0", "id": request["id"], "result": {} }),
    );
    settled(waiting).await.expect("answered");
    let status = f.client.send(GetStatus).await.unwrap();
    assert_eq!(status.failures, 0);
    assert_eq!(status.circuit, super::breaker::State::Closed);
}

#[actix_rt::test]
async fn a_probe_left_unanswered_fails_what_waits_for_it_fast_and_backs_off_again() {
    tokio::time::pause();
    let f = fixture();
    let (_generation, mut editor) = connect(&f.client);
    let first = call(&f.client, Method::IsDirty, Some(Duration::from_millis(50))).await;
    next_json(&mut editor).await;
    assert!(matches!(
        settled(first).await,
        Err(ExtError::Timeout { .. })
    ));
    f.clock.0.store(1000, Ordering::SeqCst);
    // The request that finds the backoff over waits at most PROBE_HOLD for the probe,
    // then fails fast; the editor never sees it.
    let waiting = call(&f.client, Method::GetOpenFiles, None).await;
    let probe = next_json(&mut editor).await;
    assert_eq!(probe["method"], super::rpc::PROBE_METHOD.wire());
    let refused = settled(waiting).await;
    assert!(
        matches!(
            refused,
            Err(ExtError::CircuitOpen {
                failures: 1,
                retry_in_ms: 0
            })
        ),
        "{refused:?}"
    );
    assert!(refused
        .unwrap_err()
        .to_string()
        .contains("checking whether it answers again"));
    // The probe times out on its own: a second failure, a new backoff.
    tokio::time::sleep(super::rpc::PROBE_TIMEOUT).await;
    let status = f.client.send(GetStatus).await.unwrap();
    assert_eq!(status.failures, 2);
    assert_eq!(status.pending_requests, 0);
    let more = tokio::time::timeout(Duration::from_millis(100), next_json(&mut editor)).await;
    assert!(
        more.is_err(),
        "nothing but the probe reached the editor: {more:?}"
    );
}

#[actix_rt::test]
async fn a_sessions_diffs_are_rejected_when_it_goes_and_their_tabs_closed() {
    let f = fixture();
    let (_, mut editor) = connect(&f.client);
    let owner = SessionId::from("0000abcd");
    let diff = f.client.send(OpenDiff {
        session_id: owner.clone(),
        tab_name: "tab".into(),
        params: json!({}),
    });
    let diff = actix_rt::spawn(diff);
    assert_eq!(next_json(&mut editor).await["method"], "extension/openDiff");
    let other = f
        .client
        .send(CloseSessionDiffs {
            session_id: SessionId::from("ffff0000"),
        })
        .await
        .unwrap();
    assert_eq!(other, 0, "another session's diffs stay");
    let closed = f
        .client
        .send(CloseSessionDiffs { session_id: owner })
        .await
        .unwrap();
    assert_eq!(closed, 1);
    let outcome = diff.await.unwrap().unwrap();
    assert_eq!(outcome.expect("settled"), DiffOutcome::Rejected);
    let close = next_json(&mut editor).await;
    assert_eq!(close["method"], "bridge/closeDiff");
    assert_eq!(close["params"]["tabName"], "tab");
}

#[actix_rt::test]
async fn editor_events_reach_watchers_automation_and_agents() {
    let mut f = fixture();
    let (generation, _editor) = connect(&f.client);
    next_matching(&mut f.tools_changed, |t| t.immediate).await;
    let watch = f
        .client
        .send(WatchDiagnostics)
        .await
        .unwrap()
        .expect("watching");
    frame(
        &f.client,
        generation,
        json!({ "jsonrpc": "2.0", "method": "extension/diagnosticsChanged", "params": {
            "file": "/w/a.rs",
            "diagnostics": [{ "message": "boom", "severity": "error",
                "range": { "start": { "line": 1, "character": 1 }, "end": { "line": 1, "character": 2 } } }]
        }}),
    );
    let changed = tokio::time::timeout(DEADLINE, watch)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0].diagnostics[0].message, "boom");
    assert!(
        !next_matching(&mut f.tools_changed, |_| true)
            .await
            .immediate
    );
    let event = next_matching(&mut f.automation, |_| true).await;
    assert!(matches!(event, EditorEvent::Diagnostics { ref file, .. } if file == "/w/a.rs"));

    frame(
        &f.client,
        generation,
        json!({ "jsonrpc": "2.0", "method": "extension/selectionChanged", "params": {
            "file": "/w/a.rs", "startLine": 2, "startColumn": 1, "endLine": 2, "endColumn": 4,
            "selectedText": "let"
        }}),
    );
    let selection = next_matching(&mut f.broadcasts, |_| true).await;
    assert_eq!(selection.method, "selection_changed");
    assert_eq!(selection.params["text"], "let");
}
