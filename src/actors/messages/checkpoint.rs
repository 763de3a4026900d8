//! Messages the Checkpoint actor handles.

use actix::Message;

/// The sessions changed (one connected, left, ended): write them within
/// `checkpoint::PROMPTLY`, so that a crash soon after does not lose them.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct SessionsChanged;
