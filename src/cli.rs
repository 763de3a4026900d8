//! Command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::Overrides;

/// ide-bridge: connects AI coding agents (Claude Code CLI) to your editor and workspace.
#[derive(Debug, Parser)]
#[command(
    name = "ide-bridge",
    version,
    about,
    long_about = "Connects AI coding agents (the Claude Code CLI and any MCP client) to your \
editor and workspace. Started in a project directory, it writes a lock file under \
$CLAUDE_CONFIG_DIR/ide/ (default ~/.claude/ide/) so that `claude --ide` in that project \
finds and connects to it.",
    after_help = "Configuration layers, later wins: built-in defaults < config/default.toml < \
--config FILE < IDE_BRIDGE_* environment (e.g. IDE_BRIDGE_SESSIONS__MAX_SESSIONS=3) < flags.\n\
Every option is listed in docs/configuration.md; `ide-bridge config` prints the effective values."
)]
pub struct Cli {
    /// What to do (default: run the bridge).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options for running (also read by `status` and `config`).
    #[command(flatten)]
    pub run: RunArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show what the running bridge for this workspace is doing.
    Status {
        /// Print the raw JSON from /status.
        #[arg(long)]
        json: bool,
    },
    /// Print the effective configuration (all layers applied) as JSON.
    Config,
}

/// Flags that override configuration.
#[derive(Debug, Default, Args)]
pub struct RunArgs {
    /// Workspace root served to agents [default: the current directory].
    #[arg(short, long, global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Configuration file (TOML or JSON) layered over the defaults.
    #[arg(short, long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1]. Non-loopback addresses are warned about.
    #[arg(long, global = true, value_name = "ADDR")]
    pub bind: Option<String>,
    /// Port to listen on; 0 lets the OS choose [default: 0].
    #[arg(short, long, global = true)]
    pub port: Option<u16>,
    /// Name shown in Claude Code's /ide list [default: ide-bridge].
    #[arg(long, global = true, value_name = "NAME")]
    pub ide_name: Option<String>,
    /// Maximum agent sessions, connected or in grace [default: 5].
    #[arg(long, global = true, value_name = "N")]
    pub max_sessions: Option<usize>,
    /// How long a disconnected agent's session waits for it, in ms [default: 120000].
    #[arg(long, global = true, value_name = "MS")]
    pub grace_period_ms: Option<u64>,
    /// Default tool-call timeout in ms [default: 60000].
    #[arg(long, global = true, value_name = "MS")]
    pub tool_timeout_ms: Option<u64>,
    /// Log level: trace, debug, info, warn, error [default: info].
    #[arg(long, global = true, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// Log format on stderr: text or json [default: text].
    #[arg(long, global = true, value_name = "FORMAT")]
    pub log_format: Option<String>,
    /// Automation policy file (TOML, YAML or JSON); see docs/automation.md.
    #[arg(long, global = true, value_name = "FILE")]
    pub automation_policy: Option<PathBuf>,
    /// Set any configuration key, e.g. --set rate_limit.requests=100 (repeatable).
    #[arg(long = "set", global = true, value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

impl RunArgs {
    /// The configuration overrides these flags express.
    pub fn overrides(&self) -> Result<Overrides, String> {
        let mut values: Vec<(String, String)> = Vec::new();
        for item in &self.set {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("--set expects KEY=VALUE, got {item:?}"))?;
            values.push((key.trim().to_string(), value.to_string()));
        }
        let mut put = |key: &str, value: Option<String>| {
            if let Some(v) = value {
                values.push((key.to_string(), v));
            }
        };
        put(
            "workspace",
            self.workspace.as_ref().map(|p| p.display().to_string()),
        );
        put("server.bind", self.bind.clone());
        put("server.port", self.port.map(|v| v.to_string()));
        put("ide_name", self.ide_name.clone());
        put(
            "sessions.max_sessions",
            self.max_sessions.map(|v| v.to_string()),
        );
        put(
            "sessions.grace_period_ms",
            self.grace_period_ms.map(|v| v.to_string()),
        );
        put(
            "tools.timeout_ms",
            self.tool_timeout_ms.map(|v| v.to_string()),
        );
        put(
            "automation.policy",
            self.automation_policy
                .as_ref()
                .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
                .map(|p| p.display().to_string()),
        );
        put("log.level", self.log_level.clone());
        put("log.format", self.log_format.clone());
        Ok(Overrides {
            config_file: self.config.clone(),
            values,
        })
    }
}
