//! `runClaudeTask`: delegate a prompt to a headless Claude run.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use super::view;
use crate::actors::orchestrator::{Enqueue, Follow, GetTask};
use crate::orchestrator::{
    TaskOrigin, DEFAULT_TIMEOUT_MS, MAX_CONTEXT_FILES, MAX_PROMPT_BYTES, MAX_TIMEOUT_MS,
    MIN_TIMEOUT_MS,
};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{resolve, Tool, ToolContext, ToolTimeout};

/// The tool.
pub struct RunClaudeTask;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    prompt: String,
    #[serde(default)]
    context_files: Vec<String>,
    timeout_ms: Option<u64>,
    #[serde(default)]
    wait: bool,
}

impl Tool for RunClaudeTask {
    type Args = Args;
    const NAME: &'static str = "runClaudeTask";
    const DESCRIPTION: &'static str =
        "Run a prompt as a headless Claude task in the workspace (claude -p). Returns the task id at once, \
         or with wait: true streams progress and returns the result. Context files are mentioned to the task.";
    const TIMEOUT: ToolTimeout = ToolTimeout::Fixed(Duration::from_millis(MAX_TIMEOUT_MS + 30_000));

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "prompt": { "type": "string", "minLength": 1 },
                "contextFiles": { "type": "array", "items": { "type": "string" }, "maxItems": MAX_CONTEXT_FILES },
                "timeoutMs": { "type": "integer", "minimum": MIN_TIMEOUT_MS, "maximum": MAX_TIMEOUT_MS, "default": DEFAULT_TIMEOUT_MS },
                "wait": { "type": "boolean", "default": false }
            },
            "required": ["prompt"],
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        if args.prompt.len() > MAX_PROMPT_BYTES {
            return CallToolResult::error(format!(
                "Prompt is {} bytes; the limit is {MAX_PROMPT_BYTES} bytes",
                args.prompt.len()
            ));
        }
        let mut prompt = args.prompt;
        if !args.context_files.is_empty() {
            prompt.push_str("\n\nContext files:");
            for f in &args.context_files {
                match resolve(&ctx, f) {
                    Ok(p) => prompt.push_str(&format!("\n@{}", p.display())),
                    Err(e) => return e,
                }
            }
        }
        let enqueue = Enqueue {
            origin: TaskOrigin::Session {
                session_id: ctx.session_id.to_string(),
            },
            prompt,
            timeout_ms: args.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS),
        };
        let orchestrator = &ctx.services.orchestrator;
        let task = match orchestrator.send(enqueue).await {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => return CallToolResult::error(e.to_string()),
            Err(e) => {
                return CallToolResult::error(format!("the orchestrator is unavailable: {e}"))
            }
        };
        if !args.wait {
            return CallToolResult::json(&view(&task));
        }
        if let Ok(Some(mut chunks)) = orchestrator.send(Follow(task.id.clone())).await {
            let mut n = 0.0;
            while let Some(chunk) = chunks.recv().await {
                n += 1.0;
                let excerpt: String = chunk.chars().take(200).collect();
                ctx.report_progress(n, None, Some(&excerpt));
            }
        }
        let session = Some(ctx.session_id.to_string());
        match orchestrator
            .send(GetTask {
                task_id: task.id,
                session,
            })
            .await
        {
            Ok(Ok(t)) => {
                let mut result = CallToolResult::json(&view(&t));
                result.is_error = t.status != crate::orchestrator::TaskStatus::Done;
                result
            }
            Ok(Err(e)) => CallToolResult::error(e.to_string()),
            Err(e) => CallToolResult::error(format!("the orchestrator is unavailable: {e}")),
        }
    }
}
