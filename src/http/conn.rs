//! Per-connection data recorded when actix-web accepts a TCP connection.

use std::any::Any;
use std::net::TcpStream;
use std::os::fd::AsFd;
use std::sync::{Arc, Weak};

use actix_web::dev::Extensions;
use actix_web::HttpRequest;

/// A duplicate of the connection's socket descriptor, kept for as long as the HTTP
/// connection lives (actix-web drops connection data with the connection). The
/// WebSocket writer holds it weakly and shuts the socket down to drop a peer that does
/// not read (`actors::outbound`); a duplicate, not the raw number, so that it can never
/// name another connection's socket after this one closed.
#[derive(Debug, Clone)]
pub struct ConnSocket(pub Arc<TcpStream>);

/// `HttpServer::on_connect` hook: records [`ConnSocket`] for TCP connections. When the
/// descriptor cannot be duplicated (out of descriptors) nothing is recorded and an
/// overflowing writer can only free its queue.
pub fn on_connect(conn: &dyn Any, data: &mut Extensions) {
    let Some(stream) = conn.downcast_ref::<actix_web::rt::net::TcpStream>() else {
        return;
    };
    match stream.as_fd().try_clone_to_owned() {
        Ok(fd) => {
            data.insert(ConnSocket(Arc::new(TcpStream::from(fd))));
        }
        Err(err) => tracing::warn!(%err, "cannot duplicate a connection's socket"),
    }
}

/// The request's connection socket as [`on_connect`] recorded it, weakly: for whatever
/// must be able to shut a connection whose peer stopped reading.
pub fn socket_of(req: &HttpRequest) -> Option<Weak<TcpStream>> {
    req.conn_data::<ConnSocket>().map(|c| Arc::downgrade(&c.0))
}
