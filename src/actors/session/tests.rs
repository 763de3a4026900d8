//! In-process tests of the Session: real tools and settings, the registry, the editor
//! and the activity log replaced by actors that capture what the session sends, and
//! tokio's paused clock for the grace period.

use std::time::Duration;

use actix::prelude::*;
use tokio::sync::mpsc::UnboundedReceiver;

use super::*;
use crate::actors::activity_log::RecordToolCall;
use crate::actors::outbound::{FrameReceiver, Outbound};
use crate::actors::test_support::{next_json, next_matching, Capture};
use crate::config::Settings;
use crate::protocol::jsonrpc::classify;

/// The default grace period (the tests run on tokio's paused clock).
fn grace() -> Duration {
    Settings::default().grace_period()
}

struct Fixture {
    session: Addr<Session>,
    id: SessionId,
    events: UnboundedReceiver<SessionEvent>,
    diffs: UnboundedReceiver<CloseSessionDiffs>,
    page_diffs: UnboundedReceiver<CloseSessionDiffs>,
    lifecycle: UnboundedReceiver<RecordLifecycle>,
    calls: UnboundedReceiver<RecordToolCall>,
    _dir: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let services = crate::app::services_for_tests(Settings::default(), dir.path());
    let (registry, events) = Capture::start();
    let (diffs, diff_rx) = Capture::start();
    let (page_diffs, page_diff_rx) = Capture::start();
    let (lifecycle, lifecycle_rx) = Capture::start();
    let (tool_calls, calls) = Capture::start();
    let links = SessionLinks {
        registry,
        diffs,
        page_diffs,
        lifecycle,
        tool_calls,
    };
    let id = SessionId::from("0000abcd");
    Fixture {
        session: Session::new(id.clone(), services, links).start(),
        id,
        events,
        diffs: diff_rx,
        page_diffs: page_diff_rx,
        lifecycle: lifecycle_rx,
        calls,
        _dir: dir,
    }
}

/// A connection of `kind`: its generation, what the session writes to it, and where
/// its `Rebind` would go.
struct Conn {
    generation: Generation,
    frames: FrameReceiver,
    _rebinds: UnboundedReceiver<Rebind>,
}

fn attach(session: &Addr<Session>, kind: ConnectionKind) -> Conn {
    let (outbound, frames) = Outbound::channel(1 << 20);
    let (transport, rebinds) = Capture::start();
    let generation = Generation::next();
    session.do_send(Attach {
        generation,
        kind,
        outbound,
        transport,
        mcp: Default::default(),
    });
    Conn {
        generation,
        frames,
        _rebinds: rebinds,
    }
}

fn send(session: &Addr<Session>, conn: &Conn, text: &str) {
    session.do_send(FromClient {
        generation: conn.generation,
        message: classify(text),
        reply: None,
    });
}

fn is(change: SessionChange) -> impl FnMut(&SessionEvent) -> bool {
    move |e| e.change == change
}

#[actix_rt::test]
async fn the_grace_period_ends_a_session_only_when_no_connection_returns() {
    tokio::time::pause();
    let mut f = fixture();
    let conn = attach(&f.session, ConnectionKind::Ide);
    f.session.do_send(Detach {
        generation: conn.generation,
        ended: false,
    });
    next_matching(&mut f.events, is(SessionChange::Detached)).await;

    // Back within the grace period: the timer is cancelled.
    let again = attach(&f.session, ConnectionKind::Ide);
    next_matching(&mut f.events, is(SessionChange::Attached)).await;
    tokio::time::sleep(grace() * 2).await;
    let info = f.session.send(Describe).await.expect("session alive");
    assert!(info.connected && !info.in_grace);
    assert!(f.events.try_recv().is_err(), "no event while connected");

    // Gone for good: the session ends when the grace period is over, not before.
    f.session.do_send(Detach {
        generation: again.generation,
        ended: false,
    });
    next_matching(&mut f.events, is(SessionChange::Detached)).await;
    tokio::time::sleep(grace() - Duration::from_secs(1)).await;
    assert!(f.session.send(Describe).await.expect("alive").in_grace);
    let ended = next_matching(&mut f.events, is(SessionChange::Ended)).await;
    assert_eq!(ended.session_id, f.id);
    next_matching(&mut f.lifecycle, |r| {
        r.event == LifecycleEvent::GraceExpired
    })
    .await;
    assert!(
        f.session.send(Describe).await.is_err(),
        "the session stopped"
    );
}

#[actix_rt::test]
async fn a_client_that_ends_the_session_skips_the_grace_period() {
    tokio::time::pause();
    let mut f = fixture();
    let conn = attach(&f.session, ConnectionKind::Http);
    f.session.do_send(Detach {
        generation: conn.generation,
        ended: true,
    });
    next_matching(&mut f.events, is(SessionChange::Ended)).await;
    assert_eq!(f.diffs.recv().await.expect("diffs closed").session_id, f.id);
}

#[actix_rt::test]
async fn requests_wait_for_initialize_then_tool_calls_are_answered_and_recorded() {
    let mut f = fixture();
    let mut conn = attach(&f.session, ConnectionKind::Relay);
    send(
        &f.session,
        &conn,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    let refused = next_json(&mut conn.frames).await;
    assert_eq!(refused["id"], 1);
    assert_eq!(refused["error"]["code"], -32600);

    send(
        &f.session,
        &conn,
        r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"t","version":"1"}}}"#,
    );
    let init = next_json(&mut conn.frames).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    send(
        &f.session,
        &conn,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    next_matching(
        &mut f.events,
        is(SessionChange::Initialized {
            client: Some("t".into()),
            ide: false,
        }),
    )
    .await;

    send(
        &f.session,
        &conn,
        r#"{"jsonrpc":"2.0","id":3,"method":"resources/watch"}"#,
    );
    assert_eq!(next_json(&mut conn.frames).await["error"]["code"], -32601);

    send(
        &f.session,
        &conn,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"getWorkspaceFolders","arguments":{}}}"#,
    );
    let answer = next_json(&mut conn.frames).await;
    assert_eq!(answer["id"], 4);
    assert!(answer["result"]["isError"].is_null(), "{answer}");
    let call = f.calls.recv().await.expect("call recorded");
    assert_eq!(call.tool, "getWorkspaceFolders");
    assert_eq!(call.session_id, f.id);
    assert_eq!(call.status.as_str(), "success");
    let info = f.session.send(Describe).await.expect("alive");
    assert_eq!(info.client.as_deref(), Some("t 1"));
    assert_eq!(info.active_tool_calls, 0);
}

#[actix_rt::test]
async fn losing_the_ide_connection_rejects_the_diffs_but_keeps_the_session() {
    let mut f = fixture();
    let ide = attach(&f.session, ConnectionKind::Ide);
    let _relay = attach(&f.session, ConnectionKind::Relay);
    f.session.do_send(Detach {
        generation: ide.generation,
        ended: false,
    });
    assert_eq!(f.diffs.recv().await.expect("diffs closed").session_id, f.id);
    let page = f.page_diffs.recv().await.expect("page diffs closed");
    assert_eq!(page.session_id, f.id, "the page's diffs go too");
    let info = f.session.send(Describe).await.expect("alive");
    assert!(info.connected && !info.in_grace);
    assert_eq!(info.connections.len(), 1);
    while let Ok(event) = f.events.try_recv() {
        assert_eq!(
            event.change,
            SessionChange::Attached,
            "no detach reaches the registry while a connection remains"
        );
    }
}

#[actix_rt::test]
async fn a_merged_session_hands_its_connections_over() {
    let mut from = fixture();
    let into = fixture();
    let (outbound, _frames) = Outbound::channel(1 << 20);
    let (transport, mut rebinds) = Capture::<Rebind>::start();
    let generation = Generation::next();
    from.session.do_send(Attach {
        generation,
        kind: ConnectionKind::Relay,
        outbound,
        transport,
        mcp: Default::default(),
    });
    from.session.do_send(MergeInto {
        target: SessionHandle::from(into.session.clone()),
        target_id: into.id.clone(),
    });
    let rebind = tokio::time::timeout(crate::actors::test_support::DEADLINE, rebinds.recv())
        .await
        .expect("rebound in time")
        .expect("a rebind");
    let answer = rebind
        .0
        .describe
        .send(Describe)
        .await
        .expect("target alive");
    assert_eq!(answer.id, into.id);
    assert_eq!(answer.connections.len(), 1);
    next_matching(&mut from.lifecycle, |r| {
        r.event == LifecycleEvent::SessionMerged
    })
    .await;
    // A frame still addressed to the merged session reaches the target.
    from.session.do_send(Detach {
        generation,
        ended: false,
    });
    let mut into = into;
    next_matching(&mut into.events, is(SessionChange::Detached)).await;
}
