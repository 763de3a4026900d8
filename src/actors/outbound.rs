//! The write half of a connection: a channel any actor queues frames on without
//! awaiting, in order, read by the WebSocket response's body ([`websocket_body`]) or by
//! an HTTP response or stream ([`FrameReceiver`]).
//!
//! The queue is bounded in bytes (`server.max_outbound_bytes`): a peer that stops
//! reading would otherwise make it grow for as long as it stays connected. Past the
//! bound the connection is dropped — the queued frames are freed and the TCP socket is
//! shut down, since a close frame could never reach a peer that does not read.

use std::io;
use std::net::{Shutdown, TcpStream};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::task::{self, Poll};

use actix_http::ws::{Codec, Message, OpCode, Parser};
use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::HttpResponse;
use actix_ws::{CloseCode, CloseReason};
use bytes::BytesMut;
use prometheus_client::metrics::counter::Counter;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::Notify;
use tokio_util::codec::Encoder;

/// WebSocket close reasons are limited to 123 bytes.
const MAX_CLOSE_REASON: usize = 123;

/// Ends the connection of a peer that stopped reading: its socket is shut down (the
/// writer's next write fails and actix-web drops the connection) and set to linger 0, so
/// that the last close resets it instead of keeping what the peer never read in kernel
/// buffers until it does. Nothing when the connection is gone already.
pub fn abort(socket: &Weak<TcpStream>) {
    use std::os::fd::AsRawFd;
    let Some(socket) = socket.upgrade() else {
        return;
    };
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket descriptor and a `linger` of the size given.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    let _ = socket.shutdown(Shutdown::Both);
}

/// A frame queued for the writer task.
#[derive(Debug)]
pub enum Frame {
    /// A JSON-RPC message.
    Text(String),
    /// A server ping.
    Ping,
    /// A pong answering a client ping.
    Pong(bytes::Bytes),
    /// Close with a code and reason; the writer stops after it.
    Close(CloseCode, String),
}

impl Frame {
    /// Payload bytes the frame holds while queued.
    fn queued_len(&self) -> usize {
        match self {
            Frame::Text(text) => text.len(),
            Frame::Ping => 0,
            Frame::Pong(data) => data.len(),
            Frame::Close(_, reason) => reason.len(),
        }
    }
}

/// Bytes queued on one connection against its bound.
///
/// A frame is counted from [`ByteBudget::try_add`] until the writer has handed it to
/// the socket layer ([`ByteBudget::release`]), so a writer stuck behind a peer that
/// does not read keeps its current frame counted. A frame larger than the whole bound
/// is accepted when nothing else is queued, so one big response can still go out.
#[derive(Debug)]
pub struct ByteBudget {
    queued: AtomicUsize,
    max: usize,
}

/// The outbound queue of a connection went past `server.max_outbound_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "{queued} bytes are queued for a peer that does not read and {adding} more would pass \
     the {max} byte bound (server.max_outbound_bytes)"
)]
pub struct Overflow {
    /// Bytes queued before this frame.
    pub queued: usize,
    /// The refused frame's bytes.
    pub adding: usize,
    /// The bound.
    pub max: usize,
}

impl ByteBudget {
    /// An empty budget of `max` bytes.
    pub fn new(max: usize) -> Self {
        ByteBudget {
            queued: AtomicUsize::new(0),
            max,
        }
    }

    /// Counts `len` more bytes, or refuses them (counting nothing) when bytes are
    /// already queued and the total would pass the bound.
    pub fn try_add(&self, len: usize) -> Result<(), Overflow> {
        let before = self.queued.fetch_add(len, Ordering::AcqRel);
        if before > 0 && before.saturating_add(len) > self.max {
            self.queued.fetch_sub(len, Ordering::AcqRel);
            return Err(Overflow {
                queued: before,
                adding: len,
                max: self.max,
            });
        }
        Ok(())
    }

    /// Counts `len` more bytes without a check (close frames always go).
    pub fn add(&self, len: usize) {
        self.queued.fetch_add(len, Ordering::AcqRel);
    }

    /// Uncounts `len` bytes handed on or dropped.
    pub fn release(&self, len: usize) {
        self.queued.fetch_sub(len, Ordering::AcqRel);
    }

    /// Bytes counted now.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }
}

/// What one connection's handles and its writer share.
#[derive(Debug)]
struct Shared {
    /// Frames queued and not yet written.
    frames: AtomicUsize,
    bytes: ByteBudget,
    /// Set once the bound was passed; nothing is queued after that.
    overflowed: AtomicBool,
    /// Wakes a [`FrameReceiver`] to end its stream.
    drop_now: Notify,
    /// `ide_bridge_outbound_overflow_drops_total`.
    drops: Counter,
    /// A WebSocket's TCP socket, shut down at the overflow (see [`WriterLimits`]).
    socket: Option<Weak<TcpStream>>,
}

impl Shared {
    /// Nothing queued yet, bounded by `limits`.
    fn new(limits: WriterLimits) -> Arc<Shared> {
        Arc::new(Shared {
            frames: AtomicUsize::new(0),
            bytes: ByteBudget::new(limits.max_bytes),
            overflowed: AtomicBool::new(false),
            drop_now: Notify::new(),
            drops: limits.drops,
            socket: limits.socket,
        })
    }
}

/// Cloneable handle that queues frames for one connection.
#[derive(Debug, Clone)]
pub struct Outbound {
    tx: UnboundedSender<Frame>,
    shared: Arc<Shared>,
}

impl Outbound {
    /// Queues a text frame. False when the connection is gone or being dropped.
    pub fn send_text(&self, text: String) -> bool {
        self.send(Frame::Text(text))
    }

    /// Queues a frame. Past the byte bound the frame is refused and the connection is
    /// dropped (logged once, counted in the metrics and `/status`).
    pub fn send(&self, frame: Frame) -> bool {
        let shared = &self.shared;
        if shared.overflowed.load(Ordering::Acquire) {
            return false;
        }
        let len = frame.queued_len();
        if matches!(frame, Frame::Close(..)) {
            shared.bytes.add(len);
        } else if let Err(overflow) = shared.bytes.try_add(len) {
            if !shared.overflowed.swap(true, Ordering::AcqRel) {
                shared.drops.inc();
                tracing::warn!(
                    queued_bytes = overflow.queued,
                    frame_bytes = overflow.adding,
                    max_outbound_bytes = overflow.max,
                    "dropping the connection: {overflow}"
                );
                shared.drop_now.notify_one();
                // The peer reads nothing, so a close frame would only queue behind the
                // rest: the TCP connection ends, and with it the transport's stream.
                if let Some(socket) = &shared.socket {
                    abort(socket);
                }
            }
            return false;
        }
        shared.frames.fetch_add(1, Ordering::Relaxed);
        let sent = self.tx.send(frame).is_ok();
        if !sent {
            shared.frames.fetch_sub(1, Ordering::Relaxed);
            shared.bytes.release(len);
        }
        sent
    }

    /// Queues a close frame (the reason is cut to the 123 bytes a close frame holds).
    pub fn close(&self, code: CloseCode, reason: impl Into<String>) {
        self.send(Frame::Close(code, truncate_reason(reason.into())));
    }

    /// Frames queued but not yet written (backpressure signal).
    pub fn backlog(&self) -> usize {
        self.shared.frames.load(Ordering::Relaxed)
    }

    /// Bytes queued but not yet handed to the socket.
    pub fn backlog_bytes(&self) -> usize {
        self.shared.bytes.queued()
    }

    /// True when the writer has stopped.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// True when both handles feed the same writer.
    pub fn same_channel(&self, other: &Outbound) -> bool {
        self.tx.same_channel(&other.tx)
    }

    /// Resolves when the writer stops (the response or stream reading this handle was
    /// dropped: answered, or its client went away).
    pub fn closed(&self) -> impl std::future::Future<Output = ()> + 'static {
        let tx = self.tx.clone();
        async move { tx.closed().await }
    }
}

impl Outbound {
    /// A handle bounded by `max_bytes` and the receiving end it feeds, for transports
    /// that are not WebSockets (an HTTP response or GET stream reads it).
    pub fn channel(max_bytes: usize) -> (Outbound, FrameReceiver) {
        Self::counted_channel(max_bytes, Counter::default())
    }

    /// [`Outbound::channel`] whose overflow is counted in `drops`.
    pub fn counted_channel(max_bytes: usize, drops: Counter) -> (Outbound, FrameReceiver) {
        let (tx, rx) = unbounded_channel();
        let shared = Shared::new(WriterLimits {
            max_bytes,
            socket: None,
            drops,
        });
        (
            Outbound {
                tx,
                shared: Arc::clone(&shared),
            },
            FrameReceiver { rx, shared },
        )
    }

    /// A handle whose frames go nowhere (an HTTP session with no GET stream open).
    pub fn nowhere() -> Outbound {
        Self::channel(0).0
    }
}

/// The receiving end of [`Outbound::channel`].
pub struct FrameReceiver {
    rx: UnboundedReceiver<Frame>,
    shared: Arc<Shared>,
}

impl FrameReceiver {
    /// The next frame; `None` when every handle is gone, or once the byte bound was
    /// passed (the reader fell behind: its stream ends, and what was queued is freed
    /// when the receiver is dropped, as a WebSocket is dropped).
    pub async fn recv(&mut self) -> Option<Frame> {
        if self.shared.overflowed.load(Ordering::Acquire) {
            self.rx.close();
            return None;
        }
        let frame = tokio::select! {
            biased;
            () = self.shared.drop_now.notified() => {
                self.rx.close();
                return None;
            }
            frame = self.rx.recv() => frame,
        };
        if let Some(f) = &frame {
            self.shared.frames.fetch_sub(1, Ordering::Relaxed);
            self.shared.bytes.release(f.queued_len());
        }
        frame
    }
}

/// How a connection's writer is bounded.
#[derive(Debug, Clone, Default)]
pub struct WriterLimits {
    /// `server.max_outbound_bytes`.
    pub max_bytes: usize,
    /// The connection's TCP socket (a duplicate owned by the HTTP connection, see
    /// `http::conn`), shut down when the bound is passed. Weak, so that the socket is
    /// closed with the connection and never kept open by a lingering handle; absent
    /// when the server did not record it, and then nothing more is queued past the
    /// bound and what was queued is freed when the connection ends.
    pub socket: Option<Weak<TcpStream>>,
    /// Counts dropped connections.
    pub drops: Counter,
}

/// Makes `response` (an accepted WebSocket upgrade) write the frames queued on the
/// handle returned with it: its body encodes them as the connection's HTTP dispatcher
/// asks for more, so an answer goes from the queue to the socket with no task between.
///
/// The dispatcher asks only while its write buffer has room, so frames for a peer that
/// does not read stay queued and counted; past `limits.max_bytes` the handle shuts the
/// socket down itself (the body is not asked for anything then), and the dispatcher
/// drops the body with what was queued. The upgrade's own body is kept unread inside
/// the new one: dropping it is what tells the connection's message stream that the
/// connection is over, which must happen when this body goes, not before.
pub fn websocket_body(response: HttpResponse, limits: WriterLimits) -> (Outbound, HttpResponse) {
    let (tx, rx) = unbounded_channel();
    let shared = Shared::new(limits);
    let response = response.map_body(|_, upgrade| {
        FrameBody {
            rx,
            shared: Arc::clone(&shared),
            codec: Codec::new(),
            done: false,
            _upgrade: upgrade,
        }
        .boxed()
    });
    (Outbound { tx, shared }, response)
}

/// Most bytes of frames encoded into one chunk for the dispatcher.
const MAX_CHUNK: usize = 64 * 1024;
/// Most payload bytes of a control frame (RFC 6455 5.5).
const MAX_CONTROL_PAYLOAD: usize = 125;

/// The body of a WebSocket response: the frames of its [`Outbound`] queue, encoded in
/// order until a close frame, the last handle gone (then a normal close), or an overflow.
struct FrameBody {
    rx: UnboundedReceiver<Frame>,
    shared: Arc<Shared>,
    codec: Codec,
    done: bool,
    /// The upgrade's own body, never read (see [`websocket_body`]).
    _upgrade: BoxBody,
}

impl FrameBody {
    /// Encodes `frame` into `buf`; true when it was the last one (a close).
    fn encode(&mut self, frame: Frame, buf: &mut BytesMut) -> io::Result<bool> {
        let (message, last) = match frame {
            // What the server codec writes for `Message::Text`, from the string's bytes
            // (the message would take them as a shared `ByteString`, allocated, only to
            // copy them here).
            Frame::Text(text) => {
                Parser::write_message(buf, text.as_bytes(), OpCode::Text, true, false);
                return Ok(false);
            }
            Frame::Ping => (Message::Ping(bytes::Bytes::new()), false),
            Frame::Pong(data) => {
                let cut = data.len().min(MAX_CONTROL_PAYLOAD);
                (Message::Pong(data.slice(..cut)), false)
            }
            Frame::Close(code, reason) => (
                Message::Close(Some(CloseReason {
                    code,
                    description: Some(reason),
                })),
                true,
            ),
        };
        self.codec.encode(message, buf).map_err(io::Error::other)?;
        Ok(last)
    }
}

impl MessageBody for FrameBody {
    type Error = io::Error;

    fn size(&self) -> BodySize {
        BodySize::Stream
    }

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut task::Context<'_>,
    ) -> Poll<Option<Result<bytes::Bytes, io::Error>>> {
        let this = self.get_mut();
        if this.done || this.shared.overflowed.load(Ordering::Acquire) {
            this.rx.close();
            return Poll::Ready(None);
        }
        let mut buf = BytesMut::new();
        while buf.len() < MAX_CHUNK {
            let frame = match this.rx.poll_recv(cx) {
                Poll::Ready(Some(frame)) => frame,
                // Every handle is gone: the connection ends with a normal close.
                Poll::Ready(None) => Frame::Close(CloseCode::Normal, String::new()),
                Poll::Pending => break,
            };
            this.shared.frames.fetch_sub(1, Ordering::Relaxed);
            let len = frame.queued_len();
            let last = this.encode(frame, &mut buf);
            this.shared.bytes.release(len);
            if last? {
                this.done = true;
                this.rx.close();
                break;
            }
        }
        if buf.is_empty() {
            return if this.done {
                Poll::Ready(None)
            } else {
                Poll::Pending
            };
        }
        Poll::Ready(Some(Ok(buf.freeze())))
    }
}

/// Cuts `reason` to what a close frame can carry, at a character boundary.
pub fn truncate_reason(mut reason: String) -> String {
    if reason.len() > MAX_CLOSE_REASON {
        let mut cut = MAX_CLOSE_REASON;
        while !reason.is_char_boundary(cut) {
            cut -= 1;
        }
        reason.truncate(cut);
    }
    reason
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_admits_up_to_its_bound_and_one_big_frame_alone() {
        let budget = ByteBudget::new(100);
        budget.try_add(60).unwrap();
        budget.try_add(40).unwrap();
        assert_eq!(
            budget.try_add(1),
            Err(Overflow {
                queued: 100,
                adding: 1,
                max: 100
            })
        );
        assert_eq!(budget.queued(), 100, "a refused frame is not counted");
        budget.release(100);
        // Alone, a frame over the bound still goes.
        budget.try_add(500).unwrap();
        assert!(budget.try_add(1).is_err());
        budget.release(500);
        assert_eq!(budget.queued(), 0);
    }

    /// What a client reads from `body`, until it ends (within 5 s).
    async fn frames_of(body: BoxBody) -> Vec<actix_http::ws::Frame> {
        use tokio_util::codec::Decoder;
        let read = actix_web::body::to_bytes(body);
        let bytes = tokio::time::timeout(std::time::Duration::from_secs(5), read)
            .await
            .expect("the body ends")
            .unwrap();
        let mut buf = BytesMut::from(&bytes[..]);
        let mut codec = Codec::new().client_mode();
        let mut frames = Vec::new();
        while let Some(frame) = codec.decode(&mut buf).unwrap() {
            frames.push(frame);
        }
        frames
    }

    #[actix_rt::test]
    async fn a_websocket_body_writes_the_queue_in_order_and_closes_when_the_handles_go() {
        use actix_http::ws::Frame as Wire;
        let limits = WriterLimits {
            max_bytes: 1000,
            ..WriterLimits::default()
        };
        let (outbound, response) = websocket_body(HttpResponse::Ok().finish(), limits);
        assert!(outbound.send_text("one".into()));
        assert!(outbound.send(Frame::Ping));
        assert!(outbound.send_text("two".into()));
        // Past 125 bytes a frame's length takes two more bytes.
        let long = "é".repeat(150);
        assert!(outbound.send_text(long.clone()));
        assert_eq!(outbound.backlog(), 4);
        let clone = outbound.clone();
        drop(outbound);
        assert!(clone.send(Frame::Pong(bytes::Bytes::from_static(b"p"))));
        drop(clone);
        let frames = frames_of(response.into_body()).await;
        assert_eq!(
            frames,
            [
                Wire::Text("one".into()),
                Wire::Ping(bytes::Bytes::new()),
                Wire::Text("two".into()),
                Wire::Text(long.into()),
                Wire::Pong("p".into()),
                Wire::Close(Some(CloseCode::Normal.into())),
            ]
        );
    }

    #[actix_rt::test]
    async fn a_websocket_body_ends_at_a_close_frame_and_queues_nothing_after_an_overflow() {
        use actix_http::ws::Frame as Wire;
        let drops = Counter::default();
        let limits = WriterLimits {
            max_bytes: 1000,
            drops: drops.clone(),
            ..WriterLimits::default()
        };
        let (outbound, response) = websocket_body(HttpResponse::Ok().finish(), limits);
        assert!(outbound.send_text("a".repeat(100)));
        outbound.close(CloseCode::Policy, "r".repeat(200));
        assert!(
            outbound.send_text("after the close".into()),
            "queued, never written"
        );
        let frames = frames_of(response.into_body()).await;
        assert_eq!(frames.len(), 2, "{frames:?}");
        assert_eq!(frames[0], Wire::Text("a".repeat(100).into()));
        let Wire::Close(Some(reason)) = &frames[1] else {
            panic!("{:?}", frames[1])
        };
        assert_eq!(reason.code, CloseCode::Policy);
        assert_eq!(
            reason.description.as_ref().map(String::len),
            Some(MAX_CLOSE_REASON)
        );
        assert!(outbound.is_closed(), "the body dropped the queue");

        let (outbound, response) = websocket_body(
            HttpResponse::Ok().finish(),
            WriterLimits {
                max_bytes: 100,
                drops: drops.clone(),
                ..WriterLimits::default()
            },
        );
        assert!(outbound.send_text("b".repeat(60)));
        assert!(!outbound.send_text("c".repeat(41)), "101 bytes queued");
        assert!(
            !outbound.send_text("d".into()),
            "nothing is queued after it"
        );
        assert_eq!(drops.get(), 1, "counted once");
        assert!(
            frames_of(response.into_body()).await.is_empty(),
            "the body ends"
        );
    }

    #[actix_rt::test]
    async fn a_stream_whose_reader_falls_behind_ends_at_the_bound_and_not_before() {
        let drops = Counter::default();
        let (outbound, mut rx) = Outbound::counted_channel(100, drops.clone());
        // At the bound: 100 bytes queued, all delivered.
        assert!(outbound.send_text("a".repeat(60)));
        assert!(outbound.send_text("b".repeat(40)));
        assert!(matches!(rx.recv().await, Some(Frame::Text(t)) if t.len() == 60));
        assert!(matches!(rx.recv().await, Some(Frame::Text(t)) if t.len() == 40));
        // Just past it: the frame is refused and the stream ends, though frames wait.
        assert!(outbound.send_text("c".repeat(60)));
        assert!(!outbound.send_text("d".repeat(41)), "101 bytes queued");
        assert!(rx.recv().await.is_none(), "the stream ends at the overflow");
        assert_eq!(drops.get(), 1, "counted once");
        assert!(rx.recv().await.is_none());
        assert!(
            !outbound.send_text("e".into()),
            "nothing is queued after it"
        );
        drop(rx);
        assert!(outbound.is_closed(), "the transport sees the stream gone");
    }
}
