//! A minimal blocking HTTP/1.1 client for `ide-bridge status` and `ide-bridge open`
//! (loopback only, bodiless requests).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// GETs `path` from `127.0.0.1:port` with a bearer token. Returns status and body.
pub fn get(port: u16, path: &str, token: &str) -> io::Result<(u16, String)> {
    request("GET", port, path, token)
}

/// POSTs an empty body to `path` on `127.0.0.1:port` with a bearer token.
pub fn post(port: u16, path: &str, token: &str) -> io::Result<(u16, String)> {
    request("POST", port, path, token)
}

fn request(method: &str, port: u16, path: &str, token: &str) -> io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "malformed HTTP response"))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "malformed status line"))?;
    Ok((status, body.to_string()))
}
