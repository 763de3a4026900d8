//! `runClaudeTask`: delegate a prompt to a headless Claude run.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::TaskView;
use crate::actors::orchestrator::{Enqueue, EnqueueFollowed, GetTask};
use crate::orchestrator::{
    TaskOrigin, DEFAULT_TIMEOUT_MS, MAX_CONTEXT_FILES, MAX_PROMPT_BYTES, MAX_TIMEOUT_MS,
    MIN_TIMEOUT_MS,
};
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{output, Tool, ToolContext, ToolError, ToolResult, ToolTimeout, WorkspacePath};

pub struct RunClaudeTask;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    #[schemars(length(min = 1))]
    prompt: String,
    #[serde(default)]
    #[schemars(length(max = MAX_CONTEXT_FILES))]
    context_files: Vec<WorkspacePath>,
    #[serde(default = "default_timeout_ms")]
    #[schemars(range(min = MIN_TIMEOUT_MS, max = MAX_TIMEOUT_MS))]
    timeout_ms: u64,
    #[serde(default)]
    wait: bool,
}

fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}

impl Tool for RunClaudeTask {
    type Args = Args;
    const NAME: &'static str = "runClaudeTask";
    const EFFECT: Effect = Effect::Runs;
    const DESCRIPTION: &'static str =
        "Run a prompt as a headless Claude task in the workspace (claude -p). Returns the task id at once, \
         or with wait: true streams progress and returns the result. Context files are mentioned to the task.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<TaskView>);
    const TIMEOUT: ToolTimeout = ToolTimeout::Fixed(Duration::from_millis(MAX_TIMEOUT_MS + 30_000));

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        if args.prompt.len() > MAX_PROMPT_BYTES {
            return Err(ToolError::refused(format!(
                "Prompt is {} bytes; the limit is {MAX_PROMPT_BYTES} bytes",
                args.prompt.len()
            )));
        }
        let mut prompt = args.prompt;
        if !args.context_files.is_empty() {
            prompt.push_str("\n\nContext files:");
            for f in &args.context_files {
                prompt.push_str(&format!("\n@{}", f.resolve(&ctx)?.display()));
            }
        }
        let enqueue = Enqueue {
            origin: TaskOrigin::Session {
                session_id: ctx.session_id.clone(),
            },
            prompt,
            timeout_ms: args.timeout_ms,
        };
        let orchestrator = &ctx.services.orchestrator;
        if !args.wait {
            return super::ask_orchestrator(orchestrator, enqueue).await;
        }
        // Queued and followed in one message: the first output line cannot slip past.
        let (task, mut chunks) = orchestrator
            .send(EnqueueFollowed(enqueue))
            .await
            .map_err(ToolError::OrchestratorUnavailable)?
            .map_err(|e| ToolError::refused(e.to_string()))?;
        let mut n = 0.0;
        while let Some(chunk) = chunks.recv().await {
            n += 1.0;
            let excerpt: String = chunk.chars().take(200).collect();
            ctx.report_progress(n, None, Some(&excerpt));
        }
        let session = Some(ctx.session_id.clone());
        let t = orchestrator
            .send(GetTask {
                task_id: task.id,
                session,
            })
            .await
            .map_err(ToolError::OrchestratorUnavailable)?
            .map_err(|e| ToolError::refused(e.to_string()))?;
        let mut result = CallToolResult::structured(&TaskView::of(&t));
        result.is_error = t.status != crate::orchestrator::TaskStatus::Done;
        Ok(result)
    }
}
