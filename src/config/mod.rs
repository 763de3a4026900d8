//! Configuration: built-in defaults < `config/default.toml` (embedded) < `--config FILE`
//! < `IDE_BRIDGE_*` environment < command-line flags. Unknown keys and out-of-range
//! values stop start-up with a message naming the key and the allowed range.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use config::{Config, Environment, File, FileFormat};
use serde::{Deserialize, Serialize};

use crate::diagnostics::linters::{self, Linter};

/// The shipped defaults, embedded so the binary works from any directory.
pub const DEFAULT_TOML: &str = include_str!("../config/default.toml");

/// Keys whose value is a list: comma-separated in the environment and in `--set`.
const LIST_KEYS: [&str; 6] = [
    "server.allowed_origins",
    "commands.allow",
    "commands.network",
    "diagnostics.linters",
    "tools.expose.include",
    "tools.expose.exclude",
];

/// Prefix of environment overrides, e.g. `IDE_BRIDGE_SESSIONS__MAX_SESSIONS=3`.
pub const ENV_PREFIX: &str = "IDE_BRIDGE";

/// Why configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A source could not be read or a key is unknown / mistyped.
    #[error("configuration error: {error}{origin}")]
    Load {
        error: config::ConfigError,
        /// `, from …` when the key at fault is known: where its value came from.
        origin: String,
    },
    /// A value is outside its allowed range.
    #[error("invalid configuration: `{key}` = {value} (allowed: {allowed}){origin}")]
    Invalid {
        /// Dotted key, e.g. `sessions.max_sessions`.
        key: &'static str,
        /// The offending value.
        value: String,
        /// What is allowed.
        allowed: String,
        /// `, from …`: where the value came from (filled in by [`Settings::load`]).
        origin: String,
    },
}

impl From<config::ConfigError> for ConfigError {
    fn from(error: config::ConfigError) -> Self {
        ConfigError::Load {
            error,
            origin: String::new(),
        }
    }
}

/// Where the value of `key` came from, as an error says it: `, from <the layer>`.
fn origin_of(key: &str, overrides: &Overrides) -> String {
    if overrides.values.iter().any(|(k, _)| k == key) {
        return ", from the command line (a flag or --set)".into();
    }
    let env = format!(
        "{ENV_PREFIX}_{}",
        key.to_ascii_uppercase().replace('.', "__")
    );
    if std::env::var_os(&env).is_some() {
        return format!(", from the environment variable {env}");
    }
    if let Some(file) = &overrides.config_file {
        let in_file = Config::builder()
            .add_source(File::from(file.as_path()).required(false))
            .build()
            .is_ok_and(|c| c.get::<serde_json::Value>(key).is_ok());
        if in_file {
            return format!(", from {}", file.display());
        }
    }
    String::new()
}

/// The key a `config` crate error names (between backticks), if any.
fn key_in(error: &config::ConfigError) -> Option<String> {
    let text = error.to_string();
    let start = text.find('`')? + 1;
    let end = start + text[start..].find('`')?;
    Some(text[start..end].to_string())
}

/// All settings of a bridge instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Workspace root; unset means the current directory.
    pub workspace: Option<PathBuf>,
    /// Name shown by the CLI's `/ide` list.
    pub ide_name: String,
    /// Listening socket and WebSocket framing.
    pub server: ServerSettings,
    /// Agent sessions.
    pub sessions: SessionSettings,
    /// Tool execution limits.
    pub tools: ToolSettings,
    /// Per-connection rate limits.
    pub rate_limit: RateLimitSettings,
    /// Logging.
    pub log: LogSettings,
    /// Activity log.
    pub activity: ActivitySettings,
    /// Workspace file tools.
    pub files: FileSettings,
    /// `runCommand` / `runInTerminal`.
    pub commands: CommandSettings,
    /// Git tools.
    pub git: GitSettings,
    /// Diagnostics without an editor.
    pub diagnostics: DiagnosticsSettings,
    /// The workspace watcher.
    pub watch: WatchSettings,
    /// Session checkpoints.
    pub checkpoint: CheckpointSettings,
    /// The editor extension connection.
    pub editor: EditorSettings,
    /// Claude tasks.
    pub orchestrator: OrchestratorSettings,
    /// Automation policies.
    pub automation: AutomationSettings,
    /// Durable per-workspace state.
    pub state: StateSettings,
    /// The browser page.
    pub ui: UiSettings,
    /// Claude Code's hooks: what the bridge sees of agents' own tools.
    pub hooks: HookSettings,
    /// File claims.
    pub claims: ClaimSettings,
}

/// `[hooks]`: the hooks `ide-bridge init` installs in Claude Code, through which the
/// bridge sees and coordinates the CLI's own tools (docs/hooks.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HookSettings {
    /// Answer hooks; off: every hook is answered with nothing (the CLI carries on as
    /// if none ran) and counted as ignored.
    pub enabled: bool,
    /// Largest hook input accepted, in bytes (`ide-bridge hook` shortens inputs over
    /// 4 MiB by replacing long strings with their length).
    pub max_input_bytes: usize,
    /// Tell an agent, at its next tool call, that another agent changed a file it read.
    pub notices: bool,
    /// How long a permission dialog waits in an open page for the person (the
    /// terminal's dialog stays usable meanwhile; then the terminal alone asks).
    #[serde(rename = "approval_wait_ms", with = "millis")]
    pub approval_wait: Duration,
}

impl Default for HookSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            max_input_bytes: 8 * 1024 * 1024,
            notices: true,
            approval_wait: Duration::from_millis(600_000),
        }
    }
}

/// `[claims]`: files an agent or the person claims; other agents' writes to them are
/// refused with the holder's reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClaimSettings {
    /// How long a claim lasts when `claimFiles` gives no `ttlMinutes`.
    pub default_ttl_minutes: u64,
    /// The longest claim (a longer `ttlMinutes` is cut to it).
    pub max_ttl_minutes: u64,
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

impl Default for ClaimSettings {
    fn default() -> Self {
        Self {
            default_ttl_minutes: 30,
            max_ttl_minutes: 480,
        }
    }
}

/// `[ui]`: the browser page served at `/ui/`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UiSettings {
    /// Serve the page; off: `/ui/` answers 404 and diffs and approvals never wait
    /// for a browser.
    pub enabled: bool,
    /// A one-time sign-in link works this long.
    #[serde(rename = "login_code_ttl_ms", with = "millis")]
    pub login_code_ttl: Duration,
    /// A signed-in browser is signed out after this long without a request.
    #[serde(rename = "session_idle_ms", with = "millis")]
    pub session_idle: Duration,
    /// Browsers signed in at once; a new one signs out the least recently used.
    pub max_browser_sessions: usize,
    /// Pages with their live event stream open at once.
    pub max_streams: usize,
    /// How long diffs shown in the page keep waiting after the last page closed
    /// (then their agents ask in the terminal).
    #[serde(rename = "diff_wait_ms", with = "millis")]
    pub diff_wait: Duration,
    /// Diffs waiting in the page at once.
    pub max_pending_diffs: usize,
    /// Reviews kept in the page's history (each keeps at most 4 MiB of the files it
    /// references).
    pub max_reviews: usize,
}

impl Default for UiSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            login_code_ttl: Duration::from_millis(300_000),
            session_idle: Duration::from_millis(43_200_000),
            max_browser_sessions: 8,
            max_streams: 8,
            diff_wait: Duration::from_millis(30_000),
            max_pending_diffs: 32,
            max_reviews: 20,
        }
    }
}

/// `[automation]`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AutomationSettings {
    /// The policy file (TOML, YAML or JSON); relative paths are taken from the
    /// workspace root. Empty: no automation.
    pub policy: String,
}

/// `[server]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerSettings {
    /// Bind address; loopback unless you know why not.
    #[serde(deserialize_with = "ip_address")]
    pub bind: IpAddr,
    /// Port; 0 lets the OS choose.
    pub port: u16,
    /// HTTP worker threads.
    pub workers: usize,
    /// Largest WebSocket message accepted, in bytes.
    pub max_message_bytes: usize,
    /// Most bytes queued for one connection whose peer is not reading; past it the
    /// connection is dropped.
    pub max_outbound_bytes: usize,
    /// Interval between server pings.
    #[serde(rename = "ping_interval_ms", with = "millis")]
    pub ping_interval: Duration,
    /// A connection silent for this long is closed.
    #[serde(rename = "pong_timeout_ms", with = "millis")]
    pub pong_timeout: Duration,
    /// `Origin` values accepted (browsers always send one): a browser-based MCP client
    /// served from one of them may use `/mcp` (with CORS); every other `Origin` is 403.
    pub allowed_origins: Vec<String>,
    /// Started on demand (by `ide-bridge mcp` or an editor plugin, `--on-demand`): the
    /// bridge stops by itself after `idle_stop_ms` with no agent, editor, page or task.
    pub on_demand: bool,
    /// How long an on-demand bridge waits unused before it stops (0: never).
    #[serde(rename = "idle_stop_ms", with = "millis")]
    pub idle_stop: Duration,
    /// Least time between two accepted connections; sooner ones are held until then.
    #[serde(rename = "min_connect_interval_ms", with = "millis")]
    pub min_connect_interval: Duration,
    /// Longest a connection is held for its slot; a burst longer than that gets 429.
    #[serde(rename = "max_connect_wait_ms", with = "millis")]
    pub max_connect_wait: Duration,
}

/// `[sessions]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SessionSettings {
    /// Maximum agent sessions (connected or in grace).
    pub max_sessions: usize,
    /// How long a disconnected agent's session waits for it to reconnect.
    #[serde(rename = "grace_period_ms", with = "millis")]
    pub grace_period: Duration,
}

/// `[tools]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ToolSettings {
    /// Default per-call timeout.
    #[serde(rename = "timeout_ms", with = "millis")]
    pub timeout: Duration,
    /// Events that change the tool set within this time make one
    /// `notifications/tools/list_changed` (an editor connecting is announced at once).
    #[serde(rename = "list_changed_debounce_ms", with = "millis")]
    pub list_changed_debounce: Duration,
    /// Concurrent tool calls allowed per session.
    pub max_concurrent_per_session: usize,
    /// Largest `arguments` object accepted, in bytes of JSON as sent.
    pub max_argument_bytes: usize,
    /// Which tools model-facing connections (`ide-bridge mcp`, `/mcp`) list and may call.
    pub expose: ExposeSettings,
}

/// `[tools.expose]`: tool groups or names, `*` for all. A tool is exposed when
/// `include` names it (or its group) and `exclude` does not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExposeSettings {
    /// Groups or tool names to expose.
    pub include: Vec<String>,
    /// Groups or tool names to hide, applied after `include`.
    pub exclude: Vec<String>,
}

impl Default for ExposeSettings {
    fn default() -> Self {
        Self {
            include: vec!["*".into()],
            exclude: Vec::new(),
        }
    }
}

/// `[state]`: durable per-workspace state (token, activity log, checkpoint, tasks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StateSettings {
    /// State of a workspace no bridge served for this many days is removed at start-up.
    pub prune_after_days: u64,
}

impl Default for StateSettings {
    fn default() -> Self {
        Self {
            prune_after_days: 30,
        }
    }
}

/// `[rate_limit]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RateLimitSettings {
    /// Requests allowed per window and connection; more get -32004.
    pub requests: usize,
    /// Notifications allowed per window and connection; more are dropped and logged.
    pub notifications: usize,
    /// Sliding window length.
    #[serde(rename = "window_ms", with = "millis")]
    pub window: Duration,
}

/// `[log]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogSettings {
    /// How much is logged (`RUST_LOG` wins when set).
    pub level: LogLevel,
    /// How each line is written.
    pub format: LogFormat,
}

/// `[files]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FileSettings {
    /// Most bytes `readFile` returns in one call (a marker says where to go on).
    pub max_read_bytes: usize,
    /// Most matches `searchWorkspace` and `findFiles` return.
    pub max_results: usize,
    /// Most entries `getFileTree` returns.
    pub max_tree_entries: usize,
}

impl Default for FileSettings {
    fn default() -> Self {
        Self {
            max_read_bytes: 256 * 1024,
            max_results: 500,
            max_tree_entries: 2000,
        }
    }
}

/// `[commands]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CommandSettings {
    /// Programs `runCommand` may run (shells and interpreters are refused regardless).
    pub allow: Vec<String>,
    /// Kill a command after this long.
    #[serde(rename = "timeout_ms", with = "millis")]
    pub timeout: Duration,
    /// Bytes of stdout and of stderr kept per command.
    pub max_output_bytes: usize,
    /// Most arguments per command.
    pub max_args: usize,
    /// Longest argument in bytes.
    pub max_arg_bytes: usize,
    /// Where the kernel has no Landlock, run commands anyway, unconfined (they may run
    /// code the agent wrote: `npm run`, build scripts, tests). Off: they are refused.
    pub run_unsandboxed: bool,
    /// Programs whose commands may open TCP connections and listen (`npm` for `npm
    /// install`, `cargo` for fetching crates); every other command is denied TCP.
    pub network: Vec<String>,
}

impl Default for CommandSettings {
    fn default() -> Self {
        Self {
            allow: [
                "git", "cargo", "npm", "go", "pytest", "tsc", "eslint", "biome", "ruff",
            ]
            .map(String::from)
            .to_vec(),
            timeout: Duration::from_millis(30_000),
            max_output_bytes: 64 * 1024,
            max_args: 64,
            max_arg_bytes: 4096,
            run_unsandboxed: false,
            network: Vec::new(),
        }
    }
}

/// `[git]`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GitSettings {
    /// `gitPush` is refused unless this is true.
    pub allow_push: bool,
    /// Pushing to `main` or `master` also needs this.
    pub allow_push_to_protected: bool,
}

/// `[diagnostics]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DiagnosticsSettings {
    /// Linters that may run when they exist and apply to the workspace.
    pub linters: Vec<Linter>,
    /// Per-linter timeout.
    #[serde(rename = "timeout_ms", with = "millis")]
    pub timeout: Duration,
    /// How long a linter result is reused.
    #[serde(rename = "cache_ms", with = "millis")]
    pub cache_for: Duration,
    /// Re-run the linters when workspace files change, so diagnostics-change events
    /// (automation hooks, `watchDiagnostics`) exist without an editor.
    pub live: bool,
    /// Quiet time after the last change before the linters re-run.
    #[serde(rename = "rerun_debounce_ms", with = "millis")]
    pub rerun_debounce: Duration,
}

impl Default for DiagnosticsSettings {
    fn default() -> Self {
        Self {
            linters: linters::ALL.to_vec(),
            timeout: Duration::from_millis(50_000),
            cache_for: Duration::from_millis(5_000),
            live: true,
            rerun_debounce: Duration::from_millis(500),
        }
    }
}

/// How the workspace is watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WatchMode {
    /// Kernel events (inotify), falling back to polling when the tree cannot be covered.
    Auto,
    /// Poll the files that matter, never kernel events.
    Poll,
    /// No watching: no file-change events, no live diagnostics without an editor.
    Off,
}

/// `[watch]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WatchSettings {
    /// Kernel events, polling, or off.
    pub mode: WatchMode,
    /// Changes to one path within this window are reported once.
    #[serde(rename = "debounce_ms", with = "millis")]
    pub debounce: Duration,
    /// How often polling looks at the files.
    #[serde(rename = "poll_interval_ms", with = "millis")]
    pub poll_interval: Duration,
    /// Directories watched with kernel events at most; beyond, the watcher polls.
    pub max_directories: usize,
    /// Files polling looks at, at most.
    pub max_polled_files: usize,
    /// Paths listed in one change batch at most (the rest are counted).
    pub max_batch: usize,
}

impl Default for WatchSettings {
    fn default() -> Self {
        Self {
            mode: WatchMode::Auto,
            debounce: Duration::from_millis(200),
            poll_interval: Duration::from_millis(2_000),
            max_directories: 20_000,
            max_polled_files: 50_000,
            max_batch: 1_000,
        }
    }
}

/// `[activity]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ActivitySettings {
    /// Entries kept in memory per kind (tool calls, lifecycle).
    pub max_entries: usize,
    /// Persist to `<config dir>/ide/activity-<port>.jsonl` and reload at start-up.
    pub persist: bool,
    /// Buffered entries are handed to the writer thread at least this often.
    #[serde(rename = "flush_ms", with = "millis")]
    pub flush_every: Duration,
    /// Rotate the JSONL file beyond this size.
    pub max_file_bytes: u64,
    /// Concurrent `/activity/stream` subscribers.
    pub max_stream_subscribers: usize,
}

/// `[editor]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EditorSettings {
    /// Per-request timeout for `extension/*` requests (openDiff waits for the user).
    #[serde(rename = "request_timeout_ms", with = "millis")]
    pub request_timeout: Duration,
}

impl Default for EditorSettings {
    fn default() -> Self {
        Self {
            request_timeout: Duration::from_millis(10_000),
        }
    }
}

/// `[orchestrator]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OrchestratorSettings {
    /// The Claude executable (name on PATH or path).
    pub claude_binary: String,
    /// Tasks running at once.
    pub max_concurrent: usize,
    /// Tasks waiting.
    pub max_queue: usize,
    /// Finished tasks kept.
    pub max_history: usize,
    /// Permission rules for tasks, first match wins, default deny.
    pub permissions: Vec<crate::orchestrator::permissions::RuleConfig>,
    /// How long a tool request a rule sends to the person (`ask`) waits for a
    /// decision in the browser page before it is denied.
    #[serde(rename = "approval_timeout_ms", with = "millis")]
    pub approval_timeout: Duration,
}

impl Default for OrchestratorSettings {
    fn default() -> Self {
        Self {
            claude_binary: "claude".into(),
            max_concurrent: 10,
            max_queue: 20,
            max_history: 500,
            permissions: Vec::new(),
            approval_timeout: Duration::from_millis(120_000),
        }
    }
}

/// `[checkpoint]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CheckpointSettings {
    /// Write checkpoints and restore sessions from them.
    pub enabled: bool,
    /// Write a checkpoint this often (and on graceful shutdown).
    #[serde(rename = "interval_ms", with = "millis")]
    pub interval: Duration,
    /// Ignore checkpoints older than this at start-up.
    #[serde(rename = "max_age_ms", with = "millis")]
    pub max_age: Duration,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            interval: Duration::from_millis(30_000),
            max_age: Duration::from_millis(86_400_000),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            workspace: None,
            ide_name: "ide-bridge".into(),
            server: ServerSettings::default(),
            sessions: SessionSettings::default(),
            tools: ToolSettings::default(),
            rate_limit: RateLimitSettings::default(),
            log: LogSettings::default(),
            activity: ActivitySettings::default(),
            files: FileSettings::default(),
            commands: CommandSettings::default(),
            git: GitSettings::default(),
            diagnostics: DiagnosticsSettings::default(),
            watch: WatchSettings::default(),
            checkpoint: CheckpointSettings::default(),
            editor: EditorSettings::default(),
            orchestrator: OrchestratorSettings::default(),
            automation: AutomationSettings::default(),
            state: StateSettings::default(),
            ui: UiSettings::default(),
            hooks: HookSettings::default(),
            claims: ClaimSettings::default(),
        }
    }
}

impl Default for ServerSettings {
    fn default() -> Self {
        Self {
            bind: IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
            port: 0,
            workers: 1,
            max_message_bytes: 16 * 1024 * 1024,
            max_outbound_bytes: 8 * 1024 * 1024,
            ping_interval: Duration::from_millis(30_000),
            pong_timeout: Duration::from_millis(90_000),
            allowed_origins: Vec::new(),
            on_demand: false,
            idle_stop: Duration::from_millis(1_800_000),
            min_connect_interval: Duration::from_millis(50),
            max_connect_wait: Duration::from_millis(2_000),
        }
    }
}

impl Default for SessionSettings {
    fn default() -> Self {
        Self {
            max_sessions: 5,
            grace_period: Duration::from_millis(120_000),
        }
    }
}

impl Default for ToolSettings {
    fn default() -> Self {
        Self {
            timeout: Duration::from_millis(60_000),
            list_changed_debounce: Duration::from_millis(2_000),
            max_concurrent_per_session: 10,
            max_argument_bytes: 1024 * 1024,
            expose: ExposeSettings::default(),
        }
    }
}

impl Default for RateLimitSettings {
    fn default() -> Self {
        Self {
            requests: 200,
            notifications: 500,
            window: Duration::from_millis(60_000),
        }
    }
}

impl Default for LogSettings {
    fn default() -> Self {
        Self {
            level: LogLevel::Info,
            format: LogFormat::Text,
        }
    }
}

impl Default for ActivitySettings {
    fn default() -> Self {
        Self {
            max_entries: 500,
            persist: true,
            flush_every: Duration::from_millis(200),
            max_file_bytes: 10 * 1024 * 1024,
            max_stream_subscribers: 8,
        }
    }
}

/// Overrides coming from the command line, applied last.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    /// `--config FILE`.
    pub config_file: Option<PathBuf>,
    /// `(dotted key, value)` pairs from flags and `--set`.
    pub values: Vec<(String, String)>,
}

impl Settings {
    /// Loads and validates the layered configuration.
    pub fn load(overrides: &Overrides) -> Result<Self, ConfigError> {
        let mut builder =
            Config::builder().add_source(File::from_str(DEFAULT_TOML, FileFormat::Toml));
        if let Some(path) = &overrides.config_file {
            builder = builder.add_source(File::from(path.as_path()).required(true));
        }
        let mut environment = Environment::with_prefix(ENV_PREFIX)
            .prefix_separator("_")
            .separator("__")
            .try_parsing(true)
            .list_separator(",");
        for key in LIST_KEYS {
            environment = environment.with_list_parse_key(key);
        }
        builder = builder.add_source(environment);
        for (key, value) in &overrides.values {
            builder = if LIST_KEYS.contains(&key.as_str()) {
                // `--set commands.allow=git,cargo`, as in the environment.
                let items: Vec<&str> = value
                    .split(',')
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .collect();
                builder.set_override(key.as_str(), items)?
            } else {
                builder.set_override(key.as_str(), value.as_str())?
            };
        }
        let with_origin = |e: ConfigError| match e {
            ConfigError::Load { error, .. } => {
                let origin = key_in(&error)
                    .map(|k| origin_of(&k, overrides))
                    .unwrap_or_default();
                ConfigError::Load { error, origin }
            }
            ConfigError::Invalid {
                key,
                value,
                allowed,
                ..
            } => ConfigError::Invalid {
                origin: origin_of(key, overrides),
                key,
                value,
                allowed,
            },
        };
        let settings: Settings = builder
            .build()
            .and_then(|b| b.try_deserialize())
            .map_err(|e| with_origin(ConfigError::from(e)))?;
        settings.validate().map_err(with_origin)?;
        Ok(settings)
    }

    /// Checks every range; the error names the key and what is allowed.
    pub fn validate(&self) -> Result<(), ConfigError> {
        const MIB: usize = 1024 * 1024;
        let s = &self.server;
        range("server.workers", s.workers, 1, 64)?;
        range_ms(
            "server.min_connect_interval_ms",
            s.min_connect_interval,
            0,
            10_000,
        )?;
        range_ms("server.max_connect_wait_ms", s.max_connect_wait, 0, 60_000)?;
        range_ms("server.idle_stop_ms", s.idle_stop, 0, 7 * 86_400_000)?;
        for origin in &s.allowed_origins {
            if !is_origin(origin) {
                return Err(invalid(
                    "server.allowed_origins",
                    format!("{origin:?}"),
                    "origins as browsers and apps send them: scheme://host[:port] \
                     (http://localhost:6274, vscode-file://vscode-app), no path, no wildcard",
                ));
            }
        }
        range(
            "state.prune_after_days",
            self.state.prune_after_days,
            1,
            36_500,
        )?;
        range(
            "server.max_message_bytes",
            s.max_message_bytes,
            2 * MIB,
            256 * MIB,
        )?;
        range(
            "server.max_outbound_bytes",
            s.max_outbound_bytes,
            MIB,
            1024 * MIB,
        )?;
        range_ms("server.ping_interval_ms", s.ping_interval, 1_000, 600_000)?;
        range_ms(
            "server.pong_timeout_ms",
            s.pong_timeout,
            millis_of(s.ping_interval),
            3_600_000,
        )?;
        range("sessions.max_sessions", self.sessions.max_sessions, 1, 100)?;
        range_ms(
            "sessions.grace_period_ms",
            self.sessions.grace_period,
            0,
            86_400_000,
        )?;
        range_ms("tools.timeout_ms", self.tools.timeout, 100, 3_600_000)?;
        range_ms(
            "tools.list_changed_debounce_ms",
            self.tools.list_changed_debounce,
            10,
            60_000,
        )?;
        range(
            "tools.max_concurrent_per_session",
            self.tools.max_concurrent_per_session,
            1,
            1_000,
        )?;
        range(
            "tools.max_argument_bytes",
            self.tools.max_argument_bytes,
            1024,
            s.max_message_bytes / 2,
        )?;
        range("rate_limit.requests", self.rate_limit.requests, 1, 100_000)?;
        range(
            "rate_limit.notifications",
            self.rate_limit.notifications,
            1,
            100_000,
        )?;
        range_ms(
            "rate_limit.window_ms",
            self.rate_limit.window,
            1_000,
            3_600_000,
        )?;
        self.validate_sections()?;
        if self.ide_name.trim().is_empty() || self.ide_name.len() > 100 {
            return Err(invalid("ide_name", &self.ide_name, "1 to 100 characters"));
        }
        Ok(())
    }

    /// Ranges of the sections beyond the core server settings.
    fn validate_sections(&self) -> Result<(), ConfigError> {
        const MIB: usize = 1024 * 1024;
        let a = &self.activity;
        range("activity.max_entries", a.max_entries, 10, 100_000)?;
        range_ms("activity.flush_ms", a.flush_every, 10, 10_000)?;
        range(
            "activity.max_file_bytes",
            a.max_file_bytes,
            64 * 1024,
            1 << 30,
        )?;
        range(
            "activity.max_stream_subscribers",
            a.max_stream_subscribers,
            1,
            64,
        )?;
        let f = &self.files;
        range("files.max_read_bytes", f.max_read_bytes, 1024, 16 * MIB)?;
        range("files.max_results", f.max_results, 1, 100_000)?;
        range("files.max_tree_entries", f.max_tree_entries, 1, 100_000)?;
        let c = &self.commands;
        range_ms("commands.timeout_ms", c.timeout, 100, 600_000)?;
        range(
            "commands.max_output_bytes",
            c.max_output_bytes,
            1024,
            16 * MIB,
        )?;
        range("commands.max_args", c.max_args, 1, 1024)?;
        range("commands.max_arg_bytes", c.max_arg_bytes, 16, MIB)?;
        let d = &self.diagnostics;
        range_ms("diagnostics.timeout_ms", d.timeout, 1_000, 600_000)?;
        range_ms("diagnostics.cache_ms", d.cache_for, 0, 600_000)?;
        range_ms(
            "diagnostics.rerun_debounce_ms",
            d.rerun_debounce,
            50,
            60_000,
        )?;
        let w = &self.watch;
        range_ms("watch.debounce_ms", w.debounce, 10, 10_000)?;
        range_ms("watch.poll_interval_ms", w.poll_interval, 100, 600_000)?;
        range("watch.max_directories", w.max_directories, 1, 1_000_000)?;
        range("watch.max_polled_files", w.max_polled_files, 1, 1_000_000)?;
        range("watch.max_batch", w.max_batch, 1, 100_000)?;
        range_ms(
            "editor.request_timeout_ms",
            self.editor.request_timeout,
            100,
            600_000,
        )?;
        let cp = &self.checkpoint;
        range_ms("checkpoint.interval_ms", cp.interval, 100, 3_600_000)?;
        range_ms("checkpoint.max_age_ms", cp.max_age, 1_000, 30 * 86_400_000)?;
        let o = &self.orchestrator;
        range("orchestrator.max_concurrent", o.max_concurrent, 1, 10)?;
        range("orchestrator.max_queue", o.max_queue, 0, 20)?;
        range("orchestrator.max_history", o.max_history, 1, 500)?;
        range_ms(
            "orchestrator.approval_timeout_ms",
            o.approval_timeout,
            1_000,
            3_600_000,
        )?;
        let u = &self.ui;
        range_ms("ui.login_code_ttl_ms", u.login_code_ttl, 10_000, 3_600_000)?;
        range_ms(
            "ui.session_idle_ms",
            u.session_idle,
            60_000,
            30 * 86_400_000,
        )?;
        range("ui.max_browser_sessions", u.max_browser_sessions, 1, 64)?;
        range("ui.max_streams", u.max_streams, 1, 64)?;
        range_ms("ui.diff_wait_ms", u.diff_wait, 1_000, 3_600_000)?;
        range("ui.max_pending_diffs", u.max_pending_diffs, 1, 1_000)?;
        range("ui.max_reviews", u.max_reviews, 1, 1_000)?;
        let h = &self.hooks;
        range(
            "hooks.max_input_bytes",
            h.max_input_bytes,
            64 * 1024,
            64 * MIB,
        )?;
        range_ms("hooks.approval_wait_ms", h.approval_wait, 1_000, 3_600_000)?;
        let c = &self.claims;
        range("claims.max_ttl_minutes", c.max_ttl_minutes, 1, 10_080)?;
        range(
            "claims.default_ttl_minutes",
            c.default_ttl_minutes,
            1,
            c.max_ttl_minutes,
        )?;
        if o.claude_binary.trim().is_empty() {
            return Err(invalid(
                "orchestrator.claude_binary",
                "\"\"",
                "a program name or path",
            ));
        }
        crate::orchestrator::permissions::Policy::compile(&o.permissions).map_err(|e| {
            ConfigError::Invalid {
                key: "orchestrator.permissions",
                value: e.to_string(),
                allowed: "{ tool, pattern?, decision = allow|deny|ask }".into(),
                origin: String::new(),
            }
        })?;
        Ok(())
    }

    /// True when the bind address is not a loopback address.
    pub fn binds_beyond_loopback(&self) -> bool {
        !self.server.bind.is_loopback()
    }

    /// The command policy from `[commands]`.
    pub fn command_policy(&self) -> crate::exec::CommandPolicy {
        crate::exec::CommandPolicy {
            allow: self.commands.allow.clone(),
            max_args: self.commands.max_args,
            max_arg_bytes: self.commands.max_arg_bytes,
        }
    }

    /// How long a disconnected agent's session waits (`sessions.grace_period_ms`).
    pub fn grace_period(&self) -> Duration {
        self.sessions.grace_period
    }

    /// The default tool timeout (`tools.timeout_ms`).
    pub fn tool_timeout(&self) -> Duration {
        self.tools.timeout
    }
}

fn invalid(key: &'static str, value: impl std::fmt::Display, allowed: &str) -> ConfigError {
    ConfigError::Invalid {
        key,
        value: value.to_string(),
        allowed: allowed.to_string(),
        origin: String::new(),
    }
}

fn range<T>(key: &'static str, value: T, min: T, max: T) -> Result<(), ConfigError>
where
    T: PartialOrd + std::fmt::Display + Copy,
{
    if value < min || value > max {
        return Err(invalid(key, value, &format!("{min}..={max}")));
    }
    Ok(())
}

/// [`range`] for a duration configured in milliseconds.
fn range_ms(key: &'static str, value: Duration, min: u64, max: u64) -> Result<(), ConfigError> {
    range(key, millis_of(value), min, max)
}

/// Whole milliseconds of `d`, saturating.
fn millis_of(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// (De)serializes a [`Duration`] as whole milliseconds, the unit of every `*_ms` key.
mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(super::millis_of(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

/// Reads `server.bind`; the error says what is allowed (the loader adds the key).
fn ip_address<'de, D: serde::Deserializer<'de>>(d: D) -> Result<IpAddr, D::Error> {
    let text = String::deserialize(d)?;
    text.parse().map_err(|_| {
        serde::de::Error::custom(format!(
            "{text:?} is not an IP address (allowed: an IP address such as 127.0.0.1)"
        ))
    })
}

/// A name from a closed list that is not on it; the loader adds the key.
#[derive(Debug, thiserror::Error)]
#[error("{value:?} is not allowed (allowed: {allowed})")]
pub struct UnknownName {
    /// What was configured.
    pub value: String,
    /// The names accepted, comma-separated.
    pub allowed: &'static str,
}

/// `log.level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum LogLevel {
    /// Everything, including per-frame detail.
    Trace,
    /// Diagnostic detail.
    Debug,
    /// Start-up, connections and decisions.
    Info,
    /// Only what needs attention.
    Warn,
    /// Only failures.
    Error,
}

impl LogLevel {
    /// The name used in configuration and in `tracing` filters.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Trace => "trace",
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error => "error",
        }
    }
}

impl TryFrom<String> for LogLevel {
    type Error = UnknownName;
    fn try_from(value: String) -> Result<Self, UnknownName> {
        [
            LogLevel::Trace,
            LogLevel::Debug,
            LogLevel::Info,
            LogLevel::Warn,
            LogLevel::Error,
        ]
        .into_iter()
        .find(|l| l.as_str() == value)
        .ok_or(UnknownName {
            value,
            allowed: "trace, debug, info, warn, error",
        })
    }
}

/// `log.format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

impl TryFrom<String> for LogFormat {
    type Error = UnknownName;
    fn try_from(value: String) -> Result<Self, UnknownName> {
        match value.as_str() {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            _ => Err(UnknownName {
                value,
                allowed: "text, json",
            }),
        }
    }
}

/// An `Origin` header's shape: `scheme://host[:port]` (any scheme: Electron apps send
/// `vscode-file://vscode-app`), with no path, query, user or wildcard.
fn is_origin(origin: &str) -> bool {
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    scheme_ok
        && !rest.is_empty()
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | ':' | '[' | ']' | '_'))
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_scheme_host_and_port_only() {
        for ok in [
            "http://localhost:6274",
            "https://app.example",
            "vscode-file://vscode-app",
            "http://[::1]:8080",
        ] {
            assert!(is_origin(ok), "{ok}");
        }
        for bad in [
            "*",
            "localhost:6274",
            "http://",
            "http://a/b",
            "http://*.example",
            "http://u@h",
            "1x://h",
            "null",
        ] {
            assert!(!is_origin(bad), "{bad}");
        }
    }

    fn with(values: &[(&str, &str)]) -> Result<Settings, ConfigError> {
        Settings::load(&Overrides {
            config_file: None,
            values: values
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        })
    }

    fn from_file(toml: &str) -> Result<Settings, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bridge.toml");
        std::fs::write(&path, toml).unwrap();
        Settings::load(&Overrides {
            config_file: Some(path),
            values: Vec::new(),
        })
    }

    #[test]
    fn values_are_typed_once_at_load() {
        let s = with(&[
            ("server.bind", "::1"),
            ("log.level", "debug"),
            ("log.format", "json"),
            ("tools.list_changed_debounce_ms", "150"),
            ("sessions.grace_period_ms", "2500"),
        ])
        .unwrap();
        assert_eq!(s.server.bind, IpAddr::V6(std::net::Ipv6Addr::LOCALHOST));
        assert!(!s.binds_beyond_loopback());
        assert_eq!(
            (s.log.level, s.log.format),
            (LogLevel::Debug, LogFormat::Json)
        );
        assert_eq!(s.tools.list_changed_debounce, Duration::from_millis(150));
        assert_eq!(s.grace_period(), Duration::from_millis(2500));
        let linters = from_file("[diagnostics]\nlinters = [\"ruff\", \"go\"]\n").unwrap();
        assert_eq!(linters.diagnostics.linters, vec![Linter::Ruff, Linter::Go]);
        // Shown as configured: names and milliseconds.
        let shown = serde_json::to_value(&s).unwrap();
        assert_eq!(shown["server"]["bind"], "::1");
        assert_eq!(shown["log"]["level"], "debug");
        assert_eq!(shown["sessions"]["grace_period_ms"], 2500);
        assert_eq!(shown["diagnostics"]["linters"][0], "cargo");
    }

    #[test]
    fn shipped_default_toml_matches_built_in_defaults() {
        let from_file: Settings = Config::builder()
            .add_source(File::from_str(DEFAULT_TOML, FileFormat::Toml))
            .build()
            .unwrap()
            .try_deserialize()
            .unwrap();
        assert_eq!(from_file, Settings::default());
    }

    #[test]
    fn overrides_apply_and_are_validated() {
        let s = with(&[("sessions.max_sessions", "3")]).unwrap();
        assert_eq!(s.sessions.max_sessions, 3);
        let err = with(&[("sessions.max_sessions", "0")])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("sessions.max_sessions") && err.contains("1..=100"),
            "{err}"
        );
        let err = with(&[("tools.timeout_ms", "99")]).unwrap_err().to_string();
        assert!(
            err.contains("tools.timeout_ms") && err.contains("100..="),
            "{err}"
        );
        // List keys take comma-separated values, as in the environment.
        let s = with(&[
            ("diagnostics.linters", "cargo, ruff"),
            ("commands.allow", "git"),
        ])
        .unwrap();
        assert_eq!(s.diagnostics.linters, vec![Linter::Cargo, Linter::Ruff]);
        assert_eq!(s.commands.allow, vec!["git".to_string()]);
        assert!(with(&[("commands.allow", "")])
            .unwrap()
            .commands
            .allow
            .is_empty());
    }

    #[test]
    fn every_section_is_range_checked() {
        for (key, bad) in [
            ("activity.flush_ms", "5"),
            ("activity.max_stream_subscribers", "0"),
            ("files.max_results", "0"),
            ("commands.timeout_ms", "999999999"),
            ("commands.max_args", "0"),
            ("diagnostics.timeout_ms", "10"),
            ("diagnostics.linters", "clippy"),
            ("editor.request_timeout_ms", "1"),
            ("checkpoint.interval_ms", "1"),
            ("orchestrator.max_concurrent", "11"),
            ("orchestrator.max_queue", "21"),
            ("orchestrator.max_history", "501"),
        ] {
            let result = if key == "diagnostics.linters" {
                // A list: given the way a file gives it.
                let (section, leaf) = key.split_once('.').unwrap();
                from_file(&format!("[{section}]\n{leaf} = [{bad:?}]\n"))
            } else {
                with(&[(key, bad)])
            };
            let err = result.expect_err(key).to_string();
            assert!(err.contains(key), "{key}: {err}");
        }
    }

    #[test]
    fn unknown_keys_are_named() {
        let err = with(&[("sessions.max_session", "3")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("max_session"), "{err}");
        let err = with(&[("bogus", "1")]).unwrap_err().to_string();
        assert!(err.contains("bogus"), "{err}");
    }

    #[test]
    fn every_key_is_documented() {
        let docs = include_str!("../docs/configuration.md");
        let value = serde_json::to_value(Settings::default()).unwrap();
        let mut keys = Vec::new();
        for (k, v) in value.as_object().unwrap() {
            match v.as_object() {
                Some(section) => keys.extend(section.keys().map(|s| format!("{k}.{s}"))),
                None => keys.push(k.clone()),
            }
        }
        for key in keys {
            assert!(
                docs.contains(&format!("`{key}`")),
                "docs/configuration.md lacks `{key}`"
            );
            let leaf = key.rsplit('.').next().unwrap();
            assert!(
                DEFAULT_TOML.contains(leaf),
                "config/default.toml lacks {key}"
            );
        }
    }

    #[test]
    fn bad_enumerations_list_what_is_allowed() {
        let err = with(&[("log.format", "xml")]).unwrap_err().to_string();
        assert!(
            err.contains("log.format") && err.contains("text, json"),
            "{err}"
        );
        let err = with(&[("server.bind", "localhost:80")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("server.bind"), "{err}");
        let err = with(&[("log.level", "loud")]).unwrap_err().to_string();
        assert!(
            err.contains("log.level") && err.contains("trace, debug, info, warn, error"),
            "{err}"
        );
        let err = from_file("[diagnostics]\nlinters = [\"clippy\"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("diagnostics.linters") && err.contains("cargo, tsc"),
            "{err}"
        );
    }
}
