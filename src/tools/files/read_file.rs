//! `readFile`: text of a workspace file, optionally a line range, capped in bytes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{blocking, Tool, ToolContext, ToolError, ToolResult, WorkspacePath};
use crate::workspace::files::{excerpt, read_text};

pub struct ReadFile;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    /// Workspace-relative or absolute path
    file_path: WorkspacePath,
    #[schemars(range(min = 1))]
    start_line: Option<usize>,
    #[schemars(range(min = 1))]
    end_line: Option<usize>,
    // Capped at `files.max_read_bytes`.
    #[schemars(range(min = 1))]
    max_bytes: Option<usize>,
}

/// The lines read. Answered as JSON text only, without an `outputSchema`: the answer is
/// mostly the file's text, and a `structuredContent` copy beside the text would double
/// the bytes of every read (on the wire and queued for a slow client).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// Absolute path.
    file_path: String,
    content: String,
    /// First line shown (1-based).
    start_line: usize,
    /// Last complete line shown (1-based, inclusive).
    end_line: usize,
    total_lines: usize,
    /// The byte cap cut the excerpt (a marker says where to continue).
    truncated: bool,
    /// Always `workspace`: read from disk.
    source: String,
}

/// What is wrong with a line range that shows nothing of a file of `total` lines.
fn beyond(start: Option<usize>, end: Option<usize>, total: usize) -> Option<String> {
    let start = start?;
    match end {
        Some(end) if end < start => Some(format!(
            "endLine {end} is before startLine {start}: nothing to read"
        )),
        _ if start > total && start > 1 => Some(format!(
            "startLine {start} is past the end of the file, which has {total} lines"
        )),
        _ => None,
    }
}

impl Tool for ReadFile {
    type Args = Args;
    const NAME: &'static str = "readFile";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str =
        "Read a text file in the workspace, optionally lines startLine..endLine (1-based, inclusive). \
         Long output is cut with a marker telling where to continue (or, for a first line longer \
         than maxBytes, that it is).";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let path = args.file_path.resolve(&ctx)?;
        let cap = ctx.services.settings.files.max_read_bytes;
        let max = args.max_bytes.unwrap_or(cap).min(cap);
        let p = path.clone();
        let root = ctx.services.workspace.dir().clone();
        let (text, fingerprint) = blocking(move || read_text(&root, &p)).await??;
        let ex = excerpt(&text, args.start_line, args.end_line, max);
        // A read that shows nothing does not count as having seen the file.
        if let Some(wrong) = beyond(args.start_line, args.end_line, ex.total_lines) {
            return Err(ToolError::refused(wrong));
        }
        ctx.record_version(path.clone(), Some(fingerprint));
        Ok(CallToolResult::json(&Answer {
            file_path: path.display().to_string(),
            content: ex.content,
            start_line: ex.start_line,
            end_line: ex.end_line,
            total_lines: ex.total_lines,
            truncated: ex.truncated,
            source: "workspace".into(),
        }))
    }
}
