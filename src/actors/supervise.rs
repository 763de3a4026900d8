//! Panic boundary and restarts of the supervised singletons. actix's `Supervisor`
//! restarts an actor that stops but does not catch panics; [`guard`] turns a panic
//! inside a handler into a stop (so the supervisor restarts the actor) and an error
//! for the caller; [`restarted`] is what every singleton does when it comes back;
//! [`Reserved`] is a singleton's address before the actor exists, so start-up wires
//! actors that message each other without nesting their construction.

use std::any::Any;
use std::cell::Cell;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{self, Poll};

use actix::dev::channel::{self, AddressReceiver};
use actix::dev::ContextFut;
use actix::{Actor, ActorContext, Addr, Arbiter, Context, MailboxError, Recipient, Supervised};

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

/// The mailbox size of a reserved actor: actix's default (what `send` waits on; `do_send`
/// is not bounded by it).
const MAILBOX_CAPACITY: usize = 16;

/// A singleton's address, handed out before the actor is built: start-up reserves every
/// singleton's address first, then builds each actor with the addresses it sends to (two
/// actors that message each other are wired at construction, in any order), then starts
/// it under a supervisor. Messages sent to the address before the actor starts wait in
/// its mailbox.
pub struct Reserved<A: Actor<Context = Context<A>>> {
    addr: Addr<A>,
    /// Taken when the actor starts.
    mailbox: Cell<Option<AddressReceiver<A>>>,
}

impl<A: Actor<Context = Context<A>> + Supervised> Default for Reserved<A> {
    fn default() -> Self {
        let (sender, mailbox) = channel::channel(MAILBOX_CAPACITY);
        Self {
            addr: Addr::new(sender),
            mailbox: Cell::new(Some(mailbox)),
        }
    }
}

impl<A: Actor<Context = Context<A>> + Supervised> Reserved<A> {
    /// A new address, nobody behind it yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The address (the actor need not exist yet).
    pub fn addr(&self) -> Addr<A> {
        self.addr.clone()
    }

    /// Starts `actor` behind the address, supervised, on the current arbiter.
    ///
    /// # Panics
    /// When the actor was started already (a start-up bug).
    pub fn start(&self, actor: A) -> Addr<A> {
        let context = Context::with_receiver(self.take_mailbox());
        actix_rt::spawn(Supervising(context.into_future(actor)));
        self.addr()
    }

    /// Starts the actor `build` makes behind the address, supervised, on a thread of its
    /// own (blocking work never holds up a worker).
    ///
    /// # Panics
    /// When the actor was started already (a start-up bug).
    pub fn start_on_own_thread(&self, build: impl FnOnce() -> A + Send + 'static) -> Addr<A> {
        let mailbox = self.take_mailbox();
        Arbiter::new().spawn_fn(move || {
            let context = Context::with_receiver(mailbox);
            actix_rt::spawn(Supervising(context.into_future(build())));
        });
        self.addr()
    }

    fn take_mailbox(&self) -> AddressReceiver<A> {
        self.mailbox
            .take()
            .expect("a reserved actor is started once")
    }
}

/// What actix's `Supervisor` does for an actor it built itself, for a reserved one: runs
/// the actor, and restarts it (`Supervised::restarting`) whenever it stops while its
/// address is still held.
struct Supervising<A: Actor<Context = Context<A>> + Supervised>(ContextFut<A, Context<A>>);

impl<A: Actor<Context = Context<A>> + Supervised> Future for Supervising<A> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut task::Context<'_>) -> Poll<()> {
        loop {
            match Pin::new(&mut self.0).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(()) if self.0.restart() => continue,
                Poll::Ready(()) => return Poll::Ready(()),
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use actix::prelude::*;

    use super::Reserved;

    /// Says how many times it was asked, and asks its peer once in return.
    struct Echo {
        peer: Addr<Echo>,
        heard: usize,
        restarts: Arc<AtomicUsize>,
    }

    impl Actor for Echo {
        type Context = Context<Self>;
    }

    impl Supervised for Echo {
        fn restarting(&mut self, _: &mut Context<Self>) {
            self.restarts.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[derive(Message)]
    #[rtype(result = "usize")]
    struct Ping {
        pass_on: bool,
    }

    impl Handler<Ping> for Echo {
        type Result = usize;
        fn handle(&mut self, msg: Ping, _: &mut Context<Self>) -> usize {
            self.heard += 1;
            if msg.pass_on {
                self.peer.do_send(Ping { pass_on: false });
            }
            self.heard
        }
    }

    #[derive(Message)]
    #[rtype(result = "()")]
    struct Stop;

    impl Handler<Stop> for Echo {
        type Result = ();
        fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
            ctx.stop();
        }
    }

    /// Two actors that message each other are built knowing each other's address, a
    /// message sent before the actor starts is delivered, a stopped actor is
    /// restarted behind the same address (its state kept, `restarting` called), and a
    /// second start is refused.
    #[actix_rt::test]
    async fn reserved_actors_are_wired_before_they_exist_and_restarted_when_they_stop() {
        let (a, b) = (Reserved::<Echo>::new(), Reserved::<Echo>::new());
        let restarts = Arc::new(AtomicUsize::new(0));
        a.addr().do_send(Ping { pass_on: false });
        let echo = |peer: Addr<Echo>| Echo {
            peer,
            heard: 0,
            restarts: Arc::clone(&restarts),
        };
        let a_addr = a.start(echo(b.addr()));
        let b_addr = b.start_on_own_thread({
            let (peer, restarts) = (a.addr(), Arc::clone(&restarts));
            move || Echo {
                peer,
                heard: 0,
                restarts,
            }
        });
        assert_eq!(b_addr.send(Ping { pass_on: true }).await.unwrap(), 1);
        // The early ping, then the one b passed on, then this one.
        assert_eq!(a_addr.send(Ping { pass_on: false }).await.unwrap(), 3);
        a_addr.do_send(Stop);
        assert_eq!(a_addr.send(Ping { pass_on: false }).await.unwrap(), 4);
        assert_eq!(restarts.load(Ordering::SeqCst), 1);
        let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            a.start(echo(b.addr()));
        }));
        assert!(again.is_err(), "a reserved actor starts once");
    }
}
