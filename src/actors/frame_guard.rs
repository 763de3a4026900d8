//! Size limits on incoming WebSocket frames, enforced from the frame header before
//! any payload is buffered.
//!
//! actix-http's frame parser (3.x) checks its `max_size` only once a frame is complete:
//! while a frame is incomplete it keeps everything received, so a header announcing
//! 2^62 bytes makes `actix_ws::MessageStream` buffer all that follows (issue 17).
//! actix-ws's continuation aggregator checks its total, but reports an I/O error (the
//! bridge answered 1002). [`FrameGuard`] sits between the connection's payload and
//! `actix_ws`: it passes bytes through unchanged, follows frame boundaries, and fails
//! the stream as soon as a header announces a frame over the limit or a fragmented
//! message whose frames add up to more than it. The Transport recognises the failure
//! ([`FrameLimit::find`]) and closes with 1008 like any other oversized message.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use actix_web::error::PayloadError;
use actix_web::web::Bytes;
use actix_ws::ProtocolError;
use futures_util::Stream;

/// A message refused from a frame header because it would exceed the limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameLimit {
    /// One frame's header announces more than the limit.
    #[error(
        "a frame announces {announced} bytes, over the {limit} byte limit (server.max_message_bytes)"
    )]
    Frame {
        /// The payload length in the header.
        announced: u64,
        /// `server.max_message_bytes`.
        limit: usize,
    },
    /// The frames of one fragmented message add up to more than the limit.
    #[error(
        "a fragmented message reaches {total} bytes, over the {limit} byte limit (server.max_message_bytes)"
    )]
    Message {
        /// The sum of the payload lengths announced so far for the message.
        total: u64,
        /// `server.max_message_bytes`.
        limit: usize,
    },
}

impl FrameLimit {
    /// The `FrameLimit` that ended a message stream, if that is what `err` carries:
    /// `actix_ws` wraps a payload error as `ProtocolError::Io(io::Error::other(..))`,
    /// and [`FrameGuard`] yields `PayloadError::Io(io::Error::other(FrameLimit))`.
    pub fn find(err: &ProtocolError) -> Option<&FrameLimit> {
        let ProtocolError::Io(io) = err else {
            return None;
        };
        match io.get_ref()?.downcast_ref::<PayloadError>()? {
            PayloadError::Io(inner) => inner.get_ref()?.downcast_ref::<FrameLimit>(),
            _ => None,
        }
    }
}

/// Longest frame header: 2 bytes, 8 of extended length, 4 of mask (RFC 6455 §5.2).
const MAX_HEADER: usize = 14;

/// Follows frame boundaries in a client's byte stream and checks each header.
#[derive(Debug)]
pub struct FrameTracker {
    limit: usize,
    /// Bytes of the current header received so far.
    header: [u8; MAX_HEADER],
    header_len: usize,
    /// Payload bytes of the current frame not yet passed.
    remaining: u64,
    /// Announced bytes of the fragmented message in progress, if one is.
    message_total: Option<u64>,
    /// Set once a limit was crossed; the stream ends after that.
    failed: bool,
}

impl FrameTracker {
    /// A tracker at the start of a frame, refusing anything over `limit` bytes.
    pub fn new(limit: usize) -> Self {
        FrameTracker {
            limit,
            header: [0; MAX_HEADER],
            header_len: 0,
            remaining: 0,
            message_total: None,
            failed: false,
        }
    }

    /// Scans the next bytes of the stream. Errors as soon as a header (possibly split
    /// across chunks) announces too much; the bytes before it do not matter then,
    /// since the connection is closed.
    pub fn scan(&mut self, mut bytes: &[u8]) -> Result<(), FrameLimit> {
        while !bytes.is_empty() {
            if self.remaining > 0 {
                let skip = usize::try_from(self.remaining)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                bytes = &bytes[skip..];
                self.remaining -= skip as u64;
                continue;
            }
            let want = self.header_needed();
            let take = (want - self.header_len).min(bytes.len());
            self.header[self.header_len..self.header_len + take].copy_from_slice(&bytes[..take]);
            self.header_len += take;
            bytes = &bytes[take..];
            if self.header_len == self.header_needed() {
                self.header_complete()?;
            }
        }
        Ok(())
    }

    /// How many header bytes the current header has in all, as far as is known from
    /// the bytes seen (2 until the length byte is in).
    fn header_needed(&self) -> usize {
        if self.header_len < 2 {
            return 2;
        }
        let second = self.header[1];
        let ext = match second & 0x7f {
            126 => 2,
            127 => 8,
            _ => 0,
        };
        let mask = if second & 0x80 != 0 { 4 } else { 0 };
        2 + ext + mask
    }

    fn header_complete(&mut self) -> Result<(), FrameLimit> {
        let (first, second) = (self.header[0], self.header[1]);
        let length = match second & 0x7f {
            126 => u64::from(u16::from_be_bytes([self.header[2], self.header[3]])),
            127 => u64::from_be_bytes(self.header[2..10].try_into().expect("8 bytes")),
            n => u64::from(n),
        };
        self.header_len = 0;
        self.remaining = length;
        let limit = self.limit as u64;
        if length > limit {
            return self.fail(FrameLimit::Frame {
                announced: length,
                limit: self.limit,
            });
        }
        let fin = first & 0x80 != 0;
        match first & 0x0f {
            // Text or binary: a new message, fragmented unless FIN.
            1 | 2 => self.message_total = (!fin).then_some(length),
            // Continuation: adds to the message in progress.
            0 => {
                let total = self.message_total.unwrap_or(0).saturating_add(length);
                if total > limit {
                    return self.fail(FrameLimit::Message {
                        total,
                        limit: self.limit,
                    });
                }
                self.message_total = (!fin).then_some(total);
            }
            // Control frames may sit between fragments and do not count.
            _ => {}
        }
        Ok(())
    }

    fn fail(&mut self, limit: FrameLimit) -> Result<(), FrameLimit> {
        self.failed = true;
        Err(limit)
    }
}

/// The payload stream of an upgraded connection with [`FrameTracker`] checks: chunks
/// pass through unchanged until a header is over the limit, then one error and the end.
pub struct FrameGuard<S> {
    inner: S,
    tracker: FrameTracker,
}

impl<S> FrameGuard<S> {
    /// Guards `inner`, refusing frames and messages over `limit` bytes.
    pub fn new(inner: S, limit: usize) -> Self {
        FrameGuard {
            inner,
            tracker: FrameTracker::new(limit),
        }
    }
}

impl<S> Stream for FrameGuard<S>
where
    S: Stream<Item = Result<Bytes, PayloadError>> + Unpin,
{
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.tracker.failed {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(bytes))) => match this.tracker.scan(&bytes) {
                Ok(()) => Poll::Ready(Some(Ok(bytes))),
                Err(limit) => Poll::Ready(Some(Err(PayloadError::Io(io::Error::other(limit))))),
            },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A masked client frame header for `len` payload bytes.
    fn header(first: u8, len: u64) -> Vec<u8> {
        let mut h = vec![first];
        if len < 126 {
            h.push(0x80 | len as u8);
        } else if len <= u64::from(u16::MAX) {
            h.push(0x80 | 126);
            h.extend_from_slice(&(len as u16).to_be_bytes());
        } else {
            h.push(0x80 | 127);
            h.extend_from_slice(&len.to_be_bytes());
        }
        h.extend_from_slice(&[1, 2, 3, 4]);
        h
    }

    fn frame(first: u8, len: usize) -> Vec<u8> {
        let mut f = header(first, len as u64);
        f.extend(std::iter::repeat_n(b'x', len));
        f
    }

    #[test]
    fn frames_within_the_limit_pass_in_any_chunking() {
        let mut stream = Vec::new();
        stream.extend(frame(0x81, 10));
        stream.extend(frame(0x82, 300));
        stream.extend(frame(0x89, 5)); // ping
        stream.extend(frame(0x01, 400)); // fragmented text: 400 + 600 = 1000
        stream.extend(frame(0x8a, 0)); // pong between fragments
        stream.extend(frame(0x80, 600));
        stream.extend(frame(0x81, 1000));
        for chunk in [1, 2, 3, 7, 13, 64, stream.len()] {
            let mut t = FrameTracker::new(1000);
            for c in stream.chunks(chunk) {
                t.scan(c).unwrap_or_else(|e| panic!("chunk {chunk}: {e}"));
            }
            assert_eq!(t.remaining, 0);
            assert_eq!(t.header_len, 0);
        }
    }

    #[test]
    fn an_oversized_header_fails_before_its_payload() {
        for chunk in [1, 3, 14] {
            let mut t = FrameTracker::new(1000);
            let h = header(0x81, 1 << 62);
            let mut err = None;
            for c in h.chunks(chunk) {
                if let Err(e) = t.scan(c) {
                    err = Some(e);
                }
            }
            assert_eq!(
                err,
                Some(FrameLimit::Frame {
                    announced: 1 << 62,
                    limit: 1000
                })
            );
        }
        let mut t = FrameTracker::new(1000);
        assert!(t.scan(&header(0x82, 1001)).is_err());
        let mut t = FrameTracker::new(70_000);
        assert!(t.scan(&header(0x82, 70_000)).is_ok());
    }

    #[test]
    fn a_fragmented_message_over_the_limit_fails_at_the_crossing_header() {
        let mut t = FrameTracker::new(1000);
        t.scan(&frame(0x01, 600)).unwrap();
        t.scan(&frame(0x00, 300)).unwrap();
        assert_eq!(
            t.scan(&header(0x80, 101)),
            Err(FrameLimit::Message {
                total: 1001,
                limit: 1000
            })
        );
        // A new message starts from zero.
        let mut t = FrameTracker::new(1000);
        t.scan(&frame(0x01, 600)).unwrap();
        t.scan(&frame(0x80, 400)).unwrap();
        t.scan(&frame(0x01, 600)).unwrap();
        t.scan(&frame(0x80, 400)).unwrap();
    }

    #[test]
    fn the_error_is_found_through_actix_ws_wrapping() {
        let limit = FrameLimit::Frame {
            announced: 5,
            limit: 4,
        };
        let err = ProtocolError::Io(io::Error::other(PayloadError::Io(io::Error::other(
            limit.clone(),
        ))));
        assert_eq!(FrameLimit::find(&err), Some(&limit));
        assert_eq!(FrameLimit::find(&ProtocolError::Overflow), None);
    }
}
