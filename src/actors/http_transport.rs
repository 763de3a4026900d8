//! Streamable HTTP transport (`/mcp`): one `HttpTransport` actor per `Mcp-Session-Id`,
//! the counterpart of a WebSocket's Transport. It owns the connection's rate limits,
//! the GET stream for server-initiated messages and the idle expiry, and feeds its
//! Session like any other connection (kind `http`). `HttpSessions` maps session ids to
//! these actors.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;

use super::messages::connection::Generation;
use super::messages::session::{
    Activity, Attach, ConnectionIdle, ConnectionKind, Detach, FromClient, McpState, Rebind,
    ReplacePush, SessionHandle,
};
use super::outbound::Outbound;
use super::rate_limit::{ConnectionLimits, Verdict};
use super::supervise::guard;
use crate::metrics::Metrics;
use crate::protocol::jsonrpc::{Incoming, RpcError};

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "http_sessions";

/// How often an HTTP session checks whether it has been idle for too long (it learns
/// that it became idle at once, when its last stream closes).
const IDLE_CHECK: Duration = Duration::from_millis(250);

/// The HTTP side of one MCP session.
pub struct HttpTransport {
    id: String,
    generation: Generation,
    session: SessionHandle,
    limits: ConnectionLimits,
    last_seen: Instant,
    idle_after: Duration,
    push: Outbound,
    /// Response streams of POSTs still being answered: the session is not idle while
    /// any is open (a long tool call without a GET stream).
    open_replies: Vec<Outbound>,
    /// Open `subscriptions/listen` streams (MCP 2026-07-28): like the GET stream,
    /// they only listen.
    listens: Vec<Outbound>,
    /// What it was last told to do to its session.
    activity: Activity,
    table: Addr<HttpSessions>,
    /// The MCP state its connection starts in (taken when it attaches).
    mcp: Option<McpState>,
}

impl HttpTransport {
    /// A transport for `session`, known to `table` as `id`, that ends after
    /// `idle_after` without requests or an open GET stream; its connection starts in
    /// `mcp` (fresh, or resumed).
    pub fn new(
        id: String,
        session: SessionHandle,
        table: Addr<HttpSessions>,
        idle_after: Duration,
        limits: (&crate::config::RateLimitSettings, Arc<Metrics>),
        mcp: McpState,
    ) -> Self {
        let (settings, metrics) = limits;
        Self {
            id,
            generation: Generation::next(),
            session,
            limits: ConnectionLimits::new(settings, metrics),
            last_seen: Instant::now(),
            idle_after,
            push: Outbound::nowhere(),
            open_replies: Vec::new(),
            listens: Vec::new(),
            activity: Activity::Busy,
            table,
            mcp: Some(mcp),
        }
    }

    /// Tells the session when this connection becomes idle, listening or busy again:
    /// a client that went away without DELETE then no longer keeps a new agent out.
    fn set_activity(&mut self, activity: Activity) {
        if activity != self.activity {
            self.activity = activity;
            self.session.idle.do_send(ConnectionIdle {
                generation: self.generation,
                activity,
            });
        }
    }

    /// Busy while a POST is being answered, else listening while its GET stream is
    /// open, else idle. Answers whether it is idle.
    fn check_idle(&mut self) -> bool {
        self.open_replies.retain(|r| !r.is_closed());
        self.listens.retain(|r| !r.is_closed());
        let activity = if !self.open_replies.is_empty() {
            Activity::Busy
        } else if !self.push.is_closed() || !self.listens.is_empty() {
            Activity::Listening
        } else {
            Activity::Idle
        };
        self.set_activity(activity);
        activity == Activity::Idle
    }

    /// Checks again the moment `stream` closes, so that a client that answered its
    /// last request or dropped its stream frees its slot without waiting for a tick.
    fn recheck_when_closed(&self, stream: &Outbound, ctx: &mut Context<Self>) {
        ctx.spawn(stream.closed().into_actor(self).map(|(), act, _| {
            act.check_idle();
        }));
    }

    fn end(&mut self, ctx: &mut Context<Self>, why: &str) {
        tracing::info!(mcp_session = %self.id, why, "HTTP MCP session ended");
        self.session.detach.do_send(Detach {
            generation: self.generation,
            ended: true,
        });
        self.table.do_send(Forget(self.id.clone(), ctx.address()));
        ctx.stop();
    }
}

impl Actor for HttpTransport {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.session.attach.do_send(Attach {
            generation: self.generation,
            kind: ConnectionKind::Http,
            outbound: self.push.clone(),
            transport: ctx.address().recipient(),
            mcp: self.mcp.take().unwrap_or_default(),
        });
        ctx.run_interval(IDLE_CHECK, |act, ctx| {
            if !act.session.connected() {
                return act.end(ctx, "its session ended");
            }
            if act.check_idle() && act.last_seen.elapsed() >= act.idle_after {
                act.end(ctx, "idle for longer than the grace period");
            }
        });
    }
}

/// Why a POST was not passed on.
#[derive(Debug)]
pub enum PostRefused {
    /// Over the rate limit: answer the request with this error.
    Limited(RpcError),
    /// The session behind this id has ended: 404, the client initializes anew.
    Gone,
}

/// One message POSTed to the session; request answers go to `reply`.
#[derive(Message)]
#[rtype(result = "Result<(), PostRefused>")]
pub struct Post {
    /// The POSTed message, classified.
    pub message: Incoming,
    /// The POST's response stream.
    pub reply: Outbound,
}

impl Handler<Post> for HttpTransport {
    type Result = Result<(), PostRefused>;
    fn handle(&mut self, msg: Post, ctx: &mut Context<Self>) -> Self::Result {
        if !self.session.connected() {
            self.end(ctx, "its session ended");
            return Err(PostRefused::Gone);
        }
        self.last_seen = Instant::now();
        match self.limits.check(&msg.message, self.last_seen) {
            Verdict::Pass => {}
            Verdict::Refuse(err) => return Err(PostRefused::Limited(err)),
            Verdict::Drop => return Ok(()),
        }
        let listen =
            matches!(&msg.message, Incoming::Request(r) if r.method == "subscriptions/listen");
        self.recheck_when_closed(&msg.reply, ctx);
        if listen {
            self.listens.push(msg.reply.clone());
            self.check_idle();
        } else {
            self.open_replies.retain(|r| !r.is_closed());
            self.open_replies.push(msg.reply.clone());
            self.set_activity(Activity::Busy);
        }
        self.session.from_client.do_send(FromClient {
            generation: self.generation,
            message: msg.message,
            reply: Some(msg.reply),
        });
        Ok(())
    }
}

/// The client opened its GET stream: server-initiated messages go there.
#[derive(Message)]
#[rtype(result = "()")]
pub struct OpenStream(pub Outbound);

impl Handler<OpenStream> for HttpTransport {
    type Result = ();
    fn handle(&mut self, msg: OpenStream, ctx: &mut Context<Self>) {
        self.last_seen = Instant::now();
        self.push = msg.0.clone();
        self.recheck_when_closed(&msg.0, ctx);
        self.check_idle();
        self.session.replace_push.do_send(ReplacePush {
            generation: self.generation,
            outbound: msg.0,
        });
    }
}

/// The client ended the session (DELETE).
#[derive(Message)]
#[rtype(result = "()")]
pub struct End;

impl Handler<End> for HttpTransport {
    type Result = ();
    fn handle(&mut self, _: End, ctx: &mut Context<Self>) {
        self.end(ctx, "the client sent DELETE");
    }
}

impl Handler<Rebind> for HttpTransport {
    type Result = ();
    fn handle(&mut self, msg: Rebind, _: &mut Context<Self>) {
        self.session = msg.0;
    }
}

/// The table of HTTP MCP sessions by `Mcp-Session-Id`.
#[derive(Default)]
pub struct HttpSessions {
    sessions: HashMap<String, Addr<HttpTransport>>,
}

impl Actor for HttpSessions {
    type Context = Context<Self>;
}

impl Supervised for HttpSessions {
    fn restarting(&mut self, _: &mut Context<Self>) {
        self.sessions.retain(|_, addr| addr.connected());
    }
}

/// Remember a new session.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Register(pub String, pub Addr<HttpTransport>);

/// The transport of a session id, if it is live.
#[derive(Message)]
#[rtype(result = "Option<Addr<HttpTransport>>")]
pub struct Lookup(pub String);

/// Forget an ended session: its id, if it still names this transport (two first
/// requests of one stateless client may have raced to register one each).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Forget(pub String, pub Addr<HttpTransport>);

impl Handler<Register> for HttpSessions {
    type Result = ();
    fn handle(&mut self, msg: Register, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            act.sessions.insert(msg.0, msg.1);
        });
    }
}

impl Handler<Lookup> for HttpSessions {
    type Result = Option<Addr<HttpTransport>>;
    fn handle(&mut self, msg: Lookup, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            act.sessions
                .get(&msg.0)
                .filter(|addr| addr.connected())
                .cloned()
        })
        .unwrap_or(None)
    }
}

impl Handler<Forget> for HttpSessions {
    type Result = ();
    fn handle(&mut self, msg: Forget, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            if act.sessions.get(&msg.0) == Some(&msg.1) {
                act.sessions.remove(&msg.0);
            }
        });
    }
}
