//! The tool catalogue. A tool is one module holding its argument type and its handler;
//! [`catalog::build`] lists them. Each tool's JSON Schema is derived from its argument
//! type ([`schema`]); arguments are validated against it with the `jsonschema` crate
//! before the handler receives its typed, deserialised struct.

pub mod activity;
pub mod bridge;
pub mod catalog;
pub mod changes;
pub mod claims;
pub mod commands;
pub mod compose;
mod context;
#[cfg(feature = "fault-injection")]
pub mod debug;
pub mod editor;
mod error;
pub mod files;
pub mod git;
pub mod ide;
mod path;
pub(crate) mod registry;
pub mod review;
pub(crate) mod schema;
pub mod summary;
pub mod tasks;

pub use context::{ProgressReporter, ToolContext};
pub use error::{ToolError, ToolResult};
pub use path::WorkspacePath;
pub use registry::{
    output, CatalogError, EditorUse, InvalidArguments, RegisteredTool, Tool, ToolRegistry,
    ToolTimeout, PAGE_SIZE,
};

/// Asks the singleton actor `name` at `actor`: its refusal, or a closed or full mailbox
/// (reported as that actor's fault), is the tool error.
pub(crate) async fn ask<A, M, T, E>(
    actor: &actix::Addr<A>,
    name: &'static str,
    msg: M,
) -> Result<T, ToolError>
where
    A: actix::Handler<M>,
    A::Context: actix::dev::ToEnvelope<A, M>,
    M: actix::Message<Result = Result<T, E>> + Send + 'static,
    T: Send + 'static,
    E: Send + 'static,
    ToolError: From<E>,
{
    let answer = actor
        .send(msg)
        .await
        .map_err(|e| crate::actors::supervise::ActorFault::mailbox(name, e))?;
    Ok(answer?)
}

/// Runs blocking work (file I/O, walks) off the worker thread.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ToolError> {
    Ok(tokio::task::spawn_blocking(f).await?)
}
