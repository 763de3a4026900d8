//! Panic boundary and restarts of the supervised singletons. actix's `Supervisor`
//! restarts an actor that stops but does not catch panics; [`guard`] turns a panic
//! inside a handler into a stop (so the supervisor restarts the actor) and an error
//! for the caller; [`restarted`] is what every singleton does when it comes back;
//! [`start_with`] starts one whose address others need before it exists.

use std::any::Any;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use actix::{
    Actor, ActorContext, Addr, AsyncContext, Context, MailboxError, Recipient, Supervised,
    Supervisor,
};

use super::messages::activity::{LifecycleEvent, RecordLifecycle};
use crate::metrics::Metrics;

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

/// Starts a supervised actor on the current arbiter, handing `build` its address before
/// it exists: whatever else `build` starts can hold the actor's recipients, so two
/// actors that message each other are wired at construction. Returns the address and
/// what `build` returned beside the actor.
pub fn start_with<A, T>(build: impl FnOnce(Addr<A>) -> (A, T) + 'static) -> (Addr<A>, T)
where
    A: Actor<Context = Context<A>> + Supervised,
    T: 'static,
{
    let extra = Rc::new(RefCell::new(None));
    let slot = Rc::clone(&extra);
    // `Supervisor::start` runs its closure before it returns.
    let addr = Supervisor::start(move |ctx: &mut Context<A>| {
        let (actor, other) = build(ctx.address());
        *slot.borrow_mut() = Some(other);
        actor
    });
    let other = extra
        .borrow_mut()
        .take()
        .expect("Supervisor::start builds the actor before returning");
    (addr, other)
}

/// What every supervised singleton does when its supervisor restarts it: count the
/// restart, log what the restart did to its state, and put an `actor_restarted` entry
/// in the timeline.
pub fn restarted(
    name: &'static str,
    metrics: &Metrics,
    activity: &Recipient<RecordLifecycle>,
    consequence: &str,
) {
    metrics.record_restart(name);
    tracing::warn!(actor = name, "restarted after a fault; {consequence}");
    activity.do_send(RecordLifecycle {
        event: LifecycleEvent::ActorRestarted,
        session_id: None,
        detail: name.to_string(),
    });
}
