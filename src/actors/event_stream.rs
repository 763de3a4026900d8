//! The feeding side of one HTTP client's event stream (server-sent events: the
//! activity stream, the page's live events), as the actor that feeds it holds it.
//!
//! Events are queued, bounded; a client that falls behind is dropped. Ending its
//! response body is not enough to end its connection: a peer that reads nothing keeps
//! the socket's send buffer full, so actix-web never polls the body again to see it end,
//! and the connection (two descriptors, megabytes of kernel buffer) stayed for as long as
//! the peer kept it open. Its TCP socket is shut down, as a WebSocket's is when its
//! queue overflows ([`super::outbound`]).

use std::net::TcpStream;
use std::sync::{Arc, Weak};

use tokio::sync::mpsc;

/// What became of an event offered to a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
    /// Queued.
    Queued,
    /// The client went away (its response ended).
    Gone,
    /// Its queue was full: dropped, its connection shut down.
    FellBehind,
}

/// One client's stream, fed by an actor.
#[derive(Debug)]
pub struct EventSender {
    tx: mpsc::Sender<Arc<str>>,
    /// The connection's socket (`http::conn::ConnSocket`), weakly: shut down when the
    /// client falls behind.
    socket: Option<Weak<TcpStream>>,
}

impl EventSender {
    /// A stream of at most `queue` waiting events for the client on `socket`; the
    /// receiver is the response body's.
    pub fn channel(
        queue: usize,
        socket: Option<Weak<TcpStream>>,
    ) -> (EventSender, mpsc::Receiver<Arc<str>>) {
        let (tx, rx) = mpsc::channel(queue);
        (EventSender { tx, socket }, rx)
    }

    /// Queues `event`; a client that does not keep up is dropped and its connection
    /// shut down.
    pub fn offer(&self, event: &Arc<str>) -> Offered {
        match self.tx.try_send(Arc::clone(event)) {
            Ok(()) => Offered::Queued,
            Err(mpsc::error::TrySendError::Closed(_)) => Offered::Gone,
            Err(mpsc::error::TrySendError::Full(_)) => {
                if let Some(socket) = &self.socket {
                    super::outbound::abort(socket);
                }
                Offered::FellBehind
            }
        }
    }

    /// The client went away.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client that falls behind has its connection shut down: its peer sees the end
    /// although it read nothing.
    #[test]
    fn a_client_that_falls_behind_has_its_connection_shut_down() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let peer = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (served, _) = listener.accept().unwrap();
        let served = Arc::new(served);
        let (sender, _rx) = EventSender::channel(1, Some(Arc::downgrade(&served)));
        let event: Arc<str> = Arc::from("e");
        assert_eq!(sender.offer(&event), Offered::Queued);
        assert_eq!(sender.offer(&event), Offered::FellBehind);
        let mut buf = [0u8; 1];
        peer.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        assert_eq!(std::io::Read::read(&mut &peer, &mut buf).unwrap(), 0, "EOF");
        drop(_rx);
        assert!(sender.is_closed());
        assert_eq!(sender.offer(&event), Offered::Gone);
    }
}
