//! Language servers run by the bridge itself (for agents without an editor): which
//! server serves which files ([`servers`]), the base protocol's framing ([`framing`]),
//! their answers in the editor plugins' shapes ([`shapes`]), and the edits they propose
//! ([`edits`]). The bridge's
//! LanguageServers actor runs the processes.

pub mod edits;
pub mod framing;
/// The protocol's types, for the bridge's tools.
pub use lsp_types as types;
/// LSP's diagnostic, as servers publish it.
pub use lsp_types::Diagnostic as LspDiagnostic;
pub mod servers;
pub mod shapes;

/// The largest message read from a language server (a workspace's symbols, a big
/// document's semantic data): a bigger one ends the server as faulty.
pub const MAX_MESSAGE_BYTES: usize = 32 * 1024 * 1024;
