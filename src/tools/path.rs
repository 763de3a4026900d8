//! Path arguments. A [`WorkspacePath`] is what the agent wrote; the only way to a
//! filesystem path is [`WorkspacePath::resolve`], which confines it to the workspace.
//! Its schema carries [`PATH_MARK`](super::schema::PATH_MARK), so arguments forwarded
//! to the editor are confined wherever a path appears in them, whatever its key.

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

use super::error::ToolError;
use super::schema::PATH_MARK;
use super::ToolContext;

/// A path as given: workspace-relative, absolute or `file://`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WorkspacePath(String);

impl WorkspacePath {
    /// The text as the agent wrote it (for messages that echo it).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The confined, absolute path, or why it is refused.
    pub fn resolve(&self, ctx: &ToolContext) -> Result<PathBuf, ToolError> {
        Ok(ctx.services.workspace.resolve(&self.0)?)
    }

    /// The confined path, workspace-relative (as the change sets and the claims name
    /// files), or why it is refused.
    pub fn relative(&self, ctx: &ToolContext) -> Result<String, ToolError> {
        let path = self.resolve(ctx)?;
        match path.strip_prefix(ctx.services.workspace.root()) {
            Ok(rel) if !rel.as_os_str().is_empty() => Ok(rel.to_string_lossy().into_owned()),
            _ => Err(ToolError::refused(format!(
                "{} names the workspace itself, not a file in it",
                self.0
            ))),
        }
    }
}

impl From<&str> for WorkspacePath {
    fn from(path: &str) -> Self {
        Self(path.to_string())
    }
}

impl fmt::Display for WorkspacePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl JsonSchema for WorkspacePath {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "WorkspacePath".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut schema = Schema::default();
        schema.insert("type".into(), "string".into());
        schema.insert(PATH_MARK.into(), true.into());
        schema
    }
}
