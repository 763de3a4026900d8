//! `ide-bridge` command-line entry point.

use std::process::ExitCode;

use clap::Parser;
use ide_bridge::cli::{Cli, Command};
use ide_bridge::config::Settings;
use ide_bridge::relay::{self, RelayOptions};
use ide_bridge::{app, init, logging, status_command};

fn main() -> ExitCode {
    // A hook runs on every tool call of every agent: it skips the configuration layers
    // and argument parsing the other subcommands need.
    if std::env::args_os().nth(1).is_some_and(|a| a == "hook") && std::env::args_os().len() == 2 {
        return ExitCode::from(ide_bridge::hooks::client::run());
    }
    let cli = Cli::parse();
    let settings = match cli
        .run
        .overrides()
        .map_err(|e| e.to_string())
        .and_then(|o| Settings::load(&o).map_err(|e| e.to_string()))
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("ide-bridge: {e}");
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Some(Command::Config) => {
            let mut shown = settings;
            if shown.workspace.is_none() {
                shown.workspace = std::env::current_dir().ok();
            }
            match serde_json::to_string_pretty(&shown) {
                Ok(text) => println!("{text}"),
                Err(e) => eprintln!("ide-bridge: {e}"),
            }
            ExitCode::SUCCESS
        }
        Some(Command::Status { json }) => ExitCode::from(status_command::run(&settings, json)),
        Some(Command::Stop) => ExitCode::from(status_command::stop(&settings)),
        Some(Command::Open { no_browser }) => {
            ExitCode::from(status_command::open(&settings, no_browser))
        }
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
        Some(Command::Mcp { no_start }) => {
            logging::init(&settings.log);
            let cwd = settings
                .workspace
                .clone()
                .or_else(|| std::env::current_dir().ok())
                .unwrap_or_else(|| "/".into());
            let cwd = cwd.canonicalize().unwrap_or(cwd);
            ExitCode::from(relay::run(RelayOptions {
                cwd,
                start: !no_start,
                binary: init::binary_path(),
                config: cli.run.config.clone(),
            }))
        }
        None => {
            logging::init(&settings.log);
            match app::run(settings, cli.run.rotate_token) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    // Logged once: the log goes to stderr as well.
                    tracing::error!("{e}");
                    ExitCode::from(1)
                }
            }
        }
    }
}
