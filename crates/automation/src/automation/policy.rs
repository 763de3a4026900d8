//! The automation policy file: read (TOML, YAML or JSON by extension), validated
//! against the schema its events declare ([`super::events`], also written to
//! `config/automation.schema.json`), and compiled into hooks.

use std::path::Path;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use serde_json::Value;

use ide_bridge_workspace::diagnostics::Severity;

/// Tasks per hour when the policy does not say.
pub const DEFAULT_TASKS_PER_HOUR: u32 = 20;
/// Cooldown when a hook does not say (ms).
pub const DEFAULT_COOLDOWN_MS: u64 = 30_000;
/// Largest policy file read (a policy is a few hundred bytes).
pub const MAX_POLICY_BYTES: u64 = 1024 * 1024;
/// The least cooldown a hook may have (ms).
pub const MIN_COOLDOWN_MS: u64 = 5_000;
/// How often a done-gate keeps an agent working per prompt when `maxHolds` is not set.
pub const DEFAULT_MAX_HOLDS: u32 = 2;

/// Why a policy file was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// Unreadable or not TOML/YAML/JSON.
    #[error("automation policy {path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// What the parser said.
        reason: String,
    },
    /// Parsed but breaks the schema; each problem names its field.
    #[error("automation policy {path} is invalid: {}", problems.join("; "))]
    Invalid {
        /// The file.
        path: String,
        /// `field: problem` lines.
        problems: Vec<String>,
    },
}

/// Which diagnostics transition a hook waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DiagnosticsState {
    /// Diagnostics at or above the severity appeared or changed.
    Error,
    /// The file had such diagnostics and now has none.
    Cleared,
}

/// Whose Claude tasks a task hook looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origins {
    /// Tasks an agent started with `runClaudeTask`.
    pub agent: bool,
    /// Tasks automation started.
    pub automation: bool,
}

/// What sets a hook off. The optional glob sets filter the event's subject; `None`
/// admits every subject.
#[derive(Debug, Clone)]
pub enum Trigger {
    /// A file's diagnostics changed state.
    Diagnostics {
        /// Error or cleared.
        state: DiagnosticsState,
        /// Diagnostics below this are ignored (and left out of `{{diagnostics}}`).
        min_severity: Severity,
    },
    /// The editor saved a file matching one of these (workspace-relative) globs.
    FileSave {
        /// Compiled patterns.
        patterns: GlobSet,
    },
    /// A file on disk changed in one of these ways and matches one of the globs.
    FileChange {
        /// Compiled patterns.
        patterns: GlobSet,
        /// Change kinds (`created`, `modified`, `removed`, `renamed`) that count.
        changes: Vec<String>,
    },
    /// A Claude task ended; `succeeded` tells `onTaskFinished` from `onTaskFailed`.
    TaskEnded {
        /// Done (true) or failed (false).
        succeeded: bool,
        /// Whose tasks count.
        origins: Origins,
    },
    /// A commit was made on a branch matching `branches`.
    GitCommit {
        /// Branch filter.
        branches: Option<GlobSet>,
    },
    /// The repository switched to a branch matching `branches`.
    BranchSwitch {
        /// Branch filter.
        branches: Option<GlobSet>,
    },
    /// An agent connected (`connected`) or went for good, with a matching client name.
    Agent {
        /// Connected (true) or gone (false).
        connected: bool,
        /// Client-name filter.
        clients: Option<GlobSet>,
    },
    /// A `runCommand` whose program matches `commands` failed.
    CommandFailed {
        /// Program-name filter.
        commands: Option<GlobSet>,
    },
    /// An agent changed a file matching `patterns` with its own tools (Edit, Write,
    /// NotebookEdit, seen through its hooks) or the bridge's write tools.
    AgentEdited {
        /// File filter (workspace-relative).
        patterns: Option<GlobSet>,
    },
    /// An agent's own shell command (Bash) failed; `commands` filters its program.
    AgentCommandFailed {
        /// Program-name filter.
        commands: Option<GlobSet>,
    },
    /// An agent is ending its turn. A hook whose action checks (`command`,
    /// `diagnostics`) and holds on failure is a done-gate ([`Hook::hold`]).
    AgentStop,
    /// The person submitted a prompt to an agent.
    PromptSubmitted,
    /// A write to a claimed file matching `patterns` was refused.
    ClaimRefused {
        /// File filter (workspace-relative).
        patterns: Option<GlobSet>,
    },
    /// An agent proposed a change to a file matching `patterns` (its Edit/Write before
    /// it runs, or an `openDiff`). A hook whose action is [`Action::CheckEdit`] is an
    /// edit gate.
    EditProposed {
        /// File filter (workspace-relative).
        patterns: Option<GlobSet>,
    },
}

/// What a hook does when it fires. Texts are templates.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Start a Claude task with this prompt.
    Task {
        /// Prompt template.
        prompt: String,
    },
    /// Tell connected agents (MCP `notifications/message`), the editor and the
    /// activity timeline.
    Notify {
        /// Message template.
        message: String,
    },
    /// Run an allowlisted program under the `runCommand` sandbox.
    Command {
        /// Bare program name.
        program: String,
        /// Argument templates.
        args: Vec<String>,
    },
    /// Run the workspace's linters (`diagnostics.linters`); the check fails when a
    /// file has diagnostics at or above `min_severity`. Only for a done-gate.
    Diagnostics {
        /// The least severity that fails the check.
        min_severity: Severity,
    },
    /// Check the proposed text with the file's language server (`checkEdit`); the
    /// change is refused when it adds diagnostics at or above `min_severity`. Only for
    /// an edit gate (`onEditProposed`).
    CheckEdit {
        /// The least severity that refuses the change.
        min_severity: Severity,
    },
}

impl Action {
    /// `task`, `notify`, `command`, `diagnostics` or `check`.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Task { .. } => "task",
            Action::Notify { .. } => "notify",
            Action::Command { .. } => "command",
            Action::Diagnostics { .. } => "diagnostics",
            Action::CheckEdit { .. } => "check",
        }
    }

    /// Whether what it starts can change the workspace (and so must not react to
    /// the changes it causes).
    pub fn acts_on_workspace(&self) -> bool {
        !matches!(self, Action::Notify { .. } | Action::CheckEdit { .. })
    }
}

/// One enabled hook.
#[derive(Debug, Clone)]
pub struct Hook {
    /// The key it was declared under (used in logs, cooldowns and task origins).
    pub name: &'static str,
    /// When it fires.
    pub trigger: Trigger,
    /// What it does.
    pub action: Action,
    /// Least time between firings for one subject.
    pub cooldown_ms: u64,
    /// Timeout of its tasks and commands.
    pub timeout_ms: u64,
    /// A done-gate (`onAgentStop` whose check holds on failure): the agent is kept
    /// working at most this many times per prompt.
    pub hold: Option<u32>,
}

/// A loaded policy.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Enabled hooks.
    pub hooks: Vec<Hook>,
    /// Tasks and commands (and linter runs) all hooks together may start per sliding
    /// hour; notifications and the gates' checks are not counted.
    pub max_tasks_per_hour: u32,
    /// Things worth a warning (deprecated keys).
    pub warnings: Vec<String>,
}

/// A hook as written in the policy file (the schema checked it; its event says which
/// fields apply).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RawHook {
    pub(super) enabled: Option<bool>,
    pub(super) state: Option<DiagnosticsState>,
    pub(super) min_severity: Option<String>,
    pub(super) patterns: Option<Vec<String>>,
    pub(super) changes: Option<Vec<String>>,
    pub(super) origins: Option<Vec<String>>,
    pub(super) branches: Option<Vec<String>>,
    pub(super) clients: Option<Vec<String>>,
    pub(super) commands: Option<Vec<String>>,
    pub(super) action: Option<String>,
    pub(super) prompt: Option<String>,
    pub(super) message: Option<String>,
    pub(super) command: Option<String>,
    #[serde(default)]
    pub(super) args: Vec<String>,
    pub(super) cooldown_ms: Option<u64>,
    pub(super) timeout_ms: Option<u64>,
    pub(super) hold_on_failure: Option<bool>,
    pub(super) max_holds: Option<u32>,
}

/// `problems`, each top-level key that looks like an event but is none first, with the
/// events it may have meant (and the schema's complaint about only such keys left out:
/// it said the same twice).
fn with_event_names(value: &Value, problems: Vec<String>) -> Vec<String> {
    let events = || super::events::EVENTS.iter().map(|e| e.key);
    let unknown: Vec<&String> = value
        .as_object()
        .into_iter()
        .flat_map(|o| o.keys())
        .filter(|k| k.starts_with("on") && !events().any(|e| e == k.as_str()))
        .collect();
    let said_already = |problem: &String| {
        let Some(named) =
            problem.strip_prefix("(top level): Additional properties are not allowed (")
        else {
            return false;
        };
        // `'a', 'b' were unexpected)`: the quoted names, every one an event misspelt.
        let names: Vec<&str> = named.split('\'').skip(1).step_by(2).collect();
        !names.is_empty()
            && names
                .iter()
                .all(|n| unknown.iter().any(|k| k.as_str() == *n))
    };
    let named =
        unknown.iter().map(
            |k| match ide_bridge_compose::likely_meant(k, events()).as_slice() {
                [] => format!("{k}: no such event (the events are listed in docs/automation.md)"),
                meant => format!("{k}: no such event; did you mean {}?", meant.join(" or ")),
            },
        );
    let rest: Vec<String> = problems.into_iter().filter(|p| !said_already(p)).collect();
    named.chain(rest).collect()
}

/// A JSON document read only to refuse an object that names a key twice.
struct UniqueKeys;

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueKeysVisitor)
    }
}

struct UniqueKeysVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueKeysVisitor {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<UniqueKeys, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "the key {key:?} appears twice in one object (one hook per event)"
                )));
            }
            map.next_value::<UniqueKeys>()?;
        }
        Ok(UniqueKeys)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<UniqueKeys, A::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(UniqueKeys)
    }

    fn visit_bool<E>(self, _: bool) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_unit<E>(self) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
}

impl RawHook {
    /// A warning for each text field that names a placeholder its event does not have
    /// (it would reach the agent or the command as written).
    fn unknown_placeholders(&self, event: &super::events::EventDecl) -> Vec<String> {
        let texts = [("prompt", &self.prompt), ("message", &self.message)]
            .into_iter()
            .filter_map(|(field, text)| Some((field.to_string(), text.as_deref()?)))
            .chain(
                self.args
                    .iter()
                    .enumerate()
                    .map(|(i, arg)| (format!("args[{i}]"), arg.as_str())),
            );
        let known = event.placeholders_markdown();
        texts
            .filter_map(|(field, text)| {
                let unknown = event.unknown_placeholders(text);
                (!unknown.is_empty()).then(|| {
                    let named: Vec<String> = unknown.iter().map(|n| format!("{{{{{n}}}}}")).collect();
                    format!(
                        "{}.{field}: {} {} not a placeholder of {} and stays as written (it has {known})",
                        event.key,
                        named.join(", "),
                        if named.len() == 1 { "is" } else { "are" },
                        event.key,
                    )
                })
            })
            .collect()
    }
}

impl Policy {
    /// Reads, validates and compiles the policy at `path`.
    pub fn load(path: &Path) -> Result<Self, PolicyError> {
        let shown = path.display().to_string();
        let read_err = |reason: String| PolicyError::Read {
            path: shown.clone(),
            reason,
        };
        let size = match std::fs::metadata(path) {
            Ok(m) if m.is_file() => m.len(),
            Ok(m) if m.is_dir() => {
                return Err(read_err(
                    "it is a directory; name the policy file in it".into(),
                ))
            }
            Ok(_) => return Err(read_err("it is not a regular file".into())),
            Err(_) => return Err(read_err("no such file".into())),
        };
        if size > MAX_POLICY_BYTES {
            return Err(read_err(format!(
                "the file is {size} bytes; the limit is {MAX_POLICY_BYTES} bytes"
            )));
        }
        // JSON readers keep the last of two equal keys: a second hook for an event
        // would replace the first without a word.
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            let text = std::fs::read_to_string(path).map_err(|e| read_err(e.to_string()))?;
            serde_json::from_str::<UniqueKeys>(&text).map_err(|e| read_err(e.to_string()))?;
        }
        let value: Value = config::Config::builder()
            .add_source(config::File::from(path))
            .build()
            .and_then(|c| c.try_deserialize())
            .map_err(|e| {
                read_err(crate::config_file::reason(&e).unwrap_or_else(|| e.to_string()))
            })?;
        Self::from_value(&value).map_err(|problems| PolicyError::Invalid {
            path: shown,
            problems,
        })
    }

    /// Loads like [`Policy::load`], then checks every `command` hook's program against
    /// the command policy the way `runCommand` would (its arguments are checked when
    /// they are rendered).
    pub fn load_checked(
        path: &Path,
        commands: &ide_bridge_workspace::exec::CommandPolicy,
        workspace: &ide_bridge_workspace::workspace::Workspace,
    ) -> Result<Self, PolicyError> {
        let policy = Self::load(path)?;
        let problems: Vec<String> = policy
            .hooks
            .iter()
            .filter_map(|h| match &h.action {
                Action::Command { program, .. } => {
                    ide_bridge_workspace::exec::check(commands, workspace, program, &[])
                        .err()
                        .map(|e| format!("{}.command: {e}", h.name))
                }
                _ => None,
            })
            .collect();
        if problems.is_empty() {
            Ok(policy)
        } else {
            Err(PolicyError::Invalid {
                path: path.display().to_string(),
                problems,
            })
        }
    }

    /// Validates a parsed policy and compiles it; errors are `field: problem` lines.
    pub fn from_value(value: &Value) -> Result<Self, Vec<String>> {
        static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
        let validator = VALIDATOR.get_or_init(|| {
            jsonschema::validator_for(&super::events::schema()).expect("the policy schema compiles")
        });
        let problems: Vec<String> = validator
            .iter_errors(value)
            .take(10)
            .map(|e| {
                let at = e.instance_path().to_string();
                let field = if at.is_empty() {
                    "(top level)".to_string()
                } else {
                    at.trim_start_matches('/').replace('/', ".")
                };
                format!("{field}: {e}")
            })
            .collect();
        if !problems.is_empty() {
            return Err(with_event_names(value, problems));
        }
        let mut policy = Policy {
            hooks: Vec::new(),
            max_tasks_per_hour: value
                .get("maxTasksPerHour")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(DEFAULT_TASKS_PER_HOUR),
            warnings: Vec::new(),
        };
        for event in super::events::EVENTS {
            let Some(hook) = value.get(event.key) else {
                continue;
            };
            let raw: RawHook = serde_json::from_value(hook.clone())
                .map_err(|e| vec![format!("{}: {e}", event.key)])?;
            if let Some(warning) = event.deprecated {
                policy.warnings.push(warning.into());
            }
            policy.warnings.extend(raw.unknown_placeholders(event));
            policy.push(raw, event.key, event.trigger)?;
        }
        Ok(policy)
    }

    fn push(
        &mut self,
        raw: RawHook,
        name: &'static str,
        trigger: impl FnOnce(&RawHook) -> Result<Trigger, TriggerError>,
    ) -> Result<(), Vec<String>> {
        if raw.enabled == Some(false) {
            return Ok(());
        }
        let trigger = trigger(&raw).map_err(|e| vec![format!("{name}.{e}")])?;
        // The schema made sure the action's own field is present.
        let action = match raw.action.as_deref() {
            Some("diagnostics") => Action::Diagnostics {
                min_severity: severity(raw.min_severity.as_deref()),
            },
            Some("check") => Action::CheckEdit {
                min_severity: severity(raw.min_severity.as_deref()),
            },
            Some("notify") => Action::Notify {
                message: raw.message.unwrap_or_default(),
            },
            Some("command") => Action::Command {
                program: raw.command.unwrap_or_default(),
                args: raw.args,
            },
            _ => Action::Task {
                prompt: raw.prompt.unwrap_or_default(),
            },
        };
        // A stop whose check holds the agent is a gate: every stop is checked (no
        // cooldown), at most `maxHolds` times per prompt.
        let checks = matches!(action, Action::Command { .. } | Action::Diagnostics { .. });
        let edit_gate = matches!(action, Action::CheckEdit { .. });
        let hold =
            (matches!(trigger, Trigger::AgentStop) && checks && raw.hold_on_failure != Some(false))
                .then(|| raw.max_holds.unwrap_or(DEFAULT_MAX_HOLDS));
        self.hooks.push(Hook {
            name,
            trigger,
            action,
            hold,
            cooldown_ms: if hold.is_some() || edit_gate {
                0
            } else {
                raw.cooldown_ms.unwrap_or(DEFAULT_COOLDOWN_MS)
            },
            timeout_ms: raw.timeout_ms.unwrap_or(crate::tasks::DEFAULT_TIMEOUT_MS),
        });
        Ok(())
    }
}

/// A `minSeverity` value (default error).
pub(super) fn severity(name: Option<&str>) -> Severity {
    match name.unwrap_or("error") {
        "error" => Severity::Error,
        "warning" => Severity::Warning,
        "information" => Severity::Info,
        _ => Severity::Hint,
    }
}

/// A hook's trigger that does not compile; the message starts with the key at fault.
#[derive(Debug, thiserror::Error)]
pub(super) enum TriggerError {
    /// One of the globs is not a glob.
    #[error("{key}.{index}: {source}")]
    Pattern {
        /// The list it is in.
        key: &'static str,
        /// Position in the list.
        index: usize,
        /// Why globset refused it.
        source: globset::Error,
    },
    /// The globs do not build into one set.
    #[error("{key}: {source}")]
    Set {
        /// The list.
        key: &'static str,
        /// Why globset refused it.
        source: globset::Error,
    },
}

/// Compiles the glob list under `key`, if there is one.
pub(super) fn globs(
    key: &'static str,
    list: Option<&[String]>,
) -> Result<Option<GlobSet>, TriggerError> {
    let Some(list) = list else {
        return Ok(None);
    };
    let mut set = GlobSetBuilder::new();
    for (index, p) in list.iter().enumerate() {
        let glob = Glob::new(p).map_err(|source| TriggerError::Pattern { key, index, source })?;
        set.add(glob);
    }
    set.build()
        .map(Some)
        .map_err(|source| TriggerError::Set { key, source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(v: Value) -> String {
        Policy::from_value(&v).unwrap_err().join("\n")
    }

    #[test]
    fn a_complete_policy_compiles_with_defaults() {
        let p = Policy::from_value(&json!({
            "maxTasksPerHour": 3,
            "onDiagnosticsStateChange": {"state": "cleared", "minSeverity": "warning", "prompt": "p"},
            "onFileSave": {"patterns": ["src/**/*.rs"], "prompt": "q", "cooldownMs": 5000}
        }))
        .unwrap();
        assert_eq!(p.max_tasks_per_hour, 3);
        assert_eq!(p.hooks.len(), 2);
        assert_eq!(p.hooks[0].cooldown_ms, DEFAULT_COOLDOWN_MS);
        assert!(matches!(
            p.hooks[0].trigger,
            Trigger::Diagnostics {
                state: DiagnosticsState::Cleared,
                min_severity: Severity::Warning
            }
        ));
        assert_eq!(p.hooks[1].cooldown_ms, 5000);
        assert!(p.warnings.is_empty());
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (
                json!({"onFileSave": {"patterns": ["*"], "prompt": "p", "cooldownMs": 4999}}),
                "onFileSave.cooldownMs",
            ),
            (json!({"onFileSave": {"prompt": "p"}}), "onFileSave"),
            (
                json!({"onFileSave": {"patterns": [], "prompt": "p"}}),
                "onFileSave.patterns",
            ),
            (
                json!({"onDiagnosticsStateChange": {"state": "broken", "prompt": "p"}}),
                "onDiagnosticsStateChange.state",
            ),
            (
                json!({"onDiagnosticsStateChange": {"state": "error", "prompt": "p", "minSeverity": "fatal"}}),
                "onDiagnosticsStateChange.minSeverity",
            ),
            (json!({"maxTasksPerHour": 0}), "maxTasksPerHour"),
            (
                json!({"onFileSve": {}}),
                "onFileSve: no such event; did you mean onFileSave?",
            ),
            (
                json!({"onFileSave": {"patterns": ["a[b"], "prompt": "p"}}),
                "onFileSave.patterns.0",
            ),
        ];
        for (v, field) in cases {
            let p = problems(v.clone());
            assert!(p.starts_with(field), "{v}: {p}");
        }
        // A misspelt event is said once (the schema's "additional property" left out);
        // another unknown key beside it still is.
        let p = problems(json!({"onFileSafe": {}}));
        assert_eq!(p, "onFileSafe: no such event; did you mean onFileSave?");
        let p = problems(json!({"onFileSafe": {}, "maxTasks": 1}));
        assert!(p.contains("'maxTasks'"), "{p}");
    }

    #[test]
    fn the_legacy_hook_still_works_with_a_warning() {
        let p = Policy::from_value(&json!({"onDiagnosticsError": {"prompt": "p"}})).unwrap();
        assert_eq!(p.hooks[0].name, "onDiagnosticsError");
        assert!(matches!(
            p.hooks[0].trigger,
            Trigger::Diagnostics {
                state: DiagnosticsState::Error,
                min_severity: Severity::Error
            }
        ));
        assert!(p.warnings[0].contains("deprecated"));
    }

    #[test]
    fn a_placeholder_the_event_does_not_have_is_warned_of() {
        let p = Policy::from_value(&json!({
            "onFileChange": {"patterns": ["*"], "action": "notify", "message": "{{fiel}} changed by {{agent}}, {{fiel}}"},
            "onGitCommit": {"action": "command", "command": "echo", "args": ["{{commit}}", "{{sha}}", "{{.Name}}", "{{ {{branch}}"]},
            "onFileSave": {"patterns": ["*"], "prompt": "Review {{file}}"}}))
        .unwrap();
        assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
        assert!(
            p.warnings[0].starts_with(
                "onFileChange.message: {{fiel}}, {{agent}} are not a placeholder of onFileChange"
            ) && p.warnings[0].ends_with("(it has `{{file}}`, `{{change}}` (`created`, `modified`, `removed`, `renamed`), `{{from}}` (a rename's old path, else empty))"),
            "{}",
            p.warnings[0]
        );
        assert!(
            p.warnings[1].starts_with("onGitCommit.args[1]: {{sha}} is not"),
            "{}",
            p.warnings[1]
        );
    }

    #[test]
    fn a_json_policy_naming_an_event_twice_or_a_directory_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let twice = dir.path().join("p.json");
        std::fs::write(
            &twice,
            "{\"onFileSave\": {\"patterns\": [\"*\"], \"prompt\": \"a\"},\n \"onFileSave\": {\"patterns\": [\"*\"], \"prompt\": \"b\"}}",
        )
        .unwrap();
        let e = Policy::load(&twice).unwrap_err().to_string();
        assert!(
            e.contains("\"onFileSave\" appears twice") && e.contains("line 2"),
            "{e}"
        );
        let e = Policy::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
    }

    #[test]
    fn disabled_hooks_are_left_out() {
        let p = Policy::from_value(
            &json!({"onFileSave": {"enabled": false, "patterns": ["*"], "prompt": "p"}}),
        )
        .unwrap();
        assert!(p.hooks.is_empty());
    }

    #[test]
    fn files_load_in_each_format() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("p.toml", "maxTasksPerHour = 2\n[onFileSave]\npatterns = [\"*.rs\"]\nprompt = \"x {{file}}\"\n"),
            ("p.yaml", "maxTasksPerHour: 2\nonFileSave:\n  patterns: ['*.rs']\n  prompt: 'x {{file}}'\n"),
            ("p.json", r#"{"maxTasksPerHour": 2, "onFileSave": {"patterns": ["*.rs"], "prompt": "x {{file}}"}}"#),
        ];
        for (name, text) in cases {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            let p = Policy::load(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!((p.max_tasks_per_hour, p.hooks.len()), (2, 1), "{name}");
        }
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "[onFileSave\n").unwrap();
        assert!(matches!(Policy::load(&bad), Err(PolicyError::Read { .. })));
        assert!(matches!(
            Policy::load(&dir.path().join("none.toml")),
            Err(PolicyError::Read { .. })
        ));
        // At the size limit it is read (and judged on its content); one byte more is refused.
        let big = dir.path().join("big.json");
        let pad = |n: usize| format!("{{\"maxTasksPerHour\": 1{}}}", " ".repeat(n));
        let room = (MAX_POLICY_BYTES as usize) - pad(0).len();
        std::fs::write(&big, pad(room)).unwrap();
        assert!(Policy::load(&big).is_ok());
        std::fs::write(&big, pad(room + 1)).unwrap();
        let err = Policy::load(&big).unwrap_err().to_string();
        assert!(err.contains("the limit is 1048576 bytes"), "{err}");
    }
}
