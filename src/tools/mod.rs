//! The tool catalogue. A tool is one module holding its JSON Schema and its handler;
//! [`catalog::build`] lists them. Arguments are validated against the schema with the
//! `jsonschema` crate before the handler receives its typed, deserialised struct.

pub mod activity;
pub mod bridge;
pub mod catalog;
pub mod commands;
mod context;
#[cfg(feature = "fault-injection")]
pub mod debug;
pub mod editor;
pub mod files;
pub mod git;
pub mod ide;
pub(crate) mod registry;
pub mod summary;
pub mod tasks;

pub use context::{ProgressReporter, ToolContext};
pub use registry::{
    CatalogError, EditorUse, RegisteredTool, Tool, ToolRegistry, ToolTimeout, PAGE_SIZE,
};

use std::path::PathBuf;

use crate::protocol::mcp::CallToolResult;

/// Resolves a tool's path argument inside the workspace, or the tool error to return.
pub(crate) fn resolve(ctx: &ToolContext, path: &str) -> Result<PathBuf, CallToolResult> {
    ctx.services
        .workspace
        .resolve(path)
        .map_err(|e| CallToolResult::error(e.to_string()))
}

/// Runs blocking work (file I/O, walks) off the worker thread.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, CallToolResult> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| CallToolResult::error(format!("internal error in a blocking task: {e}")))
}
