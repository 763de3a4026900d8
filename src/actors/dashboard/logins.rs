//! Browser sign-in. A browser cannot send the token header when it navigates, so the
//! bridge hands out one-time codes (to `ide-bridge open` and in its start-up line),
//! each valid for a short time and for one use, and a browser that presents one gets a
//! session identified by an HttpOnly cookie. Sessions end after being idle too long;
//! the oldest is dropped when there are too many. Sessions (not codes) are kept in the
//! workspace's state directory, like the token, so a restarted bridge keeps its
//! signed-in browsers.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::secret::ct_eq;

/// How often a session's last use is written back while nothing else changed.
const TOUCH_SAVE_EVERY: Duration = Duration::from_secs(60);

/// A session as the state file keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedSession {
    cookie: String,
    /// Unix ms of its last request.
    last_used_ms: u64,
}

/// Most codes waiting to be used; a new one beyond this replaces the oldest.
const MAX_CODES: usize = 16;

/// A fresh 256-bit secret, hex.
fn secret() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// Why a code was not accepted. The page shows the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoginRefused {
    /// Never issued, or used already.
    #[error("This sign-in link is not valid (links work once): run `ide-bridge open` in the workspace for a new one")]
    Unknown,
    /// Issued, but its time ran out.
    #[error("This sign-in link has expired: run `ide-bridge open` in the workspace for a new one")]
    Expired,
    /// Too many codes that did not work within [`FAILURE_WINDOW`]: none is checked
    /// until the window has room again.
    #[error("Too many sign-in attempts that did not work: try again in {0} s")]
    TooMany(u64),
}

/// Failed sign-in attempts allowed within [`FAILURE_WINDOW`].
pub const MAX_FAILURES: usize = 10;
/// The sliding window for [`MAX_FAILURES`].
pub const FAILURE_WINDOW: Duration = Duration::from_secs(60);

struct Code {
    value: String,
    expires: Instant,
}

struct Session {
    cookie: String,
    last_used: Instant,
}

/// How long codes and sessions live.
#[derive(Debug, Clone, Copy)]
pub struct LoginLimits {
    /// A code expires this long after it was issued.
    pub code_ttl: Duration,
    /// A session ends after this long without a request.
    pub idle_ttl: Duration,
    /// Most sessions at once.
    pub max_sessions: usize,
}

/// Codes waiting to be used and signed-in browsers.
pub struct Logins {
    limits: LoginLimits,
    codes: Vec<Code>,
    sessions: Vec<Session>,
    /// A session came or went since the last save.
    changed: bool,
    /// A session was used since the last save.
    touched: bool,
    last_save: Instant,
    /// When recent attempts failed (at most [`MAX_FAILURES`], within [`FAILURE_WINDOW`]).
    failures: std::collections::VecDeque<Instant>,
}

impl Logins {
    pub fn new(limits: LoginLimits) -> Self {
        Self::restored(limits, Vec::new(), Instant::now(), 0)
    }

    /// Logins with the sessions an earlier run saved (`now_ms` is the wall clock at
    /// `now`); those idle too long by now are dropped.
    pub fn restored(
        limits: LoginLimits,
        saved: Vec<SavedSession>,
        now: Instant,
        now_ms: u64,
    ) -> Self {
        let sessions = saved
            .into_iter()
            .filter(|s| s.cookie.len() == 64)
            .filter_map(|s| {
                let idle = Duration::from_millis(now_ms.saturating_sub(s.last_used_ms));
                // Past its idle time, or so long ago that this clock (it starts at
                // boot) cannot go back that far: gone.
                let last_used = now.checked_sub(idle)?;
                (idle < limits.idle_ttl).then_some(Session {
                    cookie: s.cookie,
                    last_used,
                })
            })
            .collect();
        let mut me = Self {
            limits,
            codes: Vec::new(),
            sessions,
            changed: false,
            touched: false,
            last_save: now,
            failures: std::collections::VecDeque::new(),
        };
        me.expire(now);
        me.sessions.truncate(limits.max_sessions);
        me
    }

    /// The sessions to write when they changed (now, or a use a while ago), as of
    /// `now` (`now_ms` on the wall clock); `None` when nothing needs saving.
    pub fn to_save(&mut self, now: Instant, now_ms: u64) -> Option<Vec<SavedSession>> {
        let due = self.changed
            || (self.touched && now.duration_since(self.last_save) >= TOUCH_SAVE_EVERY);
        if !due {
            return None;
        }
        Some(self.snapshot(now, now_ms))
    }

    /// The sessions as the file keeps them, now; the next save is due only after a
    /// change.
    pub fn snapshot(&mut self, now: Instant, now_ms: u64) -> Vec<SavedSession> {
        self.changed = false;
        self.touched = false;
        self.last_save = now;
        self.sessions
            .iter()
            .map(|s| SavedSession {
                cookie: s.cookie.clone(),
                last_used_ms: now_ms.saturating_sub(
                    u64::try_from(now.duration_since(s.last_used).as_millis()).unwrap_or(u64::MAX),
                ),
            })
            .collect()
    }

    pub fn limits(&self) -> LoginLimits {
        self.limits
    }

    /// A new one-time code.
    pub fn issue(&mut self, now: Instant) -> String {
        self.expire(now);
        if self.codes.len() >= MAX_CODES {
            self.codes.remove(0);
        }
        let value = secret();
        self.codes.push(Code {
            value: value.clone(),
            expires: now + self.limits.code_ttl,
        });
        value
    }

    /// Exchanges a code for a session cookie; the code is spent either way.
    pub fn redeem(&mut self, code: &str, now: Instant) -> Result<String, LoginRefused> {
        while self
            .failures
            .front()
            .is_some_and(|at| now.duration_since(*at) >= FAILURE_WINDOW)
        {
            self.failures.pop_front();
        }
        if let Some(first) = self
            .failures
            .front()
            .filter(|_| self.failures.len() >= MAX_FAILURES)
        {
            let wait = FAILURE_WINDOW.saturating_sub(now.duration_since(*first));
            tracing::debug!("a sign-in attempt refused unchecked: too many failed within a minute");
            return Err(LoginRefused::TooMany(wait.as_secs().max(1)));
        }
        let outcome = self
            .codes
            .iter()
            .position(|c| ct_eq(c.value.as_bytes(), code.as_bytes()))
            .ok_or(LoginRefused::Unknown)
            .and_then(|at| {
                let spent = self.codes.remove(at);
                if spent.expires <= now {
                    Err(LoginRefused::Expired)
                } else {
                    Ok(())
                }
            });
        if let Err(refused) = outcome {
            self.failures.push_back(now);
            // Said once per burst, not once per attempt: a flood does not fill the log.
            match self.failures.len() {
                1 => tracing::warn!(%refused, "a browser presented a sign-in code that does not work"),
                MAX_FAILURES => tracing::warn!(
                    "{MAX_FAILURES} sign-in codes that did not work within a minute: sign-ins are refused unchecked until the minute has passed"
                ),
                _ => tracing::debug!(%refused, "another sign-in code that does not work"),
            }
            return Err(refused);
        }
        self.expire(now);
        if self.sessions.len() >= self.limits.max_sessions {
            let oldest = self
                .sessions
                .iter()
                .enumerate()
                .min_by_key(|(_, s)| s.last_used)
                .map(|(i, _)| i)
                .unwrap_or(0);
            self.sessions.remove(oldest);
            self.changed = true;
            tracing::info!(
                "signed out the least recently used browser to make room (ui.max_browser_sessions)"
            );
        }
        let cookie = secret();
        self.sessions.push(Session {
            cookie: cookie.clone(),
            last_used: now,
        });
        self.changed = true;
        Ok(cookie)
    }

    /// The live session `cookie` names.
    fn live(&self, cookie: &str, now: Instant) -> Option<usize> {
        self.sessions.iter().position(|s| {
            ct_eq(s.cookie.as_bytes(), cookie.as_bytes())
                && now.duration_since(s.last_used) < self.limits.idle_ttl
        })
    }

    /// True when `cookie` names a live session (which is then marked used).
    pub fn check(&mut self, cookie: &str, now: Instant) -> bool {
        let Some(at) = self.live(cookie, now) else {
            return false;
        };
        self.sessions[at].last_used = now;
        self.touched = true;
        true
    }

    /// True when `cookie` names a live session (without counting it as a use).
    pub fn is_live(&self, cookie: &str, now: Instant) -> bool {
        self.live(cookie, now).is_some()
    }

    /// Ends the session `cookie` names.
    pub fn end(&mut self, cookie: &str) {
        let before = self.sessions.len();
        self.sessions
            .retain(|s| !ct_eq(s.cookie.as_bytes(), cookie.as_bytes()));
        self.changed |= self.sessions.len() != before;
    }

    /// Forgets expired codes and idle sessions.
    pub fn expire(&mut self, now: Instant) {
        self.codes.retain(|c| c.expires > now);
        let idle = self.limits.idle_ttl;
        let before = self.sessions.len();
        self.sessions
            .retain(|s| now.duration_since(s.last_used) < idle);
        self.changed |= self.sessions.len() != before;
    }

    /// Signed-in browsers.
    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logins(max_sessions: usize) -> Logins {
        Logins::new(LoginLimits {
            code_ttl: Duration::from_secs(60),
            idle_ttl: Duration::from_secs(600),
            max_sessions,
        })
    }

    #[test]
    fn a_code_works_once_and_only_before_it_expires() {
        let now = Instant::now();
        let mut l = logins(4);
        let code = l.issue(now);
        let cookie = l.redeem(&code, now).expect("first use");
        assert!(l.check(&cookie, now));
        assert_eq!(l.redeem(&code, now), Err(LoginRefused::Unknown));
        let late = l.issue(now);
        assert_eq!(
            l.redeem(&late, now + Duration::from_secs(60)),
            Err(LoginRefused::Expired)
        );
        assert_eq!(l.redeem("", now), Err(LoginRefused::Unknown));
    }

    #[test]
    fn sessions_end_when_idle_signed_out_or_crowded_out() {
        let now = Instant::now();
        let mut l = logins(2);
        let a = l.issue(now);
        let a = l.redeem(&a, now).unwrap();
        assert!(!l.check(&a, now + Duration::from_secs(600)));
        let b = l.issue(now);
        let b = l.redeem(&b, now).unwrap();
        l.end(&b);
        assert!(!l.check(&b, now));
        let cookies: Vec<String> = (0..3)
            .map(|i| {
                let at = now + Duration::from_secs(i);
                let code = l.issue(at);
                l.redeem(&code, at).unwrap()
            })
            .collect();
        assert_eq!(l.sessions(), 2);
        assert!(!l.check(&cookies[0], now + Duration::from_secs(3)));
        assert!(l.check(&cookies[2], now + Duration::from_secs(3)));
    }

    #[test]
    fn saved_sessions_come_back_with_their_idle_time_and_only_changes_are_saved() {
        let now = Instant::now();
        let mut l = logins(4);
        assert_eq!(l.to_save(now, 1_000_000), None, "nothing changed");
        let code = l.issue(now);
        let cookie = l.redeem(&code, now).unwrap();
        let saved = l.to_save(now, 1_000_000).expect("a sign-in is saved");
        assert_eq!(saved.len(), 1);
        assert!(l.check(&cookie, now + Duration::from_secs(1)));
        assert_eq!(
            l.to_save(now + Duration::from_secs(2), 1_002_000),
            None,
            "a use waits"
        );
        let later = l
            .to_save(now + Duration::from_secs(61), 1_061_000)
            .expect("a use is saved later");
        assert_eq!(later[0].last_used_ms, 1_001_000);
        // A restart 100 s later: the session is back, 160 s idle.
        let t = Instant::now();
        let mut back = Logins::restored(l.limits(), later.clone(), t, 1_161_000);
        assert!(back.check(&cookie, t));
        // Idle past the limit by the time of the restart: gone.
        let mut late = Logins::restored(l.limits(), later, t, 1_001_000 + 600_000);
        assert!(!late.check(&cookie, t));
    }
}
