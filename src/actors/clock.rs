//! Time as the actors that reason about it see it, injectable so that tests drive it
//! (the editor's circuit breaker, automation's cooldowns and quiet period).

/// Milliseconds since some fixed point.
pub trait Clock {
    /// The current reading.
    fn now_ms(&self) -> u64;
}

/// The real clock (monotonic).
pub struct SystemClock(std::time::Instant);

impl Default for SystemClock {
    fn default() -> Self {
        Self(std::time::Instant::now())
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        self.0.elapsed().as_millis() as u64
    }
}
