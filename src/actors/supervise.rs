//! Panic boundary for actor handlers. actix's `Supervisor` restarts an actor that
//! stops but does not catch panics; [`guard`] turns a panic inside a handler into a
//! stop (so the supervisor restarts the actor) and an error for the caller.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use actix::{Actor, ActorContext, Context, MailboxError};

/// A request could not be served because of a fault in the actor serving it.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ActorFault {
    /// The handler panicked; the actor is restarting.
    #[error("the {actor} actor failed while handling the request ({message}) and is restarting; retry the request")]
    Panicked {
        /// Actor name.
        actor: &'static str,
        /// Panic message.
        message: String,
    },
    /// The actor's mailbox refused the message or dropped the reply (crash or overload).
    #[error("the {actor} actor is unavailable ({reason}); retry the request")]
    Unavailable {
        /// Actor name.
        actor: &'static str,
        /// Mailbox error.
        reason: String,
    },
}

impl ActorFault {
    /// Maps a mailbox error of `actor`.
    pub fn mailbox(actor: &'static str, err: MailboxError) -> Self {
        let reason = match err {
            MailboxError::Closed => "it stopped or restarted before answering".to_string(),
            MailboxError::Timeout => "it did not answer in time".to_string(),
        };
        Self::Unavailable { actor, reason }
    }
}

/// Runs `f` inside a panic boundary. On panic the actor is stopped (its supervisor
/// restarts it) and the caller receives [`ActorFault::Panicked`].
pub fn guard<A, R>(
    name: &'static str,
    act: &mut A,
    ctx: &mut Context<A>,
    f: impl FnOnce(&mut A, &mut Context<A>) -> R,
) -> Result<R, ActorFault>
where
    A: Actor<Context = Context<A>>,
{
    let result = catch(name, || f(act, ctx));
    if result.is_err() {
        tracing::error!(
            actor = name,
            "stopping the actor so that its supervisor restarts it"
        );
        ctx.stop();
    }
    result
}

/// Runs `f` inside a panic boundary without stopping anything: for per-agent actors,
/// where a fault answers one request with an error and the actor keeps serving.
pub fn catch<R>(name: &'static str, f: impl FnOnce() -> R) -> Result<R, ActorFault> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let message = panic_message(payload.as_ref());
        tracing::error!(actor = name, %message, "handler panicked");
        ActorFault::Panicked {
            actor: name,
            message,
        }
    })
}

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}
