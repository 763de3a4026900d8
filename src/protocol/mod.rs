//! Wire types only: the JSON-RPC envelope, MCP messages and the Claude Code IDE
//! notifications. Nothing in this module performs I/O.

pub mod editor;
pub mod ide;
pub mod jsonrpc;
pub mod mcp;
pub mod methods;
pub mod modern;
