//! The LanguageServers actor: one pool of language servers for every agent. A server
//! for a language starts on first use (the first file of that language asked about),
//! serves every session, stops after `lsp.idle_stop_ms` unused, and is restarted on the
//! next request after it crashed or hung — unless it did so three times in a row, when
//! a circuit breaker refuses its language for a while with a clear error. Requests to
//! one server are answered in the order it answers them, each under
//! `lsp.request_timeout_ms`; a request that times out counts as a hang and ends the
//! server.

mod server;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde::Serialize;
use serde_json::Value;

pub use server::MAX_DOCUMENT_BYTES;
use server::{
    Cancel, DiagnosticsOf, FilesChanged, Happened, Hold, LanguageServer, Launch, Publications,
    Request, ServerEvent, Show, Stop,
};

use super::messages::activity::RecordLifecycle;
use super::messages::watch::WorkspaceChanged;
use super::supervise::{guard, restarted, ActorFault};
use crate::lsp::servers::{language_of, resolve, ServerConfig};
use crate::metrics::Metrics;

/// Name in logs and faults.
pub const NAME: &str = "language_servers";

/// Crashes (or hangs) in a row that open a language's breaker.
pub const BREAKER_CRASHES: u32 = 3;
/// How long an open breaker refuses its language.
pub const BREAKER_OPEN: Duration = Duration::from_secs(60);
/// How often idle servers are looked for.
const IDLE_CHECK: Duration = Duration::from_secs(15);

/// Why a language server could not answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LspError {
    /// No server is configured for the file's kind.
    #[error("No language server is configured for {0} (lsp.servers lists the languages and their file extensions)")]
    NoServer(String),
    /// The configured program is not installed.
    #[error("The {language} language server ({command}) is not installed: it is neither a path nor on PATH. Install it, or set lsp.servers.{language}.command")]
    NotInstalled { language: String, command: String },
    /// The breaker is open after repeated crashes.
    #[error("The {language} language server crashed or hung {crashes} times in a row; the bridge starts it again in {retry_in_s} s")]
    Breaker {
        language: String,
        crashes: u32,
        retry_in_s: u64,
    },
    /// It ended while the request waited.
    #[error("{0}; the next request starts it again")]
    Ended(String),
    /// It did not answer in time.
    #[error("The {language} language server did not answer {method} within {ms} ms; it is restarted on the next request")]
    Timeout {
        language: String,
        method: String,
        ms: u64,
    },
    /// The asker gave up (its tool call was cancelled).
    #[error("The request was cancelled")]
    Cancelled,
    /// Its `initialize` answer leaves out what the request needs.
    #[error("The {language} language server ({command}) does not offer {method}: its initialize answer has no {capability}")]
    Unsupported {
        language: String,
        command: String,
        method: &'static str,
        capability: &'static str,
    },
    /// It answered with an error.
    #[error("The language server could not answer: {message} ({code})")]
    Server { code: i64, message: String },
    /// It published no diagnostics for a text in time.
    #[error("The {language} language server published no diagnostics within {ms} ms (it may not report diagnostics for this file)")]
    NoDiagnostics { language: String, ms: u64 },
    /// The file could not be given to it.
    #[error("{0}")]
    File(String),
    /// The request's position is not in the file.
    #[error("{0}")]
    OutOfRange(String),
    /// The pool itself failed.
    #[error(transparent)]
    Fault(#[from] ActorFault),
}

/// What `[lsp]` says, as the actor needs it.
#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// The workspace: documents are read beneath it (confined, regular files only).
    pub root: crate::workspace::Root,
    pub servers: BTreeMap<String, ServerConfig>,
    pub request_timeout: Duration,
    pub start_timeout: Duration,
    pub idle_stop: Duration,
    pub max_open_documents: usize,
    /// A server whose resident memory grows past this is restarted; 0: no bound.
    pub max_memory_kib: u64,
}

/// Ask the server of `file`'s language (started if needed).
#[derive(Message)]
#[rtype(result = "Result<Value, LspError>")]
pub struct Ask {
    pub file: PathBuf,
    pub method: &'static str,
    pub params: Value,
    /// For [`CancelAsk`]: unique per asker ([`next_token`]).
    pub token: u64,
}

/// The asker with this token gave up: the server stops working on its request.
#[derive(Message)]
#[rtype(result = "()")]
pub struct CancelAsk(pub u64);

/// A token for [`Ask::token`], unique in this process.
pub fn next_token() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Ask every running server (`workspace/symbol`): each answer, by language. Nothing is
/// started for it.
#[derive(Message)]
#[rtype(result = "Vec<(String, Result<Value, LspError>)>")]
pub struct AskRunning {
    pub method: &'static str,
    pub params: Value,
}

/// Check a proposed text for `file` without writing it: its server is given the text
/// in memory, its diagnostics collected, and the file's real text given back. Answers
/// the diagnostics (LSP's shape) of the text on disk and of the proposed one.
#[derive(Message)]
#[rtype(result = "Result<(Vec<Value>, Vec<Value>), LspError>")]
pub struct CheckEdit {
    pub file: PathBuf,
    pub text: String,
}

/// The diagnostics `file`'s server publishes for the file's text on disk (LSP's shape):
/// the file opened or updated in the server when needed, and the publication waited
/// for up to `wait`. `None` when no server of its language runs and `start` is false.
#[derive(Message)]
#[rtype(result = "Result<Option<Vec<Value>>, LspError>")]
pub struct Diagnose {
    pub file: PathBuf,
    /// Start the server when none runs.
    pub start: bool,
    pub wait: Duration,
}

/// What every running server last published, by file path (the documents they have
/// open). Nothing is started for it.
#[derive(Message)]
#[rtype(result = "Vec<(String, Vec<Value>)>")]
pub struct AllPublished;

/// What `/status` shows.
#[derive(Message)]
#[rtype(result = "LspStatus")]
pub struct GetStatus;

/// The pool as `/status` shows it.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LspStatus {
    /// Every configured language: its server, whether it is installed and running.
    pub servers: Vec<ServerStatus>,
}

/// One language's server.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    pub language: String,
    pub command: String,
    /// Found (a path, or on `PATH`).
    pub installed: bool,
    pub running: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Resident memory of its process group (the server and what it started), KiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rss_kib: Option<u64>,
    /// Times it was started again after it crashed, hung or idled.
    pub restarts: u64,
    /// Crashes or hangs since it last answered.
    pub crashes_in_row: u32,
    /// While the breaker is open: how long until it may start again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breaker_open_for_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

#[derive(Default)]
struct Slot {
    server: Option<(Addr<LanguageServer>, u64, Option<u32>)>,
    /// The running server answered `initialize`.
    ready: bool,
    generation: u64,
    starts: u64,
    crashes_in_row: u32,
    open_until: Option<Instant>,
    last_used: Option<Instant>,
    last_error: Option<String>,
}

/// The pool.
pub struct LanguageServers {
    config: PoolConfig,
    slots: HashMap<String, Slot>,
    metrics: Arc<Metrics>,
    activity: Recipient<RecordLifecycle>,
}

impl LanguageServers {
    pub fn new(
        config: PoolConfig,
        activity: Recipient<RecordLifecycle>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            config,
            slots: HashMap::new(),
            metrics,
            activity,
        }
    }

    /// The running server of `language`, started when there is none (and its breaker is
    /// closed).
    fn server_of(
        &mut self,
        language: &str,
        ctx: &mut Context<Self>,
    ) -> Result<Addr<LanguageServer>, LspError> {
        let config = self
            .config
            .servers
            .get(language)
            .cloned()
            .ok_or_else(|| LspError::NoServer(language.to_string()))?;
        let slot = self.slots.entry(language.to_string()).or_default();
        slot.last_used = Some(Instant::now());
        if let Some((addr, _, _)) = &slot.server {
            if addr.connected() {
                return Ok(addr.clone());
            }
        }
        if let Some(until) = slot.open_until {
            let now = Instant::now();
            if until > now {
                return Err(LspError::Breaker {
                    language: language.to_string(),
                    crashes: slot.crashes_in_row,
                    retry_in_s: (until - now).as_secs().max(1),
                });
            }
            slot.open_until = None;
        }
        let program = resolve(&config.command).ok_or_else(|| LspError::NotInstalled {
            language: language.to_string(),
            command: config.command.clone(),
        })?;
        slot.generation += 1;
        slot.starts += 1;
        slot.ready = false;
        let launch = Launch {
            language: language.to_string(),
            config,
            program,
            root: self.config.root.clone(),
            generation: slot.generation,
            start_timeout: self.config.start_timeout,
            max_open_documents: self.config.max_open_documents,
            parent: ctx.address().recipient(),
        };
        let server = LanguageServer::new(launch);
        let addr = server.start();
        slot.server = Some((addr.clone(), slot.generation, None));
        tracing::info!(language, "starting the language server");
        Ok(addr)
    }

    /// The language and the running server (started if needed) of `file`.
    fn server_for(
        &mut self,
        file: &std::path::Path,
        ctx: &mut Context<Self>,
    ) -> Result<(String, Addr<LanguageServer>), LspError> {
        let language = language_of(&self.config.servers, file)
            .map(str::to_string)
            .ok_or_else(|| {
                LspError::NoServer(match file.extension() {
                    Some(ext) => format!(".{} files", ext.to_string_lossy()),
                    None => format!("{} (no file extension)", file.display()),
                })
            })?;
        let server = self.server_of(&language, ctx)?;
        Ok((language, server))
    }

    /// How a request ended, for the breaker: an answer closes it, an end or a timeout
    /// counts.
    fn settle(&mut self, language: &str, outcome: &Result<Value, LspError>) {
        let Some(slot) = self.slots.get_mut(language) else {
            return;
        };
        match outcome {
            Ok(_) | Err(LspError::Server { .. }) => slot.crashes_in_row = 0,
            Err(LspError::Cancelled) => {}
            Err(e) => slot.last_error = Some(e.to_string()),
        }
    }
}

impl Actor for LanguageServers {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(IDLE_CHECK, |act, _| {
            let idle = act.config.idle_stop;
            let bound = act.config.max_memory_kib;
            for (language, slot) in &act.slots {
                let (Some((addr, _, pid)), Some(used)) = (&slot.server, slot.last_used) else {
                    continue;
                };
                let rss = pid.and_then(rss_kib).filter(|_| bound > 0);
                if let Some(rss) = rss.filter(|rss| *rss > bound) {
                    tracing::warn!(language, rss_kib = rss, bound_kib = bound, "a language server outgrew lsp.max_memory_mb: restarting it");
                    addr.do_send(Stop {
                        crashed: true,
                        reason: format!(
                            "used {} MiB, more than lsp.max_memory_mb ({} MiB); it starts again on the next request",
                            rss / 1024,
                            bound / 1024
                        ),
                    });
                    continue;
                }
                if used.elapsed() >= idle {
                    tracing::info!(language, "stopping an idle language server");
                    addr.do_send(Stop {
                        crashed: false,
                        reason: format!("was stopped after {} s unused", idle.as_secs()),
                    });
                }
            }
        });
    }
}

impl Supervised for LanguageServers {
    fn restarting(&mut self, _: &mut Context<Self>) {
        for slot in self.slots.values_mut() {
            if let Some((addr, _, _)) = slot.server.take() {
                addr.do_send(Stop {
                    crashed: false,
                    reason: "was stopped: the pool restarted".into(),
                });
            }
        }
        restarted(
            NAME,
            &self.metrics,
            &self.activity,
            "running language servers were stopped; they start again on the next request",
        );
    }
}

impl Handler<Ask> for LanguageServers {
    type Result = ResponseActFuture<Self, Result<Value, LspError>>;

    fn handle(&mut self, msg: Ask, ctx: &mut Context<Self>) -> Self::Result {
        let started = guard(NAME, self, ctx, |act, ctx| act.server_for(&msg.file, ctx));
        let (language, server) = match started.map_err(LspError::from).and_then(|r| r) {
            Ok(found) => found,
            Err(e) => return Box::pin(fut::ready(Err(e))),
        };
        // A server still starting has its start-up time on top.
        let starting = !self.slots.get(&language).is_some_and(|s| s.ready);
        let timeout = self.config.request_timeout
            + if starting {
                self.config.start_timeout
            } else {
                Duration::ZERO
            };
        let method = msg.method;
        let request = Request {
            file: Some(msg.file),
            method,
            params: msg.params,
            token: Some(msg.token),
        };
        let lang = language.clone();
        let asked = async move {
            match actix::clock::timeout(timeout, server.send(request)).await {
                Ok(Ok(answer)) => answer,
                Ok(Err(_)) => Err(LspError::Ended(format!(
                    "the {lang} language server stopped before answering"
                ))),
                Err(_) => {
                    server.do_send(Stop {
                        crashed: true,
                        reason: format!(
                            "did not answer {method} within {} ms",
                            timeout.as_millis()
                        ),
                    });
                    Err(LspError::Timeout {
                        language: lang,
                        method: method.to_string(),
                        ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                    })
                }
            }
        };
        Box::pin(asked.into_actor(self).map(move |outcome, act, _| {
            act.settle(&language, &outcome);
            outcome
        }))
    }
}

impl Handler<CheckEdit> for LanguageServers {
    type Result = ResponseActFuture<Self, Result<(Vec<Value>, Vec<Value>), LspError>>;

    fn handle(&mut self, msg: CheckEdit, ctx: &mut Context<Self>) -> Self::Result {
        let (language, server) = match self.server_for(&msg.file, ctx) {
            Ok(found) => found,
            Err(e) => return Box::pin(fut::ready(Err(e))),
        };
        let wait = self.config.request_timeout;
        let ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        let lang = language.clone();
        let gone = move || {
            LspError::Ended(format!(
                "the {lang} language server stopped during the check"
            ))
        };
        let silent = {
            let language = language.clone();
            move || LspError::NoDiagnostics {
                language: language.clone(),
                ms,
            }
        };
        let checked = async move {
            let show = |text: Option<String>, hold: Hold| Show {
                file: msg.file.clone(),
                text,
                hold,
            };
            let diagnostics = |uri: String, version: i32| {
                let server = server.clone();
                async move {
                    actix::clock::timeout(wait, server.send(DiagnosticsOf { uri, version }))
                        .await
                        .map(|r| r.ok().flatten())
                }
            };
            // The file is held from here (requests and other checks about it wait) until
            // its real text goes back, whatever happens between.
            let real = server
                .send(show(None, Hold::Begin))
                .await
                .map_err(|_| gone())??;
            let compared = async {
                let before = diagnostics(real.uri.clone(), real.version)
                    .await
                    .map_err(|_| silent())?
                    .ok_or_else(&gone)?;
                let proposed = server
                    .send(show(Some(msg.text.clone()), Hold::Held))
                    .await
                    .map_err(|_| gone())??;
                let after = if proposed.changed {
                    diagnostics(proposed.uri, proposed.version)
                        .await
                        .map_err(|_| silent())?
                        .ok_or_else(&gone)?
                } else {
                    before.clone()
                };
                Ok::<_, LspError>((before, after))
            }
            .await;
            let restored = server.send(show(Some(real.text.clone()), Hold::End)).await;
            let compared = compared?;
            restored.map_err(|_| gone())??;
            Ok(compared)
        };
        Box::pin(checked.into_actor(self).map(move |outcome, act, _| {
            let settled = outcome.as_ref().map(|_| Value::Null).map_err(Clone::clone);
            act.settle(&language, &settled);
            outcome
        }))
    }
}

impl Handler<Diagnose> for LanguageServers {
    type Result = ResponseActFuture<Self, Result<Option<Vec<Value>>, LspError>>;

    fn handle(&mut self, msg: Diagnose, ctx: &mut Context<Self>) -> Self::Result {
        if !msg.start {
            let running = language_of(&self.config.servers, &msg.file)
                .and_then(|l| self.slots.get(l))
                .and_then(|s| s.server.as_ref())
                .is_some_and(|(addr, _, _)| addr.connected());
            if !running {
                return Box::pin(fut::ready(Ok(None)));
            }
        }
        let (language, server) = match self.server_for(&msg.file, ctx) {
            Ok(found) => found,
            Err(e) => return Box::pin(fut::ready(Err(e))),
        };
        let starting = !self.slots.get(&language).is_some_and(|s| s.ready);
        let wait = msg.wait
            + if starting {
                self.config.start_timeout
            } else {
                Duration::ZERO
            };
        let ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        let lang = language.clone();
        let asked = async move {
            let gone = || LspError::Ended(format!("the {lang} language server stopped"));
            let show = Show {
                file: msg.file,
                text: None,
                hold: Hold::Free,
            };
            let silent = || LspError::NoDiagnostics {
                language: lang.clone(),
                ms,
            };
            let shown = actix::clock::timeout(wait, server.send(show))
                .await
                .map_err(|_| silent())?
                .map_err(|_| gone())??;
            let asked = DiagnosticsOf {
                uri: shown.uri,
                version: shown.version,
            };
            actix::clock::timeout(wait, server.send(asked))
                .await
                .map_err(|_| silent())?
                .ok()
                .flatten()
                .map(Some)
                .ok_or_else(gone)
        };
        Box::pin(asked.into_actor(self).map(move |outcome, act, _| {
            let settled = outcome.as_ref().map(|_| Value::Null).map_err(Clone::clone);
            act.settle(&language, &settled);
            outcome
        }))
    }
}

impl Handler<AllPublished> for LanguageServers {
    type Result = ResponseFuture<Vec<(String, Vec<Value>)>>;

    fn handle(&mut self, _: AllPublished, _: &mut Context<Self>) -> Self::Result {
        let running: Vec<Addr<LanguageServer>> = self
            .slots
            .values()
            .filter_map(|s| s.server.as_ref().map(|(addr, _, _)| addr.clone()))
            .collect();
        Box::pin(async move {
            let mut all = Vec::new();
            for server in running {
                if let Ok(published) = server.send(Publications).await {
                    all.extend(published);
                }
            }
            all
        })
    }
}

impl Handler<WorkspaceChanged> for LanguageServers {
    type Result = ();

    /// Tells every running server what changed on disk (see [`FilesChanged`]).
    fn handle(&mut self, msg: WorkspaceChanged, _: &mut Context<Self>) {
        use crate::workspace::change::ChangeKind;
        let running: Vec<&Addr<LanguageServer>> = self
            .slots
            .values()
            .filter_map(|s| s.server.as_ref().map(|(addr, _, _)| addr))
            .collect();
        if running.is_empty() || msg.changes.is_empty() {
            return;
        }
        let root = self.config.root.path();
        let mut changes = Vec::with_capacity(msg.changes.len());
        for c in msg.changes.iter() {
            let path = root.join(&c.path);
            match &c.kind {
                ChangeKind::Created => changes.push((path, 1)),
                ChangeKind::Modified => changes.push((path, 2)),
                ChangeKind::Removed => changes.push((path, 3)),
                ChangeKind::Renamed { from } => {
                    changes.push((root.join(from), 3));
                    changes.push((path, 1));
                }
            }
        }
        let changes: Arc<[(PathBuf, u8)]> = changes.into();
        for server in running {
            server.do_send(FilesChanged(Arc::clone(&changes)));
        }
    }
}

impl Handler<CancelAsk> for LanguageServers {
    type Result = ();
    fn handle(&mut self, msg: CancelAsk, _: &mut Context<Self>) {
        for slot in self.slots.values() {
            if let Some((server, _, _)) = &slot.server {
                server.do_send(Cancel(msg.0));
            }
        }
    }
}

impl Handler<AskRunning> for LanguageServers {
    type Result = ResponseFuture<Vec<(String, Result<Value, LspError>)>>;

    fn handle(&mut self, msg: AskRunning, _: &mut Context<Self>) -> Self::Result {
        let timeout = self.config.request_timeout;
        let running: Vec<(String, Addr<LanguageServer>)> = self
            .slots
            .iter_mut()
            .filter_map(|(l, s)| {
                let (addr, _, _) = s.server.as_ref()?;
                s.last_used = Some(Instant::now());
                Some((l.clone(), addr.clone()))
            })
            .collect();
        Box::pin(async move {
            let mut answers = Vec::new();
            for (language, server) in running {
                let request = Request {
                    file: None,
                    method: msg.method,
                    params: msg.params.clone(),
                    token: None,
                };
                let answer = match actix::clock::timeout(timeout, server.send(request)).await {
                    Ok(Ok(a)) => a,
                    Ok(Err(_)) => Err(LspError::Ended(format!(
                        "the {language} language server stopped"
                    ))),
                    Err(_) => Err(LspError::Timeout {
                        language: language.clone(),
                        method: msg.method.to_string(),
                        ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                    }),
                };
                answers.push((language, answer));
            }
            answers
        })
    }
}

impl Handler<ServerEvent> for LanguageServers {
    type Result = ();
    fn handle(&mut self, msg: ServerEvent, _: &mut Context<Self>) {
        let Some(slot) = self.slots.get_mut(&msg.language) else {
            return;
        };
        if slot.generation != msg.generation {
            return;
        }
        let (crashed, reason) = match msg.what {
            Happened::Started(pid) => {
                if let Some(server) = &mut slot.server {
                    server.2 = pid;
                }
                return;
            }
            Happened::Ready => {
                slot.ready = true;
                return;
            }
            Happened::Gone { crashed, reason } => (crashed, reason),
        };
        slot.server = None;
        slot.last_error = Some(reason);
        if crashed {
            slot.crashes_in_row += 1;
            self.metrics.record_restart(NAME);
            if slot.crashes_in_row >= BREAKER_CRASHES {
                slot.open_until = Some(Instant::now() + BREAKER_OPEN);
                tracing::warn!(
                    language = %msg.language,
                    crashes = slot.crashes_in_row,
                    "language server breaker open for {} s",
                    BREAKER_OPEN.as_secs()
                );
            }
        }
    }
}

/// Resident memory of a server's process group (it leads its own, with whatever it
/// started: tsserver, a build), KiB; `None` when the leader is gone.
fn rss_kib(leader: u32) -> Option<u64> {
    let rss_of = |pid: &str| -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    };
    let mut total = rss_of(&leader.to_string())?;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if pid == leader.to_string() {
            continue;
        }
        // `pid (comm) state ppid pgrp …`: comm may hold spaces and parentheses.
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let group = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(2))
            .and_then(|g| g.parse::<u32>().ok());
        if group == Some(leader) {
            total += rss_of(pid).unwrap_or(0);
        }
    }
    Some(total)
}

impl Handler<GetStatus> for LanguageServers {
    type Result = MessageResult<GetStatus>;
    fn handle(&mut self, _: GetStatus, _: &mut Context<Self>) -> Self::Result {
        let now = Instant::now();
        let servers = self
            .config
            .servers
            .iter()
            .map(|(language, config)| {
                let slot = self.slots.get(language);
                let running = slot.and_then(|s| s.server.as_ref());
                let pid = running.and_then(|(_, _, pid)| *pid);
                ServerStatus {
                    language: language.clone(),
                    command: config.command.clone(),
                    installed: resolve(&config.command).is_some(),
                    running: running.is_some(),
                    pid,
                    rss_kib: pid.and_then(rss_kib),
                    restarts: slot.map_or(0, |s| s.starts.saturating_sub(1)),
                    crashes_in_row: slot.map_or(0, |s| s.crashes_in_row),
                    breaker_open_for_ms: slot
                        .and_then(|s| s.open_until)
                        .filter(|u| *u > now)
                        .map(|u| u64::try_from((u - now).as_millis()).unwrap_or(u64::MAX)),
                    last_error: slot.and_then(|s| s.last_error.clone()),
                }
            })
            .collect();
        MessageResult(LspStatus { servers })
    }
}
