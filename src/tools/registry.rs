//! The tool registry: schemas compiled once, lookup by name, paginated listing.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::future::LocalBoxFuture;
use futures_util::FutureExt;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::ToolResult;
use super::{schema, ToolContext};
use crate::metrics::{Metrics, ToolMeter};
pub use crate::protocol::mcp::Effect;
use crate::protocol::mcp::{paginate, CallToolResult, InvalidCursor, ToolInfo};

pub use crate::protocol::mcp::PAGE_SIZE;

/// How long a tool may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolTimeout {
    /// `tools.timeout_ms` from the configuration.
    Default,
    /// No timeout (waits on a person, e.g. `openDiff`).
    Unbounded,
    Fixed(Duration),
}

impl ToolTimeout {
    /// A tool with its own timeout waits for something (a person, a change, a task):
    /// a client of MCP 2026-07-28 that declares the tasks extension gets a task to poll.
    pub fn waits(&self) -> bool {
        !matches!(self, ToolTimeout::Default)
    }
}

/// How a tool relates to the editor extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditorUse {
    /// Works from the workspace alone.
    None,
    /// Uses the editor when one is connected and falls back without it.
    Optional,
    /// Needs an editor; answers with a tool error while none is connected.
    Required,
}

impl EditorUse {
    /// Wording for docs/tools.md.
    pub fn describe(self) -> &'static str {
        match self {
            EditorUse::None => "no",
            EditorUse::Optional => "optional (falls back without one)",
            EditorUse::Required => "required",
        }
    }
}

/// A tool: its wire name, description, argument type and handler. The input schema
/// `tools/list` shows is derived from `Args` ([`schema::derive`]).
pub trait Tool: 'static {
    /// Deserialised after the arguments pass the schema derived from this type.
    type Args: DeserializeOwned + JsonSchema + 'static;
    /// Wire name (`[A-Za-z0-9_]+`).
    const NAME: &'static str;
    /// Shown to clients, and in docs/tools.md.
    const DESCRIPTION: &'static str;
    /// What calling it does: its `annotations` in `tools/list`, its column in
    /// docs/tools.md. Every tool says; a tool forwarding an editor method says what the
    /// method does ([`Method::effect`](crate::protocol::editor::Method::effect)).
    const EFFECT: Effect;
    const TIMEOUT: ToolTimeout = ToolTimeout::Default;
    const EDITOR: EditorUse = EditorUse::None;
    /// The schema of the tool's `structuredContent` (its `outputSchema`), for tools
    /// that answer with [`CallToolResult::structured`]: `Some(output::<Answer>)`.
    const OUTPUT: Option<fn() -> Value> = None;
    /// A description written at start-up from declarations elsewhere (a language's
    /// guide), shown instead of [`Self::DESCRIPTION`]; built once per catalogue.
    const DESCRIBE: Option<fn() -> String> = None;
    /// Runs the tool; an error becomes a result with `isError: true`.
    fn call(ctx: ToolContext, args: Self::Args) -> impl Future<Output = ToolResult> + 'static;
}

type Invoker =
    fn(ToolContext, Value) -> Result<LocalBoxFuture<'static, CallToolResult>, InvalidArguments>;

/// Longest schema complaint quoted as the validator words it; a longer one names the
/// value instead of quoting it.
const MAX_QUOTED: usize = 240;

/// Arguments the schema refused, or that do not fit the tool's type (a tool error, or
/// JSON-RPC -32602 for a client of a revision before MCP 2025-11-25).
#[derive(Debug, thiserror::Error)]
#[error("Invalid arguments for tool \"{tool}\": {reason}")]
pub struct InvalidArguments {
    tool: &'static str,
    /// The first problems, `; `-separated.
    reason: String,
}

/// The message, for `RpcError::invalid_params`.
impl From<InvalidArguments> for String {
    fn from(e: InvalidArguments) -> Self {
        e.to_string()
    }
}

/// The group of Claude Code's own IDE tools (`openDiff`, `close_tab`, …): their
/// arguments are the CLI's contract, and on its IDE connection it sends whole files.
pub const IDE_GROUP: &str = "ide";

/// Tool groups, as `tools.expose` names them.
pub const GROUPS: &[&str] = &[
    IDE_GROUP, "files", "claims", "commands", "git", "editor", "tasks", "review", "activity",
    "bridge", "debug",
];

/// A registered tool with its compiled validator.
pub struct RegisteredTool {
    /// What `tools/list` shows.
    pub info: ToolInfo,
    /// Its group (one of [`GROUPS`]).
    pub group: &'static str,
    /// Listed and callable on model-facing connections (`tools.expose`).
    pub exposed: bool,
    pub timeout: ToolTimeout,
    pub editor: EditorUse,
    pub effect: Effect,
    validator: jsonschema::Validator,
    invoke: Invoker,
    /// Its metrics' series, looked up on its first call.
    meter: OnceLock<Arc<ToolMeter>>,
}

impl RegisteredTool {
    /// The series its calls are recorded in.
    pub fn meter(&self, metrics: &Metrics) -> Arc<ToolMeter> {
        Arc::clone(
            self.meter
                .get_or_init(|| Arc::new(metrics.tool_meter(self.info.name))),
        )
    }

    /// Validates `args` against the schema; the message lists the first problems.
    pub fn validate(&self, args: &Value) -> Result<(), InvalidArguments> {
        // The common case answers without collecting (or allocating) anything.
        if self.validator.is_valid(args) {
            return Ok(());
        }
        let problems: Vec<String> = self
            .validator
            .iter_errors(args)
            .take(5)
            .map(|e| {
                // The message quotes the value refused; a long one (a thousand edits)
                // is named, not quoted back to the model.
                let mut said = e.to_string();
                if said.len() > MAX_QUOTED {
                    said = e.masked_with("the value").to_string();
                }
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    said
                } else {
                    format!("{said} (at {at})")
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(InvalidArguments {
                tool: self.info.name,
                reason: problems.join("; "),
            })
        }
    }

    /// Deserialises validated arguments and starts the handler.
    pub fn invoke(
        &self,
        ctx: ToolContext,
        args: Value,
    ) -> Result<LocalBoxFuture<'static, CallToolResult>, InvalidArguments> {
        (self.invoke)(ctx, args)
    }
}

/// The `outputSchema` of a tool answering with `T` (set as [`Tool::OUTPUT`]).
pub fn output<T: JsonSchema>() -> Value {
    schema::published(schema::derive_output::<T>())
}

/// The one place a handler's error becomes a tool result.
fn invoke<T: Tool>(
    ctx: ToolContext,
    args: Value,
) -> Result<LocalBoxFuture<'static, CallToolResult>, InvalidArguments> {
    let args: T::Args = serde_json::from_value(args).map_err(|e| InvalidArguments {
        tool: T::NAME,
        reason: e.to_string(),
    })?;
    Ok(Box::pin(
        T::call(ctx, args).map(|done| done.unwrap_or_else(CallToolResult::from)),
    ))
}

/// Why the catalogue could not be built (a programming error caught at start-up).
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("tool name {0:?} must match [A-Za-z0-9_]+")]
    BadName(&'static str),
    #[error("tool {0:?} registered twice")]
    Duplicate(&'static str),
    /// `tools.expose` names neither a tool nor a group.
    #[error("{key}: {name:?} is neither a tool nor a group (groups: {groups})", groups = GROUPS.join(", "))]
    UnknownExpose {
        /// The setting that names it: `tools.expose.include` or `tools.expose.exclude`.
        key: &'static str,
        /// The name.
        name: String,
    },
    /// The derived schema does not compile (a type schemars describes in a way the
    /// validator refuses).
    #[error("tool {name:?} has an invalid schema: {reason}")]
    BadSchema { name: &'static str, reason: String },
}

/// All tools, in registration order.
#[derive(Default)]
pub struct ToolRegistry {
    tools: Vec<RegisteredTool>,
    /// The exposed tools' indices in `tools` (each tool's listing is kept once, in it).
    exposed: Vec<usize>,
    index: HashMap<&'static str, usize, foldhash::fast::RandomState>,
    group: &'static str,
}

impl ToolRegistry {
    /// Tools registered from now on belong to `group`.
    pub fn set_group(&mut self, group: &'static str) {
        debug_assert!(GROUPS.contains(&group), "unknown group {group}");
        self.group = group;
    }

    /// Decides which tools model-facing connections see: those `include` names (or
    /// whose group it names; `*` is all) that `exclude` does not.
    pub fn expose(&mut self, include: &[String], exclude: &[String]) -> Result<(), CatalogError> {
        let named = (include.iter().map(|n| ("tools.expose.include", n)))
            .chain(exclude.iter().map(|n| ("tools.expose.exclude", n)));
        for (key, name) in named {
            let known = name == "*"
                || GROUPS.contains(&name.as_str())
                || self.index.contains_key(name.as_str());
            if !known {
                return Err(CatalogError::UnknownExpose {
                    key,
                    name: name.clone(),
                });
            }
        }
        let names = |list: &[String], tool: &RegisteredTool| {
            list.iter()
                .any(|n| n == "*" || n == tool.group || n == tool.info.name)
        };
        for tool in &mut self.tools {
            tool.exposed = names(include, tool) && !names(exclude, tool);
        }
        self.exposed = (0..self.tools.len())
            .filter(|i| self.tools[*i].exposed)
            .collect();
        Ok(())
    }

    /// Adds `T` with the schema derived from its `Args`; refuses a bad or duplicate
    /// name.
    pub fn register<T: Tool>(&mut self) -> Result<(), CatalogError> {
        if T::NAME.is_empty()
            || !T::NAME
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return Err(CatalogError::BadName(T::NAME));
        }
        if self.index.contains_key(T::NAME) {
            return Err(CatalogError::Duplicate(T::NAME));
        }
        let schema = schema::published(schema::derive::<T::Args>());
        let validator =
            jsonschema::validator_for(&schema).map_err(|e| CatalogError::BadSchema {
                name: T::NAME,
                reason: e.to_string(),
            })?;
        let output_schema = T::OUTPUT.map(|schema| schema());
        if let Some(schema) = &output_schema {
            jsonschema::validator_for(schema).map_err(|e| CatalogError::BadSchema {
                name: T::NAME,
                reason: format!("output: {e}"),
            })?;
        }
        let info = ToolInfo {
            name: T::NAME,
            // Built once per catalogue, which lives as long as the process.
            description: match T::DESCRIBE {
                Some(describe) => Box::leak(describe().into_boxed_str()),
                None => T::DESCRIPTION,
            },
            input_schema: schema,
            output_schema,
            annotations: T::EFFECT.annotations(),
        };
        self.index.insert(T::NAME, self.tools.len());
        self.exposed.push(self.tools.len());
        self.tools.push(RegisteredTool {
            info,
            group: self.group,
            exposed: true,
            timeout: T::TIMEOUT,
            editor: T::EDITOR,
            effect: T::EFFECT,
            validator,
            invoke: invoke::<T>,
            meter: OnceLock::new(),
        });
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.index.get(name).map(|i| &self.tools[*i])
    }

    /// Every registered tool, in registration order.
    pub fn tools(&self) -> &[RegisteredTool] {
        &self.tools
    }

    /// Every tool's listing, in registration order.
    pub fn infos(&self) -> impl Iterator<Item = &ToolInfo> {
        self.tools.iter().map(|t| &t.info)
    }

    /// One `tools/list` page: of every tool, or of the exposed ones for a
    /// model-facing connection.
    pub fn page(
        &self,
        model_facing: bool,
        cursor: Option<&str>,
    ) -> Result<(Vec<&ToolInfo>, Option<String>), InvalidCursor> {
        let list: Vec<&ToolInfo> = if model_facing {
            self.exposed.iter().map(|i| &self.tools[*i].info).collect()
        } else {
            self.infos().collect()
        };
        paginate(&list, cursor, PAGE_SIZE)
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}
