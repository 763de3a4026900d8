//! Browser sign-in. A browser cannot send the token header when it navigates, so the
//! bridge hands out one-time codes (to `ide-bridge open` and in its start-up line),
//! each valid for a short time and for one use, and a browser that presents one gets a
//! session identified by an HttpOnly cookie. Sessions end after being idle too long;
//! the oldest is dropped when there are too many.

use std::time::{Duration, Instant};

use crate::http::guard::ct_eq;

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
}

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
}

impl Logins {
    pub fn new(limits: LoginLimits) -> Self {
        Self {
            limits,
            codes: Vec::new(),
            sessions: Vec::new(),
        }
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
        let at = self
            .codes
            .iter()
            .position(|c| ct_eq(c.value.as_bytes(), code.as_bytes()))
            .ok_or(LoginRefused::Unknown)?;
        let spent = self.codes.remove(at);
        if spent.expires <= now {
            return Err(LoginRefused::Expired);
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
            tracing::info!(
                "signed out the least recently used browser to make room (ui.max_browser_sessions)"
            );
        }
        let cookie = secret();
        self.sessions.push(Session {
            cookie: cookie.clone(),
            last_used: now,
        });
        Ok(cookie)
    }

    /// True when `cookie` names a live session (which is then marked used).
    pub fn check(&mut self, cookie: &str, now: Instant) -> bool {
        let idle = self.limits.idle_ttl;
        match self
            .sessions
            .iter_mut()
            .find(|s| ct_eq(s.cookie.as_bytes(), cookie.as_bytes()))
        {
            Some(s) if now.duration_since(s.last_used) < idle => {
                s.last_used = now;
                true
            }
            _ => false,
        }
    }

    /// Ends the session `cookie` names.
    pub fn end(&mut self, cookie: &str) {
        self.sessions
            .retain(|s| !ct_eq(s.cookie.as_bytes(), cookie.as_bytes()));
    }

    /// Forgets expired codes and idle sessions.
    pub fn expire(&mut self, now: Instant) {
        self.codes.retain(|c| c.expires > now);
        let idle = self.limits.idle_ttl;
        self.sessions
            .retain(|s| now.duration_since(s.last_used) < idle);
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
}
