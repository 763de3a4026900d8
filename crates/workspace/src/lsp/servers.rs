//! Which language server serves which files: the defaults (whichever are installed is
//! used), a configured entry replacing the default of its language, and the lookup of a
//! file's server by its extension.
//!
//! A language server runs as the user, outside the command sandbox, and reads the
//! project's configuration: the defaults keep the ones known to run project code from
//! doing so where they can be told (rust-analyzer's build scripts and proc macros).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One language's server, as `[lsp.servers.<language>]` says it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The program (a name on `PATH` or a path).
    pub command: String,
    /// Its arguments (for a language with a default: the default's when not given).
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// File extensions it serves, without the dot (for a language with a default: the
    /// default's when not given).
    #[serde(default)]
    pub extensions: Vec<String>,
    /// `initializationOptions` sent with `initialize`.
    #[serde(default)]
    pub initialization_options: Option<Value>,
}

fn server(command: &str, args: &[&str], extensions: &[&str]) -> ServerConfig {
    ServerConfig {
        command: command.into(),
        args: Some(args.iter().map(|s| s.to_string()).collect()),
        extensions: extensions.iter().map(|s| s.to_string()).collect(),
        initialization_options: None,
    }
}

/// The servers the bridge knows without configuration, by language.
pub fn defaults() -> BTreeMap<String, ServerConfig> {
    BTreeMap::from([
        ("python".into(), server("pylsp", &[], &["py", "pyi"])),
        (
            "typescript".into(),
            server(
                "typescript-language-server",
                &["--stdio"],
                &["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"],
            ),
        ),
        (
            "c".into(),
            server("clangd", &[], &["c", "h", "cc", "cpp", "cxx", "hpp", "hh"]),
        ),
        (
            "rust".into(),
            ServerConfig {
                // Build scripts and proc macros are the project's code: not run by a
                // server the bridge starts on its own (configure them back on in
                // `lsp.servers.rust.initialization_options` to have them).
                initialization_options: Some(serde_json::json!({
                    "cargo": {"buildScripts": {"enable": false}},
                    "procMacro": {"enable": false}
                })),
                ..server("rust-analyzer", &[], &["rs"])
            },
        ),
        ("go".into(), server("gopls", &[], &["go"])),
        (
            "bash".into(),
            server("bash-language-server", &["start"], &["sh", "bash"]),
        ),
    ])
}

/// The servers in effect: the defaults, each replaced by a configured entry of the
/// same language (what the entry leaves out, its arguments or extensions, taken from
/// the default), plus configured languages of its own.
pub fn effective(configured: &BTreeMap<String, ServerConfig>) -> BTreeMap<String, ServerConfig> {
    let mut all = defaults();
    for (language, mine) in configured {
        let mut entry = mine.clone();
        if let Some(default) = all.get(language) {
            if entry.args.is_none() {
                entry.args = default.args.clone();
            }
            if entry.extensions.is_empty() {
                entry.extensions = default.extensions.clone();
            }
        }
        all.insert(language.clone(), entry);
    }
    all
}

/// The language whose server serves `file`, by its extension.
pub fn language_of<'a>(
    servers: &'a BTreeMap<String, ServerConfig>,
    file: &Path,
) -> Option<&'a str> {
    let ext = file.extension()?.to_str()?;
    servers
        .iter()
        .find(|(_, s)| s.extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)))
        .map(|(language, _)| language.as_str())
}

/// Where `command` is: itself when it names a path, else the first match on `PATH`.
pub fn resolve(command: &str) -> Option<PathBuf> {
    if command.contains('/') {
        let p = PathBuf::from(command);
        return is_executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_language_replaces_its_default_and_files_find_their_server() {
        let mut mine = BTreeMap::new();
        mine.insert(
            "python".into(),
            server("basedpyright-langserver", &["--stdio"], &["py"]),
        );
        mine.insert("lua".into(), server("lua-language-server", &[], &["lua"]));
        let mut only_command = server("/opt/tsls", &[], &[]);
        only_command.args = None;
        mine.insert("typescript".into(), only_command);
        let all = effective(&mine);
        assert_eq!(all["python"].command, "basedpyright-langserver");
        assert_eq!(
            all["typescript"].args.as_deref(),
            Some(&["--stdio".to_string()][..])
        );
        assert!(all["typescript"].extensions.contains(&"ts".to_string()));
        assert_eq!(all["rust"].command, "rust-analyzer");
        assert_eq!(language_of(&all, Path::new("/w/a.PY")), Some("python"));
        assert_eq!(language_of(&all, Path::new("/w/x.lua")), Some("lua"));
        assert_eq!(language_of(&all, Path::new("/w/x.tsx")), Some("typescript"));
        assert_eq!(language_of(&all, Path::new("/w/README")), None);
        assert!(resolve("sh").is_some());
        assert!(resolve("surely-not-installed-anywhere").is_none());
    }
}
