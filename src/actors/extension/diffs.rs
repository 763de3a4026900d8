//! Pending diffs: each belongs to the session that opened it and to a tab. A new diff
//! in the same tab rejects the old one; a session's diffs are rejected when its IDE
//! connection goes; the editor is told to close a rejected diff's tab.

use crate::protocol::editor::Method;
use actix::prelude::*;
use serde_json::{json, Value};
use tokio::sync::oneshot;

use super::rpc::answer_refusal;
use super::{CloseDiff, CloseSessionDiffs, DiffOutcome, ExtError, ExtensionClient, OpenDiff, NAME};
use crate::actors::messages::session::SessionId;
use crate::actors::supervise::guard;
use crate::protocol::jsonrpc;

impl ExtensionClient {
    /// Settles the pending diff in `tab` as rejected and tells the editor to close it.
    fn close_diff(&mut self, tab: &str, ctx: &mut Context<Self>) -> bool {
        let id = self
            .pending
            .iter()
            .find(|(_, p)| p.diff.as_ref().is_some_and(|(t, _)| t == tab))
            .map(|(id, _)| *id);
        let Some(p) = id.and_then(|id| self.pending.remove(&id)) else {
            return false;
        };
        if let Some(t) = p.timer {
            ctx.cancel_future(t);
        }
        let _ = p.reply.send(Ok(json!({ "decision": "DIFF_REJECTED" })));
        if let Some(c) = &self.conn {
            c.outbound.send_text(jsonrpc::notification(
                crate::protocol::editor::BridgeNotification::CloseDiff.name(),
                &json!({ "tabName": tab }),
            ));
        }
        true
    }

    fn close_session_diffs(&mut self, session: &SessionId, ctx: &mut Context<Self>) -> usize {
        let tabs: Vec<String> = self
            .pending
            .values()
            .filter_map(|p| p.diff.as_ref())
            .filter(|(_, s)| s == session)
            .map(|(t, _)| t.clone())
            .collect();
        tabs.iter().filter(|t| self.close_diff(t, ctx)).count()
    }
}

/// What the user decided, from the editor's answer to `extension/openDiff`.
fn outcome(answer: &Value) -> DiffOutcome {
    match answer.get("decision").and_then(Value::as_str) {
        Some("FILE_SAVED") | Some("accepted") => DiffOutcome::Saved(
            answer
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        ),
        _ => DiffOutcome::Rejected,
    }
}

impl Handler<OpenDiff> for ExtensionClient {
    type Result = ResponseFuture<Result<DiffOutcome, ExtError>>;
    fn handle(&mut self, msg: OpenDiff, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, rx) = oneshot::channel();
        answer_refusal(guard(NAME, self, ctx, |act, ctx| {
            // A new diff in the same tab rejects the old one.
            act.close_diff(&msg.tab_name, ctx);
            act.send_request(
                &Method::OpenDiff.wire(),
                &msg.params,
                None,
                Some((msg.tab_name.clone(), msg.session_id.clone())),
                reply,
                ctx,
            )
        }));
        Box::pin(async move {
            let answer = rx
                .await
                .unwrap_or(Err(ExtError::Restarted(Method::OpenDiff.wire())))?;
            Ok(outcome(&answer))
        })
    }
}

impl Handler<CloseDiff> for ExtensionClient {
    type Result = bool;
    fn handle(&mut self, msg: CloseDiff, ctx: &mut Context<Self>) -> bool {
        guard(NAME, self, ctx, |act, ctx| {
            act.close_diff(&msg.tab_name, ctx)
        })
        .unwrap_or(false)
    }
}

impl Handler<CloseSessionDiffs> for ExtensionClient {
    type Result = usize;
    fn handle(&mut self, msg: CloseSessionDiffs, ctx: &mut Context<Self>) -> usize {
        guard(NAME, self, ctx, |act, ctx| {
            act.close_session_diffs(&msg.session_id, ctx)
        })
        .unwrap_or(0)
    }
}
