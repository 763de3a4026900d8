//! The identity of a connection, shared by transports and the actors they feed.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Identifies one connection (a WebSocket, or one HTTP MCP session) for the process's
/// lifetime, so that a frame or a close from an old connection is never taken for a
/// newer one's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Generation(u64);

static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

impl Generation {
    /// A generation no other connection of this process has had.
    pub fn next() -> Self {
        Self(NEXT_GENERATION.fetch_add(1, Ordering::Relaxed))
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
