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

/// Lets an event through only when at least `interval` has passed since the last one
/// let through: "less than 50 ms between connections" is answered 429.
#[derive(Debug)]
pub struct MinInterval {
    interval: Duration,
    last: Option<Instant>,
}

impl MinInterval {
    /// A gate with this least spacing (zero lets everything through).
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            last: None,
        }
    }

    /// Records an event at `now` when far enough from the last admitted one; otherwise
    /// how long to wait. Refused events do not move the gate.
    pub fn try_acquire(&mut self, now: Instant) -> Result<(), Duration> {
        if let Some(last) = self.last {
            let since = now.saturating_duration_since(last);
            if since < self.interval {
                return Err(self.interval - since);
            }
        }
        self.last = Some(now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_interval_refuses_at_49_ms_and_admits_at_50_ms() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut gate = MinInterval::new(ms(50));
        assert_eq!(gate.try_acquire(t0), Ok(()));
        assert_eq!(gate.try_acquire(t0 + ms(49)), Err(ms(1)));
        // A refused attempt does not push the next slot back.
        assert_eq!(gate.try_acquire(t0 + ms(50)), Ok(()));
        assert_eq!(gate.try_acquire(t0 + ms(51)), Err(ms(49)));
        let mut off = MinInterval::new(Duration::ZERO);
        assert!(off.try_acquire(t0).is_ok() && off.try_acquire(t0).is_ok());
    }

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
