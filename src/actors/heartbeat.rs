//! Ping/pong liveness with sleep/wake tolerance, as a pure state machine so that tests
//! can drive it with injected time.

use std::time::{Duration, Instant};

/// What the transport should do on a heartbeat tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tick {
    /// Send a ping.
    Ping,
    /// The timer fired far too late (the machine slept): the deadline was reset; ping.
    Slept,
    /// Nothing heard for longer than the timeout: close the connection.
    TimedOut,
}

/// Tracks when the peer was last heard from and when the timer last fired.
#[derive(Debug)]
pub struct Heartbeat {
    interval: Duration,
    timeout: Duration,
    last_seen: Instant,
    last_tick: Instant,
}

impl Heartbeat {
    /// A heartbeat ticking every `interval` that gives up after `timeout` of silence.
    pub fn new(interval: Duration, timeout: Duration, now: Instant) -> Self {
        Self {
            interval,
            timeout,
            last_seen: now,
            last_tick: now,
        }
    }

    /// The tick interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Any frame from the peer (pong or otherwise) proves it is alive.
    pub fn seen(&mut self, now: Instant) {
        self.last_seen = now;
    }

    /// Called by the interval timer.
    pub fn tick(&mut self, now: Instant) -> Tick {
        let since_tick = now.saturating_duration_since(self.last_tick);
        self.last_tick = now;
        if since_tick > self.interval * 2 {
            // The peer had no chance to answer while we were suspended.
            self.last_seen = now;
            return Tick::Slept;
        }
        if now.saturating_duration_since(self.last_seen) > self.timeout {
            return Tick::TimedOut;
        }
        Tick::Ping
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn a_silent_peer_times_out_and_a_talking_one_does_not() {
        let t0 = Instant::now();
        let mut hb = Heartbeat::new(30 * S, 90 * S, t0);
        assert_eq!(hb.tick(t0 + 30 * S), Tick::Ping);
        assert_eq!(hb.tick(t0 + 60 * S), Tick::Ping);
        assert_eq!(
            hb.tick(t0 + 90 * S),
            Tick::Ping,
            "exactly at the timeout is still alive"
        );
        assert_eq!(hb.tick(t0 + 120 * S), Tick::TimedOut);

        let mut hb = Heartbeat::new(30 * S, 90 * S, t0);
        for i in 1..10u32 {
            hb.seen(t0 + 30 * i * S - S);
            assert_eq!(hb.tick(t0 + 30 * i * S), Tick::Ping);
        }
    }

    #[test]
    fn a_late_timer_after_sleep_resets_the_deadline_instead_of_dropping() {
        let t0 = Instant::now();
        let mut hb = Heartbeat::new(30 * S, 90 * S, t0);
        assert_eq!(hb.tick(t0 + 30 * S), Tick::Ping);
        // The laptop slept for an hour: the next tick comes 3600 s late.
        assert_eq!(hb.tick(t0 + 3630 * S), Tick::Slept);
        // The peer gets a full timeout to answer after wake-up.
        assert_eq!(hb.tick(t0 + 3660 * S), Tick::Ping);
        assert_eq!(hb.tick(t0 + 3690 * S), Tick::Ping);
        assert_eq!(hb.tick(t0 + 3720 * S), Tick::Ping);
        assert_eq!(hb.tick(t0 + 3750 * S), Tick::TimedOut);
    }
}
