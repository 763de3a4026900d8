//! Time as the actors that reason about it see it, injectable so that tests drive it
//! (the editor's circuit breaker, automation's cooldowns and quiet period).

/// Milliseconds since some fixed point.
pub trait Clock {
    /// The current reading.
    fn now_ms(&self) -> u64;
}

/// The real clock (monotonic).
pub struct SystemClock(std::time::Instant, u64);

impl Default for SystemClock {
    fn default() -> Self {
        Self::starting_at(0)
    }
}

impl SystemClock {
    /// A clock that reads `ms` now: times up to `ms` before it are readings too (an
    /// earlier run's, mapped onto this one).
    pub fn starting_at(ms: u64) -> Self {
        Self(std::time::Instant::now(), ms)
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        self.1 + self.0.elapsed().as_millis() as u64
    }
}
