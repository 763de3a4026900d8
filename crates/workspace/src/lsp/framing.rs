//! The LSP base protocol on a byte stream: a header (`Content-Length: N`, other headers
//! ignored) ended by an empty line, then N bytes of JSON. A header or body over its
//! limit is an error before anything is buffered for it.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// The longest header line read.
const MAX_HEADER_LINE: usize = 1024;

/// Why a message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The stream failed.
    #[error("reading from the language server: {0}")]
    Io(#[from] std::io::Error),
    /// A header line was not `Name: value`, or too long, or `Content-Length` was missing.
    #[error("the language server sent a malformed header: {0}")]
    Header(String),
    /// The body is over the limit.
    #[error("the language server sent a message of {size} bytes; the limit is {max}")]
    TooLarge {
        /// Its `Content-Length`.
        size: usize,
        /// The limit.
        max: usize,
    },
}

/// `body` framed for the wire.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// The next message's body; `None` at the end of the stream.
pub async fn read_message<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> Result<Option<Vec<u8>>, FrameError> {
    let mut length = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut *reader)
            .take(MAX_HEADER_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .await?;
        if n == 0 {
            return Ok(None);
        }
        if n > MAX_HEADER_LINE {
            return Err(FrameError::Header("a header line over 1 KiB".into()));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            break;
        }
        let (name, value) = text
            .split_once(':')
            .ok_or_else(|| FrameError::Header(text.to_string()))?;
        if name.trim().eq_ignore_ascii_case("content-length") {
            let size: usize = value
                .trim()
                .parse()
                .map_err(|_| FrameError::Header(text.to_string()))?;
            length = Some(size);
        }
    }
    let size = length.ok_or_else(|| FrameError::Header("no Content-Length".into()))?;
    if size > max {
        return Err(FrameError::TooLarge { size, max });
    }
    let mut body = vec![0; size];
    reader.read_exact(&mut body).await?;
    Ok(Some(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_rt::test]
    async fn messages_round_trip_and_limits_hold_at_the_edge() {
        let mut wire = encode(b"{\"a\":1}");
        wire.extend(b"Content-Type: x\r\ncontent-length: 2\r\n\r\n{}");
        wire.extend(encode(&[b'x'; 11]));
        let mut r = tokio::io::BufReader::new(&wire[..]);
        assert_eq!(
            read_message(&mut r, 10).await.unwrap().unwrap(),
            b"{\"a\":1}"
        );
        assert_eq!(read_message(&mut r, 10).await.unwrap().unwrap(), b"{}");
        assert!(matches!(
            read_message(&mut r, 10).await,
            Err(FrameError::TooLarge { size: 11, max: 10 })
        ));
        let mut end = tokio::io::BufReader::new(&b""[..]);
        assert!(read_message(&mut end, 10).await.unwrap().is_none());
        let ten = encode(&[b'y'; 10]);
        let mut exact = tokio::io::BufReader::new(&ten[..]);
        assert_eq!(
            read_message(&mut exact, 10).await.unwrap().unwrap().len(),
            10
        );
        let mut bad = tokio::io::BufReader::new(&b"Content-Length: x\r\n\r\n"[..]);
        assert!(matches!(
            read_message(&mut bad, 10).await,
            Err(FrameError::Header(_))
        ));
        let long = format!("X-Long: {}\r\n\r\n", "z".repeat(2000));
        let mut long = tokio::io::BufReader::new(long.as_bytes());
        assert!(matches!(
            read_message(&mut long, 10).await,
            Err(FrameError::Header(_))
        ));
    }
}
