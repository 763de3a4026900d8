//! When a hook may fire: a per-hook-per-file cooldown and a cap over all hooks on the
//! tasks and commands started per hour (a notification is not counted). Time is passed
//! in, so tests choose it.

use std::collections::{HashMap, VecDeque};

/// The window of the hourly cap (ms).
pub const HOUR_MS: u64 = 3_600_000;
/// Cooldown entries kept at most (the oldest are forgotten first).
pub const MAX_TRACKED: usize = 10_000;

/// Why a hook did not fire.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Skip {
    /// The same hook fired for the same file too recently.
    #[error("cooldown: fired for the same subject {since_ms} ms ago (cooldown {cooldown_ms} ms)")]
    Cooldown {
        /// Time since it last fired.
        since_ms: u64,
        /// The hook's cooldown.
        cooldown_ms: u64,
    },
    /// The hourly cap is reached.
    #[error(
        "hourly cap: {0} automation tasks and commands started in the last hour (maxTasksPerHour)"
    )]
    HourlyCap(u32),
}

/// Cooldown and rate state.
#[derive(Debug, Default)]
pub struct Gate {
    last_fired: HashMap<(&'static str, String), u64>,
    fired: VecDeque<u64>,
}

impl Gate {
    /// Whether `hook` may fire for `file` at `now_ms`; if so, records the firing. A
    /// firing that starts something (`counted`: a task, a command, the linters) counts
    /// against `max_per_hour` and is refused past it; a notification is not.
    pub fn admit(
        &mut self,
        hook: &'static str,
        file: &str,
        cooldown_ms: u64,
        max_per_hour: Option<u32>,
        now_ms: u64,
    ) -> Result<(), Skip> {
        let key = (hook, file.to_string());
        if let Some(&last) = self.last_fired.get(&key) {
            let since_ms = now_ms.saturating_sub(last);
            if since_ms < cooldown_ms {
                return Err(Skip::Cooldown {
                    since_ms,
                    cooldown_ms,
                });
            }
        }
        while self
            .fired
            .front()
            .is_some_and(|&t| now_ms.saturating_sub(t) >= HOUR_MS)
        {
            self.fired.pop_front();
        }
        if let Some(max) = max_per_hour {
            if self.fired.len() >= max as usize {
                return Err(Skip::HourlyCap(max));
            }
            self.fired.push_back(now_ms);
        }
        if self.last_fired.len() >= MAX_TRACKED {
            self.forget_oldest();
        }
        self.last_fired.insert(key, now_ms);
        Ok(())
    }

    /// Restarts every cooldown of `file` at `now_ms` (used when an automation task on it
    /// ends, so the task's own edits do not set a hook off again).
    pub fn touch(&mut self, file: &str, hooks: &[&'static str], now_ms: u64) {
        for hook in hooks {
            self.last_fired.insert((hook, file.to_string()), now_ms);
        }
    }

    /// When the counted firings of the hour before `now_ms` happened, oldest first.
    pub fn counted(&self, now_ms: u64) -> impl Iterator<Item = u64> + '_ {
        self.fired
            .iter()
            .copied()
            .filter(move |&t| now_ms.saturating_sub(t) < HOUR_MS)
    }

    /// Counts firings of an earlier run (their times on this run's clock, oldest
    /// first) against the hourly cap.
    pub fn restore_counted(&mut self, times: impl IntoIterator<Item = u64>) {
        self.fired.extend(times);
    }

    /// Tasks and commands started in the hour before `now_ms`.
    pub fn fired_last_hour(&self, now_ms: u64) -> usize {
        self.fired
            .iter()
            .filter(|&&t| now_ms.saturating_sub(t) < HOUR_MS)
            .count()
    }

    fn forget_oldest(&mut self) {
        if let Some(key) = self
            .last_fired
            .iter()
            .min_by_key(|(_, &t)| t)
            .map(|(k, _)| k.clone())
        {
            self.last_fired.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cooldown_holds_at_4_9_s_and_releases_at_5_1_s() {
        let mut g = Gate::default();
        let t0 = 1_000_000;
        assert_eq!(g.admit("onFileSave", "a.rs", 5_000, Some(100), t0), Ok(()));
        assert_eq!(
            g.admit("onFileSave", "a.rs", 5_000, Some(100), t0 + 4_900),
            Err(Skip::Cooldown {
                since_ms: 4_900,
                cooldown_ms: 5_000
            })
        );
        // Another file and another hook are not held back.
        assert_eq!(
            g.admit("onFileSave", "b.rs", 5_000, Some(100), t0 + 4_900),
            Ok(())
        );
        assert_eq!(
            g.admit(
                "onDiagnosticsStateChange",
                "a.rs",
                5_000,
                Some(100),
                t0 + 4_900
            ),
            Ok(())
        );
        assert_eq!(
            g.admit("onFileSave", "a.rs", 5_000, Some(100), t0 + 5_100),
            Ok(())
        );
        // The cooldown restarts from the last firing.
        assert!(g
            .admit("onFileSave", "a.rs", 5_000, Some(100), t0 + 10_000)
            .is_err());
        assert!(g
            .admit("onFileSave", "a.rs", 5_000, Some(100), t0 + 10_100)
            .is_ok());
    }

    #[test]
    fn the_hourly_cap_is_a_sliding_window() {
        let mut g = Gate::default();
        for i in 0..3 {
            assert!(g
                .admit("h", &format!("f{i}"), 5_000, Some(3), i * 1_000)
                .is_ok());
        }
        assert_eq!(
            g.admit("h", "f3", 5_000, Some(3), 10_000),
            Err(Skip::HourlyCap(3))
        );
        assert_eq!(g.fired_last_hour(10_000), 3);
        // The first firing leaves the window at exactly one hour.
        assert_eq!(
            g.admit("h", "f3", 5_000, Some(3), HOUR_MS - 1),
            Err(Skip::HourlyCap(3))
        );
        assert!(g.admit("h", "f3", 5_000, Some(3), HOUR_MS).is_ok());
    }

    #[test]
    fn a_refused_firing_does_not_count() {
        let mut g = Gate::default();
        assert!(g.admit("h", "a", 5_000, Some(2), 0).is_ok());
        assert!(g.admit("h", "a", 5_000, Some(2), 1).is_err());
        assert!(g.admit("h", "b", 5_000, Some(2), 2).is_ok());
        assert_eq!(g.fired_last_hour(3), 2);
    }

    #[test]
    fn a_notification_has_its_cooldown_but_is_not_counted_against_the_cap() {
        let mut g = Gate::default();
        assert!(g.admit("h", "a", 5_000, Some(1), 0).is_ok());
        for i in 0..5 {
            assert!(g.admit("n", &format!("f{i}"), 5_000, None, 1).is_ok());
        }
        assert_eq!(
            g.admit("n", "f0", 5_000, None, 2),
            Err(Skip::Cooldown {
                since_ms: 1,
                cooldown_ms: 5_000
            })
        );
        assert_eq!(g.fired_last_hour(3), 1);
        assert_eq!(
            g.admit("h", "b", 5_000, Some(1), 3),
            Err(Skip::HourlyCap(1))
        );
    }

    #[test]
    fn touch_restarts_the_cooldown() {
        let mut g = Gate::default();
        g.touch("a", &["h"], 10_000);
        assert!(g.admit("h", "a", 5_000, Some(10), 14_900).is_err());
        assert!(g.admit("h", "a", 5_000, Some(10), 15_000).is_ok());
    }
}
