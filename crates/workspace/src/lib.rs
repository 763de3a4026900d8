//! The workspace and what runs in it: the confined root every path goes through, files,
//! search and tree walks, the change tracker, review comments, diagnostics and linters,
//! running programs under the command policy and the sandbox, and what the
//! bridge's own language servers need (which serves what, framing, answer shapes). Knows nothing of
//! actors, sessions or transports; the bridge builds on it.

pub mod changes;
pub mod diagnostics;
pub mod exec;
pub mod lsp;
pub mod names;
pub mod review;
pub mod workspace;
