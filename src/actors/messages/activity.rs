//! Messages the ActivityLog handles from every other actor (the activity log itself
//! depends on none of them).

use super::session::SessionId;
use actix::prelude::*;

pub use crate::protocol::activity::LifecycleEvent;

/// Record a lifecycle event.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct RecordLifecycle {
    /// What happened.
    pub event: LifecycleEvent,
    /// The agent session it concerns, if any.
    pub session_id: Option<SessionId>,
    /// Shown after the event in the timeline.
    pub detail: String,
}
