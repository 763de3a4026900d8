//! `ide-bridge init`: registers `ide-bridge mcp` as a user-scope stdio MCP server in
//! Claude Code's configuration, so that the model sees every bridge tool (the IDE
//! connection alone shows it only `getDiagnostics` and `executeCode`).

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::lockfile;

/// Why `init` could not do its job.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The configuration file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The configuration file is not a JSON object; it is left untouched.
    #[error("{path} is not a JSON object ({reason}); fix or move it, then run init again")]
    NotAnObject {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The server name is empty or has characters Claude Code does not accept.
    #[error("server name {0:?}: use letters, digits, '-' and '_' (and not \"ide\", which the IDE connection uses)")]
    BadName(String),
}

/// Claude Code's user configuration: `$CLAUDE_CONFIG_DIR/.claude.json` when that
/// variable is set, else `~/.claude.json`.
pub fn claude_json_path() -> PathBuf {
    match std::env::var_os("CLAUDE_CONFIG_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join(".claude.json"),
        _ => PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/".into()))
            .join(".claude.json"),
    }
}

/// The command that starts this binary as typed: an absolute path that keeps symlinks
/// (a link on PATH survives rebuilds of the file it points to).
pub fn binary_path() -> PathBuf {
    let arg0 = std::env::args_os().next().map(PathBuf::from);
    let from_arg0 = arg0.and_then(|a| {
        if a.components().count() > 1 {
            std::path::absolute(&a).ok()
        } else {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join(&a))
                    .find(|p| p.is_file())
            })
        }
    });
    from_arg0
        .filter(|p| p.is_file())
        .or_else(|| std::env::current_exe().ok())
        .unwrap_or_else(|| PathBuf::from("ide-bridge"))
}

/// The `mcpServers` entry for Claude Code.
fn entry(binary: &Path) -> Value {
    json!({ "type": "stdio", "command": binary.display().to_string(), "args": ["mcp"], "env": {} })
}

/// What happened to the configuration.
#[derive(Debug, PartialEq, Eq)]
pub enum Change {
    /// Added or updated; the previous file is at the backup path (if there was one).
    Written {
        /// Where the previous file was kept.
        backup: Option<PathBuf>,
    },
    /// It already said exactly that.
    Unchanged,
}

/// Adds (or with `remove`, removes) the server `name` in `path`.
pub fn apply(path: &Path, name: &str, binary: &Path, remove: bool) -> Result<Change, InitError> {
    // A symlinked configuration (dotfile managers) is updated where it really lives,
    // not replaced by a regular file.
    let resolved = std::fs::canonicalize(path).ok();
    let path = resolved.as_deref().unwrap_or(path);
    let valid = !name.is_empty()
        && name != "ide"
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !valid {
        return Err(InitError::BadName(name.to_string()));
    }
    let io = |source| InitError::Io {
        path: path.to_path_buf(),
        source,
    };
    let original = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(e)),
    };
    let mut config: Map<String, Value> = match original.as_deref() {
        None => Map::new(),
        Some(text) if text.trim().is_empty() => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                return Err(InitError::NotAnObject {
                    path: path.to_path_buf(),
                    reason: "the top level is not an object".into(),
                })
            }
            Err(e) => {
                return Err(InitError::NotAnObject {
                    path: path.to_path_buf(),
                    reason: e.to_string(),
                })
            }
        },
    };
    let servers = config
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(servers) = servers.as_object_mut() else {
        return Err(InitError::NotAnObject {
            path: path.to_path_buf(),
            reason: "mcpServers is not an object".into(),
        });
    };
    let wanted = entry(binary);
    let changed = if remove {
        servers.remove(name).is_some()
    } else if servers.get(name) == Some(&wanted) {
        false
    } else {
        servers.insert(name.to_string(), wanted);
        true
    };
    if remove && servers.is_empty() {
        config.remove("mcpServers");
    }
    if !changed {
        return Ok(Change::Unchanged);
    }
    let backup = match &original {
        Some(text) => {
            let backup = path.with_file_name(format!(
                "{}.bak",
                path.file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default()
            ));
            lockfile::write_atomic(&backup, text.as_bytes()).map_err(io)?;
            Some(backup)
        }
        None => None,
    };
    let mut text = serde_json::to_string_pretty(&Value::Object(config))
        .map_err(|e| io(std::io::Error::other(e)))?;
    text.push('\n');
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    lockfile::write_atomic(path, text.as_bytes()).map_err(io)?;
    Ok(Change::Written { backup })
}

/// The snippets other MCP clients need, for `init --print`.
pub fn snippets(name: &str, binary: &Path) -> String {
    let bin = binary.display().to_string();
    let stdio = json!({ name: { "command": bin, "args": ["mcp"] } });
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
    format!(
        "Claude Code (~/.claude.json, or `claude mcp add --scope user {name} -- {bin} mcp`):\n{}\n\n\
         Claude Desktop (claude_desktop_config.json) and Cursor (~/.cursor/mcp.json):\n{}\n\n\
         VS Code (.vscode/mcp.json or the user mcp.json):\n{}\n\n\
         Gemini CLI (~/.gemini/settings.json):\n{}\n\n\
         Codex (~/.codex/config.toml):\n[mcp_servers.{name}]\ncommand = {bin:?}\nargs = [\"mcp\"]\n\n\
         Streamable HTTP clients: POST http://127.0.0.1:<port>/mcp with \
         `Authorization: Bearer <authToken>` (port and token are in the bridge's lock file, \
         <config dir>/ide/<port>.lock; the token stays the same across restarts of a workspace).\n",
        pretty(&json!({ "mcpServers": { name: entry(binary) } })),
        pretty(&json!({ "mcpServers": stdio })),
        pretty(&json!({ "servers": { name: { "type": "stdio", "command": bin, "args": ["mcp"] } } })),
        pretty(&json!({ "mcpServers": stdio })),
    )
}

/// Runs the subcommand; returns the process exit code.
pub fn run(name: &str, remove: bool, print: bool) -> u8 {
    let binary = binary_path();
    if print {
        print!("{}", snippets(name, &binary));
        return 0;
    }
    let path = claude_json_path();
    match apply(&path, name, &binary, remove) {
        Ok(Change::Unchanged) if remove => {
            println!(
                "{name} was not registered in {}; nothing changed.",
                path.display()
            );
            0
        }
        Ok(Change::Unchanged) => {
            println!(
                "{name} is already registered in {} (command {} mcp); nothing changed.",
                path.display(),
                binary.display()
            );
            0
        }
        Ok(Change::Written { backup }) => {
            let kept = backup
                .map(|b| format!(" (previous file kept as {})", b.display()))
                .unwrap_or_default();
            if remove {
                println!(
                    "Removed the MCP server {name} from {}{kept}.",
                    path.display()
                );
            } else {
                println!(
                    "Registered the MCP server {name} (command: {} mcp) in {}{kept}.\n\
                     New Claude Code sessions show the model every bridge tool as \
                     mcp__{name}__<tool>; `claude --ide` still connects the IDE side (diffs, \
                     selections). Other clients: `ide-bridge init --print`.",
                    binary.display(),
                    path.display()
                );
            }
            0
        }
        Err(e) => {
            eprintln!("ide-bridge init: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_idempotently_keeps_other_keys_and_removes() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join(".claude.json");
        std::fs::write(
            &path,
            r#"{"theme":"dark","mcpServers":{"other":{"command":"x"}},"z":1}"#,
        )
        .unwrap();
        let bin = Path::new("/opt/bin/ide-bridge");
        let first = apply(&path, "ide-bridge", bin, false).unwrap();
        assert!(matches!(first, Change::Written { backup: Some(_) }));
        let text = std::fs::read_to_string(&path).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["theme"], "dark");
        assert_eq!(v["z"], 1);
        assert_eq!(v["mcpServers"]["other"]["command"], "x");
        assert_eq!(
            v["mcpServers"]["ide-bridge"]["command"],
            "/opt/bin/ide-bridge"
        );
        assert_eq!(v["mcpServers"]["ide-bridge"]["args"], json!(["mcp"]));
        // Key order is kept: theme first, z last.
        assert!(text.find("theme").unwrap() < text.find("mcpServers").unwrap());
        assert!(text.find("mcpServers").unwrap() < text.find("\"z\"").unwrap());
        assert_eq!(
            apply(&path, "ide-bridge", bin, false).unwrap(),
            Change::Unchanged
        );
        apply(&path, "ide-bridge", bin, true).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(v["mcpServers"].get("ide-bridge").is_none());
        assert_eq!(v["mcpServers"]["other"]["command"], "x");
        assert_eq!(
            apply(&path, "ide-bridge", bin, true).unwrap(),
            Change::Unchanged
        );
    }

    #[test]
    fn refuses_bad_files_and_names_without_writing() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join(".claude.json");
        std::fs::write(&path, "[1,2]").unwrap();
        let bin = Path::new("/b");
        assert!(matches!(
            apply(&path, "x", bin, false),
            Err(InitError::NotAnObject { .. })
        ));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[1,2]");
        assert!(matches!(
            apply(&path, "ide", bin, false),
            Err(InitError::BadName(_))
        ));
        assert!(matches!(
            apply(&path, "a b", bin, false),
            Err(InitError::BadName(_))
        ));
        let real = t.path().join("dotfiles.json");
        std::fs::write(&real, "{}").unwrap();
        let link = t.path().join("linked.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        apply(&link, "ide-bridge", bin, false).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(std::fs::read_to_string(&real)
            .unwrap()
            .contains("ide-bridge"));
        let fresh = t.path().join("new/.claude.json");
        assert_eq!(
            apply(&fresh, "ide-bridge", bin, false).unwrap(),
            Change::Written { backup: None }
        );
    }
}
