//! Integration tests: the real `ide-bridge` binary driven over real sockets.

mod harness;

mod auth;
mod automation;
mod automation_events;
mod automation_workspace;
mod changes;
mod commands;
mod compose;
mod config;
mod daily;
mod diagnostics;
mod editor;
mod editor_sim;
mod errors;
mod files;
mod git;
mod handshake;
mod hooks;
mod hostile;
mod lifecycle;
mod limits;
mod lsp;
mod lsp_edits;
mod persistence;
mod relay;
mod resources;
mod restarts;
mod sandbox;
mod sessions;
mod stateless;
#[cfg(feature = "fault-injection")]
mod supervision;
mod tasks;
mod tools;
mod ui;
mod watch;
