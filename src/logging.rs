//! tracing subscriber set-up (stderr, text or JSON) and a panic hook that logs.

use tracing_subscriber::EnvFilter;

use crate::config::{LogFormat, LogSettings};

/// Installs the global subscriber. `RUST_LOG` wins over the configured level.
pub fn init(settings: &LogSettings) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new(format!(
            "ide_bridge={0},actix_web=warn,actix_server=warn,notify=error,{0}",
            settings.level.as_str()
        ))
    });
    // Colour only for a person at a terminal: never in files or pipes, never with NO_COLOR.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .with_target(false);
    let _ = if settings.format == LogFormat::Json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
    std::panic::set_hook(Box::new(|info| {
        let thread = std::thread::current();
        tracing::error!(thread = thread.name().unwrap_or("?"), "panic: {info}");
    }));
}
