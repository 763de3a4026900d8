//! Every setting, declared once: its type, default, allowed range and doc line sit on
//! one field. [`section!`] makes the struct and its `Default`; the JSON schema (with the
//! ranges, `x-allowed` and the docs) comes from `schemars`, and from it the validation
//! of ranges ([`super::reference::check_ranges`]), `config/default.toml` and the table
//! in `docs/configuration.md` ([`super::reference`]).
//!
//! Field attributes beyond serde's: `#[schemars(range(min = .., max = ..))]` (checked at
//! load), `#[schemars(extend("x-allowed" = ".."))]` (what the docs say is allowed when
//! no range says it, or a range that depends on another key, checked in
//! [`super::Settings::validate`]), `#[schemars(extend("x-default" = ".."))]` (how the
//! docs show a default that is not a plain value). Durations are whole milliseconds in
//! `*_ms` keys: `#[serde(rename = "…_ms", with = "millis")] #[schemars(with = "u64")]`.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ip_address, millis, LogFormat, LogLevel};
use crate::diagnostics::linters::{self, Linter};

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;

/// Declares a settings section: the struct (every field with its attributes, type and
/// `= default`) and its `Default`.
macro_rules! section {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$field_meta:meta])*
                pub $field:ident : $ty:ty = $default:expr
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields, default)]
        pub struct $name {
            $(
                $(#[$field_meta])*
                pub $field: $ty,
            )*
        }

        impl Default for $name {
            fn default() -> Self {
                Self {
                    $( $field: $default, )*
                }
            }
        }
    };
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

section! {
    /// All settings of a bridge instance.
    pub struct Settings {
        /// Root served to agents; written to the lock file's `workspaceFolders`.
        #[schemars(extend(
            "x-allowed" = "existing directory",
            "x-default" = "current directory",
            "x-example" = "/home/me/src/project"
        ))]
        pub workspace: Option<PathBuf> = None,
        /// Name shown in Claude Code's `/ide` list and status line.
        #[schemars(length(min = 1, max = 100), extend("x-allowed" = "1–100 chars"))]
        pub ide_name: String = "ide-bridge".into(),
        /// The listening socket, WebSocket framing and who may connect.
        pub server: ServerSettings = ServerSettings::default(),
        /// Agent sessions.
        pub sessions: SessionSettings = SessionSettings::default(),
        /// Tool calls: timeouts, limits, and which tools model-facing connections see.
        pub tools: ToolSettings = ToolSettings::default(),
        /// Per-connection rate limits.
        pub rate_limit: RateLimitSettings = RateLimitSettings::default(),
        /// Logging on stderr.
        pub log: LogSettings = LogSettings::default(),
        /// The workspace file tools.
        pub files: FileSettings = FileSettings::default(),
        /// `runCommand` and `runInTerminal`.
        pub commands: CommandSettings = CommandSettings::default(),
        /// The git tools.
        pub git: GitSettings = GitSettings::default(),
        /// Diagnostics without an editor: the command-line linters.
        pub diagnostics: DiagnosticsSettings = DiagnosticsSettings::default(),
        /// The workspace watcher.
        pub watch: WatchSettings = WatchSettings::default(),
        /// The activity log (the timeline).
        pub activity: ActivitySettings = ActivitySettings::default(),
        /// The editor extension connection.
        pub editor: EditorSettings = EditorSettings::default(),
        /// The bridge's own language servers, shared by every agent.
        pub lsp: LspSettings = LspSettings::default(),
        /// Claude tasks (`claude -p`) the bridge runs.
        pub orchestrator: OrchestratorSettings = OrchestratorSettings::default(),
        /// Automation policies (docs/automation.md).
        pub automation: AutomationSettings = AutomationSettings::default(),
        /// Session checkpoints.
        pub checkpoint: CheckpointSettings = CheckpointSettings::default(),
        /// The browser page served at `/ui/`.
        pub ui: UiSettings = UiSettings::default(),
        /// Claude Code's hooks: what the bridge sees of agents' own tools (docs/hooks.md).
        pub hooks: HookSettings = HookSettings::default(),
        /// File claims: files an agent or the person claims; other agents' writes to
        /// them are refused with the holder's reason.
        pub claims: ClaimSettings = ClaimSettings::default(),
        /// Durable per-workspace state (token, activity log, checkpoint, tasks).
        pub state: StateSettings = StateSettings::default(),
    }
}

section! {
    /// `[server]`
    pub struct ServerSettings {
        /// Listen address; a non-loopback address logs a loud warning. Besides loopback
        /// names, this exact address (with the bridge's own port or none) is the only
        /// `Host` accepted (see [protocol.md](protocol.md)). When it does not take
        /// connections to 127.0.0.1 (`::1`, one interface's address), 127.0.0.1 is
        /// listened on at the same port too: local clients connect there.
        #[serde(deserialize_with = "ip_address")]
        #[schemars(extend("x-allowed" = "IP address"))]
        pub bind: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST),
        /// Port; 0 reuses the port this workspace's bridge had last when it is free, else lets the OS choose. The lock file is `<port>.lock`.
        pub port: u16 = 0,
        /// HTTP worker threads. One is plenty for a workstation.
        #[schemars(range(min = 1, max = 64))]
        pub workers: usize = 1,
        /// Largest WebSocket message, fragmented or not; larger closes with 1008 (policy
        /// violation, reason "message exceeds the N byte limit
        /// (server.max_message_bytes)"). The limit is checked on each frame header before
        /// its payload is read: a header announcing more, or a continuation header that
        /// takes a fragmented message's total past it, closes the connection at once, so
        /// memory never holds more than one message within the limit.
        #[schemars(range(min = 2 * MIB, max = 256 * MIB))]
        pub max_message_bytes: usize = 16 * MIB,
        /// Most bytes queued for one connection (agent or editor) and not yet handed to
        /// the socket. A peer that stops reading makes replies queue; when one more frame
        /// would pass this bound the connection is dropped at once: the queue is freed
        /// and the TCP socket shut down (no close frame: the peer would never read it),
        /// with a warning in the log naming the bound, counted in `/status`
        /// `outboundOverflowDrops` and `ide_bridge_outbound_overflow_drops_total`. A
        /// single reply larger than the bound goes out when nothing else is queued.
        /// Besides this queue, the HTTP layer takes the next frame from it only while
        /// its write buffer holds less than 32 KiB, so a never-reading peer costs at most
        /// this bound, one reply and 32 KiB more, and the calls in flight (measured with
        /// 256 KiB `readFile` replies, 10 calls in flight: +13 MiB RSS, debug build;
        /// `limits::a_client_that_never_reads_is_dropped_and_rss_stays_bounded`).
        #[schemars(range(min = MIB, max = 1024 * MIB))]
        pub max_outbound_bytes: usize = 8 * MIB,
        /// Server ping interval.
        #[serde(rename = "ping_interval_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 1_000, max = 600_000))]
        pub ping_interval: Duration = ms(30_000),
        /// A connection silent this long is closed (1001); a timer that fires far too
        /// late (machine sleep) resets the deadline instead of dropping agents.
        #[serde(rename = "pong_timeout_ms", with = "millis")]
        #[schemars(with = "u64", range(max = 3_600_000), extend("x-allowed" = "ping interval–1 h"))]
        pub pong_timeout: Duration = ms(90_000),
        /// `Origin` values accepted, exactly as browsers send them
        /// (`http://localhost:6274`); browsers always send one, the CLI and editor
        /// extensions none, and any other `Origin` but the bridge's own address is 403. A browser-based MCP client
        /// (the MCP Inspector's page) served from a listed origin may use `/mcp`: its
        /// CORS preflight (`OPTIONS`) is answered and the answers carry
        /// `Access-Control-Allow-Origin` and expose `Mcp-Session-Id`.
        #[schemars(extend("x-allowed" = "origins (`scheme://host[:port]`)"))]
        pub allowed_origins: Vec<String> = Vec::new(),
        /// The bridge was started on demand (`ide-bridge mcp` and the editor plugins
        /// pass `--on-demand` when they start one): it stops by itself after
        /// `server.idle_stop_ms` with no agent, editor, browser page or running Claude
        /// task (`ide-bridge status` says when).
        pub on_demand: bool = false,
        /// How long an on-demand bridge waits unused before it stops; 0: never.
        #[serde(rename = "idle_stop_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 0, max = 604_800_000u64))]
        pub idle_stop: Duration = ms(1_800_000),
        /// Least time between accepted connections (agents and editor); an
        /// authenticated upgrade that comes sooner is held until its slot; 0: off.
        #[serde(rename = "min_connect_interval_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 0, max = 10_000))]
        pub min_connect_interval: Duration = ms(50),
        /// Longest an upgrade is held for its slot; a burst longer than that gets 429
        /// with `Retry-After` (so at most `max_connect_wait_ms /
        /// min_connect_interval_ms` upgrades wait at once), counted in `/status`
        /// `refusedConnections.burst`.
        #[serde(rename = "max_connect_wait_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 0, max = 60_000))]
        pub max_connect_wait: Duration = ms(2_000),
    }
}

section! {
    /// `[sessions]`
    pub struct SessionSettings {
        /// Sessions, connected or in grace.
        #[schemars(range(min = 1, max = 100))]
        pub max_sessions: usize = 5,
        /// How long a disconnected agent's session waits for it to reconnect.
        #[serde(rename = "grace_period_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 0, max = 86_400_000))]
        pub grace_period: Duration = ms(120_000),
    }
}

section! {
    /// `[tools]`
    pub struct ToolSettings {
        /// Default tool timeout (`openDiff` has none); also how long `ide-bridge mcp`
        /// still waits for the answers to what its client asked once the client has
        /// closed its stdin.
        #[serde(rename = "timeout_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 100, max = 3_600_000))]
        pub timeout: Duration = ms(60_000),
        /// Tool-set changes (editor events) within this time make one
        /// `notifications/tools/list_changed`; an editor connecting is announced at once.
        #[serde(rename = "list_changed_debounce_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 10, max = 60_000))]
        pub list_changed_debounce: Duration = ms(2_000),
        /// Concurrent tool calls per session; more get a tool error.
        #[schemars(range(min = 1, max = 1_000))]
        pub max_concurrent_per_session: usize = 10,
        /// Largest `arguments` JSON as sent; more is refused before it is parsed (and logged). Claude Code's own IDE tools on its IDE connection (openDiff carries the whole proposed file) may use half of server.max_message_bytes or of server.max_outbound_bytes, whichever is less (4 MiB by default).
        #[schemars(range(min = KIB), extend("x-allowed" = "1 KiB–½ max message"))]
        pub max_argument_bytes: usize = MIB,
        /// Which tools model-facing connections (`ide-bridge mcp`, `/mcp`) list and may
        /// call; the IDE connection always sees all. A tool is exposed when `include`
        /// names it (or its group) and `exclude` does not; unknown names stop start-up.
        pub expose: ExposeSettings = ExposeSettings::default(),
    }
}

section! {
    /// `[tools.expose]`: tool groups or names, `*` for all.
    pub struct ExposeSettings {
        /// Groups or tool names to expose.
        #[schemars(extend("x-allowed" = "tool names, groups (`ide`, `files`, `claims`, `commands`, `git`, `editor`, `tasks`, `review`, `activity`, `bridge`; `debug` only in test builds), `*`"))]
        pub include: Vec<String> = names(&["*"]),
        /// Groups or tool names to hide, applied after `include`.
        #[schemars(extend("x-allowed" = "tool names, groups"))]
        pub exclude: Vec<String> = Vec::new(),
    }
}

section! {
    /// `[rate_limit]`
    pub struct RateLimitSettings {
        /// Requests per window per connection; more is -32004, whose `data.retryAfterMs` says when there is room again.
        #[schemars(range(min = 1, max = 100_000))]
        pub requests: usize = 200,
        /// Notifications per window per connection; more are dropped and logged. An editor's selection and active file are not counted (the newest is kept, debounced 100 ms).
        #[schemars(range(min = 1, max = 100_000))]
        pub notifications: usize = 500,
        /// Sliding window length.
        #[serde(rename = "window_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 1_000, max = 3_600_000))]
        pub window: Duration = ms(60_000),
    }
}

section! {
    /// `[log]`
    pub struct LogSettings {
        /// Stderr log level (`RUST_LOG` wins).
        pub level: LogLevel = LogLevel::Info,
        /// Stderr log format.
        pub format: LogFormat = LogFormat::Text,
    }
}

section! {
    /// `[files]`
    pub struct FileSettings {
        /// Most bytes `readFile` returns per call; a marker says where to continue.
        #[schemars(range(min = KIB, max = 16 * MIB))]
        pub max_read_bytes: usize = 256 * KIB,
        /// Most matches of `searchWorkspace` / `findFiles`.
        #[schemars(range(min = 1, max = 100_000))]
        pub max_results: usize = 500,
        /// Most entries of `getFileTree`.
        #[schemars(range(min = 1, max = 100_000))]
        pub max_tree_entries: usize = 2_000,
    }
}

section! {
    /// `[commands]`
    pub struct CommandSettings {
        /// What `runCommand` / `runInTerminal` may run; shells and interpreters are
        /// refused even if listed.
        #[schemars(extend("x-allowed" = "program names"))]
        pub allow: Vec<String> = names(&[
            "git", "cargo", "npm", "go", "pytest", "tsc", "eslint", "biome", "ruff",
        ]),
        /// A command and its process group are killed after this (the tool timeout
        /// still applies on top).
        #[serde(rename = "timeout_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 100, max = 600_000))]
        pub timeout: Duration = ms(30_000),
        /// Stdout and stderr kept per command; of longer output, the first and the
        /// last half, around a marker saying how much was left out.
        #[schemars(range(min = KIB, max = 16 * MIB))]
        pub max_output_bytes: usize = 64 * KIB,
        /// Arguments per command.
        #[schemars(range(min = 1, max = 1_024))]
        pub max_args: usize = 64,
        /// Bytes per argument.
        #[schemars(range(min = 16, max = MIB))]
        pub max_arg_bytes: usize = 4_096,
        /// Where the kernel lacks Landlock or unprivileged user namespaces, run
        /// `runCommand`/`runInTerminal` anyway, with what it has (they may run code the
        /// agent wrote: `npm run`, build scripts, tests); off: refused. See
        /// architecture.md, "Command sandbox".
        pub run_unsandboxed: bool = false,
        /// Programs whose commands may open and accept TCP connections under the
        /// sandbox (`npm install`, `cargo fetch`); every other command is denied TCP.
        #[schemars(extend("x-allowed" = "program names"))]
        pub network: Vec<String> = Vec::new(),
    }
}

section! {
    /// `[git]`
    pub struct GitSettings {
        /// `gitPush` is refused unless true.
        pub allow_push: bool = false,
        /// Pushing to `main`/`master` also needs this.
        pub allow_push_to_protected: bool = false,
    }
}

section! {
    /// `[diagnostics]`
    pub struct DiagnosticsSettings {
        /// Linters `getDiagnostics` runs without an editor, when installed and
        /// applicable.
        pub linters: Vec<Linter> = linters::ALL.to_vec(),
        /// Per-linter timeout (the tool timeout still applies on top); a timed-out
        /// linter is reported by name.
        #[serde(rename = "timeout_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 1_000, max = 600_000))]
        pub timeout: Duration = ms(50_000),
        /// How long a linter result is reused; bridge writes invalidate it.
        #[serde(rename = "cache_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 0, max = 600_000))]
        pub cache_for: Duration = ms(5_000),
        /// Re-run the linters when workspace files change (seen by the watcher), so
        /// diagnostics-change events — automation hooks, `watchDiagnostics` — exist
        /// without an editor.
        pub live: bool = true,
        /// Quiet time after the last change before the linters re-run; a change during
        /// a run cancels it and starts again.
        #[serde(rename = "rerun_debounce_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 50, max = 60_000))]
        pub rerun_debounce: Duration = ms(500),
        /// Live re-runs also follow a change to a file that makes a linter execute
        /// code (`build.rs`, `Cargo.toml`, `.cargo/config.toml`, `eslint.config.js`…).
        /// Off: such a change pauses that linter's automatic runs until a
        /// `getDiagnostics` call asks for them. Linters run in the command sandbox
        /// either way.
        pub live_after_code_change: bool = false,
    }
}

/// How the workspace is watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WatchMode {
    /// Kernel events (inotify), falling back to polling when the tree cannot be covered.
    Auto,
    /// Poll the files that matter, never kernel events.
    Poll,
    /// No watching: no file-change events, no live diagnostics without an editor.
    Off,
}

section! {
    /// `[watch]`
    pub struct WatchSettings {
        /// `auto`: kernel events (inotify) on every directory the walker does not
        /// ignore, falling back to polling when the tree cannot be covered (said in
        /// `/status`); `poll`: polling only; `off`: no file-change events.
        pub mode: WatchMode = WatchMode::Auto,
        /// Changes to one path within this window are reported once.
        #[serde(rename = "debounce_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 10, max = 10_000))]
        pub debounce: Duration = ms(200),
        /// How often polling looks at the files.
        #[serde(rename = "poll_interval_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 100, max = 600_000))]
        pub poll_interval: Duration = ms(2_000),
        /// Directories watched with kernel events at most; beyond, the watcher polls
        /// instead.
        #[schemars(range(min = 1, max = 1_000_000))]
        pub max_directories: usize = 20_000,
        /// Files polling looks at, at most (the first in walk order; `/status` says when
        /// the rest are not watched); with kernel events, the files remembered to tell
        /// an atomic save (`modified`) from a new file (`created`).
        #[schemars(range(min = 1, max = 1_000_000))]
        pub max_polled_files: usize = 50_000,
        /// Paths listed in one change batch at most; the rest of the window's events are
        /// counted (`/status` `watch.changesOverflowed`, per event), not listed.
        #[schemars(range(min = 1, max = 100_000))]
        pub max_batch: usize = 1_000,
    }
}

section! {
    /// `[activity]`
    pub struct ActivitySettings {
        /// Timeline entries kept per kind (tool calls, lifecycle); evicted in a batch at
        /// 120 %.
        #[schemars(range(min = 10, max = 100_000))]
        pub max_entries: usize = 500,
        /// JSONL in the workspace's state directory (`activity.jsonl`), reloaded at
        /// start-up.
        pub persist: bool = true,
        /// Buffered entries reach the writer thread at least this often.
        #[serde(rename = "flush_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 10, max = 10_000))]
        pub flush_every: Duration = ms(200),
        /// Rotate the JSONL file beyond this size (3 rotated files kept).
        #[schemars(range(min = 65_536, max = 1_073_741_824))]
        pub max_file_bytes: u64 = 10 * 1024 * 1024,
        /// Concurrent `/activity/stream` subscribers; more get 503.
        #[schemars(range(min = 1, max = 64))]
        pub max_stream_subscribers: usize = 8,
    }
}

section! {
    /// `[editor]`
    pub struct EditorSettings {
        /// Timeout of each `extension/*` request (the tool timeout still applies on
        /// top; `openDiff` waits for the person); a timeout opens the circuit breaker.
        #[serde(rename = "request_timeout_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 100, max = 600_000))]
        pub request_timeout: Duration = ms(10_000),
    }
}

/// `lsp.prefer`: who answers the language tools while an editor is connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LspPrefer {
    /// The editor; the bridge's servers only without one.
    Editor,
    /// The bridge's servers, even with an editor connected.
    Pool,
}

section! {
    /// `[lsp]`
    pub struct LspSettings {
        /// Answer the editor's language tools (`getHover`, `goToDefinition`,
        /// `findReferences`, `getDocumentSymbols`, `searchSymbols`, `getCallHierarchy`,
        /// `getTypeHierarchy`, `getInlayHints`, `getCodeActions`, `applyCodeAction`,
        /// `renameSymbol`, `formatDocument`; and `checkEdit`) with the bridge's own
        /// language servers when no editor is connected (a server starts on the first
        /// request for its language); their edits are written through the bridge's
        /// writer, under the claims, like an agent's. Language servers run as you, outside the command sandbox, and read
        /// the project's configuration (rust-analyzer's build scripts and proc macros
        /// are off by default); set false for projects you do not trust.
        pub enabled: bool = true,
        /// Who answers while an editor is connected: `editor` or `pool`. With `editor`, a read the editor cannot answer (it refuses, times out, or its breaker is open) and a write while its breaker is open go to the bridge's servers.
        pub prefer: LspPrefer = LspPrefer::Editor,
        /// Each request to a server; a server that does not answer in time is ended
        /// (and restarted on the next request).
        #[serde(rename = "request_timeout_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 100, max = 600_000))]
        pub request_timeout: Duration = ms(15_000),
        /// How long a starting server may take to answer `initialize`.
        #[serde(rename = "start_timeout_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 1_000, max = 600_000))]
        pub start_timeout: Duration = ms(60_000),
        /// Documents each server keeps open; the one least recently asked about is
        /// closed when a new one opens.
        #[schemars(range(min = 1, max = 10_000))]
        pub max_open_documents: usize = 200,
        /// A server unused this long is stopped.
        #[serde(rename = "idle_stop_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 10_000, max = 86_400_000))]
        pub idle_stop: Duration = ms(600_000),
        /// How long `getDiagnostics` (without an editor) waits for a running server to
        /// publish a file's diagnostics, which it merges with the linters'; 0: it does
        /// not ask the servers. Servers are not started for it.
        #[serde(rename = "diagnostics_wait_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 0, max = 60_000))]
        pub diagnostics_wait: Duration = ms(3_000),
        /// A server whose resident memory grows past this many MiB is restarted (and
        /// the restart counted in `/status`); 0: no bound. Checked every 15 s.
        #[schemars(range(min = 0, max = 1_048_576))]
        pub max_memory_mb: u64 = 4_096,
        /// Servers by language, each `{command, args?, extensions?, initialization_options?}`;
        /// an entry replaces the default of its language (what it leaves out, its
        /// arguments or extensions, is the default's); a language without a default
        /// needs `extensions`. Defaults: `python` pylsp,
        /// `typescript` typescript-language-server, `c` clangd, `rust` rust-analyzer,
        /// `go` gopls, `bash` bash-language-server (whichever is installed).
        #[schemars(with = "std::collections::BTreeMap<String, serde_json::Value>", extend("x-allowed" = "tables `{command, args?, extensions?, initialization_options?}` by language"))]
        pub servers: std::collections::BTreeMap<String, crate::lsp::servers::ServerConfig> = std::collections::BTreeMap::new(),
    }
}

section! {
    /// `[orchestrator]`
    pub struct OrchestratorSettings {
        /// The Claude executable for tasks (a name on `PATH` or a path).
        #[schemars(extend("x-allowed" = "program"))]
        pub claude_binary: String = "claude".into(),
        /// Tasks running at once.
        #[schemars(range(min = 1, max = 10))]
        pub max_concurrent: usize = 10,
        /// Tasks waiting; more get an error.
        #[schemars(range(min = 0, max = 20))]
        pub max_queue: usize = 20,
        /// Finished tasks kept (oldest evicted).
        #[schemars(range(min = 1, max = 500))]
        pub max_history: usize = 500,
        /// Permission rules for tasks' tool requests: first match wins, default deny;
        /// `tool` is a tool's name or `*`; `pattern`, a regex searched for (anchor it
        /// with `^`) in the tool's input as compact JSON (`{"command":"cargo build"}`);
        /// `decision` is `allow`, `deny` or `ask` (the person decides in the browser
        /// page). An `allow` with a pattern never allows a compound Bash command
        /// (`;`, `&&`, `|`, `&`, redirections, `$(…)`, backquotes, newlines).
        #[schemars(with = "Vec<serde_json::Value>", extend("x-allowed" = "rules `{tool, pattern?, decision}`"))]
        pub permissions: Vec<crate::orchestrator::permissions::RuleConfig> = Vec::new(),
        /// How long an `ask` waits for a decision in the page; then the request is
        /// denied (the task's activity entry says why).
        #[serde(rename = "approval_timeout_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 1_000, max = 3_600_000))]
        pub approval_timeout: Duration = ms(120_000),
    }
}

section! {
    /// `[automation]`
    pub struct AutomationSettings {
        /// The automation policy file, TOML, YAML or JSON
        /// ([automation.md](automation.md)); relative to the workspace; empty: none.
        #[schemars(extend("x-allowed" = "path"))]
        pub policy: String = String::new(),
    }
}

section! {
    /// `[checkpoint]`
    pub struct CheckpointSettings {
        /// Save sessions and restore them at start-up.
        pub enabled: bool = true,
        /// Save interval; the sessions are also saved within a second of changing (one
        /// connecting, leaving, ending) and on graceful shutdown.
        #[serde(rename = "interval_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 100, max = 3_600_000))]
        pub interval: Duration = ms(30_000),
        /// Older checkpoints are ignored at start-up.
        #[serde(rename = "max_age_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 1_000, max = 2_592_000_000u64))]
        pub max_age: Duration = ms(86_400_000),
    }
}

section! {
    /// `[ui]`
    pub struct UiSettings {
        /// Serve the browser page at `/ui/`; off: `/ui/` answers 404, `openDiff`
        /// without an editor is declined at once, `ask` rules deny, and diffs and
        /// approvals never wait for a browser.
        pub enabled: bool = true,
        /// A one-time sign-in link (`ide-bridge open`; the start-up message when the
        /// bridge runs at a terminal) works once and this long.
        #[serde(rename = "login_code_ttl_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 10_000, max = 3_600_000))]
        pub login_code_ttl: Duration = ms(300_000),
        /// A signed-in browser is signed out after this long without a request
        /// (signed-in browsers are kept across restarts in the state directory,
        /// `page-sessions.json`).
        #[serde(rename = "session_idle_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 60_000, max = 2_592_000_000u64))]
        pub session_idle: Duration = ms(43_200_000),
        /// Browsers signed in at once; a new sign-in signs out the least recently used.
        #[schemars(range(min = 1, max = 64))]
        pub max_browser_sessions: usize = 8,
        /// Pages with their live event stream open at once; one more gets 503.
        #[schemars(range(min = 1, max = 64))]
        pub max_streams: usize = 8,
        /// Diffs shown in the page keep waiting this long after the last page closed;
        /// then their agents get the "no editor" answer and ask in the terminal.
        #[serde(rename = "diff_wait_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 1_000, max = 3_600_000))]
        pub diff_wait: Duration = ms(30_000),
        /// Diffs waiting in the page at once; beyond, `openDiff` is declined.
        #[schemars(range(min = 1, max = 1_000))]
        pub max_pending_diffs: usize = 32,
        /// Reviews kept in the page's history (oldest dropped); each keeps at most 4 MiB
        /// of the files it references (512 KiB per file).
        #[schemars(range(min = 1, max = 1_000))]
        pub max_reviews: usize = 20,
    }
}

section! {
    /// `[hooks]`
    pub struct HookSettings {
        /// Answer the Claude Code hooks `ide-bridge init` installs
        /// ([hooks.md](hooks.md)); off: every hook is answered with nothing (the CLI
        /// carries on as if none ran) and counted in `/status` `hooks.ignored.disabled`.
        pub enabled: bool = true,
        /// Largest hook input accepted; a larger one is refused (413) before it is read
        /// and counted as `tooLarge`. `ide-bridge hook` itself shortens inputs over 4
        /// MiB, replacing long strings (file contents, command output) by their length.
        #[schemars(range(min = 64 * KIB, max = 64 * MIB))]
        pub max_input_bytes: usize = 8 * MIB,
        /// Tell an agent, at its next tool call, that another agent changed a file it
        /// read since (natively or through the bridge); once per change. Off also keeps
        /// automation notices out of the hooks' context.
        pub notices: bool = true,
        /// How long a permission dialog of an interactive CLI also waits in an open page
        /// for the person; the terminal's dialog stays usable and the first answer wins.
        #[serde(rename = "approval_wait_ms", with = "millis")]
        #[schemars(with = "u64", range(min = 1_000, max = 3_600_000))]
        pub approval_wait: Duration = ms(600_000),
    }
}

section! {
    /// `[claims]`
    pub struct ClaimSettings {
        /// How long a claim lasts when `claimFiles` gives no `ttlMinutes`.
        #[schemars(range(min = 1), extend("x-allowed" = "1–`claims.max_ttl_minutes`"))]
        pub default_ttl_minutes: u64 = 30,
        /// The longest a claim lasts; a longer `ttlMinutes` is cut to it.
        #[schemars(range(min = 1, max = 10_080))]
        pub max_ttl_minutes: u64 = 480,
    }
}

impl ClaimSettings {
    /// How long a claim asked for `minutes` lasts: the default when not given, between
    /// one minute and `max_ttl_minutes`.
    pub fn ttl(&self, minutes: Option<u64>) -> Duration {
        let minutes = minutes
            .unwrap_or(self.default_ttl_minutes)
            .clamp(1, self.max_ttl_minutes);
        Duration::from_secs(minutes * 60)
    }
}

section! {
    /// `[state]`
    pub struct StateSettings {
        /// State directories (`<config dir>/ide-bridge/workspaces/<name>-<hash>/`, the
        /// config dir being `$CLAUDE_CONFIG_DIR`, else `~/.claude`) of workspaces no
        /// bridge served for this long are removed at start-up.
        #[schemars(range(min = 1, max = 36_500))]
        pub prune_after_days: u64 = 30,
    }
}
