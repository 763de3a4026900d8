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

    /// Records an event at `now` if the window has room; when it is full, how long
    /// until it has.
    pub fn try_acquire(&mut self, now: Instant) -> Result<(), Duration> {
        // `head` holds the oldest of the last `capacity` events.
        if let Some(oldest) = self.stamps[self.head] {
            let age = now.saturating_duration_since(oldest);
            if age < self.window {
                return Err(self.window - age);
            }
        }
        self.stamps[self.head] = Some(now);
        self.head = (self.head + 1) % self.stamps.len();
        Ok(())
    }
}

/// Paces events at least `interval` apart: each caller gets the next free slot, and
/// waits for it (connection bursts are held, not refused). A slot further away than the
/// caller may wait is refused, so at most `max_wait / interval` callers wait at once.
#[derive(Debug)]
pub struct MinInterval {
    interval: Duration,
    last: Option<Instant>,
}

impl MinInterval {
    /// A pacer with this least spacing (zero lets everything through at once).
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            last: None,
        }
    }

    /// Reserves the next slot at or after `now`: `Ok(wait)` until it, or `Err(wait)`
    /// when that is longer than `max_wait` (nothing is reserved then).
    pub fn reserve(&mut self, now: Instant, max_wait: Duration) -> Result<Duration, Duration> {
        let slot = match self.last {
            Some(last) => (last + self.interval).max(now),
            None => now,
        };
        let wait = slot - now;
        if wait > max_wait {
            return Err(wait);
        }
        self.last = Some(slot);
        Ok(wait)
    }
}

/// How often a burst of dropped notifications is logged.
const DROP_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// The per-connection request and notification limits, shared by the WebSocket and
/// the HTTP transports.
pub struct ConnectionLimits {
    requests: SlidingWindow,
    notifications: SlidingWindow,
    request_limit: usize,
    window: Duration,
    dropped_notifications: u64,
    last_drop_log: Option<Instant>,
    metrics: std::sync::Arc<crate::metrics::Metrics>,
}

/// What to do with a message from the client.
pub enum Verdict {
    /// Pass it on.
    Pass,
    /// Answer the request with this error instead (-32004).
    Refuse(crate::protocol::jsonrpc::RpcError),
    /// Drop the notification (counted and logged).
    Drop,
}

impl ConnectionLimits {
    /// The limits of `rate_limit.*`.
    pub fn new(
        settings: &crate::config::RateLimitSettings,
        metrics: std::sync::Arc<crate::metrics::Metrics>,
    ) -> Self {
        let window = settings.window;
        Self {
            requests: SlidingWindow::new(settings.requests, window),
            notifications: SlidingWindow::new(settings.notifications, window),
            request_limit: settings.requests,
            window,
            dropped_notifications: 0,
            last_drop_log: None,
            metrics,
        }
    }

    /// Checks one message against the limits at `now`.
    pub fn check(&mut self, message: &crate::protocol::jsonrpc::Incoming, now: Instant) -> Verdict {
        use crate::protocol::jsonrpc::{Incoming, RpcError, RATE_LIMITED};
        match message {
            Incoming::Request(_) => match self.requests.try_acquire(now) {
                Ok(()) => Verdict::Pass,
                Err(wait) => {
                    self.metrics.rate_limit_rejections.inc();
                    // Whole milliseconds, rounded up: retrying then finds room.
                    let retry_ms = wait.as_micros().div_ceil(1000);
                    let mut err = RpcError::new(
                        RATE_LIMITED,
                        format!(
                            "Rate limit exceeded: at most {} requests per {} s on one connection; retry in {retry_ms} ms",
                            self.request_limit,
                            self.window.as_secs()
                        ),
                    );
                    err.data = Some(serde_json::json!({ "retryAfterMs": retry_ms }));
                    Verdict::Refuse(err)
                }
            },
            // What is current in the editor (its selection, its active file) is not
            // counted: dropping one could leave the newest unsaid for good, and the
            // editor client keeps only the newest anyway (debounced).
            Incoming::Notification { method, .. } if latest_wins(method) => Verdict::Pass,
            Incoming::Notification { method, .. }
                if self.notifications.try_acquire(now).is_err() =>
            {
                self.metrics.dropped_notifications.inc();
                self.dropped_notifications += 1;
                if self
                    .last_drop_log
                    .is_none_or(|at| now.duration_since(at) >= DROP_LOG_INTERVAL)
                {
                    tracing::warn!(
                        method,
                        dropped = self.dropped_notifications,
                        "client notifications over the rate limit are being dropped"
                    );
                    self.last_drop_log = Some(now);
                }
                Verdict::Drop
            }
            _ => Verdict::Pass,
        }
    }
}

/// A notification saying what is current now, whose newest copy is all that matters
/// ([`EditorNotification::latest_wins`](crate::protocol::editor::EditorNotification::latest_wins)).
fn latest_wins(method: &str) -> bool {
    crate::protocol::editor::EditorNotification::parse(method).is_some_and(|n| n.latest_wins())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paces_a_burst_and_refuses_past_the_longest_wait() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut gate = MinInterval::new(ms(50));
        // A burst of ten in the same instant: slots 0, 50, …, 450 ms.
        for i in 0..10 {
            assert_eq!(gate.reserve(t0, ms(450)), Ok(ms(50 * i)), "caller {i}");
        }
        // The eleventh would wait 500 ms, more than it may: refused, nothing reserved.
        assert_eq!(gate.reserve(t0, ms(450)), Err(ms(500)));
        assert_eq!(gate.reserve(t0 + ms(51), ms(450)), Ok(ms(449)));
        // Once the burst is over, a caller goes through at once.
        assert_eq!(gate.reserve(t0 + ms(2000), ms(0)), Ok(ms(0)));
        let mut off = MinInterval::new(Duration::ZERO);
        assert_eq!(off.reserve(t0, ms(0)), Ok(ms(0)));
        assert_eq!(off.reserve(t0, ms(0)), Ok(ms(0)));
    }

    #[test]
    fn admits_exactly_capacity_per_window() {
        let t0 = Instant::now();
        let mut rl = SlidingWindow::new(200, Duration::from_secs(60));
        for i in 0..200 {
            assert!(
                rl.try_acquire(t0 + Duration::from_millis(i)).is_ok(),
                "event {i}"
            );
        }
        assert!(
            rl.try_acquire(t0 + Duration::from_millis(200)).is_err(),
            "201st refused"
        );
        // A refused event does not consume a slot: once the first event ages out,
        // exactly one more fits.
        assert!(rl.try_acquire(t0 + Duration::from_secs(60)).is_ok());
        // Full: room again when the oldest event leaves the window.
        assert_eq!(
            rl.try_acquire(t0 + Duration::from_secs(60)),
            Err(Duration::from_millis(1))
        );
        assert!(rl
            .try_acquire(t0 + Duration::from_secs(60) + Duration::from_millis(1))
            .is_ok());
    }
}
