//! `ide-bridge init`: registers `ide-bridge mcp` as a user-scope stdio MCP server in
//! Claude Code's configuration, so that the model sees every bridge tool (the IDE
//! connection alone shows it only `getDiagnostics`), and installs the hooks through
//! which the bridge sees and coordinates the CLI's own tools ([`crate::hooks`]).
//!
//! Both files are edited the same way ([`edit_json`]): read, change, and written back
//! atomically with the previous text kept as `<file>.bak`, under an exclusive lock so
//! that parallel runs never lose each other's change; a symlinked file is updated where
//! it lives (even when its target does not exist yet); anything but a regular file is
//! refused untouched.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::hooks::install as hooks;
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
    /// A FIFO, device, socket or directory sits where the file should be.
    #[error("{path} is not a regular file ({kind}); move it away, then run init again")]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
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

/// Claude Code's user settings, where hooks live: `$CLAUDE_CONFIG_DIR/settings.json`,
/// else `~/.claude/settings.json`.
pub fn settings_path() -> PathBuf {
    lockfile::config_dir().join("settings.json")
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

/// What happened to a configuration file.
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

/// The file a path names for writing: a symlink's target (resolved even when the target
/// does not exist yet), else the path itself.
fn real_path(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::read_link(&current) {
            Ok(target) => {
                current = match current.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            Err(_) => return current,
        }
    }
    current
}

/// Reads the JSON object at `path` (missing or empty: `{}`), lets `change` edit it, and
/// writes it back when `change` says it changed something. See the module comment.
pub fn edit_json(
    path: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> Result<bool, String>,
) -> Result<Change, InitError> {
    let path = real_path(path);
    let io = |source| InitError::Io {
        path: path.clone(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(&path) {
        let t = meta.file_type();
        let kind = if t.is_fifo() {
            Some("a FIFO")
        } else if t.is_dir() {
            Some("a directory")
        } else if t.is_socket() {
            Some("a socket")
        } else if t.is_block_device() || t.is_char_device() {
            Some("a device")
        } else {
            None
        };
        if let Some(kind) = kind {
            return Err(InitError::NotAFile { path, kind });
        }
    }
    // Parallel runs (several installs at once) take turns on a lock beside the file,
    // removed when the edit is done.
    let lock = EditLock::take(path.with_file_name(format!(
        ".{}.lock",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    )))
    .map_err(io)?;
    let original = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(e)),
    };
    let not_object = |reason: String| InitError::NotAnObject {
        path: path.clone(),
        reason,
    };
    let mut config: Map<String, Value> = match original.as_deref() {
        None => Map::new(),
        Some(text) if text.trim().is_empty() => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(not_object("the top level is not an object".into())),
            Err(e) => return Err(not_object(e.to_string())),
        },
    };
    if !change(&mut config).map_err(not_object)? {
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
    lockfile::write_atomic(&path, text.as_bytes()).map_err(io)?;
    drop(lock);
    Ok(Change::Written { backup })
}

/// An exclusive lock on a file beside the one being edited, removed when it is let go.
/// Whoever waited on the removed file finds the path no longer names what it locked,
/// and takes the lock again on the new file: one holder at a time.
struct EditLock {
    /// Locked while open.
    _held: std::fs::File,
    path: PathBuf,
}

impl EditLock {
    fn take(path: PathBuf) -> std::io::Result<Self> {
        use std::os::unix::fs::MetadataExt;
        loop {
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path)?;
            // SAFETY: flock on a descriptor we own; released when `file` is closed.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let held = file.metadata()?.ino();
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.ino() == held) {
                return Ok(Self { _held: file, path });
            }
        }
    }
}

impl Drop for EditLock {
    fn drop(&mut self) {
        // Removed while still held (`_held` is closed after this): whoever takes the
        // old file after it finds it gone.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Checks a server name.
fn check_name(name: &str) -> Result<(), InitError> {
    let valid = !name.is_empty()
        && name != "ide"
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(InitError::BadName(name.to_string()))
    }
}

/// Adds (or with `remove`, removes) the server `name` in `path`.
pub fn apply(path: &Path, name: &str, binary: &Path, remove: bool) -> Result<Change, InitError> {
    check_name(name)?;
    edit_json(path, |config| {
        let servers = config
            .entry("mcpServers")
            .or_insert_with(|| Value::Object(Map::new()));
        let servers = servers
            .as_object_mut()
            .ok_or("mcpServers is not an object")?;
        let wanted = entry(binary);
        let changed = if remove {
            servers.remove(name).is_some()
        } else if servers.get(name) == Some(&wanted) {
            false
        } else {
            servers.insert(name.to_string(), wanted);
            true
        };
        if servers.is_empty() {
            config.remove("mcpServers");
        }
        Ok(changed)
    })
}

/// Installs (or with `remove`, removes) our hooks in the settings file `path`.
pub fn apply_hooks(path: &Path, binary: &Path, remove: bool) -> Result<Change, InitError> {
    let command = hooks::command_for(binary);
    edit_json(path, |settings| {
        if remove {
            hooks::remove(settings)
        } else {
            hooks::install(settings, &command)
        }
        .map_err(|e| e.to_string())
    })
}

/// The snippets other MCP clients need, and the hooks unless `no_hooks`, for `init
/// --print`; Claude Code's files named where `init` would write them. Claude Desktop
/// starts its servers outside any project, so its entry names `project` (the one
/// `init` runs in; a placeholder without one).
pub fn snippets(name: &str, binary: &Path, no_hooks: bool, project: Option<&Path>) -> String {
    let bin = binary.display().to_string();
    let stdio = json!({ name: { "command": bin, "args": ["mcp"] } });
    let project = project.map_or_else(
        || "/path/to/your/project".to_string(),
        |p| p.display().to_string(),
    );
    let desktop = json!({ name: { "command": bin, "args": ["mcp", "--workspace", project] } });
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
    let hooks = if no_hooks {
        String::new()
    } else {
        format!(
            "Claude Code hooks ({}; the bridge sees and coordinates the CLI's own tools \
             through them):\n{}\n\n",
            settings_path().display(),
            pretty(&json!({ "hooks": hooks::ours(&hooks::command_for(binary)) })),
        )
    };
    format!(
        "Claude Code ({}, or `claude mcp add --scope user {name} -- {bin} mcp`):\n{}\n\n\
         {hooks}\
         Claude Desktop (claude_desktop_config.json; it starts servers outside any \
         project, so the entry names one):\n{}\n\n\
         Cursor (.cursor/mcp.json in the project; in ~/.cursor/mcp.json add \
         \"--workspace\", \"<project>\" to args):\n{}\n\n\
         VS Code (.vscode/mcp.json or the user mcp.json):\n{}\n\n\
         Gemini CLI (~/.gemini/settings.json):\n{}\n\n\
         Codex (~/.codex/config.toml):\n[mcp_servers.{name}]\ncommand = {bin:?}\nargs = [\"mcp\"]\n\n\
         Streamable HTTP clients: POST http://127.0.0.1:<port>/mcp with \
         `Authorization: Bearer <authToken>` (port and token are in the bridge's lock file, \
         <config dir>/ide/<port>.lock; the token stays the same across restarts of a workspace).\n",
        claude_json_path().display(),
        pretty(&json!({ "mcpServers": { name: entry(binary) } })),
        pretty(&json!({ "mcpServers": desktop })),
        pretty(&json!({ "mcpServers": stdio })),
        pretty(&json!({ "servers": { name: { "type": "stdio", "command": bin, "args": ["mcp"] } } })),
        pretty(&json!({ "mcpServers": stdio })),
    )
}

/// What `init` was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitOptions<'a> {
    /// The MCP server's name.
    pub name: &'a str,
    /// Undo instead.
    pub remove: bool,
    /// Only print the snippets.
    pub print: bool,
    /// Leave the hooks alone.
    pub no_hooks: bool,
}

/// Runs the subcommand; returns the process exit code.
pub fn run(options: InitOptions<'_>) -> u8 {
    let InitOptions {
        name,
        remove,
        print,
        no_hooks,
    } = options;
    let binary = binary_path();
    // A name `init` would refuse is refused for `--print` too, as a bad argument.
    if let Err(e) = check_name(name) {
        eprintln!("ide-bridge init: {e}");
        return 2;
    }
    if print {
        let project = std::env::current_dir()
            .ok()
            .and_then(|dir| crate::relay::project_root(&dir));
        print!("{}", snippets(name, &binary, no_hooks, project.as_deref()));
        return 0;
    }
    let path = claude_json_path();
    let kept = |backup: Option<PathBuf>| {
        backup
            .map(|b| format!(" (previous file kept as {})", b.display()))
            .unwrap_or_default()
    };
    let mut status = 0;
    match apply(&path, name, &binary, remove) {
        Ok(Change::Unchanged) if remove => println!(
            "{name} was not registered in {}; nothing changed.",
            path.display()
        ),
        Ok(Change::Unchanged) => println!(
            "{name} is already registered in {} (command {} mcp); nothing changed.",
            path.display(),
            binary.display()
        ),
        Ok(Change::Written { backup }) if remove => println!(
            "Removed the MCP server {name} from {}{}.",
            path.display(),
            kept(backup)
        ),
        Ok(Change::Written { backup }) => println!(
            "Registered the MCP server {name} (command: {} mcp) in {}{}.\n\
             New Claude Code sessions show the model every bridge tool as \
             mcp__{name}__<tool>; `claude --ide` still connects the IDE side (diffs, \
             selections). Other clients: `ide-bridge init --print`.",
            binary.display(),
            path.display(),
            kept(backup)
        ),
        Err(e) => {
            eprintln!("ide-bridge init: {e}");
            status = 1;
        }
    }
    if no_hooks {
        return status;
    }
    let settings = settings_path();
    match apply_hooks(&settings, &binary, remove) {
        Ok(Change::Unchanged) if remove => {
            println!(
                "No ide-bridge hooks in {}; nothing changed.",
                settings.display()
            )
        }
        Ok(Change::Unchanged) => println!(
            "The ide-bridge hooks are already in {}; nothing changed.",
            settings.display()
        ),
        Ok(Change::Written { backup }) if remove => println!(
            "Removed the ide-bridge hooks from {}{}.",
            settings.display(),
            kept(backup)
        ),
        Ok(Change::Written { backup }) => println!(
            "Installed hooks in {}{}: the bridge serving a project sees its agents' own \
             tool calls (Read, Edit, Bash, …), refuses edits of files another agent \
             claimed, and tells agents when another changed a file they read. Where no \
             bridge runs they do nothing.",
            settings.display(),
            kept(backup)
        ),
        Err(e) => {
            eprintln!("ide-bridge init: {e}");
            status = 1;
        }
    }
    status
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
        // The edits' lock is gone with them: only the file and its backup are left.
        let mut left: Vec<String> = std::fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [".claude.json", ".claude.json.bak"]);
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

    #[test]
    fn a_dangling_symlink_is_kept_and_its_target_written_and_a_fifo_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let link = t.path().join("settings.json");
        let target = t.path().join("dotfiles/claude-settings.json");
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        apply_hooks(&link, Path::new("/b/ide-bridge"), false).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "'/b/ide-bridge' hook"
        );
        let fifo = t.path().join("fifo.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a path we own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            apply(&fifo, "ide-bridge", Path::new("/b"), false),
            Err(InitError::NotAFile { kind: "a FIFO", .. })
        ));
    }

    #[test]
    fn parallel_runs_keep_every_change() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join(".claude.json");
        let threads: Vec<_> = (0..10)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    apply(&path, &format!("s{i}"), Path::new("/b"), false).unwrap();
                })
            })
            .collect();
        for th in threads {
            th.join().unwrap();
        }
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["mcpServers"].as_object().unwrap().len(), 10);
    }
}
