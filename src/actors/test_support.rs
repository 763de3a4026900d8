//! Helpers for in-process actor tests: actors that capture what they are sent, and
//! waits with deadlines.

use std::time::Duration;

use actix::prelude::*;
use tokio::sync::mpsc;

use super::outbound::{Frame, FrameReceiver};

/// How long a test waits for something that should happen at once.
pub const DEADLINE: Duration = Duration::from_secs(5);

/// An actor that forwards every `M` it receives to a channel and answers with
/// `M::Result::default()`.
pub struct Capture<M>(mpsc::UnboundedSender<M>);

impl<M: Message + Send + Unpin + 'static> Capture<M>
where
    M::Result: Default + Send,
{
    /// Starts one: its recipient, and the channel its messages arrive on.
    pub fn start() -> (Recipient<M>, mpsc::UnboundedReceiver<M>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Capture(tx).start().recipient(), rx)
    }
}

impl<M: Message + Send + Unpin + 'static> Actor for Capture<M> {
    type Context = Context<Self>;
}

impl<M: Message + Send + Unpin + 'static> Handler<M> for Capture<M>
where
    M::Result: Default + Send,
{
    type Result = MessageResult<M>;
    fn handle(&mut self, msg: M, _: &mut Context<Self>) -> MessageResult<M> {
        let _ = self.0.send(msg);
        MessageResult(M::Result::default())
    }
}

/// The next item on `rx` that `want` accepts, skipping others; panics after
/// [`DEADLINE`].
pub async fn next_matching<T: std::fmt::Debug>(
    rx: &mut mpsc::UnboundedReceiver<T>,
    mut want: impl FnMut(&T) -> bool,
) -> T {
    let wait = async {
        loop {
            match rx.recv().await {
                Some(item) if want(&item) => return item,
                Some(_) => continue,
                None => panic!("the channel closed"),
            }
        }
    };
    tokio::time::timeout(DEADLINE, wait)
        .await
        .expect("expected message within the deadline")
}

/// The next text frame on `rx` as JSON; panics after [`DEADLINE`].
pub async fn next_json(rx: &mut FrameReceiver) -> serde_json::Value {
    let wait = async {
        loop {
            match rx.recv().await {
                Some(Frame::Text(text)) => return serde_json::from_str(&text).expect("JSON"),
                Some(_) => continue,
                None => panic!("the outbound closed"),
            }
        }
    };
    tokio::time::timeout(DEADLINE, wait)
        .await
        .expect("expected a frame within the deadline")
}
