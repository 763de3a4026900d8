//! A minimal blocking HTTP/1.1 client for the subcommands that talk to a running
//! bridge (`status`, `open`, `hook`): loopback only, one request per connection.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// How long the subcommands wait for a bridge that does not answer.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// GETs `path` from `127.0.0.1:port` with a bearer token. Returns status and body.
pub fn get(port: u16, path: &str, token: &str) -> io::Result<(u16, String)> {
    let (status, body) = Request::new("GET", port, path, token).send()?;
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}

/// POSTs an empty body to `path` on `127.0.0.1:port` with a bearer token.
pub fn post(port: u16, path: &str, token: &str) -> io::Result<(u16, String)> {
    let (status, body) = Request::new("POST", port, path, token).send()?;
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}

/// One request to the bridge on `127.0.0.1`.
pub struct Request<'a> {
    method: &'a str,
    port: u16,
    path: &'a str,
    token: &'a str,
    headers: Vec<(&'a str, String)>,
    body: &'a [u8],
    connect_timeout: Duration,
    read_timeout: Duration,
}

impl<'a> Request<'a> {
    /// A bodiless request with the default timeouts.
    pub fn new(method: &'a str, port: u16, path: &'a str, token: &'a str) -> Self {
        Self {
            method,
            port,
            path,
            token,
            headers: Vec::new(),
            body: &[],
            connect_timeout: DEFAULT_TIMEOUT,
            read_timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Adds a header (name and value must be plain ASCII without line breaks).
    pub fn header(mut self, name: &'a str, value: String) -> Self {
        self.headers.push((name, value));
        self
    }

    /// Sends `body` as `application/json`.
    pub fn json(mut self, body: &'a [u8]) -> Self {
        self.body = body;
        self.headers
            .push(("Content-Type", "application/json".to_string()));
        self
    }

    /// Gives up connecting after `connect` and waiting for the answer after `read`.
    pub fn timeouts(mut self, connect: Duration, read: Duration) -> Self {
        self.connect_timeout = connect;
        self.read_timeout = read;
        self
    }

    /// Sends the request and reads the whole answer: status and body.
    pub fn send(self) -> io::Result<(u16, Vec<u8>)> {
        self.send_with_head()
            .map(|(status, _, body)| (status, body))
    }

    /// [`Request::send`], with the answer's head (status line and headers) too.
    pub fn send_with_head(self) -> io::Result<(u16, String, Vec<u8>)> {
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        let mut stream = TcpStream::connect_timeout(&addr, self.connect_timeout)?;
        stream.set_read_timeout(Some(self.read_timeout))?;
        stream.set_write_timeout(Some(DEFAULT_TIMEOUT))?;
        let _ = stream.set_nodelay(true);
        let mut head = format!(
            "{} {} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.method,
            self.path,
            self.port,
            self.token,
            self.body.len()
        );
        for (name, value) in &self.headers {
            head.push_str(name);
            head.push_str(": ");
            head.push_str(value);
            head.push_str("\r\n");
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes())?;
        stream.write_all(self.body)?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw)?;
        parse_response(&raw)
    }
}

/// The value of header `name` (lower case) in an answer's `head`.
pub fn header_of<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// Status, head and body of a `Connection: close` answer (chunked bodies are decoded).
fn parse_response(raw: &[u8]) -> io::Result<(u16, String, Vec<u8>)> {
    let malformed = |what| io::Error::new(io::ErrorKind::InvalidData, what);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| malformed("malformed HTTP response"))?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let body = &raw[split + 4..];
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| malformed("malformed status line"))?;
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let body = if chunked {
        dechunk(body).ok_or_else(|| malformed("malformed chunked body"))?
    } else {
        body.to_vec()
    };
    Ok((status, head.into_owned(), body))
}

/// Decodes a chunked body.
fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&rest[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_plain_and_chunked_answers() {
        let plain = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nX-Why: a: b\r\n\r\n{}";
        let (status, head, body) = parse_response(plain).unwrap();
        assert_eq!((status, body), (200, b"{}".to_vec()));
        assert_eq!(header_of(&head, "x-why"), Some("a: b"));
        assert_eq!(header_of(&head, "x-other"), None);
        let chunked =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let (status, _, body) = parse_response(chunked).unwrap();
        assert_eq!((status, body), (200, b"abcde".to_vec()));
        assert!(parse_response(b"garbage").is_err());
    }
}
