//! One running language server: its process (in a process group of its own, killed with
//! the actor), the documents it was told about (opened once, then a full-text
//! `didChange` whenever the file on disk changed since), and the requests waiting for
//! its answers. It answers the server's own requests (configuration, capability
//! registration, progress) so that none waits on the bridge.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use actix::prelude::*;
use serde_json::{json, Value};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use super::LspError;
use crate::exec::process::GroupGuard;
use crate::lsp::framing::{encode, read_message};
use crate::lsp::servers::ServerConfig;
use crate::lsp::shapes::{path_of, uri_of};
use crate::lsp::MAX_MESSAGE_BYTES;
use crate::workspace::language_id;

/// A document larger than this is not sent to a server (the request is refused).
pub const MAX_DOCUMENT_BYTES: u64 = 4 * 1024 * 1024;

/// What happened to a server, for the LanguageServers actor.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ServerEvent {
    pub language: String,
    pub generation: u64,
    pub what: Happened,
}

/// See [`ServerEvent`].
pub enum Happened {
    /// Its process runs, with this id.
    Started(Option<u32>),
    /// It answered `initialize`.
    Ready,
    /// It ended.
    Gone {
        /// Not asked to stop: it exited, broke the protocol or did not answer in time.
        crashed: bool,
        reason: String,
    },
}

/// One request, its file synchronised first.
#[derive(Message)]
#[rtype(result = "Result<Value, LspError>")]
pub struct Request {
    /// The document the request is about (opened or updated before the request).
    pub file: Option<PathBuf>,
    pub method: &'static str,
    pub params: Value,
    /// The asker's token for [`Cancel`], if it may give up.
    pub token: Option<u64>,
}

/// The asker with this token gave up: its request is answered with
/// [`LspError::Cancelled`] and the server told (`$/cancelRequest`).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Cancel(pub u64);

/// Stop the server: `shutdown` and `exit` are sent, then the process group is killed.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Stop {
    /// It hung or misbehaved (counted against it) rather than idled.
    pub crashed: bool,
    pub reason: String,
}

/// The last lines a server wrote on stderr, kept to say why it ended.
const STDERR_LINES: usize = 8;
/// How long an ended server's last stderr lines are waited for.
const STDERR_DRAIN: Duration = Duration::from_millis(200);
/// The longest stderr line kept (longer ones are cut).
const STDERR_LINE_CHARS: usize = 300;

/// A line it wrote on stderr.
#[derive(Message)]
#[rtype(result = "()")]
struct StderrLine(String);

/// What it said, from the reader task.
#[derive(Message)]
#[rtype(result = "()")]
struct FromServer(Value);

/// Its output ended or broke.
#[derive(Message)]
#[rtype(result = "()")]
struct OutputEnded(String);

/// A document as the server last saw it.
struct Document {
    version: i32,
    hash: u64,
    /// When a request last named it (a counter): the least recent is closed first.
    used: u64,
    /// The versions a check showed it with a text that is not the file's (the latest
    /// few): what the server publishes about them is not the file's.
    trial_versions: Vec<i32>,
}

/// The trial versions a document remembers.
const MAX_TRIAL_VERSIONS: usize = 4;

/// What the server last published for a document.
struct Published {
    /// The document version it is about: as the server says, or (a server that does
    /// not say) the version last given to it when the publication arrived.
    version: i32,
    diagnostics: Vec<Value>,
    /// It arrived while a check showed the server a text that is not the file's (the
    /// file was held): these are that text's. Then the file's own, when known.
    trial: Option<Option<Vec<Value>>>,
}

/// Someone waiting for the diagnostics of a document's next publication.
struct DiagnosticsWaiter {
    uri: String,
    /// At least this version, when the server says which it is about.
    version: i32,
    reply: oneshot::Sender<Vec<Value>>,
}

type Reply = oneshot::Sender<Result<Value, LspError>>;

/// How one server is started.
pub struct Launch {
    pub language: String,
    pub config: ServerConfig,
    pub program: PathBuf,
    pub root: crate::workspace::Root,
    pub generation: u64,
    pub start_timeout: Duration,
    /// Documents kept open in the server at most.
    pub max_open_documents: usize,
    pub parent: Recipient<ServerEvent>,
}

/// The actor of one server process.
pub struct LanguageServer {
    launch: Launch,
    writer: Option<mpsc::UnboundedSender<Vec<u8>>>,
    child: Option<tokio::process::Child>,
    group: Option<GroupGuard>,
    next_id: i64,
    pending: HashMap<i64, Reply>,
    /// The requests an asker may cancel: its token, the request's id (entries leave
    /// with their request).
    cancellable: HashMap<u64, i64>,
    /// Tokens cancelled before their request was sent (it waited for the server to be
    /// ready): the request is then not sent. The newest [`EARLY_CANCELS`] are kept.
    cancelled_early: std::collections::VecDeque<u64>,
    /// `initialize` answered; whatever needs the server waits in `until_ready` until
    /// then (nothing is sent before `initialized`).
    ready: bool,
    until_ready: Vec<oneshot::Sender<Result<(), LspError>>>,
    documents: HashMap<PathBuf, Document>,
    /// Counts the documents' uses.
    uses: u64,
    /// Files a `checkEdit` holds (the server has a proposed text for them): requests and
    /// other checks about them wait here until it gives the real text back.
    held: HashMap<PathBuf, Vec<oneshot::Sender<()>>>,
    /// The last diagnostics published, by document path (documents it was told about).
    published: HashMap<String, Published>,
    waiters: Vec<DiagnosticsWaiter>,
    /// Its last lines on stderr.
    stderr: std::collections::VecDeque<String>,
    /// Its first line on stderr, when the last ones no longer hold it: a server that
    /// cannot start says why first, and a backtrace may follow.
    stderr_first: Option<String>,
    /// Why it ended, once it did (told to the parent once).
    ended: Option<(bool, String)>,
    /// What its `initialize` answer says it can do (`null` until then).
    capabilities: Value,
    /// The methods it registered since (`client/registerCapability`), by registration id.
    registered: HashMap<String, String>,
}

impl LanguageServer {
    pub fn new(launch: Launch) -> Self {
        Self {
            launch,
            writer: None,
            child: None,
            group: None,
            next_id: 1,
            pending: HashMap::new(),
            cancellable: HashMap::new(),
            cancelled_early: std::collections::VecDeque::new(),
            ready: false,
            until_ready: Vec::new(),
            documents: HashMap::new(),
            uses: 0,
            published: HashMap::new(),
            held: HashMap::new(),
            waiters: Vec::new(),
            stderr: std::collections::VecDeque::new(),
            stderr_first: None,
            ended: None,
            capabilities: Value::Null,
            registered: HashMap::new(),
        }
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.id())
    }

    fn tell(&self, what: Happened) {
        self.launch.parent.do_send(ServerEvent {
            language: self.launch.language.clone(),
            generation: self.launch.generation,
            what,
        });
    }

    fn send(&mut self, message: &Value) {
        if let Some(w) = &self.writer {
            let _ = w.send(encode(message.to_string().as_bytes()));
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request; answers its id.
    fn request(&mut self, method: &str, params: Value, reply: Reply) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(id, reply);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Tells the server about `file`'s text on disk (see [`Self::show`]); answers that
    /// text.
    fn sync(&mut self, file: &Path) -> Result<String, LspError> {
        let text = read_document(&self.launch.root, file)?;
        self.show(file, &text);
        Ok(text)
    }

    /// Gives the server `text` as `file`'s: opened the first time, changed (the whole
    /// text) when it differs from what the server last saw. Answers the version.
    fn show(&mut self, file: &Path, text: &str) -> i32 {
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        let hash = hasher.finish();
        let uri = uri_of(file);
        self.uses += 1;
        let used = self.uses;
        if !self.documents.contains_key(file) {
            self.close_least_used();
        }
        match self.documents.get_mut(file) {
            Some(doc) if doc.hash == hash => {
                doc.used = used;
                doc.version
            }
            Some(doc) => {
                doc.used = used;
                doc.version += 1;
                doc.hash = hash;
                let version = doc.version;
                self.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
                );
                version
            }
            None => {
                self.documents.insert(
                    file.to_path_buf(),
                    Document {
                        version: 1,
                        hash,
                        used,
                        trial_versions: Vec::new(),
                    },
                );
                self.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {"uri": uri, "languageId": language_id(file), "version": 1, "text": text}}),
                );
                1
            }
        }
    }

    /// Keeps the server's open documents under `lsp.max_open_documents`: the one
    /// least recently named by a request (and not held by a check) is closed.
    fn close_least_used(&mut self) {
        while self.documents.len() >= self.launch.max_open_documents {
            let Some(file) = self
                .documents
                .iter()
                .filter(|(f, _)| !self.held.contains_key(*f))
                .min_by_key(|(_, d)| d.used)
                .map(|(f, _)| f.clone())
            else {
                return;
            };
            self.documents.remove(&file);
            self.published.remove(&file.display().to_string());
            self.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri_of(&file)}}),
            );
        }
    }

    /// Keeps what the server published for a document it was told about, and hands it
    /// to whoever waits for it.
    fn published_diagnostics(&mut self, params: &Value) {
        // Servers write URIs their own way (escaping more or less than the bridge): the
        // document is found by its decoded path.
        let Some(uri) = params["uri"].as_str().and_then(|u| u.parse().ok()) else {
            return;
        };
        let key = path_of(&uri);
        let Some(current) = self.documents.get(Path::new(&key)).map(|d| d.version) else {
            return; // only documents it was given: the map stays bounded
        };
        let uri = key;
        let version = params["version"]
            .as_i64()
            .and_then(|v| i32::try_from(v).ok())
            .unwrap_or(current);
        let diagnostics = params["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let (ready, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiters)
            .into_iter()
            .partition(|w| w.uri == uri && version >= w.version);
        // Those that gave up waiting leave too.
        let waiting: Vec<_> = waiting
            .into_iter()
            .filter(|w| !w.reply.is_closed())
            .collect();
        self.waiters = waiting;
        for w in ready {
            let _ = w.reply.send(diagnostics.clone());
        }
        // What a check's trial text got is not the file's: the file's own stay what
        // the workspace's diagnostics show.
        let trial_version = |v: i64| {
            self.documents
                .get(Path::new(&uri))
                .is_some_and(|d| d.trial_versions.iter().any(|t| i64::from(*t) == v))
        };
        // By the version it names; a server that names none, by whether a check held
        // the file when it arrived.
        let is_trial = match params["version"].as_i64() {
            Some(v) => trial_version(v),
            None => self.held.contains_key(Path::new(&uri)),
        };
        let trial = is_trial.then(|| {
            self.published.get(&uri).and_then(|p| match &p.trial {
                Some(own) => own.clone(),
                None => Some(p.diagnostics.clone()),
            })
        });
        self.published.insert(
            uri,
            Published {
                version,
                diagnostics,
                trial,
            },
        );
    }

    /// The diagnostics the server publishes next for `uri` (at least `version` when it
    /// says which version it is about).
    fn next_diagnostics(&mut self, uri: String, version: i32) -> oneshot::Receiver<Vec<Value>> {
        let (reply, rx) = oneshot::channel();
        self.waiters.retain(|w| !w.reply.is_closed());
        self.waiters.push(DiagnosticsWaiter {
            uri,
            version,
            reply,
        });
        rx
    }

    /// Ends the actor, failing whatever waits, and tells the parent why (once).
    fn end(&mut self, crashed: bool, reason: String, ctx: &mut Context<Self>) {
        if self.ended.is_some() {
            return;
        }
        let mut what = format!(
            "the {} language server ({}) {reason}",
            self.launch.language, self.launch.config.command
        );
        if crashed && !self.stderr.is_empty() {
            let said: Vec<&str> = self.stderr.iter().map(String::as_str).collect();
            match &self.stderr_first {
                Some(first) => what.push_str(&format!(
                    " (its first output: {first}; its last: {})",
                    said.join(" | ")
                )),
                None => what.push_str(&format!(" (its output: {})", said.join(" | "))),
            }
        }
        self.cancellable.clear();
        self.held.clear();
        for (_, reply) in self.pending.drain() {
            let _ = reply.send(Err(LspError::Ended(what.clone())));
        }
        for waiting in self.until_ready.drain(..) {
            let _ = waiting.send(Err(LspError::Ended(what.clone())));
        }
        // A server stopped on purpose (unused, the pool restarting) is news, not trouble.
        if crashed {
            tracing::warn!(language = %self.launch.language, "{what}");
        } else {
            tracing::info!(language = %self.launch.language, "{what}");
        }
        self.ended = Some((crashed, what));
        ctx.stop();
    }

    fn spawn(&mut self, ctx: &mut Context<Self>) -> std::io::Result<()> {
        let mut command = tokio::process::Command::new(&self.launch.program);
        command
            .args(self.launch.config.args.as_deref().unwrap_or_default())
            .current_dir(self.launch.root.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            // A group of its own: whatever it starts (tsserver) ends with it.
            .process_group(0);
        // SAFETY: prctl is async-signal-safe; it only asks the kernel to kill the
        // server when the bridge dies, so no server outlives a killed bridge.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command.spawn()?;
        let pid = child.id().and_then(|p| i32::try_from(p).ok());
        self.group = Some(GroupGuard::new(pid));
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout"))?;
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("no stdin"))?;
        if let Some(stderr) = child.stderr.take() {
            let me = ctx.address();
            actix_rt::spawn(async move {
                use tokio::io::AsyncBufReadExt;
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    me.do_send(StderrLine(line.chars().take(STDERR_LINE_CHARS).collect()));
                }
            });
        }
        self.child = Some(child);
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        self.writer = Some(tx);
        let me = ctx.address();
        actix_rt::spawn(async move {
            while let Some(bytes) = rx.recv().await {
                if stdin.write_all(&bytes).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
        });
        actix_rt::spawn(async move {
            let mut reader = BufReader::new(stdout);
            loop {
                match read_message(&mut reader, MAX_MESSAGE_BYTES).await {
                    Ok(Some(body)) => match serde_json::from_slice::<Value>(&body) {
                        Ok(v) => me.do_send(FromServer(v)),
                        Err(e) => {
                            me.do_send(OutputEnded(format!(
                                "sent a message that is not JSON ({e})"
                            )));
                            break;
                        }
                    },
                    Ok(None) => {
                        me.do_send(OutputEnded("exited".into()));
                        break;
                    }
                    Err(e) => {
                        me.do_send(OutputEnded(e.to_string()));
                        break;
                    }
                }
            }
        });
        Ok(())
    }

    /// Answers a request the server made of the client.
    fn answer_server(&mut self, id: Value, method: &str, params: &Value) {
        let result = match method {
            "workspace/configuration" => {
                let n = params["items"].as_array().map_or(0, Vec::len);
                Value::Array(vec![Value::Null; n])
            }
            "workspace/workspaceFolders" => {
                let root = self.launch.root.path();
                json!([{"uri": uri_of(root), "name": root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()}])
            }
            "client/registerCapability" => {
                for r in params["registrations"].as_array().into_iter().flatten() {
                    if let (Some(id), Some(method)) = (r["id"].as_str(), r["method"].as_str()) {
                        self.registered.insert(id.to_string(), method.to_string());
                    }
                }
                Value::Null
            }
            "client/unregisterCapability" => {
                // The specification's field is misspelt "unregisterations".
                for r in params["unregisterations"].as_array().into_iter().flatten() {
                    if let Some(id) = r["id"].as_str() {
                        self.registered.remove(id);
                    }
                }
                Value::Null
            }
            "window/workDoneProgress/create" | "window/showMessageRequest" => Value::Null,
            "workspace/applyEdit" => {
                json!({"applied": false, "failureReason": "the bridge applies edits itself"})
            }
            _ => {
                self.send(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("{method} is not supported by ide-bridge")}}));
                return;
            }
        };
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }
}

impl Actor for LanguageServer {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        if let Err(e) = self.spawn(ctx) {
            self.end(true, format!("could not start: {e}"), ctx);
            return;
        }
        self.tell(Happened::Started(self.pid()));
        let root = self.launch.root.path().to_path_buf();
        let name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let params = json!({
            "processId": std::process::id(),
            "clientInfo": {"name": "ide-bridge", "version": env!("CARGO_PKG_VERSION")},
            "rootUri": uri_of(&root),
            "rootPath": root.display().to_string(),
            "workspaceFolders": [{"uri": uri_of(&root), "name": name}],
            "initializationOptions": self.launch.config.initialization_options,
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "workspace": {
                    "workspaceFolders": true,
                    "configuration": true,
                    "symbol": {"dynamicRegistration": false},
                    // The bridge applies text edits itself (no file operations).
                    "workspaceEdit": {"documentChanges": true, "resourceOperations": []}
                },
                "textDocument": {
                    "synchronization": {"didSave": false, "dynamicRegistration": false},
                    "hover": {"contentFormat": ["markdown", "plaintext"]},
                    "definition": {"linkSupport": true},
                    "references": {},
                    "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                    "publishDiagnostics": {"versionSupport": true},
                    "callHierarchy": {},
                    "typeHierarchy": {},
                    "inlayHint": {},
                    "formatting": {},
                    "signatureHelp": {"signatureInformation": {
                        "documentationFormat": ["markdown", "plaintext"],
                        "parameterInformation": {"labelOffsetSupport": true}
                    }},
                    "rename": {"prepareSupport": false},
                    "codeAction": {
                        "codeActionLiteralSupport": {"codeActionKind": {"valueSet": [
                            "quickfix", "refactor", "refactor.extract", "refactor.inline",
                            "refactor.rewrite", "source", "source.organizeImports", "source.fixAll"
                        ]}},
                        "isPreferredSupport": true,
                        "dataSupport": true,
                        "resolveSupport": {"properties": ["edit"]}
                    }
                }
            }
        });
        let (tx, rx) = oneshot::channel();
        self.request("initialize", params, tx);
        let timeout = self.launch.start_timeout;
        let me = ctx.address();
        actix_rt::spawn(async move {
            let outcome = match actix::clock::timeout(timeout, rx).await {
                Ok(Ok(Ok(answer))) => Ok(answer.get("capabilities").cloned().unwrap_or_default()),
                Ok(Ok(Err(e))) => Err(format!("failed to initialize: {e}")),
                Ok(Err(_)) => return, // it ended meanwhile, and said why
                Err(_) => Err(format!(
                    "did not answer initialize within {} s",
                    timeout.as_secs()
                )),
            };
            me.do_send(Initialized(outcome));
        });
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        let (crashed, reason) = self.ended.take().unwrap_or((false, "stopped".to_string()));
        self.tell(Happened::Gone { crashed, reason });
        // Dropping the child and the group guard kills the process group.
    }
}

/// `initialize` was answered (or failed, or timed out).
#[derive(Message)]
#[rtype(result = "()")]
struct Initialized(Result<Value, String>);

impl Handler<Initialized> for LanguageServer {
    type Result = ();
    fn handle(&mut self, msg: Initialized, ctx: &mut Context<Self>) {
        match msg.0 {
            Ok(capabilities) => {
                self.capabilities = capabilities;
                self.ready = true;
                self.notify("initialized", json!({}));
                for ready in self.until_ready.drain(..) {
                    let _ = ready.send(Ok(()));
                }
                self.tell(Happened::Ready);
                match self.pid() {
                    Some(pid) => {
                        tracing::info!(language = %self.launch.language, pid, "language server ready")
                    }
                    None => {
                        tracing::info!(language = %self.launch.language, "language server ready")
                    }
                }
            }
            Err(reason) => self.end(true, reason, ctx),
        }
    }
}

impl LanguageServer {
    /// Resolves once the server answered `initialize`, or with why it ended first.
    /// Only for a server not ready yet; the future outlives the actor, so the reason
    /// reaches the caller even when the actor stopped.
    fn until_ready(&mut self) -> impl std::future::Future<Output = Result<(), LspError>> {
        let (tx, rx) = oneshot::channel();
        self.until_ready.push(tx);
        async move {
            rx.await
                .unwrap_or_else(|_| Err(LspError::Ended("the language server stopped".into())))
        }
    }

    /// Sends `msg` to itself again once the `checkEdit` holding `file` let it go.
    fn after_release<M>(
        &mut self,
        file: &Path,
        msg: M,
        ctx: &mut Context<Self>,
    ) -> ResponseFuture<Result<M::Answer, LspError>>
    where
        M: Message<Result = Result<<M as Deferred>::Answer, LspError>> + Deferred + Send + 'static,
        Self: Handler<M>,
    {
        let (tx, rx) = oneshot::channel();
        self.held.entry(file.to_path_buf()).or_default().push(tx);
        let me = ctx.address();
        Box::pin(async move {
            rx.await
                .map_err(|_| LspError::Ended("the language server stopped".into()))?;
            me.send(msg)
                .await
                .unwrap_or_else(|_| Err(LspError::Ended("the language server stopped".into())))
        })
    }

    /// Sends `msg` once the server is ready (now, or by sending it again to itself then).
    fn when_ready<M>(
        &mut self,
        msg: M,
        ctx: &mut Context<Self>,
        now: impl FnOnce(&mut Self, M) -> ResponseFuture<Result<M::Answer, LspError>>,
    ) -> ResponseFuture<Result<M::Answer, LspError>>
    where
        M: Message<Result = Result<<M as Deferred>::Answer, LspError>> + Deferred + Send + 'static,
        Self: Handler<M>,
    {
        if self.ready {
            return now(self, msg);
        }
        let ready = self.until_ready();
        let me = ctx.address();
        Box::pin(async move {
            ready.await?;
            me.send(msg)
                .await
                .unwrap_or_else(|_| Err(LspError::Ended("the language server stopped".into())))
        })
    }
}

/// A message that waits for the server to be ready: what it answers.
pub trait Deferred {
    type Answer: Send + 'static;
}

impl Deferred for Request {
    type Answer = Value;
}

/// Refuses a request `position` (LSP's: 0-based, UTF-16 columns; `null` for a request
/// without one) past the end of `file`'s `text`, which a server answers with nothing.
fn within(file: &Path, text: &str, position: &Value) -> Result<(), LspError> {
    let (Some(line), Some(character)) = (position["line"].as_u64(), position["character"].as_u64())
    else {
        return Ok(());
    };
    let lines = text.split('\n').count() as u64;
    let Some(content) = usize::try_from(line)
        .ok()
        .and_then(|n| text.split('\n').nth(n))
    else {
        return Err(LspError::OutOfRange(format!(
            "line {} is past the end of {}, which has {lines} lines",
            line + 1,
            file.display()
        )));
    };
    let width = content.trim_end_matches('\r').encode_utf16().count() as u64;
    if character > width {
        return Err(LspError::OutOfRange(format!(
            "column {} is past the end of line {} of {}, which is {width} characters long \
             (UTF-16 units; column {} is its end)",
            character + 1,
            line + 1,
            file.display(),
            width + 1
        )));
    }
    Ok(())
}

/// The server capability (of `initialize`'s answer) a request `method` needs, for the
/// methods the bridge asks whose capability a server may leave out.
fn capability_of(method: &str) -> Option<&'static str> {
    Some(match method {
        "textDocument/hover" => "hoverProvider",
        "textDocument/definition" => "definitionProvider",
        "textDocument/references" => "referencesProvider",
        "textDocument/documentSymbol" => "documentSymbolProvider",
        "textDocument/formatting" => "documentFormattingProvider",
        "textDocument/rename" => "renameProvider",
        "textDocument/codeAction" => "codeActionProvider",
        "textDocument/inlayHint" => "inlayHintProvider",
        "textDocument/prepareCallHierarchy" => "callHierarchyProvider",
        "textDocument/prepareTypeHierarchy" => "typeHierarchyProvider",
        "workspace/symbol" => "workspaceSymbolProvider",
        _ => return None,
    })
}

impl LanguageServer {
    /// The capability `method` needs when the server said it has not got it (absent,
    /// `null` or `false`, and not registered since); `None` when it has, or when the
    /// method needs none.
    fn lacks(&self, method: &str) -> Option<&'static str> {
        let capability = capability_of(method)?;
        if self.registered.values().any(|m| m == method) {
            return None;
        }
        match self.capabilities.get(capability) {
            None | Some(Value::Null | Value::Bool(false)) => Some(capability),
            Some(_) => None,
        }
    }
}

impl Handler<Request> for LanguageServer {
    type Result = ResponseFuture<Result<Value, LspError>>;

    fn handle(&mut self, msg: Request, ctx: &mut Context<Self>) -> Self::Result {
        if let Some(file) = msg.file.clone().filter(|f| self.held.contains_key(f)) {
            return self.after_release(&file, msg, ctx);
        }
        self.when_ready(msg, ctx, |act, msg| {
            let (tx, rx) = oneshot::channel();
            let synced = match &msg.file {
                Some(file) => act
                    .sync(file)
                    .and_then(|text| within(file, &text, &msg.params["position"])),
                None => Ok(()),
            };
            let early = msg
                .token
                .and_then(|t| act.cancelled_early.iter().position(|c| *c == t));
            if let Some(at) = early {
                act.cancelled_early.remove(at);
                let _ = tx.send(Err(LspError::Cancelled));
                return Box::pin(async move { Err(LspError::Cancelled) });
            }
            if let Some(capability) = act.lacks(msg.method) {
                let refused = LspError::Unsupported {
                    language: act.launch.language.clone(),
                    command: act.launch.config.command.clone(),
                    method: msg.method,
                    capability,
                };
                return Box::pin(async move { Err(refused) });
            }
            match synced {
                Ok(()) => {
                    let id = act.request(msg.method, msg.params, tx);
                    if let Some(token) = msg.token {
                        act.cancellable.insert(token, id);
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                }
            }
            Box::pin(async move {
                rx.await
                    .unwrap_or_else(|_| Err(LspError::Ended("the language server stopped".into())))
            })
        })
    }
}

/// How many cancellations of requests not sent yet are remembered.
const EARLY_CANCELS: usize = 64;

/// Give the server a text as a file's (its text on disk when `text` is `None`), once it
/// is ready.
#[derive(Message)]
#[rtype(result = "Result<Shown, LspError>")]
pub struct Show {
    pub file: PathBuf,
    pub text: Option<String>,
    pub hold: Hold,
}

/// How a [`Show`] holds its file (for a `checkEdit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// Not part of a check (waiting while one holds the file).
    Free,
    /// Take the file (waiting while another check holds it).
    Begin,
    /// The check holding it goes on.
    Held,
    /// The real text goes back: the file is let go, and whatever waited for it runs.
    End,
}

/// What [`Show`] did.
pub struct Shown {
    pub uri: String,
    pub version: i32,
    /// The server was told something new (opened or changed).
    pub changed: bool,
    /// The text it was given.
    pub text: String,
}

impl Deferred for Show {
    type Answer = Shown;
}

impl Handler<Show> for LanguageServer {
    type Result = ResponseFuture<Result<Shown, LspError>>;

    fn handle(&mut self, msg: Show, ctx: &mut Context<Self>) -> Self::Result {
        if matches!(msg.hold, Hold::Begin | Hold::Free) && self.held.contains_key(&msg.file) {
            let file = msg.file.clone();
            return self.after_release(&file, msg, ctx);
        }
        self.when_ready(msg, ctx, |act, msg| {
            match msg.hold {
                Hold::Begin => {
                    act.held.insert(msg.file.clone(), Vec::new());
                }
                Hold::Held | Hold::Free => {}
                Hold::End => {
                    for waiting in act.held.remove(&msg.file).unwrap_or_default() {
                        let _ = waiting.send(());
                    }
                }
            }
            let shown = (|| {
                let text = match msg.text {
                    Some(t) => t,
                    None => read_document(&act.launch.root, &msg.file)?,
                };
                let before = act.documents.get(&msg.file).map(|d| d.version);
                let version = act.show(&msg.file, &text);
                // A text of its own (the file's would have kept its version).
                let trial = msg.hold == Hold::Held && before != Some(version);
                if let (true, Some(doc)) = (trial, act.documents.get_mut(&msg.file)) {
                    if doc.trial_versions.len() >= MAX_TRIAL_VERSIONS {
                        doc.trial_versions.remove(0);
                    }
                    doc.trial_versions.push(version);
                }
                Ok(Shown {
                    uri: msg.file.display().to_string(),
                    version,
                    changed: before != Some(version),
                    text,
                })
            })();
            Box::pin(async move { shown })
        })
    }
}

/// The diagnostics of a document's `version` (or a later one): the last published when
/// it is about that, else the next publication that is. `None` when the server ended
/// first.
#[derive(Message)]
#[rtype(result = "Option<Vec<Value>>")]
pub struct DiagnosticsOf {
    pub uri: String,
    pub version: i32,
}

impl Handler<DiagnosticsOf> for LanguageServer {
    type Result = ResponseFuture<Option<Vec<Value>>>;

    fn handle(&mut self, msg: DiagnosticsOf, _: &mut Context<Self>) -> Self::Result {
        if let Some(p) = self.published.get(&msg.uri) {
            if p.version >= msg.version {
                let known = p.diagnostics.clone();
                return Box::pin(async move { Some(known) });
            }
        }
        let rx = self.next_diagnostics(msg.uri, msg.version);
        Box::pin(async move { rx.await.ok() })
    }
}

/// Files changed on disk (absolute paths, with LSP's `FileChangeType`: 1 created, 2
/// changed, 3 deleted): the server is told (`workspace/didChangeWatchedFiles`), an open
/// document that changed is given its new text (so what it publishes follows the disk),
/// and one that is gone is closed.
#[derive(Message)]
#[rtype(result = "()")]
pub struct FilesChanged(pub std::sync::Arc<[(PathBuf, u8)]>);

impl Handler<FilesChanged> for LanguageServer {
    type Result = ();

    fn handle(&mut self, msg: FilesChanged, _: &mut Context<Self>) {
        if !self.ready {
            return; // it reads the disk as it starts
        }
        let changes: Vec<Value> = msg
            .0
            .iter()
            .map(|(path, kind)| json!({"uri": uri_of(path), "type": kind}))
            .collect();
        self.notify(
            "workspace/didChangeWatchedFiles",
            json!({ "changes": changes }),
        );
        for (path, kind) in msg.0.iter() {
            if !self.documents.contains_key(path) || self.held.contains_key(path) {
                continue;
            }
            if *kind == 3 {
                self.documents.remove(path);
                self.published.remove(&path.display().to_string());
                self.notify(
                    "textDocument/didClose",
                    json!({"textDocument": {"uri": uri_of(path)}}),
                );
            } else if let Err(e) = self.sync(path) {
                tracing::debug!(language = %self.launch.language, "not re-synced: {e}");
            }
        }
    }
}

/// The diagnostics last published for every document the server has open, by path:
/// for a document a check showed a trial text, what it had before.
#[derive(Message)]
#[rtype(result = "Vec<(String, Vec<Value>)>")]
pub struct Publications;

impl Handler<Publications> for LanguageServer {
    type Result = MessageResult<Publications>;

    fn handle(&mut self, _: Publications, _: &mut Context<Self>) -> Self::Result {
        MessageResult(
            self.published
                .iter()
                .filter_map(|(path, p)| match &p.trial {
                    None => Some((path.clone(), p.diagnostics.clone())),
                    Some(own) => own.clone().map(|own| (path.clone(), own)),
                })
                .collect(),
        )
    }
}

impl Handler<FromServer> for LanguageServer {
    type Result = ();
    fn handle(&mut self, msg: FromServer, _: &mut Context<Self>) {
        let v = msg.0;
        let method = v.get("method").and_then(Value::as_str).map(str::to_string);
        match (v.get("id").cloned(), method) {
            (Some(id), Some(method)) => self.answer_server(id, &method, &v["params"]),
            (Some(id), None) => {
                if let Some(id) = id.as_i64() {
                    self.cancellable.retain(|_, waiting| *waiting != id);
                }
                let Some(reply) = id.as_i64().and_then(|id| self.pending.remove(&id)) else {
                    return;
                };
                let answer = match v.get("error") {
                    Some(e) => Err(LspError::Server {
                        code: e["code"].as_i64().unwrap_or(0),
                        message: e["message"].as_str().unwrap_or("").to_string(),
                    }),
                    None => Ok(v.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = reply.send(answer);
            }
            (None, Some(method)) if method == "textDocument/publishDiagnostics" => {
                self.published_diagnostics(&v["params"]);
            }
            (None, _) => {} // logs, progress
        }
    }
}

impl Handler<StderrLine> for LanguageServer {
    type Result = ();
    fn handle(&mut self, msg: StderrLine, _: &mut Context<Self>) {
        let line = msg.0.trim().to_string();
        if line.is_empty() {
            return;
        }
        tracing::debug!(language = %self.launch.language, "language server: {line}");
        if self.stderr.len() == STDERR_LINES {
            let gone = self.stderr.pop_front();
            if self.stderr_first.is_none() {
                self.stderr_first = gone;
            }
        }
        self.stderr.push_back(line);
    }
}

impl Handler<Cancel> for LanguageServer {
    type Result = ();
    fn handle(&mut self, msg: Cancel, _: &mut Context<Self>) {
        let Some(id) = self.cancellable.remove(&msg.0) else {
            if self.cancelled_early.len() == EARLY_CANCELS {
                self.cancelled_early.pop_front();
            }
            self.cancelled_early.push_back(msg.0);
            return;
        };
        if let Some(reply) = self.pending.remove(&id) {
            let _ = reply.send(Err(LspError::Cancelled));
            self.notify("$/cancelRequest", json!({"id": id}));
        }
    }
}

impl Handler<OutputEnded> for LanguageServer {
    type Result = ();
    fn handle(&mut self, msg: OutputEnded, ctx: &mut Context<Self>) {
        // What it wrote on stderr as it died says why: let those lines arrive first.
        ctx.run_later(STDERR_DRAIN, move |act, ctx| act.end(true, msg.0, ctx));
    }
}

impl Handler<Stop> for LanguageServer {
    type Result = ();
    fn handle(&mut self, msg: Stop, ctx: &mut Context<Self>) {
        if self.ready && !msg.crashed {
            self.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "shutdown"}));
            self.notify("exit", Value::Null);
        }
        self.end(msg.crashed, msg.reason, ctx);
    }
}

/// `file`'s text, if a language server may be given it (UTF-8, at most
/// [`MAX_DOCUMENT_BYTES`]): read beneath `root`, without blocking on what is not a
/// regular file (a FIFO would hold the actor's thread, and the whole bridge with it)
/// and without following a link out of the workspace.
fn read_document(root: &crate::workspace::Root, file: &Path) -> Result<String, LspError> {
    use crate::workspace::files::{read_regular_max, FileError};
    let bytes = read_regular_max(root, file, MAX_DOCUMENT_BYTES).map_err(|e| match e {
        FileError::TooLarge { size, .. } => LspError::File(format!(
            "{} is {size} bytes; language servers are given files up to {MAX_DOCUMENT_BYTES} bytes",
            file.display(),
        )),
        other => LspError::File(other.to_string()),
    })?;
    String::from_utf8(bytes)
        .map_err(|_| LspError::File(format!("{} is not UTF-8 text", file.display())))
}
