//! Every automation event a policy may name, declared once: its key, when it fires, the
//! filters it takes (with their schema), its subject and placeholders, and how its
//! trigger is built. The policy schema (`config/automation.schema.json`), the table of
//! hooks in `docs/automation.md` and the loading of a policy come from [`EVENTS`];
//! tests fail when the generated files are stale.
//!
//! Adding an event: a row here, its [`Trigger`] variant (policy.rs), its
//! [`super::Event`] and how it matches (mod.rs), and the bridge code that reports it
//! (sending `BridgeEvent::Policy(Event::…)` to the Automation actor): four files.

use serde_json::{json, Map, Value};

use super::policy::{globs, severity, DiagnosticsState, Origins, RawHook, Trigger, TriggerError};

/// One event a hook can be declared for.
pub struct EventDecl {
    /// The policy key, `onFileSave`.
    pub key: &'static str,
    /// When it fires (markdown; the schema says "Fires when …").
    pub fires: &'static str,
    /// Its own fields: name and JSON schema (beyond the fields every hook has).
    pub fields: &'static [(&'static str, &'static str)],
    /// Fields it cannot do without.
    pub required: &'static [&'static str],
    /// What the cooldown is kept per (markdown).
    pub subject: &'static str,
    /// The template placeholders its texts may use, each with a note (markdown; empty
    /// for none). A placeholder a hook's text names that is not here is warned of.
    pub placeholders: &'static [(&'static str, &'static str)],
    /// Superseded by another event: loading it warns with this.
    pub deprecated: Option<&'static str>,
    /// Its trigger, from the hook as written.
    pub(super) trigger: fn(&RawHook) -> Result<Trigger, TriggerError>,
}

impl EventDecl {
    /// Its placeholders as the docs list them: "`{{file}}`, `{{change}}` (note)".
    pub fn placeholders_markdown(&self) -> String {
        self.placeholders
            .iter()
            .map(|(name, note)| match note {
                &"" => format!("`{{{{{name}}}}}`"),
                note => format!("`{{{{{name}}}}}` ({note})"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The `{{name}}`s in `text` (a name as placeholders are named: letters, digits,
    /// `_`) that are not its placeholders, read as the template renderer reads them.
    /// Other braces (`{{.Name}}` for a program's own templates) are not ours.
    pub fn unknown_placeholders<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let mut unknown = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            let after = &rest[start + 2..];
            let Some(end) = after.find("}}") else {
                break;
            };
            let name = &after[..end];
            let named = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            let known = self.placeholders.iter().any(|(p, _)| *p == name);
            if named && !known && !unknown.contains(&name) {
                unknown.push(name);
            }
            // As the renderer does: past a name it knows, else past the braces only.
            rest = if known { &after[end + 2..] } else { after };
        }
        unknown
    }
}

const PATTERNS: &str = r##"{"$ref": "#/$defs/patterns"}"##;
const FILE_FILTER: &str = r##"{"description": "Globs the workspace-relative file must match (default: any).", "$ref": "#/$defs/patterns"}"##;
const MIN_SEVERITY: &str = r##"{"$ref": "#/$defs/severity"}"##;
const ORIGINS: &str = r##"{"$ref": "#/$defs/origins"}"##;
const CLIENTS: &str = r##"{"description": "Globs the client name (clientInfo.name) must match (default: any).", "$ref": "#/$defs/patterns"}"##;

fn task_origins(h: &RawHook) -> Origins {
    h.origins.as_deref().map_or(
        Origins {
            agent: true,
            automation: true,
        },
        |o| Origins {
            agent: o.iter().any(|x| x == "agent"),
            automation: o.iter().any(|x| x == "automation"),
        },
    )
}

/// Every event, in the order hooks are loaded and listed.
pub const EVENTS: &[EventDecl] = &[
    EventDecl {
        key: "onDiagnosticsStateChange",
        fires: "a file's diagnostics at or above `minSeverity` appear or change (new message, severity or position) with `state: \"error\"`, or go away with `state: \"cleared\"`; a change only in diagnostics below `minSeverity` does not count. From the editor, or from the bridge's linters for files the editor does not report",
        fields: &[("state", r#"{"enum": ["error", "cleared"]}"#), ("minSeverity", MIN_SEVERITY)],
        required: &["state"],
        subject: "the file",
        placeholders: &[("file", ""), ("diagnostics", "an empty block when cleared")],
        deprecated: None,
        trigger: |h| {
            Ok(Trigger::Diagnostics {
                state: h.state.unwrap_or(DiagnosticsState::Error),
                min_severity: severity(h.min_severity.as_deref()),
            })
        },
    },
    EventDecl {
        key: "onDiagnosticsError",
        fires: "the same as `onDiagnosticsStateChange` with `state: \"error\"` (deprecated; still accepted, with a warning at load)",
        fields: &[("minSeverity", MIN_SEVERITY)],
        required: &[],
        subject: "the file",
        placeholders: &[("file", ""), ("diagnostics", "")],
        deprecated: Some(
            "onDiagnosticsError is deprecated: use onDiagnosticsStateChange with state = \"error\"",
        ),
        trigger: |h| {
            Ok(Trigger::Diagnostics {
                state: DiagnosticsState::Error,
                min_severity: severity(h.min_severity.as_deref()),
            })
        },
    },
    EventDecl {
        key: "onFileSave",
        fires: "the editor saves a workspace file whose relative path matches one of `patterns`",
        fields: &[("patterns", PATTERNS)],
        required: &["patterns"],
        subject: "the file",
        placeholders: &[("file", "")],
        deprecated: None,
        trigger: |h| {
            Ok(Trigger::FileSave {
                patterns: globs("patterns", h.patterns.as_deref())?.unwrap_or_default(),
            })
        },
    },
    EventDecl {
        key: "onFileChange",
        fires: "a workspace file the walker does not ignore (`.gitignore`, `.ignore`, hidden files, `.git`) is created, modified, removed or renamed on disk (by anything, the bridge's own tools included), its relative path matches one of `patterns` and the change is one of `changes`",
        fields: &[
            ("patterns", PATTERNS),
            ("changes", r#"{"description": "Which kinds of change count (default: all).", "type": "array", "minItems": 1, "uniqueItems": true, "items": {"enum": ["created", "modified", "removed", "renamed"]}}"#),
        ],
        required: &["patterns"],
        subject: "the file",
        placeholders: &[("file", ""), ("change", "`created`, `modified`, `removed`, `renamed`"), ("from", "a rename's old path, else empty")],
        deprecated: None,
        trigger: |h| {
            Ok(Trigger::FileChange {
                patterns: globs("patterns", h.patterns.as_deref())?.unwrap_or_default(),
                changes: h.changes.clone().unwrap_or_else(|| {
                    ["created", "modified", "removed", "renamed"]
                        .map(String::from)
                        .to_vec()
                }),
            })
        },
    },
    EventDecl {
        key: "onTaskFinished",
        fires: "a Claude task exits successfully (`done`); `origins` (`agent`, `automation`; default both) says whose tasks count",
        fields: &[("origins", ORIGINS)],
        required: &[],
        subject: "`task:<task id>`",
        placeholders: &[("taskId", ""), ("status", ""), ("session", ""), ("hook", ""), ("output", "")],
        deprecated: None,
        trigger: |h| {
            Ok(Trigger::TaskEnded {
                succeeded: true,
                origins: task_origins(h),
            })
        },
    },
    EventDecl {
        key: "onTaskFailed",
        fires: "a Claude task fails (`error`: non-zero exit, timeout, failure to start; or `interrupted`, as the tasks a stopped or crashed bridge left alive are when it starts again); cancelled tasks are neither; `origins` as for `onTaskFinished`",
        fields: &[("origins", ORIGINS)],
        required: &[],
        subject: "`task:<task id>`",
        placeholders: &[("taskId", ""), ("status", ""), ("session", ""), ("hook", ""), ("output", "the error when there is one")],
        deprecated: None,
        trigger: |h| {
            Ok(Trigger::TaskEnded {
                succeeded: false,
                origins: task_origins(h),
            })
        },
    },
    EventDecl {
        key: "onGitCommit",
        fires: "HEAD moves to a child of the previous HEAD on the same branch (a commit by `gitCommit`, a terminal, an IDE…; amends, resets and pulls are not commits); `branches` filters",
        fields: &[("branches", r##"{"description": "Globs the branch must match (default: any).", "$ref": "#/$defs/patterns"}"##)],
        required: &[],
        subject: "the branch",
        placeholders: &[("branch", ""), ("commit", ""), ("subject", "")],
        deprecated: None,
        trigger: |h| {
            Ok(Trigger::GitCommit {
                branches: globs("branches", h.branches.as_deref())?,
            })
        },
    },
    EventDecl {
        key: "onBranchSwitch",
        fires: "another branch is checked out; `branches` filters the new one",
        fields: &[("branches", r##"{"description": "Globs the new branch must match (default: any).", "$ref": "#/$defs/patterns"}"##)],
        required: &[],
        subject: "the new branch",
        placeholders: &[("branch", ""), ("previousBranch", ""), ("commit", "")],
        deprecated: None,
        trigger: |h| {
            Ok(Trigger::BranchSwitch {
                branches: globs("branches", h.branches.as_deref())?,
            })
        },
    },
    EventDecl {
        key: "onAgentConnected",
        fires: "an agent completes the MCP handshake in a new session (a reconnect within the grace period is the same agent); `clients` filters `clientInfo.name`",
        fields: &[("clients", CLIENTS)],
        required: &[],
        subject: "the session",
        placeholders: &[("agent", "client name"), ("session", "")],
        deprecated: None,
        trigger: |h| {
            Ok(Trigger::Agent {
                connected: true,
                clients: globs("clients", h.clients.as_deref())?,
            })
        },
    },
    EventDecl {
        key: "onAgentDisconnected",
        fires: "an agent's session ends for good (grace period expired, the client ended it, or evicted); `clients` filters",
        fields: &[("clients", CLIENTS)],
        required: &[],
        subject: "the session",
        placeholders: &[("agent", ""), ("session", "")],
        deprecated: None,
        trigger: |h| {
            Ok(Trigger::Agent {
                connected: false,
                clients: globs("clients", h.clients.as_deref())?,
            })
        },
    },
    EventDecl {
        key: "onCommandFailed",
        fires: "a `runCommand` exits non-zero or times out; `commands` filters the program name",
        fields: &[("commands", r##"{"description": "Globs the program name must match (default: any).", "$ref": "#/$defs/patterns"}"##)],
        required: &[],
        subject: "the program",
        placeholders: &[("command", ""), ("program", ""), ("exitCode", "a number, `timed out` or `killed`"), ("session", ""), ("output", "")],
        deprecated: None,
        trigger: |h| {
            Ok(Trigger::CommandFailed {
                commands: globs("commands", h.commands.as_deref())?,
            })
        },
    },
    EventDecl {
        key: "onAgentEdited",
        fires: "an agent changes a file with its own tools (Claude Code's Edit, Write, NotebookEdit, seen through its [hooks](hooks.md)) or the bridge's write tools; `patterns` filters the workspace-relative file",
        fields: &[("patterns", FILE_FILTER)],
        required: &[],
        subject: "the file",
        placeholders: &[("agent", "`claude-code 1a2b3c4d`"), ("session", ""), ("file", ""), ("tool", "")],
        deprecated: None,
        trigger: |h| {
            Ok(Trigger::AgentEdited {
                patterns: globs("patterns", h.patterns.as_deref())?,
            })
        },
    },
    EventDecl {
        key: "onAgentCommandFailed",
        fires: "an agent's own shell command (Claude Code's Bash, seen through its hooks) fails: a non-zero exit or an interruption; `commands` filters its program (first word)",
        fields: &[("commands", r##"{"description": "Globs the program name (the command's first word) must match (default: any).", "$ref": "#/$defs/patterns"}"##)],
        required: &[],
        subject: "the program",
        placeholders: &[("agent", ""), ("session", ""), ("command", ""), ("program", ""), ("error", "`Exit code 1`")],
        deprecated: None,
        trigger: |h| {
            Ok(Trigger::AgentCommandFailed {
                commands: globs("commands", h.commands.as_deref())?,
            })
        },
    },
    EventDecl {
        key: "onAgentStop",
        fires: "an agent is about to end its turn; with `action = \"command\"` or `\"diagnostics\"` it is a **done-gate**: the check runs before the agent stops, and when it fails the agent is kept working with a summary of the failure (at most `maxHolds` times per prompt; `cooldownMs` does not apply)",
        fields: &[
            ("action", r#"{"description": "task, notify or command as for every hook, or diagnostics: run the workspace's linters (diagnostics.linters) and fail when a file has diagnostics at or above minSeverity.", "enum": ["task", "notify", "command", "diagnostics"]}"#),
            ("minSeverity", r##"{"description": "With action diagnostics: the least severity that fails the check (default error).", "$ref": "#/$defs/severity"}"##),
            ("holdOnFailure", r#"{"description": "With action command or diagnostics: keep the agent working when the check fails (default true; false only records the result).", "type": "boolean"}"#),
            ("maxHolds", r#"{"description": "How many times per prompt a failing check keeps the agent working (default 2); after that the agent stops and the failure is recorded.", "type": "integer", "minimum": 1, "maximum": 10}"#),
        ],
        required: &[],
        subject: "the session",
        placeholders: &[("agent", ""), ("session", ""), ("message", "its last message, as a delimited block")],
        deprecated: None,
        trigger: |_| Ok(Trigger::AgentStop),
    },
    EventDecl {
        key: "onPromptSubmitted",
        fires: "the person submits a prompt to an agent (Claude Code's UserPromptSubmit)",
        fields: &[],
        required: &[],
        subject: "the session",
        placeholders: &[("agent", ""), ("session", ""), ("prompt", "a delimited block")],
        deprecated: None,
        trigger: |_| Ok(Trigger::PromptSubmitted),
    },
    EventDecl {
        key: "onClaimRefused",
        fires: "a write to a claimed file is refused (an agent's Edit/Write through its hooks, or a bridge write tool); `patterns` filters the file",
        fields: &[("patterns", FILE_FILTER)],
        required: &[],
        subject: "the file",
        placeholders: &[("agent", "who was refused"), ("session", ""), ("holder", ""), ("file", ""), ("tool", "")],
        deprecated: None,
        trigger: |h| {
            Ok(Trigger::ClaimRefused {
                patterns: globs("patterns", h.patterns.as_deref())?,
            })
        },
    },
    EventDecl {
        key: "onEditProposed",
        fires: "an agent proposes a change to a file: its own Edit or Write (Claude Code's PreToolUse hook, before anything is written) or an `openDiff`; `patterns` filters the file. With `action = \"check\"` it is an **edit gate**: the file's language server (the bridge's own, `[lsp]`) checks the proposed text as `checkEdit` does, and the change is refused when it adds diagnostics at or above `minSeverity` — the Edit or Write denied with the new diagnostics as the reason the model reads, the diff answered `DIFF_REJECTED`. A check that cannot run (no server for the file, a proposal too large to check) lets the change through and says so in the hook's record; `cooldownMs` does not apply",
        fields: &[
            ("action", r#"{"description": "task, notify or command as for every hook, or check: the edit gate.", "enum": ["task", "notify", "command", "check"]}"#),
            ("patterns", FILE_FILTER),
            ("minSeverity", r##"{"description": "With action check: the least severity of an added diagnostic that refuses the change (default error).", "$ref": "#/$defs/severity"}"##),
        ],
        required: &[],
        subject: "the file",
        placeholders: &[("agent", ""), ("session", ""), ("file", ""), ("tool", "`Edit`, `Write`, `openDiff`")],
        deprecated: None,
        trigger: |h| {
            Ok(Trigger::EditProposed {
                patterns: globs("patterns", h.patterns.as_deref())?,
            })
        },
    },
];

/// What every hook may say besides its event's own fields.
const COMMON: &[(&str, &str)] = &[
    (
        "enabled",
        r#"{"description": "false keeps the hook in the file but turns it off.", "type": "boolean"}"#,
    ),
    ("action", r##"{"$ref": "#/$defs/action"}"##),
    ("prompt", r##"{"$ref": "#/$defs/prompt"}"##),
    ("message", r##"{"$ref": "#/$defs/message"}"##),
    ("command", r##"{"$ref": "#/$defs/command"}"##),
    ("args", r##"{"$ref": "#/$defs/args"}"##),
    ("cooldownMs", r##"{"$ref": "#/$defs/cooldownMs"}"##),
    ("timeoutMs", r##"{"$ref": "#/$defs/timeoutMs"}"##),
];

/// The definitions the hooks' fields refer to.
const DEFS: &str = r#"{
  "severity": {"enum": ["error", "warning", "information", "hint"]},
  "patterns": {"type": "array", "minItems": 1, "maxItems": 100, "items": {"type": "string", "minLength": 1, "maxLength": 1000}},
  "origins": {"description": "Whose tasks count: agent (runClaudeTask) and/or automation (default: both; a task-starting hook never fires for an automation task).", "type": "array", "minItems": 1, "uniqueItems": true, "items": {"enum": ["agent", "automation"]}},
  "action": {"description": "What the hook does: start a Claude task with prompt (default), notify agents, the editor and the activity timeline with message, or run an allowlisted command.", "enum": ["task", "notify", "command"]},
  "actionNeeds": {"allOf": [
    {"if": {"properties": {"action": {"const": "notify"}}, "required": ["action"]}, "then": {"required": ["message"]}},
    {"if": {"properties": {"action": {"const": "command"}}, "required": ["action"]}, "then": {"required": ["command"]}},
    {"if": {"not": {"required": ["action"]}}, "then": {"required": ["prompt"]}},
    {"if": {"properties": {"action": {"const": "task"}}, "required": ["action"]}, "then": {"required": ["prompt"]}}
  ]},
  "prompt": {"description": "Template of the task's prompt (action task); the event's placeholders are replaced.", "type": "string", "minLength": 1, "maxLength": 16384},
  "message": {"description": "Template of the notification (action notify).", "type": "string", "minLength": 1, "maxLength": 4096},
  "command": {"description": "Program to run (action command): a bare name from commands.allow, checked like runCommand and run under its sandbox.", "type": "string", "minLength": 1, "maxLength": 200},
  "args": {"description": "Its arguments; each a template. A replaced value that starts with '-' is refused.", "type": "array", "maxItems": 100, "items": {"type": "string", "maxLength": 4096}},
  "cooldownMs": {"description": "Least time between two firings of this hook for the same subject (file, branch, session, program).", "type": "integer", "maximum": 86400000},
  "timeoutMs": {"description": "Timeout of the tasks or commands this hook starts.", "type": "integer"}
}"#;

/// [`DEFS`] with the bounds the code enforces elsewhere filled in from its constants.
fn defs() -> Value {
    let mut defs = parsed(DEFS);
    defs["cooldownMs"]["minimum"] = json!(super::policy::MIN_COOLDOWN_MS);
    defs["timeoutMs"]["minimum"] = json!(crate::tasks::MIN_TIMEOUT_MS);
    defs["timeoutMs"]["maximum"] = json!(crate::tasks::MAX_TIMEOUT_MS);
    defs
}

fn parsed(text: &str) -> Value {
    serde_json::from_str(text).expect("a declared schema fragment is JSON")
}

/// Markdown as the schema's plain descriptions read it (no backticks or link targets).
fn plain(markdown: &str) -> String {
    let mut out = markdown.replace(['`', '*'], "");
    while let (Some(a), Some(b)) = (out.find("]("), out.find(')')) {
        if b <= a {
            break;
        }
        out.replace_range(a..=b, "");
        out = out.replacen('[', "", 1);
    }
    out
}

/// The policy's JSON schema (`config/automation.schema.json`).
pub fn schema() -> Value {
    let mut properties = Map::new();
    properties.insert(
        "maxTasksPerHour".into(),
        json!({
            "description": "Tasks, commands and linter runs all hooks together may start in any sliding hour (notifications and the gates' checks are not counted).",
            "type": "integer", "minimum": 1, "maximum": 1000
        }),
    );
    for event in EVENTS {
        let mut fields = Map::new();
        for (name, fragment) in event.fields.iter().chain(COMMON) {
            fields
                .entry(name.to_string())
                .or_insert_with(|| parsed(fragment));
        }
        let mut hook = json!({
            "description": format!("Fires when {}.", plain(event.fires)),
            "type": "object",
            "additionalProperties": false,
            "properties": fields,
            "allOf": [{"$ref": "#/$defs/actionNeeds"}],
        });
        if !event.required.is_empty() {
            hook["required"] = json!(event.required);
        }
        properties.insert(event.key.into(), hook);
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/ide-bridge/ide-bridge/config/automation.schema.json",
        "title": "ide-bridge automation policy",
        "description": "Hooks that turn workspace, editor, task, git, agent, command and native-work events into Claude tasks, notifications or allowlisted commands. Generated from src/automation/events.rs; see docs/automation.md.",
        "type": "object",
        "additionalProperties": false,
        "properties": properties,
        "$defs": defs(),
    })
}

/// The table of hooks for `docs/automation.md`.
pub fn docs_table() -> String {
    let mut out = String::from(
        "| hook | fires when | its own fields | subject (cooldown key) | placeholders |\n|---|---|---|---|---|\n",
    );
    for e in EVENTS {
        let fields: Vec<String> = e
            .fields
            .iter()
            .map(|(name, _)| {
                if e.required.contains(name) {
                    format!("`{name}` (required)")
                } else {
                    format!("`{name}`")
                }
            })
            .collect();
        out.push_str(&format!(
            "| `{}`{} | {} | {} | {} | {} |\n",
            e.key,
            if e.deprecated.is_some() {
                " (deprecated)"
            } else {
                ""
            },
            e.fires,
            if fields.is_empty() {
                "—".to_string()
            } else {
                fields.join(", ")
            },
            e.subject,
            e.placeholders_markdown()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `config/automation.schema.json` and docs/automation.md's table of hooks are what
    /// the declarations say; `UPDATE_DOCS=1` rewrites them.
    #[test]
    fn the_policy_schema_and_the_docs_table_are_current() {
        let schema = serde_json::to_string_pretty(&schema()).unwrap() + "\n";
        ide_bridge_protocol::generated::file(
            "config/automation.schema.json",
            &schema,
            "automation::events",
        );
        ide_bridge_protocol::generated::region(
            "docs/automation.md",
            "<!-- hooks: generated from crates/automation/src/automation/events.rs (UPDATE_DOCS=1 cargo test -p ide-bridge-automation --lib events) -->\n",
            "<!-- end of the generated hooks -->\n",
            &docs_table(),
            "automation::events",
        );
    }

    #[test]
    fn keys_are_unique_and_the_schema_compiles() {
        let mut keys: Vec<&str> = EVENTS.iter().map(|e| e.key).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), EVENTS.len());
        jsonschema::validator_for(&schema()).expect("the generated schema compiles");
        assert_eq!(plain("a [hooks](hooks.md) `x` **y**"), "a hooks x y");
    }
}
