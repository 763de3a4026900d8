//! In-process tests of the SessionRegistry: sessions are stand-ins that report what
//! the registry sends them; the editor is a capturing actor; the list-changed debounce
//! runs on tokio's paused clock.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use super::*;
use crate::actors::messages::session::{
    Absorb, Adopt, Attach, ChangedBy, ConnectionIdle, Detach, FromClient, Kept, NativeCursor,
    NativeEnd, NativeSettle, NativeStart, NativeToRead, ReplacePush, Saw, TakeNotice,
};
use crate::actors::test_support::{next_matching, Capture};

/// What a stand-in session was sent.
#[derive(Debug, Clone, PartialEq)]
enum Got {
    Evict,
    Shutdown,
    PeerJoined(usize),
    ListChanged,
    Notification(&'static str),
    MergeInto(SessionId),
    ChangedBy(String, String),
    Other,
}

struct FakeSession {
    id: SessionId,
    got: UnboundedSender<Got>,
}

impl Actor for FakeSession {
    type Context = Context<Self>;
}

macro_rules! record {
    ($msg:ty, |$m:ident, $act:ident| $got:expr, $answer:expr) => {
        impl Handler<$msg> for FakeSession {
            type Result = MessageResult<$msg>;
            fn handle(&mut self, $m: $msg, _: &mut Context<Self>) -> MessageResult<$msg> {
                let $act = &*self;
                let _ = $act.got.send($got);
                MessageResult($answer)
            }
        }
    };
}

record!(Evict, |_m, _a| Got::Evict, ());
record!(Shutdown, |_m, _a| Got::Shutdown, ());
record!(
    AgentLog,
    |m, _a| Got::PeerJoined(m.data["activeSessions"].as_u64().unwrap_or(0) as usize),
    ()
);
record!(NotifyListChanged, |_m, _a| Got::ListChanged, true);
record!(SendNotification, |m, _a| Got::Notification(m.method), ());
record!(MergeInto, |m, _a| Got::MergeInto(m.target_id), ());
record!(
    Describe,
    |_m, _a| Got::Other,
    SessionInfo::unresponsive(_a.id.clone())
);
record!(Keep, |_m, _a| Got::Other, Kept::default());
record!(Attach, |_m, _a| Got::Other, ());
record!(Detach, |_m, _a| Got::Other, ());
record!(FromClient, |_m, _a| Got::Other, ());
record!(ReplacePush, |_m, _a| Got::Other, ());
record!(ConnectionIdle, |_m, _a| Got::Other, ());
record!(Adopt, |_m, _a| Got::Other, ());
record!(Absorb, |_m, _a| Got::Other, ());
record!(Saw, |_m, _a| Got::Other, ());
record!(ChangedBy, |m, _a| Got::ChangedBy(m.display, m.by), ());
record!(TakeNotice, |_m, _a| Got::Other, None);
record!(NativeStart, |_m, _a| Got::Other, None);
record!(NativeCursor, |_m, _a| Got::Other, None);
record!(NativeToRead, |_m, _a| Got::Other, Vec::new());
record!(NativeSettle, |_m, _a| Got::Other, (Vec::new(), 0));
record!(NativeEnd, |_m, _a| Got::Other, None);
record!(
    crate::actors::messages::watch::WorkspaceChanged,
    |_m, _a| Got::Other,
    ()
);

fn fake(id: &str) -> (SessionHandle, SessionId, UnboundedReceiver<Got>) {
    let (got, rx) = mpsc::unbounded_channel();
    let id = SessionId::from(id);
    let addr = FakeSession {
        id: id.clone(),
        got,
    }
    .start();
    let handle = SessionHandle::of(&addr);
    (handle, id, rx)
}

fn registry(max: usize) -> (Addr<SessionRegistry>, UnboundedReceiver<NotifyEditor>) {
    let metrics = Arc::new(Metrics::new());
    let activity = ActivityLog::new(100, Arc::clone(&metrics)).start();
    let (editor, editor_rx) = Capture::start();
    let registry = SessionRegistry::new(
        max,
        Duration::ZERO,
        Duration::from_secs(1),
        editor,
        activity,
        metrics,
    );
    (registry.start(), editor_rx)
}

fn admit(candidate: &SessionHandle, id: &SessionId, anchor: Option<&str>) -> Admit {
    Admit {
        candidate: candidate.clone(),
        candidate_id: id.clone(),
        anchor: anchor.map(str::to_string),
        kind: ConnectionKind::Ide,
        client_pids: Vec::new(),
        last_try: true,
    }
}

/// A stand-in session admitted to `registry` as a new agent.
async fn admitted(
    registry: &Addr<SessionRegistry>,
    id: &str,
) -> (SessionHandle, SessionId, UnboundedReceiver<Got>) {
    let (handle, id, got) = fake(id);
    let admission = registry.send(admit(&handle, &id, None)).await.unwrap();
    assert!(!admission.expect("admitted").reattached);
    (handle, id, got)
}

fn report(registry: &Addr<SessionRegistry>, id: &SessionId, change: SessionChange) {
    registry.do_send(SessionEvent {
        session_id: id.clone(),
        change,
    });
}

/// An IDE connection of the session completed its handshake.
fn ide_initialized() -> SessionChange {
    SessionChange::Initialized {
        client: None,
        ide: true,
    }
}

#[actix_rt::test]
async fn admission_reattaches_by_anchor_refuses_when_full_and_evicts_a_session_in_grace() {
    let (registry, mut editor) = registry(1);
    let (a, a_id, mut a_got) = fake("0000000a");
    let first = registry
        .send(admit(&a, &a_id, Some("anchor")))
        .await
        .unwrap();
    let first = first.expect("admitted");
    assert!(!first.reattached);
    let told = next_matching(&mut editor, |n| {
        n.method == crate::protocol::editor::BridgeNotification::ClaudeConnectionChanged
    })
    .await;
    assert_eq!(told.params["agents"], 1);

    let (b, b_id, _b_got) = fake("0000000b");
    let again = registry
        .send(admit(&b, &b_id, Some("anchor")))
        .await
        .unwrap();
    let again = again.expect("reattached");
    assert!(again.reattached);
    assert_eq!(again.session_id, a_id);

    let (c, c_id, _c_got) = fake("0000000c");
    let full = registry.send(admit(&c, &c_id, None)).await.unwrap();
    assert!(matches!(full, Err(AdmitError::TooManySessions { max: 1 })));

    // In its grace period the only session makes room for a new agent.
    report(&registry, &a_id, SessionChange::Detached);
    let admitted = registry.send(admit(&c, &c_id, None)).await.unwrap();
    assert_eq!(admitted.expect("admitted").session_id, c_id);
    next_matching(&mut a_got, |g| *g == Got::Evict).await;
    let snapshot = registry.send(Snapshot).await.unwrap().expect("snapshot");
    assert_eq!(snapshot.evicted, 1);
    assert_eq!(snapshot.sessions.len(), 1);
    assert_eq!(snapshot.sessions[0].id, c_id);
}

#[actix_rt::test]
async fn tool_list_changes_wait_for_the_debounce_and_for_a_listener() {
    tokio::time::pause();
    let (registry, _editor) = registry(4);
    let (_, a_id, mut a_got) = admitted(&registry, "0000000a").await;

    // Nobody listens yet: the change waits for the first initialized agent.
    registry.do_send(ToolsChanged { immediate: true });
    let snapshot = registry.send(Snapshot).await.unwrap().unwrap();
    assert!(snapshot.pending_list_changed);
    report(&registry, &a_id, ide_initialized());
    next_matching(&mut a_got, |g| *g == Got::ListChanged).await;

    // Debounced: nothing before LIST_CHANGED_DEBOUNCE, one notification after.
    registry.do_send(ToolsChanged { immediate: false });
    registry.do_send(ToolsChanged { immediate: false });
    tokio::time::sleep(LIST_CHANGED_DEBOUNCE - Duration::from_millis(100)).await;
    assert!(a_got.try_recv().is_err(), "nothing before the debounce");
    next_matching(&mut a_got, |g| *g == Got::ListChanged).await;
    tokio::time::sleep(LIST_CHANGED_DEBOUNCE * 2).await;
    assert!(a_got.try_recv().is_err(), "two changes, one notification");
}

#[actix_rt::test]
async fn a_second_session_of_the_same_client_process_merges_into_the_first() {
    let (registry, _editor) = registry(4);
    let (_, a_id, mut a_got) = admitted(&registry, "0000000a").await;
    let (_, b_id, mut b_got) = admitted(&registry, "0000000b").await;
    next_matching(&mut a_got, |g| *g == Got::PeerJoined(2)).await;
    report(&registry, &a_id, SessionChange::ClientPid(4242));
    report(&registry, &b_id, SessionChange::ClientPid(4242));
    assert_eq!(
        next_matching(&mut b_got, |g| matches!(g, Got::MergeInto(_))).await,
        Got::MergeInto(a_id.clone())
    );
    let snapshot = registry.send(Snapshot).await.unwrap().unwrap();
    assert_eq!(snapshot.merged, 1);
    assert_eq!(snapshot.sessions.len(), 1);
}

#[actix_rt::test]
async fn mentions_wait_for_a_listener_and_selections_reach_only_listeners() {
    let (registry, _editor) = registry(4);
    let (_, a_id, mut a_got) = admitted(&registry, "0000000a").await;
    registry.do_send(Mention(serde_json::json!({ "text": "x" })));
    registry.do_send(Broadcast {
        method: "selection_changed",
        params: serde_json::json!({}),
    });
    report(&registry, &a_id, ide_initialized());
    assert_eq!(
        next_matching(&mut a_got, |g| matches!(g, Got::Notification(_))).await,
        Got::Notification("at_mentioned"),
        "the queued mention, and not the selection sent before the agent listened"
    );
    registry.do_send(CloseAll);
    next_matching(&mut a_got, |g| *g == Got::Shutdown).await;
    let (b, b_id, _) = fake("0000000b");
    let refused = registry.send(admit(&b, &b_id, None)).await.unwrap();
    assert!(matches!(refused, Err(AdmitError::ShuttingDown)));
}

/// A session holding file claims keeps its place in its grace period (an HTTP agent
/// between requests is in grace): a new agent is refused until the claims end, then
/// takes it.
#[actix_rt::test]
async fn a_session_holding_claims_is_not_evicted_to_make_room() {
    let (registry, _editor) = registry(1);
    let (_a, a_id, mut a_got) = admitted(&registry, "0000000a").await;
    registry.do_send(ClaimHolders(vec![a_id.clone()]));
    report(&registry, &a_id, SessionChange::Idle);
    let (c, c_id, _c_got) = fake("0000000c");
    let full = registry.send(admit(&c, &c_id, None)).await.unwrap();
    assert!(matches!(full, Err(AdmitError::TooManySessions { max: 1 })));
    registry.do_send(ClaimHolders(Vec::new()));
    let admitted = registry.send(admit(&c, &c_id, None)).await.unwrap();
    assert_eq!(admitted.expect("admitted").session_id, c_id);
    next_matching(&mut a_got, |g| *g == Got::Evict).await;
}
