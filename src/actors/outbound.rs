//! The write half of a WebSocket connection: a channel to one writer task that owns
//! the socket, so any actor can queue frames without awaiting and order is kept.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use actix_ws::{CloseCode, CloseReason};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

/// WebSocket close reasons are limited to 123 bytes.
const MAX_CLOSE_REASON: usize = 123;

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

/// Cloneable handle that queues frames for one connection.
#[derive(Debug, Clone)]
pub struct Outbound {
    tx: UnboundedSender<Frame>,
    /// Frames queued and not yet written; shared only with this connection's writer.
    queued: Arc<AtomicUsize>,
}

impl Outbound {
    /// Queues a text frame. False when the connection is gone.
    pub fn send_text(&self, text: String) -> bool {
        self.send(Frame::Text(text))
    }

    /// Queues a frame.
    pub fn send(&self, frame: Frame) -> bool {
        self.queued.fetch_add(1, Ordering::Relaxed);
        let sent = self.tx.send(frame).is_ok();
        if !sent {
            self.queued.fetch_sub(1, Ordering::Relaxed);
        }
        sent
    }

    /// Queues a close frame (the reason is cut to the 123 bytes a close frame holds).
    pub fn close(&self, code: CloseCode, reason: impl Into<String>) {
        self.send(Frame::Close(code, truncate_reason(reason.into())));
    }

    /// Frames queued but not yet written (backpressure signal).
    pub fn backlog(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// True when the writer has stopped.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

impl Outbound {
    /// A handle and the receiving end it feeds (an HTTP response stream reads it).
    pub fn channel() -> (Outbound, FrameReceiver) {
        let (tx, rx) = unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        (
            Outbound {
                tx,
                queued: Arc::clone(&queued),
            },
            FrameReceiver { rx, queued },
        )
    }

    /// A handle whose frames go nowhere (an HTTP session with no GET stream open).
    pub fn nowhere() -> Outbound {
        Self::channel().0
    }
}

/// The receiving end of an [`Outbound`], for transports that are not WebSockets.
pub struct FrameReceiver {
    rx: UnboundedReceiver<Frame>,
    queued: Arc<AtomicUsize>,
}

impl FrameReceiver {
    /// The next frame; `None` when every handle is gone.
    pub async fn recv(&mut self) -> Option<Frame> {
        let frame = self.rx.recv().await;
        if frame.is_some() {
            self.queued.fetch_sub(1, Ordering::Relaxed);
        }
        frame
    }
}

/// Starts the writer task for `ws` and returns the handle that feeds it.
pub fn spawn_writer(ws: actix_ws::Session) -> Outbound {
    let (outbound, rx) = Outbound::channel();
    actix_rt::spawn(write_loop(ws, rx));
    outbound
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

async fn write_loop(mut ws: actix_ws::Session, mut rx: FrameReceiver) {
    while let Some(frame) = rx.recv().await {
        let written = match frame {
            Frame::Text(text) => ws.text(text).await,
            Frame::Ping => ws.ping(b"").await,
            Frame::Pong(data) => ws.pong(&data).await,
            Frame::Close(code, reason) => {
                let _ = ws
                    .close(Some(CloseReason {
                        code,
                        description: Some(reason),
                    }))
                    .await;
                return;
            }
        };
        if written.is_err() {
            return;
        }
    }
    let _ = ws
        .close(Some(CloseReason {
            code: CloseCode::Normal,
            description: None,
        }))
        .await;
}
