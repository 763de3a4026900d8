//! `ide-bridge` command-line entry point.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use ide_bridge::cli::{Cli, Command, RunArgs};
use ide_bridge::config::{Overrides, Settings};
use ide_bridge::relay::{self, RelayOptions};
use ide_bridge::{app, init, logging, service, status_command};

/// Exit code for a configuration that does not load or check (docs/configuration.md).
const BAD_CONFIGURATION: u8 = 2;

fn main() -> ExitCode {
    // Only the code that runs stays resident (no fault-around over the whole binary).
    ide_bridge::resident::map_only_what_runs();
    let mut args = std::env::args_os();
    // The command sandbox's helper: started by this binary for each sandboxed command.
    if args
        .nth(1)
        .is_some_and(|a| a == ide_bridge::exec::isolate::SUBCOMMAND)
    {
        ide_bridge::exec::isolate::helper_main(args);
    }
    ide_bridge::exec::isolate::set_helper(PathBuf::from("/proc/self/exe"));
    // A hook runs on every tool call of every agent: it skips the configuration layers
    // and argument parsing the other subcommands need.
    if std::env::args_os().nth(1).is_some_and(|a| a == "hook") && std::env::args_os().len() == 2 {
        return ExitCode::from(ide_bridge::hooks::client::run());
    }
    let cli = Cli::parse();
    match cli.command {
        None => {
            let (settings, overrides) = match load(&cli.run) {
                Ok(loaded) => loaded,
                Err(code) => return ExitCode::from(code),
            };
            logging::init(&settings.log);
            match app::run(settings, cli.rotate_token) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    // Logged once: the log goes to stderr as well.
                    tracing::error!("{e}{}", origin(&e, &overrides));
                    ExitCode::from(if e.is_configuration() {
                        BAD_CONFIGURATION
                    } else {
                        1
                    })
                }
            }
        }
        Some(Command::Config { run }) => {
            let (mut shown, overrides) = match load(&run) {
                Ok(loaded) => loaded,
                Err(code) => return ExitCode::from(code),
            };
            // Everything start-up would refuse, refused here too (nothing is written),
            // and what it would warn of, said.
            match app::preflight(&shown) {
                Ok(checked) => {
                    for warning in checked.policy_warnings() {
                        eprintln!("ide-bridge: warning: {warning}");
                    }
                }
                Err(e) => {
                    eprintln!("ide-bridge: {e}{}", origin(&e, &overrides));
                    return ExitCode::from(if e.is_configuration() {
                        BAD_CONFIGURATION
                    } else {
                        1
                    });
                }
            }
            // The directory the bridge would serve, as it would resolve it.
            let workspace = shown
                .workspace
                .take()
                .or_else(|| std::env::current_dir().ok());
            shown.workspace = workspace.map(|w| w.canonicalize().unwrap_or(w));
            match serde_json::to_string_pretty(&shown) {
                Ok(text) => ide_bridge::cli::print_stdout(&format!("{text}\n")),
                Err(e) => eprintln!("ide-bridge: {e}"),
            }
            ExitCode::SUCCESS
        }
        Some(Command::Status { workspace, json }) => {
            ExitCode::from(status_command::run(workspace.workspace.as_deref(), json))
        }
        Some(Command::Stop { workspace }) => {
            ExitCode::from(status_command::stop(workspace.workspace.as_deref()))
        }
        Some(Command::Open {
            workspace,
            no_browser,
        }) => ExitCode::from(status_command::open(
            workspace.workspace.as_deref(),
            no_browser,
        )),
        Some(Command::Init {
            remove,
            print,
            name,
            no_hooks,
        }) => ExitCode::from(init::run(init::InitOptions {
            name: &name,
            remove,
            print,
            no_hooks,
        })),
        Some(Command::Hook) => ExitCode::from(ide_bridge::hooks::client::run()),
        Some(Command::Service(command)) => ExitCode::from(service::run(command)),
        Some(Command::Mcp {
            workspace,
            config,
            log_level,
            no_start,
        }) => {
            let run = RunArgs {
                workspace: workspace.workspace.clone(),
                config: config.clone(),
                log_level,
                ..RunArgs::default()
            };
            let settings = match load(&run) {
                Ok((settings, _)) => settings,
                Err(code) => return ExitCode::from(code),
            };
            logging::init(&settings.log);
            let cwd = settings
                .workspace
                .clone()
                .or_else(|| std::env::current_dir().ok())
                .unwrap_or_else(|| PathBuf::from("/"));
            let cwd = cwd.canonicalize().unwrap_or(cwd);
            ExitCode::from(relay::run(RelayOptions {
                cwd,
                start: !no_start,
                binary: init::binary_path(),
                config,
                max_message_bytes: settings.server.max_message_bytes,
                drain_limit: settings.tools.timeout,
            }))
        }
    }
}

/// The layered configuration for these flags, and the flags' overrides (to say where
/// a value start-up refuses came from); on failure the error (naming where the bad
/// value came from) is said and the exit code returned.
fn load(run: &RunArgs) -> Result<(Settings, Overrides), u8> {
    let overrides: Overrides = run.overrides().map_err(|e| {
        eprintln!("ide-bridge: {e}");
        BAD_CONFIGURATION
    })?;
    match Settings::load(&overrides) {
        Ok(settings) => Ok((settings, overrides)),
        Err(e) => {
            eprintln!("ide-bridge: {e}");
            Err(BAD_CONFIGURATION)
        }
    }
}

/// Where the value of the setting `e` is about came from (`, from …`), if it is about one.
fn origin(e: &app::AppError, overrides: &Overrides) -> String {
    e.setting()
        .map(|key| overrides.origin_of(key))
        .unwrap_or_default()
}
