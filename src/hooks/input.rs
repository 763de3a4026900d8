//! What Claude Code sends a hook: one JSON object on stdin (command hooks) or as the
//! POST body (http hooks). Shapes measured on the pinned 2.1.197 and the newest
//! 2.1.332 (`../shared/claude-code.md`); unknown fields are ignored and every field
//! but the event name is optional, so a newer CLI that adds or drops one still works.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The hook events the bridge installs and handles. The wire names are the CLI's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HookEvent {
    /// Before a tool runs: may deny it with a reason, or add context for the model.
    PreToolUse,
    /// After a tool ran successfully.
    PostToolUse,
    /// After a tool failed (a Bash exit code other than 0, an Edit that did not apply).
    PostToolUseFailure,
    /// The person submitted a prompt (a new turn).
    UserPromptSubmit,
    /// The agent is about to end its turn: may keep it working.
    Stop,
    /// The CLI started (or resumed, cleared, compacted) a conversation.
    SessionStart,
    /// The conversation ended.
    SessionEnd,
    /// A permission dialog is about to be shown: may allow or deny in its place.
    PermissionRequest,
}

impl HookEvent {
    /// The events `init` installs a hook for, in the order it writes them. None runs
    /// after a tool: the hook before the next tool (or the stop) reads from the
    /// transcript how it ended, so a tool call costs one hook.
    pub const INSTALLED: [HookEvent; 6] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PermissionRequest,
        HookEvent::Stop,
        HookEvent::SessionEnd,
    ];

    /// Every event the bridge handles.
    pub const ALL: [HookEvent; 8] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PermissionRequest,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::Stop,
        HookEvent::SessionEnd,
    ];

    /// The CLI's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::PermissionRequest => "PermissionRequest",
        }
    }

    /// The event named `name`, if the bridge handles it.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }
}

/// One hook invocation as the CLI describes it.
#[derive(Debug, Clone, Deserialize)]
pub struct HookInput {
    /// Which event.
    pub hook_event_name: HookEvent,
    /// The CLI's conversation id (a UUID; not the bridge's session id).
    #[serde(default)]
    pub session_id: String,
    /// The CLI's working directory.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The turn this event belongs to (2.1.197 and later): a new one per prompt.
    #[serde(default)]
    pub prompt_id: Option<String>,
    /// The conversation's transcript (JSONL), where the CLI records each tool's result.
    #[serde(default)]
    pub transcript_path: Option<PathBuf>,
    /// Tool events: the call (`toolu_…`), the same in the transcript.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// Set when a sub-agent (the Task/Agent tool) makes the call: its results go to the
    /// sub-agent's own transcript beside the conversation's.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// Tool events: the tool's name (`Edit`, `Bash`, `mcp__server__tool`, …).
    #[serde(default)]
    pub tool_name: Option<String>,
    /// Tool events: its input (`file_path` is absolute).
    #[serde(default)]
    pub tool_input: Option<Value>,
    /// `PostToolUse`: what the tool answered.
    #[serde(default)]
    pub tool_response: Option<Value>,
    /// `PostToolUseFailure`: the error (`Exit code 1`).
    #[serde(default)]
    pub error: Option<String>,
    /// `PostToolUse`/`PostToolUseFailure`: how long the tool ran.
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// `UserPromptSubmit`: the prompt.
    #[serde(default)]
    pub prompt: Option<String>,
    /// `Stop`: the CLI is already continuing because of a Stop hook.
    #[serde(default)]
    pub stop_hook_active: bool,
    /// `Stop`: the agent's last message.
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    /// `SessionStart`: `startup`, `resume`, `clear`, `compact`.
    #[serde(default)]
    pub source: Option<String>,
    /// `SessionEnd`: why.
    #[serde(default)]
    pub reason: Option<String>,
}

/// What a native tool does to the workspace, as far as the bridge cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NativeAction<'a> {
    /// Read a file (`Read`).
    Read(&'a Path),
    /// Changed or created a file (`Edit`, `Write`, `NotebookEdit`).
    Write(&'a Path),
    /// Ran a shell command (`Bash`).
    Command(&'a str),
    /// Anything else (searches, web, todos, sub-agents), and MCP tools.
    Other,
}

/// How Claude Code (2.1.197 and 2.1.332 alike) reports a tool call the person refused
/// in its permission dialog: the call's error (its hook's, its transcript's result)
/// starts with this.
pub const DECLINED_BY_THE_PERSON: &str = "The user doesn't want to proceed with this tool use";

impl HookInput {
    /// Parses a hook's input.
    pub fn parse(bytes: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    /// The tool's name, or `""` for events without one.
    pub fn tool(&self) -> &str {
        self.tool_name.as_deref().unwrap_or("")
    }

    /// True for a call of an MCP server's tool (the bridge's own are recorded when the
    /// bridge answers them).
    pub fn is_mcp_tool(&self) -> bool {
        self.tool().starts_with("mcp__")
    }

    fn input_str(&self, key: &str) -> Option<&str> {
        self.tool_input.as_ref()?.get(key)?.as_str()
    }

    /// What the tool does, read from its input.
    pub fn action(&self) -> NativeAction<'_> {
        let path = |key| self.input_str(key).map(Path::new);
        match self.tool() {
            "Read" => path("file_path").map_or(NativeAction::Other, NativeAction::Read),
            "Edit" | "Write" => path("file_path").map_or(NativeAction::Other, NativeAction::Write),
            "NotebookEdit" => path("notebook_path")
                .or_else(|| path("file_path"))
                .map_or(NativeAction::Other, NativeAction::Write),
            "Bash" => self
                .input_str("command")
                .map_or(NativeAction::Other, NativeAction::Command),
            _ => NativeAction::Other,
        }
    }

    /// The whole text an Edit or Write would leave in its file, from its input and
    /// (an Edit) the file's current text as `current` reads it. `None` for other tools,
    /// an input whose text was cut (see [`super::shrink`]) or an Edit that would not
    /// apply (its `old_string` is not in the file; the CLI refuses it itself).
    pub fn proposed_text(&self, current: impl FnOnce(&Path) -> Option<String>) -> Option<String> {
        let cut = |s: &str| s.starts_with('<') && s.ends_with(" bytes>");
        match self.tool() {
            "Write" => self
                .input_str("content")
                .filter(|c| !cut(c))
                .map(str::to_string),
            "Edit" => {
                let old = self
                    .input_str("old_string")
                    .filter(|s| !cut(s) && !s.is_empty())?;
                let new = self.input_str("new_string").filter(|s| !cut(s))?;
                let all = self
                    .tool_input
                    .as_ref()
                    .and_then(|i| i.get("replace_all"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let text = current(Path::new(self.input_str("file_path")?))?;
                if !text.contains(old) {
                    return None;
                }
                Some(if all {
                    text.replace(old, new)
                } else {
                    text.replacen(old, new, 1)
                })
            }
            _ => None,
        }
    }

    /// A short description of the call for the timeline: the file, the command, the
    /// pattern — never contents. `relative` turns an absolute path into what people
    /// read (workspace-relative).
    pub fn summary(&self, relative: impl Fn(&Path) -> String) -> String {
        let text = match self.action() {
            NativeAction::Read(p) | NativeAction::Write(p) => relative(p),
            NativeAction::Command(c) => format!("$ {c}"),
            NativeAction::Other => {
                let input = self.tool_input.as_ref();
                let pick = |k| input.and_then(|i| i.get(k)).and_then(Value::as_str);
                ["pattern", "url", "query", "description", "path"]
                    .iter()
                    .find_map(|k| pick(k).map(|v| format!("{k}={v}")))
                    .unwrap_or_default()
            }
        };
        clip(&text, MAX_SUMMARY_CHARS)
    }
}

/// Replaces every string in `v` longer than `max` bytes by `<N bytes>`: a hook input
/// or a tool input keeps its shape without its bulk (file contents, command output).
pub fn shorten_strings(v: &mut Value, max: usize) {
    match v {
        Value::String(s) if s.len() > max => *s = format!("<{} bytes>", s.len()),
        Value::Array(items) => items.iter_mut().for_each(|i| shorten_strings(i, max)),
        Value::Object(map) => map.values_mut().for_each(|i| shorten_strings(i, max)),
        _ => {}
    }
}

/// Longest summary kept for a native call (a long command is cut).
pub const MAX_SUMMARY_CHARS: usize = 200;

/// `s` on one line, control characters dropped, cut to `max` characters with `…`.
pub fn clip(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max + 3));
    for (n, c) in s.chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn input(v: Value) -> HookInput {
        HookInput::parse(v.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn an_edit_or_write_proposes_a_whole_text() {
        let call = |tool: &str, tool_input: Value| {
            input(
                json!({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}),
            )
        };
        let file = |_: &Path| Some("a = 1\na = 1\n".to_string());
        let write = call("Write", json!({"file_path": "/w/a.py", "content": "x\n"}));
        assert_eq!(write.proposed_text(file).as_deref(), Some("x\n"));
        let cut = call(
            "Write",
            json!({"file_path": "/w/a.py", "content": "<9000000 bytes>"}),
        );
        assert_eq!(cut.proposed_text(file), None);
        let edit = |all: bool| {
            call(
                "Edit",
                json!({"file_path": "/w/a.py", "old_string": "= 1", "new_string": "= 2", "replace_all": all}),
            )
        };
        assert_eq!(
            edit(false).proposed_text(file).as_deref(),
            Some("a = 2\na = 1\n")
        );
        assert_eq!(
            edit(true).proposed_text(file).as_deref(),
            Some("a = 2\na = 2\n")
        );
        let absent = call(
            "Edit",
            json!({"file_path": "/w/a.py", "old_string": "b", "new_string": "c"}),
        );
        assert_eq!(absent.proposed_text(file), None);
        assert_eq!(
            call("Read", json!({"file_path": "/w/a.py"})).proposed_text(file),
            None
        );
    }

    #[test]
    fn parses_what_both_cli_versions_send_and_ignores_the_rest() {
        let edit = input(json!({
            "session_id": "67e0e567", "cwd": "/w", "prompt_id": "p1",
            "permission_mode": "default", "effort": {"level": "medium"},
            "hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": "/w/a.txt", "old_string": "x", "new_string": "y"},
            "tool_response": {"filePath": "/w/a.txt", "originalFile": "x\n"},
            "tool_use_id": "toolu_1", "duration_ms": 11
        }));
        assert_eq!(edit.hook_event_name, HookEvent::PostToolUse);
        assert_eq!(edit.action(), NativeAction::Write(Path::new("/w/a.txt")));
        assert_eq!(edit.duration_ms, Some(11));
        assert_eq!(edit.summary(|p| p.display().to_string()), "/w/a.txt");
        let bash = input(json!({
            "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
            "tool_input": {"command": "cargo test\n--all"}, "error": "Exit code 1"
        }));
        assert_eq!(bash.action(), NativeAction::Command("cargo test\n--all"));
        assert_eq!(bash.summary(|_| String::new()), "$ cargo test --all");
        let stop = input(json!({"hook_event_name": "Stop", "stop_hook_active": true}));
        assert!(stop.stop_hook_active);
        assert_eq!(stop.action(), NativeAction::Other);
        assert!(HookInput::parse(br#"{"hook_event_name":"Notification"}"#).is_err());
        assert!(HookInput::parse(b"[1]").is_err());
        let mcp = input(
            json!({"hook_event_name": "PreToolUse", "tool_name": "mcp__ide-bridge__readFile"}),
        );
        assert!(mcp.is_mcp_tool());
    }

    #[test]
    fn clip_keeps_one_line_and_cuts_long_text() {
        assert_eq!(clip("a\nb\u{7}c", 10), "a bc");
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clip("é€😀x", 3), "é€😀…");
    }
}
