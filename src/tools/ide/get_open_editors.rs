//! `getOpenEditors`: the files this session opened, newest active.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::extension::ExtError;
use crate::protocol::editor::Method;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::editor::call_editor;
use crate::tools::{EditorUse, Tool, ToolContext, ToolError, ToolResult};
use crate::workspace::{file_url, language_id};

pub struct GetOpenEditors;

#[derive(Deserialize, JsonSchema)]
pub struct Args {}

impl Tool for GetOpenEditors {
    type Args = Args;
    const NAME: &'static str = "getOpenEditors";
    const EFFECT: Effect = Effect::Reads;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Open editor tabs (without an editor: the files this session opened).";

    async fn call(ctx: ToolContext, _args: Args) -> ToolResult {
        match call_editor(&ctx, Method::GetOpenFiles, json!({})).await {
            Ok(Value::Array(files)) => {
                let tabs: Vec<Value> = files
                    .iter()
                    .filter_map(|f| {
                        let path = std::path::PathBuf::from(f.get("filePath")?.as_str()?);
                        Some(json!({
                            "uri": file_url(&path),
                            "isActive": f.get("isActive").and_then(Value::as_bool).unwrap_or(false),
                            "label": path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                            "languageId": f.get("languageId").and_then(Value::as_str).unwrap_or(language_id(&path)),
                            "isDirty": f.get("isDirty").and_then(Value::as_bool).unwrap_or(false),
                            "isUntitled": false,
                            "fileName": path.display().to_string(),
                        }))
                    })
                    .collect();
                return Ok(CallToolResult::json(&json!({ "tabs": tabs })));
            }
            Err(ExtError::NotConnected) => {}
            Ok(other) => {
                return Err(ToolError::refused(format!(
                    "Unexpected answer from the editor: {other}"
                )))
            }
            Err(e) => return Err(e.into()),
        }
        let files = ctx.opened_files().await;
        let last = files.len().saturating_sub(1);
        let tabs: Vec<Value> = files
            .iter()
            .enumerate()
            .map(|(i, path)| {
                json!({
                    "uri": file_url(path),
                    "isActive": i == last,
                    "label": path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                    "languageId": language_id(path),
                    "isDirty": false,
                    "isUntitled": false,
                    "fileName": path.display().to_string(),
                })
            })
            .collect();
        Ok(CallToolResult::json(&json!({ "tabs": tabs })))
    }
}
