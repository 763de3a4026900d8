//! `ide-bridge mcp`: the stdio MCP server an MCP client starts as a subprocess. It
//! relays newline-delimited JSON-RPC between the client and the bridge that serves the
//! working directory, over that bridge's WebSocket, and hides bridge restarts from the
//! client: it reconnects, replays `initialize`, and answers requests that were in
//! flight when the bridge went away with an error instead of silence. With no bridge it
//! starts one for the project (or, outside any project, explains how), answering
//! `initialize` itself meanwhile. Only protocol is written to stdout.

mod discover;
mod local;
mod upstream;

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

pub use discover::{find_bridge, project_root};
pub use ide_bridge_host::ancestry::client_pids;
use ide_bridge_protocol::methods::{Method, Notification};
use ide_bridge_protocol::{jsonrpc, modern};
use local::LocalAnswers;
use upstream::{Event, Upstream};

/// How long a client request waits for the bridge to come (back) before it is answered
/// with an error.
const WAIT_FOR_BRIDGE: Duration = Duration::from_secs(10);
/// `initialize` is answered by the relay itself if no bridge answers within this.
const INITIALIZE_DEADLINE: Duration = Duration::from_millis(4_000);
/// `server/discover` likewise: within the 3 s the newest Claude Code waits before it
/// falls back to `initialize` (and remembers the server as one of the old revisions).
const DISCOVER_DEADLINE: Duration = Duration::from_millis(1_500);
/// Open `subscriptions/listen` streams the relay keeps across reconnects.
const MAX_LISTENS: usize = 16;
/// Client messages held while the bridge is away; more are answered at once.
const MAX_QUEUED: usize = 256;
/// Id prefix of the `initialize` the relay replays after a reconnect.
const REPLAY_ID: &str = "ide-bridge-relay-replay-";

/// What `ide-bridge mcp` was asked to do.
#[derive(Debug, Clone)]
pub struct RelayOptions {
    /// The directory whose bridge to use (the client's working directory).
    pub cwd: PathBuf,
    /// Start a bridge when none serves `cwd`.
    pub start: bool,
    /// The binary to start (this one).
    pub binary: PathBuf,
    /// `--config` to pass to a bridge it starts.
    pub config: Option<PathBuf>,
    /// Largest message passed on (`server.max_message_bytes`, the bridge's own
    /// limit): a longer one is answered with an error here and the connection kept.
    pub max_message_bytes: usize,
    /// After the client closes stdin, how long its unanswered requests may still wait
    /// for their answers before they are answered with an error and the relay exits
    /// (`tools.timeout_ms`, as the relay's own configuration says it: most calls end
    /// within it; those with a longer timeout of their own — `openDiff`, the watch
    /// tools, `runClaudeTask` — are answered with that error).
    pub drain_limit: Duration,
}

/// A message from the client, or what is known of one that was too long.
enum Incoming {
    Line(String),
    TooLong {
        /// Its top-level `id`, wherever it stood in the line.
        id: Option<Value>,
    },
}

/// Runs the relay until the client closes stdin. Returns the process exit code.
pub fn run(options: RelayOptions) -> u8 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("ide-bridge mcp: {e}");
            return 1;
        }
    };
    runtime.block_on(async move { Relay::new(options).run().await })
}

/// The kind of a JSON-RPC message, and its id when it has one.
enum Kind {
    Request { id: Value, method: String },
    Notification { method: String },
    Response { id: Value },
    Invalid,
}

fn kind_of(msg: &Value) -> Kind {
    let method = msg
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    match (msg.get("id"), method) {
        (Some(id), Some(method)) => Kind::Request {
            id: id.clone(),
            method,
        },
        (None, Some(method)) => Kind::Notification { method },
        (Some(id), None) => Kind::Response { id: id.clone() },
        (None, None) => Kind::Invalid,
    }
}

/// The envelope of a classified message — `id` and `method`, without `params` — for a
/// line too deeply nested to be read as a JSON value.
fn envelope(classified: &jsonrpc::Incoming) -> Option<Value> {
    match classified {
        jsonrpc::Incoming::Request(req) => Some(serde_json::json!({
            "jsonrpc": "2.0",
            "id": serde_json::to_value(&req.id).ok()?,
            "method": req.method,
        })),
        jsonrpc::Incoming::Notification { method, .. } => {
            Some(serde_json::json!({"jsonrpc": "2.0", "method": method}))
        }
        jsonrpc::Incoming::Response { id, .. } => Some(serde_json::json!({
            "jsonrpc": "2.0",
            "id": serde_json::to_value(id).ok()?,
        })),
        jsonrpc::Incoming::Invalid { .. } => None,
    }
}

/// A request id as a set key (ids are compared as their JSON text).
fn id_key(id: &Value) -> String {
    id.to_string()
}

struct Queued {
    line: String,
    since: Instant,
    /// A request (answered by someone), not a notification.
    request: bool,
    /// `notifications/initialized`, queued behind the `initialize` it follows.
    initialized: bool,
}

struct Relay {
    out: Box<dyn AsyncWrite + Unpin>,
    upstream: Upstream,
    /// The client's `initialize` request, replayed after every reconnect.
    initialize: Option<Value>,
    /// The client sent `notifications/initialized`.
    initialized: bool,
    /// The client's `initialize` was answered (by the bridge or by the relay).
    initialize_answered: bool,
    /// The relay answered `initialize` itself; the client learns about the bridge's
    /// tools through `list_changed` once it is there.
    answered_locally: bool,
    /// Client requests the bridge has not answered yet.
    pending: HashSet<String>,
    /// The client's open `subscriptions/listen` requests (MCP 2026-07-28): never
    /// answered, sent again to every new bridge connection.
    listens: Vec<Value>,
    /// Listen streams the bridge acknowledged: a new connection's acknowledgement of
    /// them is not passed on (the client has its stream already).
    acknowledged: HashSet<String>,
    /// The relay answered `server/discover` or `tools/list` itself: once the bridge
    /// acknowledges a listen stream, the client is told the tools changed.
    tell_listens_tools_changed: bool,
    /// Client messages waiting for the bridge.
    queue: VecDeque<Queued>,
    replays: u64,
    local: LocalAnswers,
    /// [`RelayOptions::max_message_bytes`].
    max_message_bytes: usize,
    /// [`RelayOptions::drain_limit`].
    drain_limit: Duration,
    /// Nobody reads our stdout any more: answers would go nowhere.
    stdout_gone: bool,
}

impl Relay {
    fn new(options: RelayOptions) -> Self {
        let local = LocalAnswers::new(options.cwd.clone());
        let max_message_bytes = options.max_message_bytes;
        let drain_limit = options.drain_limit;
        Self {
            max_message_bytes,
            drain_limit,
            stdout_gone: false,
            upstream: Upstream::new(options),
            out: stdio_writer(),
            initialize: None,
            initialized: false,
            initialize_answered: false,
            answered_locally: false,
            pending: HashSet::new(),
            listens: Vec::new(),
            acknowledged: HashSet::new(),
            tell_listens_tools_changed: false,
            queue: VecDeque::new(),
            replays: 0,
            local,
        }
    }

    /// Relays until the client closes stdin and every request it sent before that is
    /// answered (the MCP stdio shutdown: the client closes our input and waits for us
    /// to exit), or until [`Self::drain_limit`] after stdin closed.
    async fn run(mut self) -> u8 {
        let (lines_tx, mut lines) = mpsc::channel::<Option<Incoming>>(64);
        tokio::spawn(read_lines(lines_tx, self.max_message_bytes));
        let (events_tx, mut events) = mpsc::unbounded_channel::<Event>();
        self.upstream
            .connect_soon(events_tx.clone(), Duration::ZERO);
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        // Set when stdin closes: the relay stops waiting for answers then.
        let mut give_up_at: Option<tokio::time::Instant> = None;
        loop {
            if give_up_at.is_some() && (self.stdout_gone || !self.awaits_answers()) {
                return 0;
            }
            let draining = give_up_at.is_some();
            let give_up = async {
                match give_up_at {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                line = lines.recv(), if !draining => match line.flatten() {
                    Some(Incoming::Line(line)) => self.on_client_line(line).await,
                    Some(Incoming::TooLong { id }) => self.refuse_too_long(id).await,
                    None => {
                        self.stdout_gone |= stdout_closed();
                        if self.awaits_answers() && !self.stdout_gone {
                            tracing::debug!(
                                pending = self.pending.len(),
                                queued = self.queue.len(),
                                limit_ms = self.drain_limit.as_millis() as u64,
                                "stdin closed; waiting for the answers to what was asked before exiting"
                            );
                        }
                        give_up_at = Some(tokio::time::Instant::now() + self.drain_limit);
                    }
                },
                Some(event) = events.recv() => self.on_event(event, &events_tx).await,
                _ = tick.tick() => {
                    self.expire_queue().await;
                    // A client closes stdout too once it is done (or was killed).
                    self.stdout_gone |= draining && stdout_closed();
                }
                () = give_up => {
                    self.stop_waiting().await;
                    return 0;
                }
            }
        }
    }

    /// Whether a request the client sent is still unanswered (in flight to the bridge,
    /// or waiting for one).
    fn awaits_answers(&self) -> bool {
        !self.pending.is_empty() || self.queue.iter().any(|q| q.request)
    }

    /// Stdin closed [`Self::drain_limit`] ago: what the bridge has not answered gets an
    /// error, what still waits for a bridge the relay's own answer.
    async fn stop_waiting(&mut self) {
        let limit = self.drain_limit.as_millis();
        tracing::warn!(
            pending = self.pending.len(),
            limit_ms = limit as u64,
            "stdin closed and requests were still unanswered after tools.timeout_ms; exiting"
        );
        self.fail_pending(&format!(
            "ide-bridge mcp exited without the bridge's answer: the client closed stdin \
             and the answer did not come within {limit} ms (tools.timeout_ms)"
        ))
        .await;
        for q in std::mem::take(&mut self.queue) {
            if let Ok(msg) = serde_json::from_str::<Value>(&q.line) {
                if let Kind::Request { id, method } = kind_of(&msg) {
                    self.answer_locally(&id, &method, &msg).await;
                }
            }
        }
    }

    /// Answers a request over the limit (a notification is only logged): the bridge
    /// would close the connection on it, failing every request in flight.
    async fn refuse_too_long(&mut self, id: Option<Value>) {
        let limit = self.max_message_bytes;
        tracing::warn!(
            limit,
            "a message longer than server.max_message_bytes was not passed on"
        );
        if let Some(id) = id {
            self.answer(local::error(
                &id,
                jsonrpc::INVALID_REQUEST,
                &format!(
                    "Request too large: the message is longer than {limit} bytes \
                     (server.max_message_bytes); it was not sent to the bridge"
                ),
            ))
            .await;
        }
    }

    async fn write(&mut self, text: &str) {
        let Some(text) = one_line(text) else {
            tracing::warn!("dropped a message from the bridge that is not JSON and spans lines");
            return;
        };
        let mut line = Vec::with_capacity(text.len() + 1);
        line.extend_from_slice(text.as_bytes());
        line.push(b'\n');
        if self.out.write_all(&line).await.is_err() || self.out.flush().await.is_err() {
            // Nobody reads our stdout any more; stdin's end will stop us.
            tracing::debug!("stdout closed");
            self.stdout_gone = true;
        }
    }

    async fn answer(&mut self, message: Value) {
        self.write(&message.to_string()).await;
    }

    async fn on_client_line(&mut self, line: String) {
        // What the bridge would refuse (not JSON, a batch, no method, a bad id or
        // version) is refused here in the bridge's words: answered whether or not a
        // bridge is there, and before the relay exits.
        let classified = jsonrpc::classify(&line);
        if let jsonrpc::Incoming::Invalid { id, error } = classified {
            tracing::debug!(
                code = error.code,
                "refused a client message: {}",
                error.message
            );
            return self
                .write(&jsonrpc::error_response(id.as_ref(), &error))
                .await;
        }
        let msg = match serde_json::from_str::<Value>(&line) {
            Ok(msg) => msg,
            // Nested deeper than a JSON value is read here (classify reads it without
            // building one): its envelope alone decides where it goes, and the line is
            // passed on whole.
            Err(_) => match envelope(&classified) {
                Some(shallow) => shallow,
                None => return,
            },
        };
        match kind_of(&msg) {
            Kind::Request { id, method } if method == Method::Listen.name() => {
                self.listen(id, msg, line).await;
            }
            Kind::Request { id, method } => {
                if method == Method::Initialize.name() {
                    self.initialize = Some(msg.clone());
                }
                if self.upstream.is_connected() {
                    self.pending.insert(id_key(&id));
                    self.upstream.send(line);
                } else if !self.answered_locally
                    && self.upstream.worth_waiting()
                    && self.queue.len() < MAX_QUEUED
                {
                    self.queue.push_back(Queued {
                        line,
                        since: Instant::now(),
                        request: true,
                        initialized: false,
                    });
                } else {
                    self.answer_locally(&id, &method, &msg).await;
                }
            }
            Kind::Notification { method } => {
                if method == Notification::Initialized.name() {
                    self.initialized = true;
                }
                if method == Notification::Cancelled.name() {
                    // No answer will come for it: forget it, or a later reconnect would
                    // answer it with an error (or open its listen stream again).
                    if let Some(id) = msg.pointer("/params/requestId") {
                        let key = id_key(id);
                        self.pending.remove(&key);
                        self.listens
                            .retain(|l| l.get("id").map(id_key).as_deref() != Some(&key));
                        self.acknowledged.remove(&key);
                    }
                }
                if self.upstream.is_connected() {
                    self.upstream.send(line);
                } else if method == Notification::Cancelled.name() {
                    let cancelled = msg.pointer("/params/requestId").map(id_key);
                    self.queue.retain(|q| {
                        serde_json::from_str::<Value>(&q.line)
                            .ok()
                            .and_then(|v| v.get("id").map(id_key))
                            != cancelled
                    });
                } else if self.queue.len() < MAX_QUEUED {
                    // `initialized` after an `initialize` the relay answered is sent by
                    // the replay after connecting; after one still queued, it waits
                    // behind it (dropped then if the relay answers that one meanwhile).
                    let initialized = method == Notification::Initialized.name();
                    if !initialized || !self.initialize_answered {
                        self.queue.push_back(Queued {
                            line,
                            since: Instant::now(),
                            request: false,
                            initialized,
                        });
                    }
                }
            }
            Kind::Response { .. } | Kind::Invalid => {
                if self.upstream.is_connected() {
                    self.upstream.send(line);
                }
            }
        }
    }

    async fn answer_locally(&mut self, id: &Value, method: &str, msg: &Value) {
        let params = msg
            .get("params")
            .and_then(|p| serde_json::value::to_raw_value(p).ok());
        // A request of MCP 2026-07-28 gets an answer of that revision, errors included.
        let stateless = match modern::classify(params.as_deref()) {
            Ok(meta) => meta.is_some(),
            Err(err) => return self.answer(local::rpc_error(id, &err)).await,
        };
        if stateless && Method::parse(method).is_some_and(Method::handshake_only) {
            let err = modern::not_in_revision(method);
            return self.answer(local::rpc_error(id, &err)).await;
        }
        let reason = self.upstream.why_absent();
        let mut answer = self.local.answer(id, method, msg, &reason);
        match Method::parse(method) {
            Some(Method::Initialize) => {
                self.initialize_answered = true;
                self.answered_locally = true;
            }
            Some(Method::Discover | Method::ToolsList) if stateless => {
                self.answered_locally = true;
                self.tell_listens_tools_changed = true;
            }
            _ => {}
        }
        if let (true, Some(result)) = (stateless, answer.get_mut("result")) {
            *result = modern::complete(method, result.take());
        }
        self.answer(answer).await;
    }

    /// `subscriptions/listen`: passed on now or once a bridge is there, and again to
    /// every later bridge connection; it is never answered, so it is not pending. While
    /// no bridge is coming soon the relay acknowledges it itself (the tools list only),
    /// so that the client keeps it open: a bridge started later for the directory is
    /// found, and the client hears its tools changed on that stream.
    async fn listen(&mut self, id: Value, msg: Value, line: String) {
        if self.listens.len() >= MAX_LISTENS {
            let refused = local::error(
                &id,
                jsonrpc::INVALID_REQUEST,
                &format!("At most {MAX_LISTENS} subscriptions/listen streams may be open; cancel one first"),
            );
            return self.answer(refused).await;
        }
        if let Err(e) = listen_filter(&msg) {
            let refused = local::error(
                &id,
                jsonrpc::INVALID_PARAMS,
                &format!("Invalid params: {e}"),
            );
            return self.answer(refused).await;
        }
        self.listens.push(msg);
        if self.upstream.is_connected() {
            self.upstream.send(line);
        } else if !self.upstream.worth_waiting() {
            self.acknowledge_listens().await;
        }
    }

    /// Acknowledges, as the relay, the listen streams no bridge acknowledged yet (the
    /// tools list only: that is what the relay can tell of); a bridge acknowledging
    /// them later tells them the tools changed.
    async fn acknowledge_listens(&mut self) {
        let mut acks = Vec::new();
        for listen in &self.listens {
            let Some(id) = listen.get("id") else {
                continue;
            };
            if !self.acknowledged.insert(id_key(id)) {
                continue;
            }
            let asked = modern::ListenFilter {
                tools_list_changed: listen_filter(listen).is_ok_and(|f| f.tools_list_changed),
                ..modern::ListenFilter::default()
            };
            acks.push(jsonrpc::notification(
                Notification::SubscriptionsAcknowledged.name(),
                &modern::acknowledged(id, &asked, &[]),
            ));
        }
        if !acks.is_empty() {
            self.tell_listens_tools_changed = true;
        }
        for ack in acks {
            self.write(&ack).await;
        }
    }

    async fn on_event(&mut self, event: Event, events: &mpsc::UnboundedSender<Event>) {
        match event {
            Event::Connected(sink) => {
                self.upstream.connected(sink);
                self.after_connect().await;
            }
            Event::Failed(why) => {
                tracing::debug!(?why, "no bridge yet");
                self.upstream.failed(why, events.clone());
            }
            Event::Frame(generation, text) => {
                if self.upstream.is_current(generation) {
                    self.on_bridge_frame(text).await;
                }
            }
            Event::Closed(generation, why) => {
                if self.upstream.is_current(generation) {
                    tracing::info!(%why, "lost the bridge; reconnecting");
                    let message = closed_message(&why);
                    self.upstream.closed(why, events.clone());
                    self.fail_pending(&message).await;
                }
            }
        }
    }

    /// Replays the handshake on a new bridge connection, then sends what waited.
    async fn after_connect(&mut self) {
        let mut replayed_initialized = false;
        if self.initialize_answered {
            if let Some(mut init) = self.initialize.clone() {
                self.replays += 1;
                init["id"] = Value::String(format!("{REPLAY_ID}{}", self.replays));
                self.upstream.send(init.to_string());
                if self.initialized {
                    let note = jsonrpc::notification(Notification::Initialized.name(), &json!({}));
                    self.upstream.send(note.to_string());
                    replayed_initialized = true;
                }
            }
        }
        for listen in &self.listens {
            self.upstream.send(listen.to_string());
        }
        while let Some(q) = self.queue.pop_front() {
            if q.initialized && replayed_initialized {
                continue; // the replay sent it
            }
            if let Ok(msg) = serde_json::from_str::<Value>(&q.line) {
                if let Kind::Request { id, .. } = kind_of(&msg) {
                    self.pending.insert(id_key(&id));
                }
            }
            self.upstream.send(q.line);
        }
        // A client of the handshake revisions hears the tools changed now; one of
        // MCP 2026-07-28 on its listen stream, once the bridge acknowledged it.
        if std::mem::take(&mut self.answered_locally) && self.initialize.is_some() {
            let note = jsonrpc::notification(Notification::ToolsListChanged.name(), &json!({}));
            self.write(&note).await;
        }
    }

    async fn on_bridge_frame(&mut self, text: String) {
        let Ok(msg) = serde_json::from_str::<Value>(&text) else {
            return self.write(&text).await;
        };
        if msg.get("method").and_then(Value::as_str)
            == Some(Notification::SubscriptionsAcknowledged.name())
        {
            return self.acknowledged(&msg, text).await;
        }
        if let Kind::Response { id } = kind_of(&msg) {
            if id.as_str().is_some_and(|s| s.starts_with(REPLAY_ID)) {
                return; // the answer to a replayed initialize: the client has its own
            }
            let key = id_key(&id);
            self.pending.remove(&key);
            // A listen stream the bridge ended (or refused) is not opened again.
            self.listens
                .retain(|l| l.get("id").map(id_key).as_deref() != Some(&key));
            self.acknowledged.remove(&key);
            if self
                .initialize
                .as_ref()
                .and_then(|i| i.get("id"))
                .is_some_and(|i| id_key(i) == key)
            {
                self.initialize_answered = true;
            }
        }
        self.write(&text).await;
    }

    /// A listen stream's acknowledgement: passed on the first time only; then, when
    /// the relay had answered for a missing bridge, the client learns the tools changed.
    async fn acknowledged(&mut self, msg: &Value, text: String) {
        let Some(subscription) = msg.pointer(&format!(
            "/params/_meta/{}",
            modern::SUBSCRIPTION_KEY.replace('/', "~1")
        )) else {
            return self.write(&text).await;
        };
        let again = !self.acknowledged.insert(id_key(subscription));
        if !again {
            self.write(&text).await;
        }
        let tools = msg
            .pointer("/params/notifications/toolsListChanged")
            .and_then(Value::as_bool)
            == Some(true);
        // After answering for a missing bridge, or after the bridge came back (its
        // tools may have changed meanwhile), the client fetches the list again.
        if tools && (std::mem::take(&mut self.tell_listens_tools_changed) || again) {
            let note = jsonrpc::notification(
                Notification::ToolsListChanged.name(),
                &json!({ "_meta": { modern::SUBSCRIPTION_KEY: subscription } }),
            );
            self.write(&note).await;
        }
    }

    /// Requests in flight get an error saying `why` they will not be answered.
    async fn fail_pending(&mut self, why: &str) {
        for key in std::mem::take(&mut self.pending) {
            let id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
            self.answer(local::error(&id, jsonrpc::INTERNAL_ERROR, why))
                .await;
        }
    }

    /// Answers what waited too long: `initialize` after a few seconds, others after
    /// [`WAIT_FOR_BRIDGE`], and everything at once when waiting is pointless.
    async fn expire_queue(&mut self) {
        if self.upstream.is_connected() {
            return;
        }
        let worth_waiting = self.upstream.worth_waiting();
        let mut keep = VecDeque::new();
        for q in std::mem::take(&mut self.queue) {
            let Ok(msg) = serde_json::from_str::<Value>(&q.line) else {
                continue;
            };
            let Kind::Request { id, method } = kind_of(&msg) else {
                keep.push_back(q);
                continue;
            };
            let limit = match Method::parse(&method) {
                Some(Method::Initialize) => INITIALIZE_DEADLINE,
                Some(Method::Discover) => DISCOVER_DEADLINE,
                _ => WAIT_FOR_BRIDGE,
            };
            if worth_waiting && q.since.elapsed() < limit {
                keep.push_back(q);
            } else {
                self.answer_locally(&id, &method, &msg).await;
            }
        }
        self.queue = keep;
        // The bridge that was coming did not: the client's listen streams are opened
        // by the relay, to be told of one that comes later.
        if !worth_waiting {
            self.acknowledge_listens().await;
        }
    }
}

/// Our end of a pipe on `fd`, registered with the reactor: reads and writes happen on
/// this thread when the pipe is ready. (tokio's stdin and stdout hand every read and
/// write to a blocking thread, which costs a thread wake-up per message.)
fn pipe_end(fd: std::os::fd::RawFd) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::{AsFd, BorrowedFd};
    // SAFETY: fds 0 and 1 are open for the whole life of the process.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    let owned = borrowed.as_fd().try_clone_to_owned().ok()?;
    let meta = std::fs::File::from(owned.try_clone().ok()?)
        .metadata()
        .ok()?;
    std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()).then_some(owned)
}

/// Stdin as an async reader: the pipe itself when it is one.
fn stdio_reader() -> Box<dyn AsyncRead + Unpin + Send> {
    match pipe_end(0).and_then(|fd| tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok()) {
        Some(pipe) => Box::new(pipe),
        None => Box::new(tokio::io::stdin()),
    }
}

/// Stdout as an async writer: the pipe itself when it is one.
fn stdio_writer() -> Box<dyn AsyncWrite + Unpin> {
    match pipe_end(1).and_then(|fd| tokio::net::unix::pipe::Sender::from_owned_fd(fd).ok()) {
        Some(pipe) => Box::new(pipe),
        None => Box::new(tokio::io::stdout()),
    }
}

/// Whether whoever read our stdout has closed it (the writing end of a pipe whose
/// reading end is gone polls as an error): answers written now would go nowhere.
fn stdout_closed() -> bool {
    let mut fd = libc::pollfd {
        fd: 1,
        events: 0,
        revents: 0,
    };
    // SAFETY: one valid `pollfd`, and a timeout of zero: it only asks.
    let ready = unsafe { libc::poll(&mut fd, 1, 0) };
    ready == 1 && fd.revents & (libc::POLLERR | libc::POLLHUP) != 0
}

/// `text` as one line: a message with line breaks (whitespace between JSON tokens;
/// inside strings they are escaped) is written compact; one that is not JSON, `None`.
fn one_line(text: &str) -> Option<std::borrow::Cow<'_, str>> {
    if !text.contains(['\n', '\r']) {
        return Some(text.into());
    }
    let v = serde_json::from_str::<Value>(text).ok()?;
    Some(v.to_string().into())
}

/// Reads newline-delimited messages from stdin; `None` at the end. A line longer than
/// `limit` is consumed to its end, scanned for its `id` on the way, and passed on as
/// [`Incoming::TooLong`].
async fn read_lines(tx: mpsc::Sender<Option<Incoming>>, limit: usize) {
    use tokio::io::AsyncBufReadExt;
    let mut reader = BufReader::with_capacity(64 * 1024, stdio_reader());
    let mut line = Vec::new();
    loop {
        line.clear();
        let mut too_long: Option<IdScanner> = None;
        loop {
            let buf = match reader.fill_buf().await {
                Ok(b) => b,
                Err(_) => return drop(tx.send(None).await),
            };
            if buf.is_empty() {
                let _ = tx.send(None).await;
                return;
            }
            let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            match &mut too_long {
                Some(scanner) => scanner.feed(chunk),
                None if line.len() + chunk.len() > limit => {
                    let mut scanner = IdScanner::default();
                    scanner.feed(&line);
                    scanner.feed(chunk);
                    line = Vec::new();
                    too_long = Some(scanner);
                }
                None => line.extend_from_slice(chunk),
            }
            let used = done.unwrap_or(buf.len());
            reader.consume(used);
            if done.is_some() {
                break;
            }
        }
        let message = match too_long {
            Some(scanner) => Incoming::TooLong { id: scanner.id() },
            None => {
                let text = String::from_utf8_lossy(&line).trim().to_string();
                if text.is_empty() {
                    continue;
                }
                Incoming::Line(text)
            }
        };
        if tx.send(Some(message)).await.is_err() {
            return;
        }
    }
}

/// Finds the `id` member of a JSON object fed to it in pieces, without keeping the
/// text: members of nested objects and strings that look like keys are not taken for
/// it, wherever it stands (SDKs put it first or last).
#[derive(Default)]
struct IdScanner {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a key.
    key_next: bool,
    /// The key being read, or the last one read (a few bytes are enough).
    key: Vec<u8>,
    reading_key: bool,
    /// The id's raw value being read.
    value: Option<Vec<u8>>,
    found: Option<Vec<u8>>,
}

impl IdScanner {
    /// One byte inside a string: true when it is the closing quote.
    fn string_ends_at(&mut self, b: u8) -> bool {
        if self.escaped {
            self.escaped = false;
        } else if b == b'\\' {
            self.escaped = true;
        } else if b == b'"' {
            self.in_string = false;
            return true;
        }
        false
    }

    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if let Some(value) = &mut self.value {
                // The id's value: up to the `,` or `}` that ends it at depth 1.
                if !self.in_string && self.depth == 1 && (b == b',' || b == b'}') {
                    self.found = self.value.take();
                } else {
                    if value.len() < 1024 {
                        value.push(b);
                    }
                    if self.in_string {
                        self.string_ends_at(b);
                    } else if b == b'"' {
                        self.in_string = true;
                    }
                    continue;
                }
            }
            if self.in_string {
                if self.string_ends_at(b) {
                    self.reading_key = false;
                } else if self.reading_key && self.key.len() < 8 {
                    self.key.push(b);
                }
                continue;
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    self.reading_key = self.depth == 1 && self.key_next;
                    if self.reading_key {
                        self.key.clear();
                        self.key_next = false;
                    }
                }
                b'{' | b'[' => {
                    self.depth += 1;
                    self.key_next = self.depth == 1 && b == b'{';
                }
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                b',' if self.depth == 1 => self.key_next = true,
                b':' if self.depth == 1 && self.key == b"id" && self.found.is_none() => {
                    self.value = Some(Vec::new());
                }
                _ => {}
            }
        }
    }

    /// The id, when one was read whole and is a string or a number.
    fn id(&self) -> Option<Value> {
        let raw = self.found.as_deref()?;
        let v: Value = serde_json::from_slice(raw).ok()?;
        (v.is_string() || v.is_number()).then_some(v)
    }
}

/// What a request in flight is answered when the bridge connection closed with `why`
/// (`closed <code>: <reason>`, or the transport's error): a restart or a stop in
/// general words, and anything else — the bridge refusing this agent (1008, too many
/// sessions), an error — in the bridge's own words.
fn closed_message(why: &str) -> String {
    let restarted = why == "closed" || why.starts_with("closed 1001");
    if restarted {
        "The connection to ide-bridge was lost while this request was in flight (the \
         bridge restarted or stopped); the relay is reconnecting: retry it"
            .to_string()
    } else {
        format!(
            "ide-bridge closed the connection while this request was in flight ({why}); \
             the relay keeps trying to reconnect: retry it"
        )
    }
}

/// What a `subscriptions/listen` request asks for.
fn listen_filter(msg: &Value) -> Result<modern::ListenFilter, serde_json::Error> {
    let params = msg.get("params").cloned().unwrap_or_else(|| json!({}));
    serde_json::from_value::<modern::ListenParams>(params).map(|p| p.notifications)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_is_written_on_one_line() {
        assert_eq!(one_line(r#"{"a":1}"#).unwrap(), r#"{"a":1}"#);
        let pretty = "{\n  \"a\": \"x\\ny\"\r\n}";
        assert_eq!(one_line(pretty).unwrap(), r#"{"a":"x\ny"}"#);
        assert!(one_line("not\njson").is_none());
    }

    #[test]
    fn the_id_of_an_over_long_request_is_found_at_the_top_level_only() {
        // Fed in pieces of every size, as the reader gets them.
        let id = |s: &str| {
            let whole = {
                let mut sc = IdScanner::default();
                sc.feed(s.as_bytes());
                sc.id()
            };
            for size in 1..8 {
                let mut sc = IdScanner::default();
                s.as_bytes().chunks(size).for_each(|c| sc.feed(c));
                assert_eq!(sc.id(), whole, "{s} in pieces of {size}");
            }
            whole
        };
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#),
            Some(json!(7))
        );
        // Last, after large params (the TypeScript SDK's order).
        assert_eq!(
            id(
                r#"{"method":"x","params":{"id":1,"t":"}\",\"id\":9"},"jsonrpc":"2.0","id":"a\"b"}"#
            ),
            Some(json!("a\"b"))
        );
        assert_eq!(
            id(r#"{"method":"x","params":{"id":1,"text":"aaaa"}}"#),
            None
        );
        assert_eq!(
            id(r#"{"method":"id","x":"id","params":{}}"#),
            None,
            "values are not keys"
        );
        assert_eq!(id(r#"{"id": -12.5e1 , "m":1}"#), Some(json!(-125.0)));
        assert_eq!(id(r#"{"id":12"#), None, "the number may go on");
        assert_eq!(id(r#"{"id":{"x":1}}"#), None, "not a string or number");
    }
}
