//! Request checks: `Host` (DNS rebinding), `Origin` (CSRF from web pages), and the
//! token, compared in constant time.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use serde_json::json;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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

impl Rejection {
    /// 401: the caller may try again with credentials.
    pub fn is_unauthorized(&self) -> bool {
        matches!(self, Rejection::Unauthorized(_))
    }
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

pub use crate::secret::ct_eq;

/// Splits a `Host` value into its name and optional port, exactly: a bracketed IPv6
/// literal (`[::1]`, `[::1]:80`) or a name without colons (`localhost:80`). A port is
/// one to five ASCII digits; anything else after the name (`127.0.0.1:`, `:80x`,
/// `[::1]x`) makes the whole value unparseable (`None`).
fn split_host(host: &str) -> Option<(HostName<'_>, Option<u16>)> {
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        let ip = inside.parse::<Ipv6Addr>().ok()?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':')?),
        };
        (HostName::Ip(IpAddr::V6(ip)), port)
    } else {
        let (name, port) = match host.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        };
        let name = match name.parse::<Ipv4Addr>() {
            Ok(ip) => HostName::Ip(IpAddr::V4(ip)),
            Err(_) => HostName::Name(name),
        };
        (name, port)
    };
    let port = match port {
        None => None,
        Some(p) if (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()) => {
            Some(p.parse::<u16>().ok()?)
        }
        Some(_) => return None,
    };
    Some((name, port))
}

/// The name part of a `Host` value: an IP literal (IPv4 dotted quad as Rust parses it,
/// so no octal, hex or shortened forms; IPv6 only in brackets) or anything else.
enum HostName<'a> {
    Ip(IpAddr),
    Name(&'a str),
}

/// True for `localhost` and names below it (`a.localhost`, `x-1.y.localhost`), each
/// label made of ASCII letters, digits and `-`, one trailing dot allowed.
///
/// RFC 6761 reserves `.localhost`: no public DNS name ends in it and resolvers answer
/// it with loopback, so a web page cannot rebind such a name to itself. Anything that
/// merely starts with a loopback spelling (`localhost.evil.com`) is not below it.
fn is_localhost_name(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name);
    let Some(below) = name
        .len()
        .checked_sub("localhost".len())
        .filter(|&at| name.is_char_boundary(at))
        .map(|at| name.split_at(at))
        .filter(|(_, last)| last.eq_ignore_ascii_case("localhost"))
        .map(|(below, _)| below)
    else {
        return false;
    };
    if below.is_empty() {
        return true;
    }
    let Some(labels) = below.strip_suffix('.') else {
        return false;
    };
    labels.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    })
}

/// True for a loopback `Host` value with any port or none: `localhost` and names below
/// it, an IPv4 address in 127.0.0.0/8, `[::1]`. The value must be exactly that — a name
/// that only starts with one (`127.0.0.1.evil.com`, `127.0.0.1evil.com`,
/// `127.0.0.1%2eevil.com`) is not loopback.
pub fn is_loopback_host(host: &str) -> bool {
    match split_host(host) {
        Some((HostName::Ip(ip), _)) => ip.is_loopback(),
        Some((HostName::Name(name), _)) => is_localhost_name(name),
        None => false,
    }
}

/// Why a `Host` value is refused, or `None` when it is allowed: a loopback name or
/// address ([`is_loopback_host`]) or exactly the configured bind address, either
/// optionally followed by `:<port>` where `port` is the one the bridge listens on.
fn host_refusal(host: &str, bind: IpAddr, own_port: u16) -> Option<&'static str> {
    let Some((name, port)) = split_host(host) else {
        return Some("is not a host name or address with an optional port");
    };
    let allowed_name = match name {
        HostName::Ip(ip) => ip.is_loopback() || bind == ip,
        HostName::Name(name) => is_localhost_name(name),
    };
    if !allowed_name {
        return Some("is not a loopback name or the bind address (DNS rebinding protection)");
    }
    if port.is_some_and(|p| p != own_port) {
        return Some("names another port than the bridge's");
    }
    None
}

/// Refuses a `Host` that is not exactly a loopback name or address or the configured
/// bind address (with, optionally, the bridge's own port); answers the accepted value.
/// The own port is the local port of the accepting listener.
pub fn check_host<'r>(req: &'r HttpRequest, settings: &Settings) -> Result<&'r str, Rejection> {
    let host = req
        .headers()
        .get("host")
        .ok_or_else(|| Rejection::Forbidden("Missing Host header".into()))?;
    let Ok(host) = host.to_str() else {
        return Err(Rejection::Forbidden(format!(
            "Host {:?} is not allowed: it is not ASCII; connect to 127.0.0.1",
            String::from_utf8_lossy(host.as_bytes())
        )));
    };
    let own_port = req.app_config().local_addr().port();
    if let Some(why) = host_refusal(host, settings.server.bind, own_port) {
        return Err(Rejection::Forbidden(format!(
            "Host {host:?} is not allowed: it {why}; connect to 127.0.0.1:{own_port}"
        )));
    }
    Ok(host)
}

/// [`check_host`], and refuses any `Origin` but the bridge's own (`http://` + the
/// accepted `Host`: only its own page has it) and those explicitly allowed: agents,
/// editors and scripts send none, and no other web page may drive them.
pub fn check_host_and_origin(req: &HttpRequest, settings: &Settings) -> Result<(), Rejection> {
    let host = check_host(req, settings)?;
    if let Some(origin) = req.headers().get("origin") {
        let origin = origin.to_str().unwrap_or("<non-ascii>");
        let own = origin
            .strip_prefix("http://")
            .is_some_and(|o| o.eq_ignore_ascii_case(host));
        if !own && !settings.server.allowed_origins.iter().any(|o| o == origin) {
            return Err(Rejection::Forbidden(format!(
                "Origin {origin:?} is not allowed: browser pages may not connect to the bridge"
            )));
        }
    }
    Ok(())
}

/// For the bridge's own page: [`check_host`], and an `Origin`, when there is one, must
/// be the page's own (`http://` + the `Host` it was served under). A request that
/// changes state must carry it (browsers always send it on a POST), so a form or script
/// of another site, or a request that hides where it came from, is refused.
pub fn check_same_origin(
    req: &HttpRequest,
    settings: &Settings,
    changes_state: bool,
) -> Result<(), Rejection> {
    let host = check_host(req, settings)?;
    match req.headers().get("origin") {
        Some(origin) => {
            let origin = origin.to_str().unwrap_or("<non-ascii>");
            let own = format!("http://{host}");
            if !origin.eq_ignore_ascii_case(&own) {
                return Err(Rejection::Forbidden(format!(
                    "Origin {origin:?} is not allowed: only the bridge's own page ({own}) may use it"
                )));
            }
        }
        None if changes_state => return Err(Rejection::Forbidden(
            "A request that changes state must come from the bridge's own page (no Origin header)"
                .into(),
        )),
        None => {}
    }
    // A page of another port of this host is "same-site": its images and frames would
    // carry the SameSite=Strict cookie with no Origin. Browsers say where a request
    // comes from; only the page itself (or the user typing the address) may use it.
    if let Some(site) = req.headers().get("sec-fetch-site") {
        let site = site.to_str().unwrap_or("");
        if !matches!(site, "same-origin" | "none") {
            return Err(Rejection::Forbidden(format!(
                "Sec-Fetch-Site {site:?}: only the bridge's own page may use it"
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
    // The scheme name is case-insensitive (RFC 9110).
    let given = match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token,
        _ => "",
    };
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
            "localhost.",
            "127.0.0.1:1",
            "127.1.2.3",
            "[::1]:9",
            "[::1]",
            "[0:0:0:0:0:0:0:1]",
            "LOCALHOST",
            "a.localhost:3",
            "x-1.Y.localhost",
        ] {
            assert!(is_loopback_host(ok), "{ok}");
        }
        for bad in [
            "evil.com",
            "evil.com:80",
            "10.0.0.1:8",
            "localhost.evil.com",
            "evillocalhost",
            ".localhost",
            "a..localhost",
            "a_b.localhost",
            "[::2]:1",
            "::1",
            "[::1]x",
            "[::1]:",
            "127.0.0.1.evil.com",
            "127.0.0.1evil.com",
            "127.0.0.1%2eevil.com",
            "127.0.0.1%2eevil.com:80",
            "127.0.0.1:",
            "127.0.0.1:80x",
            "127.0.0.1:80:80",
            "127.0.0.1:123456",
            "127.0.0.1:65536",
            "127.1",
            "0x7f.0.0.1",
            "127.000.0.1",
            "[::ffff:127.0.0.1]",
            "",
        ] {
            assert!(!is_loopback_host(bad), "{bad}");
        }
    }

    #[test]
    fn host_needs_the_own_port_and_may_be_the_bind_address() {
        let ok = |h: &str, bind: &str| host_refusal(h, bind.parse().unwrap(), 4000).is_none();
        assert!(ok("127.0.0.1", "127.0.0.1"));
        assert!(ok("127.0.0.1:4000", "127.0.0.1"));
        assert!(ok("[::1]:4000", "::1"));
        assert!(ok("localhost:4000", "127.0.0.1"));
        assert!(!ok("127.0.0.1:4001", "127.0.0.1"));
        assert!(!ok("localhost:80", "127.0.0.1"));
        assert!(!ok("[::1]:80", "127.0.0.1"));
        // The bind address itself, exactly, and nothing that starts with it.
        assert!(ok("192.168.1.5:4000", "192.168.1.5"));
        assert!(ok("[fe80::1]", "fe80::1"));
        for bad in [
            "192.168.1.5.evil.com",
            "192.168.1.5evil.com",
            "192.168.1.5%2eevil.com:4000",
            "192.168.1.50",
            "192.168.1.5:4001",
        ] {
            assert!(!ok(bad, "192.168.1.5"), "{bad}");
        }
        assert!(!ok("192.168.1.5", "127.0.0.1"));
    }

    #[test]
    fn constant_time_compare() {
        assert!(ct_eq(b"abc", b"abc"));
        assert!(!ct_eq(b"abc", b"abd"));
        assert!(!ct_eq(b"abc", b"ab"));
    }
}
