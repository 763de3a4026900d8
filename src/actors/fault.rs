//! Fault-injection messages (feature `fault-injection`, tests only): make a
//! singleton actor panic inside a handler, or hold a request in flight.

use std::time::Duration;

use actix::Message;

use super::supervise::ActorFault;

/// Panic inside the receiving actor's handler.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), ActorFault>")]
pub struct Crash;

/// Answer only after the given time, while staying responsive to other messages.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), ActorFault>")]
pub struct Stall(pub Duration);
