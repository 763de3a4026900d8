//! `ideCapability`: one tool that takes a small JSON program over the bridge's
//! capabilities ([`capabilities::LANGUAGE`], evaluated by `ide_bridge_compose`), or a
//! request in plain words answered with programs that fit it.

pub mod capabilities;

use ide_bridge_compose::{run, show, words, Answer, Limits, Request};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{EditorUse, Tool, ToolContext, ToolError, ToolResult};
use capabilities::LANGUAGE;

/// Programs a plain-words request is answered with, at most.
const SUGGESTIONS: usize = 3;

pub struct IdeCapability;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A program — a JSON object such as {"findReferences": {"symbol": {"findSymbol":
    /// {"name": "greet"}}}}, or the same as JSON text — or a request in plain words.
    request: Value,
}

/// The limits of one program; its time stays under the tool's own timeout so that
/// the program's error, which says what ran, is what the agent sees.
fn limits(ctx: &ToolContext) -> Limits {
    Limits {
        time: ctx.services.settings.tools.timeout.mul_f64(0.9),
        ..Limits::default()
    }
}

/// The tool's description: what it is, then the language's guide.
fn description() -> String {
    format!(
        "Ask the IDE in one call with a small JSON program over typed functions, nested \
         as arguments: {{\"findReferences\": {{\"symbol\": {{\"findSymbol\": {{\"name\": \
         \"greet\"}}}}}}}} answers every call site of greet, each as file:line with its \
         line. Answered through the editor when one is connected, the bridge's language \
         servers otherwise. When more than one value fits (two definitions of greet), the \
         answer is \"ambiguous\" with complete programs to send instead; a request in plain \
         words is answered with programs that fit it. Limits: {} levels of nesting, {} calls, \
         {} values per list.\n\n{}",
        Limits::default().max_depth,
        Limits::default().max_steps,
        Limits::default().max_items,
        LANGUAGE.describe(None).unwrap_or_default()
    )
}

/// The answer as text: values in compact lines, programs one per line as JSON.
fn render(answer: &Answer) -> CallToolResult {
    match answer {
        Answer::Success { ty, value, .. } => {
            CallToolResult::text(match show(&LANGUAGE, ty, value) {
                shown if shown.is_empty() => format!("(no {ty} found)"),
                shown => shown,
            })
        }
        Answer::Ambiguous {
            why,
            programs,
            more,
        } => {
            let mut text = format!("Ambiguous: {why}. Send one of these as the request:\n");
            for p in programs {
                text.push_str(&p.to_string());
                text.push('\n');
            }
            if *more > 0 {
                text.push_str(&format!("…and {more} more: narrow the program\n"));
            }
            CallToolResult::text(text)
        }
        Answer::Failure { error } => CallToolResult::error(error.clone()),
    }
}

impl Tool for IdeCapability {
    type Args = Args;
    const NAME: &'static str = "ideCapability";
    const EFFECT: Effect = Effect::Reads;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str = "Ask the IDE in one call with a small JSON program over typed functions (the guide is built at start-up).";
    const DESCRIBE: Option<fn() -> String> = Some(description);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let limits = limits(&ctx);
        let answer = match Request::read(args.request, &limits) {
            Err(error) => Answer::Failure { error },
            Ok(Request::Program(program)) => run(&LANGUAGE, &ctx, &program, &limits).await,
            Ok(Request::Words(text)) => {
                let programs = words::suggest(&LANGUAGE, &text, SUGGESTIONS);
                if programs.is_empty() {
                    return Err(ToolError::refused(format!(
                        "Nothing in the language fits {text:?}; {{\"describe\": {{}}}} lists every function"
                    )));
                }
                Answer::Ambiguous {
                    why: format!("a request in plain words ({text:?}); programs that fit it"),
                    programs,
                    more: 0,
                }
            }
        };
        Ok(render(&answer))
    }
}
