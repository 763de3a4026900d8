//! ide-bridge: a daemon that connects AI coding agents (the Claude Code CLI and any MCP
//! client) to a developer's editor and workspace. See docs/architecture.md.

pub mod actors;
pub mod ancestry;
pub mod app;
pub mod automation;
pub mod changes;
pub mod cli;
pub mod config;
pub mod coordination;
pub mod diagnostics;
pub mod exec;
#[cfg(test)]
pub mod generated;
pub mod hooks;
pub mod http;
pub mod http_client;
pub mod id;
pub mod init;
pub mod lockfile;
pub mod logging;
pub mod metrics;
pub mod names;
pub mod orchestrator;
pub mod persist;
pub mod private_file;
pub mod prompts;
pub mod protocol;
pub mod relay;
pub mod resources;
pub mod review;
pub mod secret;
pub mod service;
pub mod services;
pub mod state;
pub mod status;
pub mod status_command;
pub mod tools;
pub mod watch;
pub mod workspace;
