//! The editor circuit breaker: a request that times out counts a failure and
//! suspends the editor for `random(1, min(1000·2^(failures−1), 60000))` ms (full
//! jitter); while suspended every request fails fast; after the backoff one half-open
//! probe goes through (the client's own cheap request, see `rpc::PROBE_METHOD`); a
//! success resets everything, a failed probe backs off again.
//! Time and randomness are injected so that tests can check the exact state machine.

pub use crate::actors::clock::{Clock, SystemClock};

/// Upper bound of the backoff.
pub const MAX_BACKOFF_MS: u64 = 60_000;

/// Uniform choice in an inclusive range.
pub trait Jitter {
    /// A value in `lo..=hi`.
    fn pick(&mut self, lo: u64, hi: u64) -> u64;
}

/// xorshift64* seeded from the time: enough for jitter.
pub struct XorShift(u64);

impl Default for XorShift {
    fn default() -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9E37_79B9_7F4A_7C15);
        Self(seed | 1)
    }
}

impl Jitter for XorShift {
    fn pick(&mut self, lo: u64, hi: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let r = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        lo + r % (hi - lo + 1)
    }
}

/// What the breaker says about a new request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Healthy: send it.
    Closed,
    /// Backoff over: send it as the one probe.
    Probe,
    /// Fail fast; the editor may be retried in this many ms (0: a probe is running).
    Open {
        /// Until the next probe.
        retry_in_ms: u64,
    },
}

/// The breaker's state, for status and lifecycle entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// No failures.
    Closed,
    /// Suspended.
    Open,
    /// Backoff over; the next request (or the running one) probes.
    HalfOpen,
}

/// Opens after a request times out (the editor is suspended for a jittered, growing
/// backoff), lets one probe through when the backoff is over, closes on any answer.
#[derive(Debug, Default, Clone)]
pub struct Breaker {
    failures: u32,
    suspended_until: u64,
    probing: bool,
}

impl Breaker {
    /// Consecutive failures.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// State at `now`.
    pub fn state(&self, now: u64) -> State {
        if self.failures == 0 {
            State::Closed
        } else if now < self.suspended_until {
            State::Open
        } else {
            State::HalfOpen
        }
    }

    /// Decides about a request at `now`.
    pub fn admit(&mut self, now: u64) -> Admission {
        if self.failures == 0 {
            return Admission::Closed;
        }
        if now < self.suspended_until {
            return Admission::Open {
                retry_in_ms: self.suspended_until - now,
            };
        }
        if self.probing {
            return Admission::Open { retry_in_ms: 0 };
        }
        self.probing = true;
        Admission::Probe
    }

    /// The editor answered (result or error): it is alive.
    pub fn on_success(&mut self) {
        *self = Breaker::default();
    }

    /// A request timed out at `now`; returns the backoff chosen.
    pub fn on_timeout(&mut self, now: u64, jitter: &mut dyn Jitter) -> u64 {
        self.failures = self.failures.saturating_add(1);
        let exp = 1000u64.saturating_mul(1u64 << (self.failures - 1).min(20));
        let backoff = jitter.pick(1, exp.min(MAX_BACKOFF_MS));
        self.suspended_until = now + backoff;
        self.probing = false;
        backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Always the upper bound, recording the bounds asked for.
    struct Max(Vec<(u64, u64)>);
    impl Jitter for Max {
        fn pick(&mut self, lo: u64, hi: u64) -> u64 {
            self.0.push((lo, hi));
            hi
        }
    }

    #[test]
    fn the_exact_state_machine() {
        let mut b = Breaker::default();
        let mut j = Max(Vec::new());
        assert_eq!((b.admit(0), b.state(0)), (Admission::Closed, State::Closed));
        // First timeout at t=100: backoff random(1, 1000).
        assert_eq!(b.on_timeout(100, &mut j), 1000);
        assert_eq!(b.state(100), State::Open);
        assert_eq!(b.admit(600), Admission::Open { retry_in_ms: 500 });
        assert_eq!(b.admit(1099), Admission::Open { retry_in_ms: 1 });
        // Backoff over: exactly one probe; others fail fast while it runs.
        assert_eq!(b.state(1100), State::HalfOpen);
        assert_eq!(b.admit(1100), Admission::Probe);
        assert_eq!(b.admit(1101), Admission::Open { retry_in_ms: 0 });
        // The probe times out: second failure, random(1, 2000).
        assert_eq!(b.on_timeout(11_100, &mut j), 2000);
        assert_eq!(b.admit(13_099), Admission::Open { retry_in_ms: 1 });
        assert_eq!(b.admit(13_100), Admission::Probe);
        // Probe succeeds: reset.
        b.on_success();
        assert_eq!((b.admit(13_101), b.failures()), (Admission::Closed, 0));
        assert_eq!(j.0, vec![(1, 1000), (1, 2000)]);
    }

    #[test]
    fn backoff_doubles_up_to_sixty_seconds() {
        let mut b = Breaker::default();
        let mut j = Max(Vec::new());
        let caps: Vec<u64> = (0..9).map(|_| b.on_timeout(0, &mut j)).collect();
        assert_eq!(
            caps,
            vec![1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]
        );
        for _ in 0..100 {
            b.on_timeout(0, &mut j);
        }
        assert_eq!(
            j.0.last(),
            Some(&(1, 60_000)),
            "no overflow after many failures"
        );
    }

    #[test]
    fn real_jitter_stays_in_range() {
        let mut x = XorShift::default();
        for _ in 0..10_000 {
            let v = x.pick(1, 1000);
            assert!((1..=1000).contains(&v));
        }
    }
}
