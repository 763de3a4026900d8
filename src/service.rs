//! `ide-bridge service install|remove|status`: a systemd user unit per workspace, so that
//! a workstation runs its bridge from login, restarted on failure, logging to the
//! journal (`journalctl --user -u <unit>`). The unit lives in
//! `$XDG_CONFIG_HOME/systemd/user/` (default `~/.config/systemd/user/`) and is named after
//! the workspace's state key (`ide-bridge-<name>-<hash>.service`), so one workspace has
//! one unit whatever the directory it is installed from.

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use crate::cli::ServiceCommand;
use crate::{init, lockfile, state};

/// The unit's file name for `workspace`.
pub fn unit_name(workspace: &Path) -> String {
    format!("ide-bridge-{}.service", state::workspace_key(workspace))
}

/// `$XDG_CONFIG_HOME/systemd/user`, else `~/.config/systemd/user`.
pub fn unit_dir() -> PathBuf {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/".into())).join(".config")
        });
    config.join("systemd").join("user")
}

/// One argument of `ExecStart=`, quoted for systemd (`"`, `\` escaped; `%` doubled, as
/// it starts a specifier).
fn quote(arg: &str) -> String {
    let escaped = arg
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('%', "%%");
    format!("\"{escaped}\"")
}

/// The unit that runs `binary` for `workspace` (with `config`, when given). The lock
/// files go where Claude Code looks: the `CLAUDE_CONFIG_DIR` of whoever installs it.
pub fn unit_text(binary: &Path, workspace: &Path, config: Option<&Path>) -> String {
    let mut exec = vec![
        quote(&binary.display().to_string()),
        "--workspace".to_string(),
        quote(&workspace.display().to_string()),
    ];
    if let Some(config) = config {
        exec.push("--config".into());
        exec.push(quote(&config.display().to_string()));
    }
    let claude_dir = lockfile::config_dir();
    format!(
        "# Written by `ide-bridge service install`; `ide-bridge service remove` removes it.\n\
         [Unit]\n\
         Description=ide-bridge for {ws}\n\
         Documentation=man:systemd.service(5)\n\n\
         [Service]\n\
         Type=simple\n\
         ExecStart={exec}\n\
         WorkingDirectory={wd}\n\
         Environment={env}\n\
         # The PATH of the shell that installed it: where `claude`, the linters and the\n\
         # language servers were found (the user manager's own PATH is minimal).\n\
         Environment={path}\n\
         Restart=on-failure\n\
         RestartSec=2\n\
         # Exit 2 is a configuration error: restarting would only repeat it.\n\
         RestartPreventExitStatus=2\n\
         # The bridge writes its final state and removes its lock file on SIGTERM.\n\
         KillSignal=SIGTERM\n\
         TimeoutStopSec=15\n\n\
         [Install]\n\
         WantedBy=default.target\n",
        ws = workspace.display().to_string().replace('%', "%%"),
        exec = exec.join(" "),
        // A path, unquoted (systemd takes the rest of the line), `%` doubled.
        wd = workspace.display().to_string().replace('%', "%%"),
        env = quote(&format!("CLAUDE_CONFIG_DIR={}", claude_dir.display())),
        path = quote(&format!(
            "PATH={}",
            std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into())
        )),
    )
}

/// The workspace a subcommand names (or the current directory), canonical.
fn workspace_of(given: Option<&Path>) -> Result<PathBuf, String> {
    let dir = match given {
        Some(d) => d.to_path_buf(),
        None => std::env::current_dir().map_err(|e| format!("the current directory: {e}"))?,
    };
    dir.canonicalize()
        .map_err(|e| format!("workspace {}: {e}", dir.display()))
        .and_then(|d| {
            if d.is_dir() {
                Ok(d)
            } else {
                Err(format!("workspace {}: not a directory", d.display()))
            }
        })
}

/// Runs `systemctl --user` with `args`; `Err` says what went wrong.
fn systemctl(args: &[&str]) -> Result<String, String> {
    let out = Process::new("systemctl")
        .arg("--user")
        .args(args)
        .output()
        .map_err(|e| format!("systemctl: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!(
            "systemctl --user {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Runs the subcommand; returns the exit code.
pub fn run(command: ServiceCommand) -> u8 {
    match command {
        ServiceCommand::Install {
            workspace,
            config,
            print,
            no_systemctl,
        } => install(
            workspace.workspace.as_deref(),
            config.as_deref(),
            print,
            no_systemctl,
        ),
        ServiceCommand::Remove {
            workspace,
            no_systemctl,
        } => remove(workspace.workspace.as_deref(), no_systemctl),
        ServiceCommand::Status { workspace } => status(workspace.workspace.as_deref()),
    }
}

fn install(workspace: Option<&Path>, config: Option<&Path>, print: bool, no_systemctl: bool) -> u8 {
    let workspace = match workspace_of(workspace) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("ide-bridge service: {e}");
            return 1;
        }
    };
    let config = match config.map(std::path::absolute).transpose() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ide-bridge service: --config: {e}");
            return 1;
        }
    };
    // The service's bridge would stop at once on it (exit 2, which is not restarted):
    // refused here, with the same message.
    if let Some(file) = &config {
        let overrides = crate::config::Overrides {
            config_file: Some(file.clone()),
            values: Vec::new(),
        };
        if let Err(e) = crate::config::Settings::load(&overrides) {
            eprintln!("ide-bridge service: {e}");
            return 2;
        }
    }
    let text = unit_text(&init::binary_path(), &workspace, config.as_deref());
    if print {
        crate::cli::print_stdout(&text);
        return 0;
    }
    let name = unit_name(&workspace);
    let dir = unit_dir();
    let path = dir.join(&name);
    if let Err(e) =
        std::fs::create_dir_all(&dir).and_then(|_| lockfile::write_atomic(&path, text.as_bytes()))
    {
        eprintln!("ide-bridge service: cannot write {}: {e}", path.display());
        return 1;
    }
    println!("Wrote {}.", path.display());
    if no_systemctl {
        println!("Enable it with: systemctl --user daemon-reload && systemctl --user enable --now {name}");
        return 0;
    }
    let started =
        systemctl(&["daemon-reload"]).and_then(|_| systemctl(&["enable", "--now", &name]));
    match started {
        Ok(_) => {
            println!(
                "Enabled and started {name}: the bridge for {} runs from login, restarted on failure; \
                 its log: journalctl --user -u {name}",
                workspace.display()
            );
            0
        }
        Err(e) => {
            eprintln!(
                "ide-bridge service: {e}\nThe unit is written; with a systemd user manager, run: \
                 systemctl --user daemon-reload && systemctl --user enable --now {name}"
            );
            1
        }
    }
}

fn remove(workspace: Option<&Path>, no_systemctl: bool) -> u8 {
    let workspace = match workspace_of(workspace) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("ide-bridge service: {e}");
            return 1;
        }
    };
    let name = unit_name(&workspace);
    let path = unit_dir().join(&name);
    if !path.exists() {
        println!(
            "No unit {} for {}; nothing changed.",
            path.display(),
            workspace.display()
        );
        return 0;
    }
    if !no_systemctl {
        if let Err(e) = systemctl(&["disable", "--now", &name]) {
            eprintln!("ide-bridge service: {e} (removing the unit anyway)");
        }
    }
    if let Err(e) = std::fs::remove_file(&path) {
        eprintln!("ide-bridge service: cannot remove {}: {e}", path.display());
        return 1;
    }
    if !no_systemctl {
        let _ = systemctl(&["daemon-reload"]);
    }
    println!("Removed {}.", path.display());
    0
}

fn status(workspace: Option<&Path>) -> u8 {
    let workspace = match workspace_of(workspace) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("ide-bridge service: {e}");
            return 1;
        }
    };
    let name = unit_name(&workspace);
    let path = unit_dir().join(&name);
    if !path.exists() {
        println!(
            "No service for {} (`ide-bridge service install` writes {}).",
            workspace.display(),
            path.display()
        );
        return 1;
    }
    let state = match systemctl(&["is-active", &name]) {
        Ok(s) => s,
        Err(_) => "not active (or no systemd user manager)".into(),
    };
    println!(
        "{name}: {state}\nunit: {}\nlog: journalctl --user -u {name}",
        path.display()
    );
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_quotes_paths_and_escapes_specifiers() {
        let text = unit_text(
            Path::new("/opt/my tools/ide-bridge"),
            Path::new("/home/u/100% \"fun\""),
            Some(Path::new("/home/u/bridge.toml")),
        );
        assert!(
            text.contains(r#"ExecStart="/opt/my tools/ide-bridge" --workspace "/home/u/100%% \"fun\"" --config "/home/u/bridge.toml""#),
            "{text}"
        );
        assert!(text.contains("Restart=on-failure"));
        assert!(text.contains("WantedBy=default.target"));
        assert!(unit_name(Path::new("/home/u/proj")).starts_with("ide-bridge-proj-"));
    }
}
