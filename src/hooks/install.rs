//! The hooks `ide-bridge init` writes into Claude Code's user settings
//! (`$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`): one command
//! hook per event, each running `ide-bridge hook`. Ours are recognised by their command
//! (`<…/ide-bridge> hook`), so `init` replaces them when the binary moved, `--remove`
//! takes out exactly them, and every other hook and setting stays as it was.
//!
//! Why a command hook: it is the one type every event accepts (http and mcp_tool hooks
//! cannot serve SessionStart), it needs no secret in the settings file (the command
//! reads the token from the lock file), and it costs nothing where no bridge runs (it
//! finds no lock file and exits 0 with no output). Its cost per tool call is measured
//! in docs/benchmarks.md.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::input::HookEvent;

/// Every tool but MCP tools: the bridge records calls of its own tools itself, and
/// other servers' tools are not work on the workspace.
pub const TOOL_MATCHER: &str = "^(?!mcp__).*";

/// How `init` installs the hook of one event.
struct Shape {
    /// The tools it fires for (tool events only).
    matcher: Option<&'static str>,
    /// Seconds the CLI waits before it ends the hook.
    timeout: u64,
    /// The CLI does not wait for it: the tool call is not delayed, and its answer is
    /// not read (it records; it does not decide).
    background: bool,
}

/// The hook of each event. One hook delays a tool call: `PreToolUse` (claims, the
/// notices for the model, and how the agent's earlier calls ended, read from its
/// transcript); docs/benchmarks.md has its cost.
fn shape(event: HookEvent) -> Shape {
    let (matcher, timeout, background) = match event {
        // An edit gate may check a write first (see `WRITE_HOOK_WAIT`).
        HookEvent::PreToolUse => (Some(TOOL_MATCHER), super::PRE_TOOL_USE_TIMEOUT_S, false),
        // Not installed (see `HookEvent::INSTALLED`); ended from the transcript.
        HookEvent::PostToolUse | HookEvent::PostToolUseFailure => (Some(TOOL_MATCHER), 10, true),
        // The done-gate may run checks (bounded by the policy's own timeout).
        HookEvent::Stop => (None, 900, false),
        // Waits while the person decides in the page; the terminal dialog stays usable
        // meanwhile and the first answer wins.
        HookEvent::PermissionRequest => (Some("*"), 3600, false),
        HookEvent::SessionStart => (None, 10, true),
        // Not in the background: a CLI that exits would cut it short.
        HookEvent::UserPromptSubmit | HookEvent::SessionEnd => (None, 10, false),
    };
    Shape {
        matcher,
        timeout,
        background,
    }
}

/// The shell command that runs `binary hook` (the path single-quoted).
pub fn command_for(binary: &Path) -> String {
    let path = binary.display().to_string().replace('\'', r"'\''");
    format!("'{path}' hook")
}

/// True for a hook command `init` wrote: an `ide-bridge` binary (any path) run with
/// `hook` and nothing else.
pub fn is_ours(command: &str) -> bool {
    let Some(program) = command.trim().strip_suffix(" hook") else {
        return false;
    };
    let program = program.trim().trim_matches(['\'', '"']);
    Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n == "ide-bridge")
}

/// The `hooks` object `init` installs (what `init --print` shows).
pub fn ours(command: &str) -> Value {
    let mut hooks = Map::new();
    for event in HookEvent::INSTALLED {
        hooks.insert(event.as_str().to_string(), json!([group(event, command)]));
    }
    Value::Object(hooks)
}

fn group(event: HookEvent, command: &str) -> Value {
    let Shape {
        matcher,
        timeout,
        background,
    } = shape(event);
    let mut hook = json!({ "type": "command", "command": command, "timeout": timeout });
    if background {
        hook["async"] = json!(true);
    }
    match matcher {
        Some(m) => json!({ "matcher": m, "hooks": [hook] }),
        None => json!({ "hooks": [hook] }),
    }
}

/// Why the settings' `hooks` cannot be edited.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0} is not what Claude Code expects; fix it by hand, then run init again")]
pub struct Malformed(pub String);

/// Takes our hooks out of `settings` (other hooks, groups and keys are kept; a group
/// or event left empty is removed). True when something changed.
pub fn remove(settings: &mut Map<String, Value>) -> Result<bool, Malformed> {
    let Some(hooks) = settings.get_mut("hooks") else {
        return Ok(false);
    };
    let hooks = hooks
        .as_object_mut()
        .ok_or_else(|| Malformed("\"hooks\"".into()))?;
    let mut changed = false;
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else {
            continue;
        };
        for group in groups.iter_mut() {
            let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                continue;
            };
            let before = list.len();
            list.retain(|h| {
                !(h.get("type").and_then(Value::as_str) == Some("command")
                    && h.get("command")
                        .and_then(Value::as_str)
                        .is_some_and(is_ours))
            });
            changed |= list.len() != before;
        }
        let before = groups.len();
        groups.retain(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .is_none_or(|l| !l.is_empty())
        });
        changed |= groups.len() != before;
        let _ = event;
    }
    hooks.retain(|_, groups| groups.as_array().is_none_or(|g| !g.is_empty()));
    if hooks.is_empty() {
        settings.remove("hooks");
    }
    Ok(changed)
}

/// Installs our hooks with `command` (replacing ours with another binary path).
/// True when something changed.
pub fn install(settings: &mut Map<String, Value>, command: &str) -> Result<bool, Malformed> {
    let before = settings.get("hooks").cloned();
    remove(settings)?;
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| Malformed("\"hooks\"".into()))?;
    for event in HookEvent::INSTALLED {
        let groups = hooks
            .entry(event.as_str())
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| Malformed(format!("\"hooks\".\"{}\"", event.as_str())))?;
        groups.push(group(event, command));
    }
    Ok(settings.get("hooks") != before.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_only_our_command() {
        assert!(is_ours("'/opt/bin/ide-bridge' hook"));
        assert!(is_ours("/usr/local/bin/ide-bridge hook"));
        assert!(!is_ours("'/opt/bin/ide-bridge' hook --x"));
        assert!(!is_ours("/opt/bin/other hook"));
        assert!(!is_ours("echo ide-bridge"));
        assert_eq!(
            command_for(Path::new("/a b/it's/ide-bridge")),
            r"'/a b/it'\''s/ide-bridge' hook"
        );
    }

    #[test]
    fn installs_idempotently_keeps_other_hooks_and_removes_only_ours() {
        let mut s: Map<String, Value> = serde_json::from_value(json!({
            "theme": "dark",
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "my-audit"},
                    {"type": "command", "command": "'/old/ide-bridge' hook"}
                ]}],
                "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
            }
        }))
        .unwrap();
        let cmd = command_for(Path::new("/new/ide-bridge"));
        assert!(install(&mut s, &cmd).unwrap());
        let pre = s["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(
            pre.len(),
            2,
            "the user's group stays, ours is added: {pre:?}"
        );
        assert_eq!(
            pre[0]["hooks"].as_array().unwrap().len(),
            1,
            "the old binary's hook is gone"
        );
        assert_eq!(pre[1]["hooks"][0]["command"], cmd);
        assert_eq!(s["hooks"]["Stop"][0]["hooks"][0]["timeout"], 900);
        assert_eq!(s["hooks"]["SessionStart"][0]["hooks"][0]["async"], true);
        assert!(
            s["hooks"].get("PostToolUse").is_none(),
            "a tool call costs one hook"
        );
        assert!(s["hooks"]["PreToolUse"][1]["hooks"][0]
            .get("async")
            .is_none());
        assert!(
            !install(&mut s, &cmd).unwrap(),
            "a second run changes nothing"
        );
        assert!(remove(&mut s).unwrap());
        assert_eq!(s["theme"], "dark");
        assert_eq!(
            s["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "my-audit"
        );
        assert!(s["hooks"].get("Stop").is_none());
        assert!(s["hooks"].get("Notification").is_some());
        assert!(!remove(&mut s).unwrap());
        let mut only_ours = Map::new();
        install(&mut only_ours, &cmd).unwrap();
        remove(&mut only_ours).unwrap();
        assert!(only_ours.is_empty(), "{only_ours:?}");
        let mut bad: Map<String, Value> = serde_json::from_value(json!({"hooks": []})).unwrap();
        assert!(install(&mut bad, &cmd).is_err());
    }
}
