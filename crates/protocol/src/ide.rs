//! Claude Code IDE notifications (protocol spec §3 and §5).

use serde::{Deserialize, Serialize};

/// The CLI names its process, after `notifications/initialized`.
pub const IDE_CONNECTED: &str = "ide_connected";
/// The bridge tells the CLI what the person selected in the editor.
pub const SELECTION_CHANGED: &str = "selection_changed";
/// The bridge hands the CLI an @-mention the person made in the editor.
pub const AT_MENTIONED: &str = "at_mentioned";

/// `ide_connected` params sent by the CLI after `notifications/initialized`.
#[derive(Debug, Deserialize)]
pub struct IdeConnectedParams {
    /// The CLI's process id.
    pub pid: Option<u32>,
}

/// A 0-based position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Position {
    /// 0-based line.
    pub line: u32,
    /// 0-based character.
    pub character: u32,
}

/// A 0-based selection range as Claude Code expects it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectionRange {
    pub start: Position,
    pub end: Position,
    /// True when start == end.
    pub is_empty: bool,
}

/// `selection_changed` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectionChanged {
    /// Selected text (empty when only the active file changed).
    pub text: String,
    /// Absolute path.
    pub file_path: String,
    /// `file://` URL of the path.
    pub file_url: String,
    pub selection: SelectionRange,
}
