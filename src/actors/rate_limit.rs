//! O(1) sliding-window rate limiter over a ring buffer of timestamps.

use std::time::{Duration, Instant};

/// Allows at most `capacity` events in any window of `window`.
#[derive(Debug)]
pub struct SlidingWindow {
    stamps: Box<[Option<Instant>]>,
    head: usize,
    window: Duration,
}

impl SlidingWindow {
    /// A limiter for `capacity` events per `window` (capacity ≥ 1).
    pub fn new(capacity: usize, window: Duration) -> Self {
        Self {
            stamps: vec![None; capacity.max(1)].into_boxed_slice(),
            head: 0,
            window,
        }
    }

    /// Records an event at `now` if the window has room; false when it is full.
    pub fn try_acquire(&mut self, now: Instant) -> bool {
        // `head` holds the oldest of the last `capacity` events.
        if let Some(oldest) = self.stamps[self.head] {
            if now.saturating_duration_since(oldest) < self.window {
                return false;
            }
        }
        self.stamps[self.head] = Some(now);
        self.head = (self.head + 1) % self.stamps.len();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_exactly_capacity_per_window() {
        let t0 = Instant::now();
        let mut rl = SlidingWindow::new(200, Duration::from_secs(60));
        for i in 0..200 {
            assert!(rl.try_acquire(t0 + Duration::from_millis(i)), "event {i}");
        }
        assert!(
            !rl.try_acquire(t0 + Duration::from_millis(200)),
            "201st refused"
        );
        // A refused event does not consume a slot: once the first event ages out,
        // exactly one more fits.
        assert!(rl.try_acquire(t0 + Duration::from_secs(60)));
        assert!(!rl.try_acquire(t0 + Duration::from_secs(60)));
        assert!(rl.try_acquire(t0 + Duration::from_secs(60) + Duration::from_millis(1)));
    }
}
