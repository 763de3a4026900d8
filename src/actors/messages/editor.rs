//! Messages the ExtensionClient handles from other actors: the editor connection's
//! transport, sessions giving up their diffs, and notifications for the editor.

use actix::prelude::*;
use serde_json::Value;

use super::connection::Generation;
use super::session::{Peer, Rebind, SessionId};
use crate::actors::outbound::Outbound;
use crate::protocol::jsonrpc::Incoming;

/// An editor connection is ready (from its transport).
#[derive(Message)]
#[rtype(result = "()")]
pub struct EditorAttach {
    /// Identifies the transport.
    pub generation: Generation,
    /// Writes to the editor.
    pub outbound: Outbound,
}

/// The editor connection with this generation closed.
#[derive(Message)]
#[rtype(result = "()")]
pub struct EditorDetach {
    /// Identifies the transport.
    pub generation: Generation,
}

/// A frame from the editor: a notification, a request, or a response to one of the
/// bridge's requests.
#[derive(Message)]
#[rtype(result = "()")]
pub struct EditorFrame {
    /// Identifies the transport.
    pub generation: Generation,
    /// The frame, classified but not parsed further.
    pub message: Incoming,
}

/// Reject every pending diff of a session; returns how many.
#[derive(Debug, Message)]
#[rtype(result = "usize")]
pub struct CloseSessionDiffs {
    /// The session whose diffs go.
    pub session_id: SessionId,
}

/// A notification from the bridge to the editor; false when none is connected (it is
/// dropped).
#[derive(Debug, Message)]
#[rtype(result = "bool")]
pub struct NotifyEditor {
    /// Which one.
    pub method: crate::protocol::editor::BridgeNotification,
    /// Sent as they are.
    pub params: Value,
}

/// The editor connection's [`Peer`]: the ExtensionClient's recipients.
pub struct EditorPeer {
    /// Gets [`EditorAttach`].
    pub attach: Recipient<EditorAttach>,
    /// Gets [`EditorFrame`].
    pub frame: Recipient<EditorFrame>,
    /// Gets [`EditorDetach`].
    pub detach: Recipient<EditorDetach>,
}

impl Peer for EditorPeer {
    fn attach(&self, generation: Generation, outbound: Outbound, _: Recipient<Rebind>) {
        self.attach.do_send(EditorAttach {
            generation,
            outbound,
        });
    }

    fn frame(&self, generation: Generation, message: Incoming) {
        self.frame.do_send(EditorFrame {
            generation,
            message,
        });
    }

    fn detach(&self, generation: Generation) {
        self.detach.do_send(EditorDetach { generation });
    }
}
