//! The tool catalogue. A tool is one module holding its JSON Schema and its handler;
//! [`catalog::build`] lists them. Arguments are validated against the schema with the
//! `jsonschema` crate before the handler receives its typed, deserialised struct.

pub mod bridge;
pub mod catalog;
mod context;
#[cfg(feature = "fault-injection")]
pub mod debug;
pub mod ide;
mod registry;
pub mod summary;

pub use context::{ProgressReporter, ToolContext};
pub use registry::{
    CatalogError, EditorUse, RegisteredTool, Tool, ToolRegistry, ToolTimeout, PAGE_SIZE,
};
