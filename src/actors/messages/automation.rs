//! Messages the Automation actor handles from other actors.

use actix::prelude::*;

use crate::diagnostics::Diagnostic;

/// What the editor just told the bridge (sent by the ExtensionClient).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub enum EditorEvent {
    /// A file's diagnostics changed; empty means cleared.
    Diagnostics {
        /// The path as the editor sent it.
        file: String,
        /// Its diagnostics now.
        diagnostics: Vec<Diagnostic>,
    },
    /// The editor saved a file.
    FileSaved {
        /// The path as the editor sent it.
        file: String,
    },
}
