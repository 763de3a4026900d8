//! ide-bridge's wire types: the JSON-RPC envelope, MCP messages in both revisions, the
//! Claude Code IDE notifications, the editor extension's methods, the HTTP headers the
//! bridge's parts agree on, the activity timeline's entries, and the string identities
//! that travel on the wire. Nothing in this crate performs I/O; it is the floor every
//! other crate stands on.

pub mod activity;
pub mod editor;
pub mod escape;
pub mod generated;
pub mod headers;
pub mod id;
pub mod ide;
pub mod jsonrpc;
pub mod mcp;
pub mod methods;
pub mod modern;
