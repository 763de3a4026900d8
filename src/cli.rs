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
    args_conflicts_with_subcommands = true,
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
    /// Options for running the bridge.
    #[command(flatten)]
    pub run: RunArgs,
    /// Replace this workspace's stored auth token with a new one (connected clients
    /// must then re-read the lock file). Running the bridge only: not a setting.
    #[arg(long)]
    pub rotate_token: bool,
}

/// The workspace a subcommand is about.
#[derive(Debug, Default, Args)]
pub struct WorkspaceArg {
    /// The workspace [default: the current directory].
    #[arg(short, long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show what the running bridge for this workspace is doing.
    Status {
        #[command(flatten)]
        workspace: WorkspaceArg,
        /// Print the raw JSON from /status.
        #[arg(long)]
        json: bool,
    },
    /// Open the bridge's browser page (agents, timeline, tasks, reviews, diffs and
    /// approvals) through a one-time sign-in link.
    #[command(
        long_about = "Ask the bridge serving this workspace for a one-time sign-in link to its \
browser page, print it, and open it in the system browser when there is one ($BROWSER, else \
xdg-open or open where a display is available). The link works once and for a short time \
(ui.login_code_ttl_ms); the browser then keeps an HttpOnly cookie for this bridge."
    )]
    Open {
        #[command(flatten)]
        workspace: WorkspaceArg,
        /// Only print the link.
        #[arg(long)]
        no_browser: bool,
    },
    /// Print the effective configuration (all layers applied) as JSON, after checking it
    /// as the bridge would at start-up.
    Config {
        #[command(flatten)]
        run: RunArgs,
    },
    /// Stop the bridge serving this workspace (SIGTERM to the pid in its lock file).
    Stop {
        #[command(flatten)]
        workspace: WorkspaceArg,
    },
    /// Serve MCP on stdin/stdout by relaying to the bridge for the working directory
    /// (what MCP clients run as a subprocess; `ide-bridge init` registers it).
    #[command(
        long_about = "Serve MCP on stdin/stdout (one JSON-RPC message per line) by relaying \
to the bridge that serves the working directory. MCP clients start this as a subprocess; \
`ide-bridge init` registers it with Claude Code. It survives bridge restarts (reconnects and \
replays the handshake). When no bridge serves the directory it starts one for the project \
(the nearest .git/.hg/.jj/.svn root, never the home directory or /), unless --no-start; a \
bridge started that way stops by itself once nothing has used it for server.idle_stop_ms. \
When the client closes stdin it exits once every request read before is answered (at most \
tools.timeout_ms later: what is still unanswered then gets an error; at once when nobody reads \
its stdout any more), so `printf '...' | ide-bridge mcp` prints its answers."
    )]
    Mcp {
        #[command(flatten)]
        workspace: WorkspaceArg,
        /// Configuration file for a bridge this relay starts (and for the relay's log).
        #[arg(short, long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// The relay's log level on stderr: trace, debug, info, warn, error [default: info].
        #[arg(long, value_name = "LEVEL")]
        log_level: Option<String>,
        /// Do not start a bridge; wait for one to appear.
        #[arg(long)]
        no_start: bool,
    },
    /// Register `ide-bridge mcp` with Claude Code as a user-scope MCP server, so that
    /// the model sees every bridge tool.
    #[command(
        long_about = "Register `ide-bridge mcp` with Claude Code as a user-scope stdio MCP \
server (in $CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json, key mcpServers), run by this \
binary's absolute path, and install the hooks through which the bridge serving a project sees \
and coordinates the CLI's own tools (in $CLAUDE_CONFIG_DIR/settings.json, else \
~/.claude/settings.json, key hooks; each runs `ide-bridge hook`, which does nothing where no \
bridge runs). Every other key and hook is kept, writes are atomic and the previous files are \
kept as .bak. Running it again changes nothing; --remove undoes both; --no-hooks leaves the \
hooks alone; --print writes nothing and shows the configuration for other MCP clients."
    )]
    Init {
        /// Remove the registration instead.
        #[arg(long, conflicts_with = "print")]
        remove: bool,
        /// Write nothing; print the snippets for Claude Code, Claude Desktop, Codex,
        /// Cursor, VS Code and Gemini CLI.
        #[arg(long)]
        print: bool,
        /// Server name (tools appear to the model as mcp__<name>__<tool>).
        #[arg(long, default_value = "ide-bridge", value_name = "NAME")]
        name: String,
        /// Register the MCP server only; leave Claude Code's hooks alone.
        #[arg(long)]
        no_hooks: bool,
    },
    /// Run one Claude Code hook: read its JSON on stdin, hand it to the bridge serving
    /// the project, print the bridge's answer (what `init` installs; not for people).
    #[command(
        long_about = "Run one Claude Code hook (what `ide-bridge init` installs in \
$CLAUDE_CONFIG_DIR/settings.json): read the hook's JSON on stdin, find the bridge serving \
$CLAUDE_PROJECT_DIR (else the input's cwd) through the lock files, post the JSON to its /hooks \
with the lock file's token, and print the bridge's answer on stdout. Before an Edit, Write or \
NotebookEdit of a file in another bridge's workspace, that bridge is asked first (its claims \
refuse the write). With no bridge, or any error, it prints nothing and exits 0, so the CLI carries on unaffected; set \
IDE_BRIDGE_HOOK_DEBUG=1 to see why on stderr."
    )]
    Hook,
    /// Run the bridge for a workspace as a systemd user service (install, remove, status).
    #[command(subcommand)]
    Service(ServiceCommand),
}

/// `ide-bridge service …`.
#[derive(Debug, Subcommand)]
pub enum ServiceCommand {
    /// Write and enable a systemd user unit that runs the bridge for the workspace
    /// (restarted on failure, logging to the journal), and start it.
    Install {
        #[command(flatten)]
        workspace: WorkspaceArg,
        /// A configuration file the service's bridge reads.
        #[arg(short, long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Write nothing: print the unit.
        #[arg(long)]
        print: bool,
        /// Write the unit but do not call systemctl: print the command that enables it
        /// (for machines without a user manager, and for tests).
        #[arg(long)]
        no_systemctl: bool,
    },
    /// Stop, disable and remove the workspace's unit.
    Remove {
        #[command(flatten)]
        workspace: WorkspaceArg,
        /// Remove the unit file, but do not call systemctl.
        #[arg(long)]
        no_systemctl: bool,
    },
    /// Say whether the workspace has a unit and what systemd says about it.
    Status {
        #[command(flatten)]
        workspace: WorkspaceArg,
    },
}

/// Flags that override configuration (running the bridge, and `config`).
#[derive(Debug, Default, Args)]
pub struct RunArgs {
    /// Workspace root served to agents [default: the current directory].
    #[arg(short, long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Configuration file layered over the defaults: TOML, JSON or YAML, by its extension
    /// (.toml, .json, .yaml or .yml).
    #[arg(short, long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1]. Non-loopback addresses are warned about.
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<String>,
    /// Port to listen on; 0 reuses the port this workspace's bridge had last when it is
    /// free, else lets the OS choose [default: 0].
    #[arg(short, long)]
    pub port: Option<u16>,
    /// Name shown in Claude Code's /ide list [default: ide-bridge].
    #[arg(long, value_name = "NAME")]
    pub ide_name: Option<String>,
    /// Maximum agent sessions, connected or in grace [default: 5].
    #[arg(long, value_name = "N")]
    pub max_sessions: Option<usize>,
    /// How long a disconnected agent's session waits for it, in ms [default: 120000].
    #[arg(long, value_name = "MS")]
    pub grace_period_ms: Option<u64>,
    /// Default tool-call timeout in ms [default: 60000].
    #[arg(long, value_name = "MS")]
    pub tool_timeout_ms: Option<u64>,
    /// Log level: trace, debug, info, warn, error [default: info].
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// Log format on stderr: text or json [default: text].
    #[arg(long, value_name = "FORMAT")]
    pub log_format: Option<String>,
    /// Automation policy file (TOML, YAML or JSON); see docs/automation.md.
    #[arg(long, value_name = "FILE")]
    pub automation_policy: Option<PathBuf>,
    /// Started on demand (by `ide-bridge mcp` or an editor plugin): stop by itself after
    /// server.idle_stop_ms with no agent, editor, browser page or Claude task.
    #[arg(long)]
    pub on_demand: bool,
    /// Set any configuration key, e.g. --set rate_limit.requests=100 (repeatable; lists
    /// comma-separated: --set commands.allow=git,cargo; a dedicated flag for the same key
    /// wins).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

/// A `--set` argument without `=`.
#[derive(Debug, thiserror::Error)]
#[error("--set expects KEY=VALUE, got {0:?}")]
pub struct SetSyntaxError(String);

/// A flag of [`RunArgs`] that sets a configuration key: the key, and the flag's value
/// as the configuration reads it. docs/configuration.md's flag column comes from here.
pub struct FlagKey {
    pub flag: &'static str,
    pub key: &'static str,
    value: fn(&RunArgs) -> Option<String>,
}

/// Every flag that sets a configuration key, in the order they are applied.
pub const FLAG_KEYS: [FlagKey; 11] = [
    FlagKey {
        flag: "--workspace",
        key: "workspace",
        value: |a| a.workspace.as_ref().map(|p| p.display().to_string()),
    },
    FlagKey {
        flag: "--bind",
        key: "server.bind",
        value: |a| a.bind.clone(),
    },
    FlagKey {
        flag: "--port",
        key: "server.port",
        value: |a| a.port.map(|v| v.to_string()),
    },
    FlagKey {
        flag: "--ide-name",
        key: "ide_name",
        value: |a| a.ide_name.clone(),
    },
    FlagKey {
        flag: "--max-sessions",
        key: "sessions.max_sessions",
        value: |a| a.max_sessions.map(|v| v.to_string()),
    },
    FlagKey {
        flag: "--grace-period-ms",
        key: "sessions.grace_period_ms",
        value: |a| a.grace_period_ms.map(|v| v.to_string()),
    },
    FlagKey {
        flag: "--tool-timeout-ms",
        key: "tools.timeout_ms",
        value: |a| a.tool_timeout_ms.map(|v| v.to_string()),
    },
    FlagKey {
        flag: "--automation-policy",
        key: "automation.policy",
        // Relative to where the flag was given, not to the workspace.
        value: |a| {
            a.automation_policy
                .as_ref()
                .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
                .map(|p| p.display().to_string())
        },
    },
    FlagKey {
        flag: "--log-level",
        key: "log.level",
        value: |a| a.log_level.clone(),
    },
    FlagKey {
        flag: "--on-demand",
        key: "server.on_demand",
        value: |a| a.on_demand.then(|| "true".to_string()),
    },
    FlagKey {
        flag: "--log-format",
        key: "log.format",
        value: |a| a.log_format.clone(),
    },
];

impl RunArgs {
    /// The configuration overrides these flags express: `--set` pairs, then each flag
    /// of [`FLAG_KEYS`] given.
    pub fn overrides(&self) -> Result<Overrides, SetSyntaxError> {
        let mut values: Vec<(String, String)> = Vec::new();
        for item in &self.set {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| SetSyntaxError(item.clone()))?;
            values.push((key.trim().to_string(), value.to_string()));
        }
        for flag in &FLAG_KEYS {
            if let Some(value) = (flag.value)(self) {
                values.push((flag.key.to_string(), value));
            }
        }
        Ok(Overrides {
            config_file: self.config.clone(),
            values,
        })
    }
}

/// Writes `text` on stdout as a subcommand's output. A reader that stopped reading
/// (`ide-bridge config | head`) ends the output quietly, as it does for other
/// command-line tools, instead of a panic ("failed printing to stdout").
pub fn print_stdout(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args, Command};

    fn run_args() -> Command {
        RunArgs::augment_args(Command::new("ide-bridge"))
    }

    #[test]
    fn every_configuration_flag_names_its_key_and_default() {
        let command = run_args();
        let defaults = serde_json::to_value(crate::config::Settings::default()).unwrap();
        for flag in &FLAG_KEYS {
            let arg = command
                .get_arguments()
                .find(|a| a.get_long().map(|l| format!("--{l}")).as_deref() == Some(flag.flag))
                .unwrap_or_else(|| panic!("{} is not a flag", flag.flag));
            let default = flag.key.split('.').fold(&defaults, |v, part| &v[part]);
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            let shown = match default {
                serde_json::Value::String(s) if !s.is_empty() => s.clone(),
                serde_json::Value::Number(n) => n.to_string(),
                _ => continue,
            };
            assert!(
                help.contains(&format!("[default: {shown}]")),
                "{}'s help says another default than {} = {shown}: {help}",
                flag.flag,
                flag.key
            );
        }
        // Every flag but these sets a key, and is listed.
        let not_keys = ["config", "rotate-token", "set"];
        for arg in command.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            assert!(
                not_keys.contains(&long) || FLAG_KEYS.iter().any(|f| f.flag == format!("--{long}")),
                "--{long} sets no key in FLAG_KEYS"
            );
        }
    }

    /// docs/configuration.md's table of keys is what the declarations say;
    /// `UPDATE_DOCS=1` rewrites it.
    #[test]
    fn docs_configuration_md_is_current() {
        let flags: Vec<(&str, &str)> = FLAG_KEYS.iter().map(|f| (f.flag, f.key)).collect();
        crate::generated::region(
            "docs/configuration.md",
            "<!-- every key: generated from src/config/sections.rs (UPDATE_DOCS=1 cargo test --lib config) -->\n",
            "<!-- end of the generated table -->\n",
            &crate::config::docs_table(&flags),
            "config",
        );
    }
}
