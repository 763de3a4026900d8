//! `ide-bridge` command-line entry point.

use std::process::ExitCode;

use clap::Parser;
use ide_bridge::cli::{Cli, Command};
use ide_bridge::config::Settings;
use ide_bridge::{app, logging, status_command};

fn main() -> ExitCode {
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
            match serde_json::to_string_pretty(&settings) {
                Ok(text) => println!("{text}"),
                Err(e) => eprintln!("ide-bridge: {e}"),
            }
            ExitCode::SUCCESS
        }
        Some(Command::Status { json }) => ExitCode::from(status_command::run(&settings, json)),
        None => {
            logging::init(&settings.log);
            match app::run(settings) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!("{e}");
                    eprintln!("ide-bridge: {e}");
                    ExitCode::from(1)
                }
            }
        }
    }
}
