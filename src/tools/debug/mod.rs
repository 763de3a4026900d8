//! Test-only tools (feature `fault-injection`): slow calls with progress, panics in
//! tools and in actors, stalled actor requests, and a list_changed trigger.

use serde::Deserialize;
use serde_json::{json, Value};
use std::time::Duration;

use super::registry::{CatalogError, ToolRegistry};
use super::{Tool, ToolContext};
use crate::actors::fault::{Crash, Stall};
use crate::actors::registry::ToolsChanged;
use crate::actors::supervise::ActorFault;
use crate::actors::{activity_log, registry};
use crate::protocol::mcp::CallToolResult;

/// Registers every debug tool.
pub fn register(r: &mut ToolRegistry) -> Result<(), CatalogError> {
    r.register::<DebugSleep>()?;
    r.register::<DebugPanic>()?;
    r.register::<DebugCrashActor>()?;
    r.register::<DebugStallActor>()?;
    r.register::<DebugListChanged>()?;
    r.register::<DebugCutConnections>()?;
    Ok(())
}

/// Sleeps, reporting progress.
pub struct DebugSleep;

/// Arguments of `debug_sleep`.
#[derive(Deserialize)]
pub struct SleepArgs {
    ms: u64,
    #[serde(default)]
    steps: u32,
}

impl Tool for DebugSleep {
    type Args = SleepArgs;
    const NAME: &'static str = "debug_sleep";
    const DESCRIPTION: &'static str = "Test only: sleep for ms, reporting progress in steps.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "ms": { "type": "integer", "minimum": 0, "maximum": 600000 },
                "steps": { "type": "integer", "minimum": 0, "maximum": 100 }
            },
            "required": ["ms"],
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: SleepArgs) -> CallToolResult {
        let steps = args.steps.max(1);
        let each = Duration::from_millis(args.ms) / steps;
        for i in 0..steps {
            actix::clock::sleep(each).await;
            if args.steps > 0 {
                ctx.report_progress(f64::from(i + 1), Some(f64::from(steps)), Some("sleeping"));
            }
        }
        CallToolResult::text(format!("slept {} ms", args.ms))
    }
}

/// Panics inside the tool future.
pub struct DebugPanic;

/// No arguments.
#[derive(Deserialize)]
pub struct NoArgs {}

impl Tool for DebugPanic {
    type Args = NoArgs;
    const NAME: &'static str = "debug_panic";
    const DESCRIPTION: &'static str = "Test only: panic inside the tool handler.";

    fn schema() -> Value {
        json!({ "type": "object", "properties": {} })
    }

    async fn call(_ctx: ToolContext, _args: NoArgs) -> CallToolResult {
        panic!("injected tool panic")
    }
}

/// Which singleton actor to fault.
#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// The session registry.
    Registry,
    /// The activity log.
    ActivityLog,
    /// The workspace writer.
    WorkspaceWriter,
    /// The diagnostics actor.
    Diagnostics,
    /// The checkpoint actor.
    Checkpoint,
    /// The editor client.
    ExtensionClient,
    /// The automation actor (when a policy is configured).
    Automation,
}

/// Sends `msg` to the target actor and flattens mailbox errors into faults.
async fn send_to<M>(ctx: &ToolContext, target: Target, msg: M) -> Result<(), ActorFault>
where
    M: actix::Message<Result = Result<(), ActorFault>> + Send + 'static,
    crate::actors::registry::SessionRegistry: actix::Handler<M>,
    crate::actors::activity_log::ActivityLog: actix::Handler<M>,
    crate::actors::writer::WorkspaceWriter: actix::Handler<M>,
    crate::actors::diagnostics::DiagnosticsActor: actix::Handler<M>,
    crate::actors::checkpoint::CheckpointActor: actix::Handler<M>,
    crate::actors::extension::ExtensionClient: actix::Handler<M>,
    crate::actors::automation::Automation: actix::Handler<M>,
{
    use crate::actors::{checkpoint, diagnostics, writer};
    let s = &ctx.services;
    let flat = |name: &'static str, r: Result<Result<(), ActorFault>, actix::MailboxError>| {
        r.map_err(|e| ActorFault::mailbox(name, e)).and_then(|r| r)
    };
    match target {
        Target::Registry => flat(registry::NAME, s.registry.send(msg).await),
        Target::ActivityLog => flat(activity_log::NAME, s.activity.send(msg).await),
        Target::WorkspaceWriter => flat(writer::NAME, s.writer.send(msg).await),
        Target::Diagnostics => flat(diagnostics::NAME, s.diagnostics.send(msg).await),
        Target::ExtensionClient => {
            flat(crate::actors::extension::NAME, s.extension.send(msg).await)
        }
        Target::Checkpoint => match &s.checkpoint {
            Some(c) => flat(checkpoint::NAME, c.send(msg).await),
            None => Ok(()),
        },
        Target::Automation => match &s.automation {
            Some(a) => flat(crate::actors::automation::NAME, a.send(msg).await),
            None => Ok(()),
        },
    }
}

/// Arguments naming an actor.
#[derive(Deserialize)]
pub struct ActorArgs {
    actor: Target,
    #[serde(default)]
    ms: u64,
}

fn actor_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "actor": { "enum": ["registry", "activity_log", "workspace_writer", "diagnostics", "checkpoint", "extension_client", "automation"] },
            "ms": { "type": "integer", "minimum": 0, "maximum": 600000 }
        },
        "required": ["actor"]
    })
}

fn outcome(result: Result<(), ActorFault>) -> CallToolResult {
    match result {
        Ok(()) => CallToolResult::text("ok"),
        Err(fault) => CallToolResult::error(fault.to_string()),
    }
}

/// Makes a singleton actor panic in a handler.
pub struct DebugCrashActor;

impl Tool for DebugCrashActor {
    type Args = ActorArgs;
    const NAME: &'static str = "debug_crash_actor";
    const DESCRIPTION: &'static str = "Test only: make a singleton actor panic in a handler.";

    fn schema() -> Value {
        actor_schema()
    }

    async fn call(ctx: ToolContext, args: ActorArgs) -> CallToolResult {
        outcome(send_to(&ctx, args.actor, Crash).await)
    }
}

/// Holds a request in flight inside a singleton actor.
pub struct DebugStallActor;

impl Tool for DebugStallActor {
    type Args = ActorArgs;
    const NAME: &'static str = "debug_stall_actor";
    const DESCRIPTION: &'static str =
        "Test only: keep a request in flight inside a singleton actor for ms.";

    fn schema() -> Value {
        actor_schema()
    }

    async fn call(ctx: ToolContext, args: ActorArgs) -> CallToolResult {
        outcome(send_to(&ctx, args.actor, Stall(Duration::from_millis(args.ms))).await)
    }
}

/// Tells the registry that the tool set changed.
pub struct DebugListChanged;

/// Arguments of `debug_list_changed`.
#[derive(Deserialize)]
pub struct ListChangedArgs {
    #[serde(default)]
    immediate: bool,
}

impl Tool for DebugListChanged {
    type Args = ListChangedArgs;
    const NAME: &'static str = "debug_list_changed";
    const DESCRIPTION: &'static str =
        "Test only: signal a tool-set change (debounced unless immediate).";

    fn schema() -> Value {
        json!({ "type": "object", "properties": { "immediate": { "type": "boolean" } } })
    }

    async fn call(ctx: ToolContext, args: ListChangedArgs) -> CallToolResult {
        ctx.services.registry.do_send(ToolsChanged {
            immediate: args.immediate,
        });
        CallToolResult::text("signalled")
    }
}

/// Closes a session's connections from the bridge's side.
pub struct DebugCutConnections;

/// Arguments of `debug_cut_connections`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CutArgs {
    session_id: String,
}

impl Tool for DebugCutConnections {
    type Args = CutArgs;
    const NAME: &'static str = "debug_cut_connections";
    const DESCRIPTION: &'static str =
        "Test only: close every connection of a session from the bridge's side (1001).";

    fn schema() -> Value {
        json!({ "type": "object", "properties": { "sessionId": { "type": "string" } }, "required": ["sessionId"] })
    }

    async fn call(ctx: ToolContext, args: CutArgs) -> CallToolResult {
        match ctx
            .services
            .registry
            .send(crate::actors::fault::CutConnections(args.session_id))
            .await
        {
            Ok(true) => CallToolResult::text("cut"),
            _ => CallToolResult::error("no such session"),
        }
    }
}
