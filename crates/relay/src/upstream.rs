//! The relay's connection to the bridge: discovery through lock files, starting a
//! bridge when none serves the project, the WebSocket (with the lock file's token and
//! the client's process chain), and reconnecting with backoff.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message};

use super::discover::{bridge_crashed, find_bridge, project_root, start_bridge};
use super::RelayOptions;
use ide_bridge_host::ancestry::client_pids;
use ide_bridge_protocol::headers::{AGENT_AUTH_HEADER, RELAY_HEADER, SESSION_ANCHOR_HEADER};

/// How long a bridge the relay started may take to write its lock file.
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// Ancestors of the relay reported to the bridge.
const PID_DEPTH: usize = 4;
/// Longest pause between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// What the connection tasks report to the relay's loop.
pub enum Event {
    /// Connected: frames for the bridge go to this sink.
    Connected(Sink),
    /// No connection this time, and why.
    Failed(Absent),
    /// A text frame from connection `generation`.
    Frame(u64, String),
    /// Connection `generation` closed.
    Closed(u64, String),
}

/// Why there is no bridge connection.
#[derive(Debug, Clone)]
pub enum Absent {
    /// No live bridge serves the directory.
    NoBridge,
    /// A bridge was found but refused or failed the connection.
    Refused(String, Option<Duration>),
}

/// The write side of a bridge connection.
pub struct Sink {
    generation: u64,
    tx: mpsc::UnboundedSender<String>,
}

enum State {
    /// An attempt is under way.
    Connecting,
    Connected(Sink),
}

/// Where the bridge is, and what the relay knows about its absence.
pub struct Upstream {
    options: RelayOptions,
    state: State,
    generation: u64,
    anchor: String,
    started: Option<(Instant, PathBuf)>,
    failures: u32,
    /// When the last connection was lost.
    lost_at: Option<Instant>,
    /// When the live connection was made.
    connected_at: Option<Instant>,
    /// The directory is in no project, so no bridge will be started.
    no_project: bool,
    ever_connected: bool,
}

impl Upstream {
    /// Not connected yet.
    pub fn new(options: RelayOptions) -> Self {
        Self {
            options,
            state: State::Connecting,
            generation: 0,
            // Claude Code gives its stdio servers its session id; other clients get a
            // random anchor that lasts as long as the relay.
            anchor: std::env::var("CLAUDE_CODE_SESSION_ID")
                .ok()
                .filter(|v| !v.is_empty() && v.len() <= 100)
                .unwrap_or_else(|| format!("relay-{}", uuid::Uuid::new_v4().simple())),
            started: None,
            failures: 0,
            lost_at: None,
            connected_at: None,
            no_project: false,
            ever_connected: false,
        }
    }

    /// True while connected.
    pub fn is_connected(&self) -> bool {
        matches!(self.state, State::Connected(_))
    }

    /// True when `generation` is the live connection.
    pub fn is_current(&self, generation: u64) -> bool {
        matches!(&self.state, State::Connected(s) if s.generation == generation)
    }

    /// Queues a frame for the bridge (dropped when not connected: the close event
    /// answers what was in flight).
    pub fn send(&self, text: String) {
        if let State::Connected(sink) = &self.state {
            let _ = sink.tx.send(text);
        }
    }

    /// True when a bridge may well answer soon: the first attempts, a bridge being
    /// started, a lost one coming back, or `--no-start` waiting for one.
    pub fn worth_waiting(&self) -> bool {
        if self.no_project {
            return false;
        }
        match (&self.started, self.lost_at) {
            (Some((at, _)), _) => at.elapsed() < START_TIMEOUT,
            (None, Some(lost)) => lost.elapsed() < super::WAIT_FOR_BRIDGE,
            (None, None) => !self.ever_connected,
        }
    }

    /// Why no bridge answers, as a sentence for the client.
    pub fn why_absent(&self) -> String {
        let cwd = self.options.cwd.display();
        if self.no_project {
            return format!(
                "{cwd} is in no project (no .git, .hg, .jj or .svn above it, or only the home \
                 directory), so no bridge was started. Start one with `ide-bridge --workspace \
                 <project dir>` (or run `ide-bridge` in the project), then retry."
            );
        }
        if let Some((at, log)) = &self.started {
            if at.elapsed() >= START_TIMEOUT {
                return format!(
                    "the bridge started for this project did not come up; see {}",
                    log.display()
                );
            }
            return "a bridge for this project is starting; retry in a moment.".into();
        }
        if !self.options.start {
            return "the relay waits for one (--no-start). Start it with \
                 `ide-bridge --workspace <project dir>`."
                .into();
        }
        "the bridge is not reachable; the relay keeps trying.".into()
    }

    /// Starts a connection attempt after `delay`.
    pub fn connect_soon(&mut self, events: mpsc::UnboundedSender<Event>, delay: Duration) {
        self.state = State::Connecting;
        self.generation += 1;
        let attempt = Attempt {
            cwd: self.options.cwd.clone(),
            generation: self.generation,
            anchor: self.anchor.clone(),
        };
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            if let Err(absent) = attempt.run(events.clone()).await {
                let _ = events.send(Event::Failed(absent));
            }
        });
    }

    /// A connection is up.
    pub fn connected(&mut self, sink: Sink) {
        if let Some((_, log)) = self.started.take() {
            tracing::info!(log = %log.display(), "the bridge the relay started is up");
        }
        self.lost_at = None;
        self.connected_at = Some(Instant::now());
        self.ever_connected = true;
        self.state = State::Connected(sink);
    }

    /// An attempt failed: start a bridge when that is the relay's job, then retry.
    pub fn failed(&mut self, why: Absent, events: mpsc::UnboundedSender<Event>) {
        self.failures += 1;
        let backoff =
            Duration::from_millis(100 * u64::from(self.failures.min(20))).min(MAX_BACKOFF);
        let delay = match why {
            Absent::NoBridge => {
                if self.failures == 1 && !self.options.start {
                    tracing::warn!(cwd = %self.options.cwd.display(), "no ide-bridge serves this directory; waiting for one (--no-start)");
                }
                // Start a bridge for a client that never had one, or whose bridge
                // crashed (its lock file outlived it). After a stop on purpose (the lock
                // removed), wait for the person to start it again.
                if self.options.start
                    && self.started.is_none()
                    && !self.no_project
                    && (!self.ever_connected || bridge_crashed(&self.options.cwd))
                {
                    if self.ever_connected {
                        tracing::warn!(cwd = %self.options.cwd.display(), "the bridge ended without removing its lock file (it crashed, or was killed); starting another");
                    }
                    self.start();
                }
                match &self.started {
                    Some((at, _)) if at.elapsed() < START_TIMEOUT => Duration::from_millis(50),
                    _ => backoff.max(Duration::from_millis(250)),
                }
            }
            Absent::Refused(reason, retry_after) => {
                tracing::warn!(%reason, "could not connect to the bridge (it refused, or is gone); retrying");
                retry_after.unwrap_or(backoff)
            }
        };
        self.connect_soon(events, delay);
    }

    /// The live connection closed.
    pub fn closed(&mut self, why: String, events: mpsc::UnboundedSender<Event>) {
        tracing::debug!(%why, "bridge connection closed");
        self.lost_at = Some(Instant::now());
        // A connection closed right after it was made was refused (max sessions, a
        // bridge shutting down): back off like any failed attempt instead of looping.
        let refused = self
            .connected_at
            .take()
            .is_some_and(|at| at.elapsed() < Duration::from_secs(2));
        let delay = if refused {
            self.failures += 1;
            Duration::from_millis(250 * u64::from(self.failures.min(20))).min(MAX_BACKOFF)
        } else {
            self.failures = 0;
            Duration::from_millis(50)
        };
        self.connect_soon(events, delay);
    }

    fn start(&mut self) {
        let Some(root) = project_root(&self.options.cwd) else {
            self.no_project = true;
            tracing::warn!(cwd = %self.options.cwd.display(), "no bridge serves this directory and it is in no project; not starting one");
            return;
        };
        match start_bridge(&self.options.binary, &root, self.options.config.as_deref()) {
            Ok(log) => {
                tracing::info!(workspace = %root.display(), log = %log.display(), "started a bridge");
                self.started = Some((Instant::now(), log));
            }
            Err(e) => {
                tracing::error!(%e, "could not start a bridge");
                self.no_project = true;
            }
        }
    }
}

/// One connection attempt.
struct Attempt {
    cwd: PathBuf,
    generation: u64,
    anchor: String,
}

impl Attempt {
    /// Connects; on success reports `Connected` itself, before any frame can follow.
    async fn run(self, events: mpsc::UnboundedSender<Event>) -> Result<(), Absent> {
        let Some((port, lock)) = find_bridge(&self.cwd) else {
            return Err(Absent::NoBridge);
        };
        let refused = |e: String| Err(Absent::Refused(e, None));
        let mut request = match format!("ws://127.0.0.1:{port}/").into_client_request() {
            Ok(r) => r,
            Err(e) => return refused(e.to_string()),
        };
        let pids: Vec<String> = client_pids(PID_DEPTH).iter().map(u32::to_string).collect();
        let headers = request.headers_mut();
        for (name, value) in [
            (AGENT_AUTH_HEADER, lock.auth_token.clone()),
            (RELAY_HEADER, pids.join(",")),
            (SESSION_ANCHOR_HEADER, self.anchor.clone()),
            ("sec-websocket-protocol", "mcp".into()),
        ] {
            match value.parse() {
                Ok(v) => {
                    headers.insert(name, v);
                }
                Err(_) => return refused(format!("unusable {name} value")),
            }
        }
        let config = WebSocketConfig::default()
            .max_message_size(Some(256 << 20))
            .max_frame_size(Some(256 << 20));
        let ws =
            match tokio_tungstenite::connect_async_with_config(request, Some(config), true).await {
                Ok((ws, _)) => ws,
                Err(tungstenite::Error::Http(response)) => {
                    let retry_after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.parse::<u64>().ok())
                        .map(Duration::from_secs);
                    return Err(Absent::Refused(
                        format!("HTTP {}", response.status()),
                        retry_after,
                    ));
                }
                Err(e) => return refused(e.to_string()),
            };
        let (mut write, mut read) = ws.split();
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let generation = self.generation;
        let _ = events.send(Event::Connected(Sink { generation, tx }));
        tokio::spawn(async move {
            while let Some(text) = rx.recv().await {
                if write.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
            let _ = write.close().await;
        });
        tokio::spawn(async move {
            let why = loop {
                match read.next().await {
                    Some(Ok(Message::Text(text))) => {
                        let _ = events.send(Event::Frame(generation, text.to_string()));
                    }
                    Some(Ok(Message::Close(frame))) => {
                        break frame.map_or_else(
                            || "closed".to_string(),
                            |f| format!("closed {}: {}", u16::from(f.code), f.reason),
                        )
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => break e.to_string(),
                    None => break "closed".into(),
                }
            };
            let _ = events.send(Event::Closed(generation, why));
        });
        Ok(())
    }
}
