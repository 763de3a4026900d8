//! Request checks: `Host` (DNS rebinding), `Origin` (CSRF from web pages), and the
//! token, compared in constant time.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use serde_json::json;

use crate::config::Settings;

/// A refused HTTP request.
#[derive(Debug, thiserror::Error)]
pub enum Rejection {
    /// 403.
    #[error("{0}")]
    Forbidden(String),
    /// 401.
    #[error("{0}")]
    Unauthorized(String),
}

impl ResponseError for Rejection {
    fn status_code(&self) -> StatusCode {
        match self {
            Rejection::Forbidden(_) => StatusCode::FORBIDDEN,
            Rejection::Unauthorized(_) => StatusCode::UNAUTHORIZED,
        }
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::build(self.status_code()).json(json!({ "error": self.to_string() }))
    }
}

/// Compares two byte strings in time that depends only on their lengths.
pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// True for loopback host names (`localhost`, `127.x.x.x`, `[::1]`), with or without port.
pub fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(h, port)| {
            if port.bytes().all(|b| b.is_ascii_digit()) {
                h
            } else {
                host
            }
        })
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Refuses a non-loopback `Host` (unless it names the configured bind address) and
/// any `Origin` not explicitly allowed.
pub fn check_host_and_origin(req: &HttpRequest, settings: &Settings) -> Result<(), Rejection> {
    let host = req
        .headers()
        .get("host")
        .and_then(|h| h.to_str().ok())
        .ok_or_else(|| Rejection::Forbidden("Missing Host header".into()))?;
    let bound_host = host.starts_with(&settings.server.bind)
        && host[settings.server.bind.len()..]
            .strip_prefix(':')
            .is_none_or(|p| p.bytes().all(|b| b.is_ascii_digit()));
    if !is_loopback_host(host) && !bound_host {
        return Err(Rejection::Forbidden(format!(
            "Host {host:?} is not a loopback name (DNS rebinding protection); connect to 127.0.0.1"
        )));
    }
    if let Some(origin) = req.headers().get("origin") {
        let origin = origin.to_str().unwrap_or("<non-ascii>");
        if !settings.server.allowed_origins.iter().any(|o| o == origin) {
            return Err(Rejection::Forbidden(format!(
                "Origin {origin:?} is not allowed: browser pages may not connect to the bridge"
            )));
        }
    }
    Ok(())
}

/// Checks `header` against `token`. Missing or wrong: 401.
pub fn check_token(req: &HttpRequest, header: &str, token: &str) -> Result<(), Rejection> {
    let given = req
        .headers()
        .get(header)
        .ok_or_else(|| Rejection::Unauthorized(format!("Missing {header} header")))?;
    if ct_eq(given.as_bytes(), token.as_bytes()) {
        Ok(())
    } else {
        Err(Rejection::Unauthorized(format!(
            "Invalid {header}: read the token from the lock file"
        )))
    }
}

/// Checks `Authorization: Bearer <token>`.
pub fn check_bearer(req: &HttpRequest, token: &str) -> Result<(), Rejection> {
    let value = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| Rejection::Unauthorized("Missing Authorization: Bearer <token>".into()))?;
    let given = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .unwrap_or("");
    if ct_eq(given.trim().as_bytes(), token.as_bytes()) {
        Ok(())
    } else {
        Err(Rejection::Unauthorized(
            "Invalid bearer token: read the token from the lock file".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for ok in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "127.1.2.3",
            "[::1]:9",
            "[::1]",
            "LOCALHOST",
            "a.localhost:3",
        ] {
            assert!(is_loopback_host(ok), "{ok}");
        }
        for bad in [
            "evil.com",
            "evil.com:80",
            "10.0.0.1:8",
            "localhost.evil.com",
            "[::2]:1",
            "127.0.0.1.evil.com",
            "",
        ] {
            assert!(!is_loopback_host(bad), "{bad}");
        }
    }

    #[test]
    fn constant_time_compare() {
        assert!(ct_eq(b"abc", b"abc"));
        assert!(!ct_eq(b"abc", b"abd"));
        assert!(!ct_eq(b"abc", b"ab"));
    }
}
