//! ide-bridge: a daemon that connects AI coding agents (the Claude Code CLI and any MCP
//! client) to a developer's editor and workspace. See docs/architecture.md.

pub mod actors;
pub mod app;
pub mod cli;
pub mod config;
pub mod coordination;
pub mod hooks;
pub mod http;
pub mod http_client;
pub mod init;
pub mod logging;
pub mod metrics;
pub mod orchestrator;
pub mod persist;
pub mod prompts;
pub mod resources;
pub mod secret;
pub mod service;
pub mod services;
pub mod status;
pub mod status_command;
pub mod tools;
pub mod watch;

// The lower crates, under the names the code has always used for them.
pub use ide_bridge_automation::automation;
pub use ide_bridge_host::{ancestry, lockfile, private_file, resident, state};
pub use ide_bridge_protocol as protocol;
pub use ide_bridge_protocol::{generated, id};
pub use ide_bridge_relay as relay;
pub use ide_bridge_workspace::{changes, diagnostics, exec, lsp, names, review, workspace};
