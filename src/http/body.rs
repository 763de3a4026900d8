//! Reading a request body with a limit enforced before the bytes are held: an announced
//! `Content-Length` over the limit is refused at once, and a body that grows past it is
//! refused as soon as it does; one that has not all arrived [`BODY_DEADLINE`] after the
//! handler asked for it is refused too (a client trickling a byte at a time held its
//! connection, and a file descriptor, for as long as it liked).

use actix_web::{web, HttpRequest};
use futures_util::StreamExt;

/// How long a whole body may take to arrive (a full message on loopback takes
/// milliseconds).
pub const BODY_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// Why a body was not read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// Larger than the limit (413).
    #[error("body larger than {limit} bytes ({setting})")]
    TooLarge {
        limit: usize,
        /// The setting that sets the limit.
        setting: &'static str,
    },
    /// The stream broke (400).
    #[error("unreadable body: {0}")]
    Unreadable(String),
    /// Not all there within [`BODY_DEADLINE`] (408).
    #[error("body not received within {} s", BODY_DEADLINE.as_secs())]
    TooSlow,
}

/// Reads the body of `req` up to `limit` bytes; `setting` names the limit in errors.
pub async fn read_limited(
    req: &HttpRequest,
    mut payload: web::Payload,
    limit: usize,
    setting: &'static str,
) -> Result<web::BytesMut, BodyError> {
    let too_large = || BodyError::TooLarge { limit, setting };
    let announced = req
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if announced.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let read = async move {
        let mut body = web::BytesMut::with_capacity(announced.unwrap_or(0).min(limit));
        while let Some(chunk) = payload.next().await {
            let chunk = chunk.map_err(|e| BodyError::Unreadable(e.to_string()))?;
            if body.len() + chunk.len() > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    };
    actix_web::rt::time::timeout(BODY_DEADLINE, read)
        .await
        .unwrap_or(Err(BodyError::TooSlow))
}
