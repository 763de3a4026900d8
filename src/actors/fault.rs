//! Fault-injection messages (feature `fault-injection`, tests only): make a
//! singleton actor panic inside a handler, or hold a request in flight.

use std::time::Duration;

use actix::Message;

use super::supervise::ActorFault;

/// Panic inside the receiving actor's handler.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), ActorFault>")]
pub struct Crash;

/// Answer only after the given time, while staying responsive to other messages.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), ActorFault>")]
pub struct Stall(pub Duration);

/// Block the receiving actor's thread for the given time, as a busy actor would: its
/// mailbox, timers and streams wait, and the kernel's queues behind them fill. Only the
/// actors on threads of their own (the watcher, the workspace writer) are blocked
/// alone; for the others it blocks every actor on the system thread too.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), ActorFault>")]
pub struct Freeze(pub Duration);

/// Close every connection of an agent's session from the bridge's side (1001), as a
/// network cut would; the session itself stays and waits for its agent.
#[derive(Debug, Message)]
#[rtype(result = "bool")]
pub struct CutConnections(pub crate::actors::messages::session::SessionId);

/// Implements [`Crash`], [`Stall`] and [`Freeze`] for a supervised singleton actor:
/// `Crash` panics inside the actor's panic boundary (so its supervisor restarts it),
/// `Stall` answers after the given time without blocking the actor, `Freeze` blocks its
/// thread (logged when it begins, so a test knows the actor is deaf).
macro_rules! fault_handlers {
    ($actor:ty, $name:expr) => {
        impl actix::Handler<$crate::actors::fault::Crash> for $actor {
            type Result = Result<(), $crate::actors::supervise::ActorFault>;
            fn handle(
                &mut self,
                _: $crate::actors::fault::Crash,
                ctx: &mut actix::Context<Self>,
            ) -> Self::Result {
                $crate::actors::supervise::guard($name, self, ctx, |_, _| {
                    panic!("injected fault in {}", $name)
                })
            }
        }

        impl actix::Handler<$crate::actors::fault::Stall> for $actor {
            type Result =
                actix::ResponseActFuture<Self, Result<(), $crate::actors::supervise::ActorFault>>;
            fn handle(
                &mut self,
                msg: $crate::actors::fault::Stall,
                _: &mut actix::Context<Self>,
            ) -> Self::Result {
                use actix::{ActorFutureExt, WrapFuture};
                Box::pin(
                    actix::clock::sleep(msg.0)
                        .into_actor(self)
                        .map(|_, _, _| Ok(())),
                )
            }
        }

        impl actix::Handler<$crate::actors::fault::Freeze> for $actor {
            type Result = Result<(), $crate::actors::supervise::ActorFault>;
            fn handle(
                &mut self,
                msg: $crate::actors::fault::Freeze,
                _: &mut actix::Context<Self>,
            ) -> Self::Result {
                tracing::warn!(
                    actor = $name,
                    ms = msg.0.as_millis() as u64,
                    "fault injection: blocking the actor's thread"
                );
                std::thread::sleep(msg.0);
                Ok(())
            }
        }
    };
}
pub(crate) use fault_handlers;
