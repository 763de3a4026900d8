//! Configuration: built-in defaults < `config/default.toml` (embedded) < `--config FILE`
//! < `IDE_BRIDGE_*` environment < command-line flags. Unknown keys and out-of-range
//! values stop start-up with a message naming the key and the allowed range.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use config::{Config, Environment, File, FileFormat};
use serde::{Deserialize, Serialize};

mod reference;
mod sections;

pub use reference::{default_toml, docs_table};
pub use sections::*;

/// The shipped defaults, embedded so the binary works from any directory.
pub const DEFAULT_TOML: &str = include_str!("../../config/default.toml");

/// Prefix of environment overrides, e.g. `IDE_BRIDGE_SESSIONS__MAX_SESSIONS=3`.
pub const ENV_PREFIX: &str = "IDE_BRIDGE";

/// Variables of the prefix that are not settings, left out of the environment layer
/// (which refuses an unknown key): the task id the orchestrator gives each Claude task
/// (its `ide-bridge mcp` and hooks read the configuration too), the hook's debug
/// switch, and the build's RELR switch (`build.rs`).
pub const NOT_SETTINGS: [&str; 3] = [
    crate::orchestrator::TASK_ENV,
    crate::hooks::client::DEBUG_ENV,
    "IDE_BRIDGE_NO_RELR",
];

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
        key: String,
        /// The offending value.
        value: String,
        /// What is allowed.
        allowed: String,
        /// The key whose value made this one wrong where this one was not given: the
        /// key bounding it (`claims.max_ttl_minutes` for `claims.default_ttl_minutes`),
        /// the table it is missing from (`lsp.servers.zig`); the error says where that
        /// one came from.
        related: Option<String>,
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

/// The environment variable of a dotted key (`IDE_BRIDGE_SESSIONS__MAX_SESSIONS`).
fn env_name(key: &str) -> String {
    format!(
        "{ENV_PREFIX}_{}",
        key.to_ascii_uppercase().replace('.', "__")
    )
}

/// Where the value of `key` came from, as an error says it: `, from <the layer>`. An
/// item of a list (`diagnostics.linters[1]`) came from where its list did.
fn origin_of(key: &str, overrides: &Overrides) -> String {
    let key = key.split_once('[').map_or(key, |(list, _)| list);
    // A table's value is given by giving a key inside it.
    let inside = format!("{key}.");
    if overrides
        .values
        .iter()
        .any(|(k, _)| k == key || k.starts_with(&inside))
    {
        return ", from the command line (a flag or --set)".into();
    }
    let env = env_name(key);
    if std::env::var_os(&env).is_some() {
        return format!(", from the environment variable {env}");
    }
    let env_inside = format!("{env}__");
    if let Some(name) = std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        .find(|name| name.starts_with(&env_inside))
    {
        return format!(", from the environment variable {name}");
    }
    if let Some(file) = &overrides.config_file {
        let in_file = Config::builder()
            .add_source(File::from(file.as_path()).required(false))
            .build()
            .is_ok_and(|c| c.get::<serde_json::Value>(key).is_ok());
        if in_file {
            let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.clone());
            return format!(", from {}", file.display());
        }
    }
    String::new()
}

/// Refuses a value of the wrong type in the configuration file (see
/// [`reference::mistyped`]). Only the file's values have types of their own: the
/// environment's and the flags' are text, converted as they are read.
fn check_file_types(file: &std::path::Path) -> Result<(), ConfigError> {
    // A file that does not read is left to the load itself, which says why.
    let Ok(document) = Config::builder()
        .add_source(File::from(file))
        .build()
        .and_then(|c| c.try_deserialize::<serde_json::Value>())
    else {
        return Ok(());
    };
    match reference::mistyped(&document) {
        None => Ok(()),
        Some((key, value)) => Err(ConfigError::Invalid {
            allowed: reference::allowed_for(&key).unwrap_or_default(),
            related: None,
            origin: format!(
                ", from {}",
                std::fs::canonicalize(file)
                    .unwrap_or_else(|_| file.to_path_buf())
                    .display()
            ),
            key,
            value: value.to_string(),
        }),
    }
}

/// The key a `config` crate error names (between backticks), if any.
fn key_in(error: &config::ConfigError) -> Option<String> {
    let text = error.to_string();
    let start = text.find('`')? + 1;
    let end = start + text[start..].find('`')?;
    Some(text[start..end].to_string())
}

/// A `config` crate error said in the settings' terms where it names the key at fault:
/// a value of the wrong type or not among an enumeration's is [`ConfigError::Invalid`]
/// (with what the key allows), and every error says where the key's value came from.
fn explain(error: config::ConfigError, overrides: &Overrides) -> ConfigError {
    use config::ConfigError as E;
    // The file does not parse, or has an extension no parser takes: its absolute path,
    // then why.
    if let (Some(reason), Some(file)) = (
        ide_bridge_automation::config_file::reason(&error),
        &overrides.config_file,
    ) {
        let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.clone());
        return ConfigError::Load {
            error: E::Message(format!("{}: {reason}", file.display())),
            origin: String::new(),
        };
    }
    let (inner, key) = match &error {
        E::At {
            error: inner,
            key: Some(key),
            ..
        } => (inner.as_ref(), key.clone()),
        E::Type { key: Some(key), .. } => (&error, key.clone()),
        _ => {
            let origin = key_in(&error)
                .map(|k| origin_of(&k, overrides))
                .unwrap_or_default();
            return ConfigError::Load { error, origin };
        }
    };
    let invalid_value = |value: String, fallback: &str| ConfigError::Invalid {
        allowed: reference::allowed_for(&key).unwrap_or_else(|| fallback.to_string()),
        related: None,
        origin: origin_of(&key, overrides),
        key: key.clone(),
        value,
    };
    match inner {
        E::Type {
            unexpected,
            expected,
            ..
        } => invalid_value(unexpected.to_string(), expected),
        E::Message(m) if m.contains(" does not have variant constructor ") => {
            let value = m
                .split_once(" does not have variant constructor ")
                .map_or("", |(_, v)| v);
            invalid_value(format!("{value:?}"), "see docs/configuration.md")
        }
        // A number or a list where an enumeration's name belongs.
        E::Message(m) if m.starts_with("value of enum ") => {
            invalid_value("not a name".into(), "see docs/configuration.md")
        }
        E::Message(m) => {
            // `unknown field `x`, expected …` at key `section`: the key is section.x.
            let field = m
                .strip_prefix("unknown field `")
                .and_then(|rest| rest.split('`').next());
            let at = field.map_or(key.clone(), |f| format!("{key}.{f}"));
            ConfigError::Load {
                origin: origin_of(&at, overrides),
                error,
            }
        }
        _ => ConfigError::Load {
            origin: origin_of(&key, overrides),
            error,
        },
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

impl Overrides {
    /// Where the value of the dotted `key` came from, as an error says it: `, from the
    /// command line …`, `, from the environment variable …`, `, from <file>`; empty for
    /// a default.
    pub fn origin_of(&self, key: &str) -> String {
        origin_of(key, self)
    }
}

impl Settings {
    /// Loads and validates the layered configuration.
    pub fn load(overrides: &Overrides) -> Result<Self, ConfigError> {
        let mut builder =
            Config::builder().add_source(File::from_str(DEFAULT_TOML, FileFormat::Toml));
        if let Some(path) = &overrides.config_file {
            builder = builder.add_source(File::from(path.as_path()).required(true));
        }
        let settings_only: config::Map<String, String> = std::env::vars()
            .filter(|(name, _)| !NOT_SETTINGS.contains(&name.as_str()))
            .collect();
        let mut environment = Environment::with_prefix(ENV_PREFIX)
            .source(Some(settings_only))
            .prefix_separator("_")
            .separator("__")
            .try_parsing(true)
            .list_separator(",");
        // Keys whose value is a list: comma-separated in the environment and in `--set`.
        let list_keys = reference::list_keys();
        for key in &list_keys {
            environment = environment.with_list_parse_key(key);
        }
        builder = builder.add_source(environment);
        // An empty list from the environment (`IDE_BRIDGE_COMMANDS__ALLOW=`) is an empty
        // list, as `--set commands.allow=` is (the environment's list parsing makes it
        // `[""]`); a flag given for the key still wins, below.
        for key in &list_keys {
            if std::env::var(env_name(key)).is_ok_and(|v| v.trim().is_empty()) {
                builder = builder.set_override(key, Vec::<String>::new())?;
            }
        }
        for (key, value) in &overrides.values {
            builder = if list_keys.contains(key) {
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
            ConfigError::Load { error, .. } => explain(error, overrides),
            ConfigError::Invalid {
                key,
                value,
                allowed,
                related,
                ..
            } => {
                // The value's own origin; else (a default out of range of another
                // key's value, a key missing from a table) the related key's.
                let origin = match (origin_of(&key, overrides), &related) {
                    (own, Some(other)) if own.is_empty() => {
                        let theirs = origin_of(other, overrides);
                        if theirs.is_empty() {
                            own
                        } else {
                            format!("; `{other}` came{}", theirs.trim_start_matches(','))
                        }
                    }
                    (own, _) => own,
                };
                ConfigError::Invalid {
                    origin,
                    key,
                    value,
                    allowed,
                    related,
                }
            }
        };
        if let Some(file) = &overrides.config_file {
            check_file_types(file)?;
        }
        let settings: Settings = builder
            .build()
            .and_then(|b| b.try_deserialize())
            .map_err(|e| with_origin(ConfigError::from(e)))?;
        settings.validate().map_err(with_origin)?;
        Ok(settings)
    }

    /// Checks every range (declared on the fields, see [`sections`]) and what a range
    /// cannot say; the error names the key and what is allowed.
    pub fn validate(&self) -> Result<(), ConfigError> {
        reference::check_ranges(self)?;
        let s = &self.server;
        range(
            "server.pong_timeout_ms",
            millis_of(s.pong_timeout),
            millis_of(s.ping_interval),
            3_600_000,
            "server.ping_interval_ms",
        )?;
        range(
            "tools.max_argument_bytes",
            self.tools.max_argument_bytes,
            1024,
            s.max_message_bytes / 2,
            "server.max_message_bytes",
        )?;
        let c = &self.claims;
        range(
            "claims.default_ttl_minutes",
            c.default_ttl_minutes,
            1,
            c.max_ttl_minutes,
            "claims.max_ttl_minutes",
        )?;
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
        if let Some(dir) = &self.workspace {
            if !std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
                let what = match std::fs::metadata(dir) {
                    Ok(_) => "not a directory".to_string(),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        "it does not exist".into()
                    }
                    Err(e) => e.to_string(),
                };
                return Err(invalid(
                    "workspace",
                    format!("{} ({what})", dir.display()),
                    "an existing directory",
                ));
            }
        }
        if self.ide_name.trim().is_empty() {
            return Err(invalid("ide_name", &self.ide_name, "1 to 100 characters"));
        }
        let o = &self.orchestrator;
        if o.claude_binary.trim().is_empty() {
            return Err(invalid(
                "orchestrator.claude_binary",
                "\"\"",
                "a program name or path",
            ));
        }
        // A language of its own serves files by their extensions: without any, its
        // server would never start.
        let defaults = crate::lsp::servers::defaults();
        for (language, server) in &self.lsp.servers {
            if server.extensions.is_empty() && !defaults.contains_key(language) {
                return Err(ConfigError::Invalid {
                    key: format!("lsp.servers.{language}.extensions"),
                    value: "[]".into(),
                    allowed: format!(
                        "the file extensions its server serves (\"{language}\" has no \
                         default; those with one: {})",
                        defaults.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                    related: Some(format!("lsp.servers.{language}")),
                    origin: String::new(),
                });
            }
            if server.command.trim().is_empty() {
                return Err(invalid(
                    &format!("lsp.servers.{language}.command"),
                    "\"\"",
                    "a program name or path",
                ));
            }
        }
        crate::orchestrator::permissions::Policy::compile(&o.permissions).map_err(|e| {
            ConfigError::Invalid {
                key: "orchestrator.permissions".into(),
                value: e.to_string(),
                allowed: "{ tool, pattern?, decision = allow|deny|ask }".into(),
                related: None,
                origin: String::new(),
            }
        })?;
        Ok(())
    }

    /// The browser page's address on this bridge: the bind address (loopback when it
    /// listens on every interface) and `port`.
    pub fn page_origin(&self, port: u16) -> String {
        let ip = match self.server.bind {
            ip if ip.is_unspecified() && ip.is_ipv4() => std::net::Ipv4Addr::LOCALHOST.into(),
            ip if ip.is_unspecified() => std::net::Ipv6Addr::LOCALHOST.into(),
            ip => ip,
        };
        format!("http://{}", std::net::SocketAddr::new(ip, port))
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

    /// What `[commands]` says about running a command (`runCommand`, automation's and
    /// the hooks' commands).
    pub fn command_rules(&self) -> crate::exec::CommandRules {
        crate::exec::CommandRules {
            policy: self.command_policy(),
            run_unsandboxed: self.commands.run_unsandboxed,
            timeout: self.commands.timeout,
            network: self.commands.network.clone(),
            max_output: self.commands.max_output_bytes,
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

fn invalid(key: &str, value: impl std::fmt::Display, allowed: &str) -> ConfigError {
    ConfigError::Invalid {
        key: key.to_string(),
        value: value.to_string(),
        allowed: allowed.to_string(),
        related: None,
        origin: String::new(),
    }
}

/// `key`'s `value` must lie in `min`–`max`, one of which is the value of the key
/// `bound_by` (named in the error, with where its value came from).
fn range<T>(key: &str, value: T, min: T, max: T, bound_by: &'static str) -> Result<(), ConfigError>
where
    T: PartialOrd + std::fmt::Display + Copy,
{
    if value < min || value > max {
        return Err(ConfigError::Invalid {
            key: key.to_string(),
            value: value.to_string(),
            allowed: format!("{min}–{max}, within `{bound_by}`"),
            related: Some(bound_by.to_string()),
            origin: String::new(),
        });
    }
    Ok(())
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

pub use crate::names::UnknownName;

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

/// The names a closed list of strings accepts, as a JSON schema (`enum`).
fn names_schema(names: &[&str]) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "enum": names })
}

impl schemars::JsonSchema for LogLevel {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "LogLevel".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        names_schema(&["trace", "debug", "info", "warn", "error"])
    }
}

impl schemars::JsonSchema for LogFormat {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "LogFormat".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        names_schema(&["text", "json"])
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
    use crate::diagnostics::linters::Linter;

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
            err.contains("sessions.max_sessions") && err.contains("1–100"),
            "{err}"
        );
        let err = with(&[("tools.timeout_ms", "99")]).unwrap_err().to_string();
        assert!(
            err.contains("tools.timeout_ms") && err.contains("100 ms–1 h"),
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

    /// The lists found in the declarations: the six of them (a list of tables, the
    /// task permissions, is not comma-separated text).
    #[test]
    fn list_keys_come_from_the_declarations() {
        let mut keys = reference::list_keys();
        keys.sort();
        assert_eq!(
            keys,
            [
                "commands.allow",
                "commands.network",
                "diagnostics.linters",
                "server.allowed_origins",
                "tools.expose.exclude",
                "tools.expose.include",
            ]
        );
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

    /// Every way a value can be wrong names its key, what it allows and the layer it
    /// came from, however deep the key.
    #[test]
    fn errors_name_the_key_what_it_allows_and_where_the_value_came_from() {
        /// Overrides, and what the error says.
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str]);
        let cases: [Case; 5] = [
            (
                &[("sessions.max_sesions", "3")],
                &["max_sesions", "from the command line"],
            ),
            (
                &[("server.port", "70000")],
                &[
                    "`server.port`",
                    "70000",
                    "allowed: 0–65535",
                    "from the command line",
                ],
            ),
            (
                &[("watch.mode", "x")],
                &[
                    "`watch.mode` = \"x\"",
                    "allowed: auto, poll, off",
                    "from the command line",
                ],
            ),
            (
                &[("lsp.prefer", "x y")],
                &["`lsp.prefer` = \"x y\"", "allowed: editor, pool"],
            ),
            (
                &[("watch.mode", "1")],
                &["`watch.mode` = \"1\"", "allowed: auto, poll, off"],
            ),
        ];
        for (values, says) in cases {
            let err = with(values).unwrap_err().to_string();
            for part in says {
                assert!(err.contains(part), "{values:?}: {err:?} lacks {part:?}");
            }
            assert!(
                !err.contains("WatchMode") && !err.contains("LspPrefer"),
                "{err}"
            );
        }
        let err = from_file("[server]\nworkers = -1\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`server.workers`")
                && err.contains("allowed: 1–64")
                && err.contains(", from /"),
            "{err}"
        );
    }

    #[test]
    fn a_file_of_no_known_format_is_told_which_there_are() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bridge.conf");
        std::fs::write(&path, "").unwrap();
        let err = Settings::load(&Overrides {
            config_file: Some(path),
            values: Vec::new(),
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("use .toml, .json, .yaml or .yml"), "{err}");
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
