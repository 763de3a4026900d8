//! Test-only tools (feature `fault-injection`): slow calls with progress, panics in
//! tools and in actors, stalled actor requests and blocked actor threads, a
//! list_changed trigger, and a forwarded
//! editor tool whose paths sit under keys no other tool uses.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::registry::EditorUse;
use super::registry::{CatalogError, ToolRegistry};
use super::{Tool, ToolContext, ToolError, ToolResult, WorkspacePath};
use crate::actors::fault::{Crash, Freeze, Stall};
use crate::actors::registry::ToolsChanged;
use crate::actors::supervise::ActorFault;
use crate::actors::{activity_log, registry};
use crate::protocol::id::SessionId;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;

/// Registers every debug tool.
pub fn register(r: &mut ToolRegistry) -> Result<(), CatalogError> {
    r.register::<DebugSleep>()?;
    r.register::<DebugPanic>()?;
    r.register::<DebugCrashActor>()?;
    r.register::<DebugStallActor>()?;
    r.register::<DebugListChanged>()?;
    r.register::<DebugCutConnections>()?;
    r.register::<DebugForwardPaths>()?;
    Ok(())
}

/// Sleeps, reporting progress.
pub struct DebugSleep;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SleepArgs {
    #[schemars(range(max = 600_000))]
    ms: u64,
    #[serde(default)]
    #[schemars(range(max = 100))]
    steps: u32,
}

impl Tool for DebugSleep {
    type Args = SleepArgs;
    const NAME: &'static str = "debug_sleep";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "Test only: sleep for ms, reporting progress in steps.";

    async fn call(ctx: ToolContext, args: SleepArgs) -> ToolResult {
        let steps = args.steps.max(1);
        let each = Duration::from_millis(args.ms) / steps;
        for i in 0..steps {
            actix::clock::sleep(each).await;
            if args.steps > 0 {
                ctx.report_progress(f64::from(i + 1), Some(f64::from(steps)), Some("sleeping"));
            }
        }
        Ok(CallToolResult::text(format!("slept {} ms", args.ms)))
    }
}

/// Panics inside the tool future: on its first poll, or after waiting `after_ms` (a
/// call the session answers at once and one it spawns meet different panic
/// boundaries).
pub struct DebugPanic;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PanicArgs {
    #[serde(default)]
    #[schemars(range(max = 10_000))]
    after_ms: u64,
}

impl Tool for DebugPanic {
    type Args = PanicArgs;
    const NAME: &'static str = "debug_panic";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str =
        "Test only: panic inside the tool handler, at once or after after_ms.";

    async fn call(_ctx: ToolContext, args: PanicArgs) -> ToolResult {
        if args.after_ms > 0 {
            actix::clock::sleep(Duration::from_millis(args.after_ms)).await;
        }
        panic!("injected tool panic")
    }
}

/// Which singleton actor to fault. `Checkpoint` and `Automation` exist only when
/// configured; without them the call does nothing.
#[derive(Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    Registry,
    ActivityLog,
    WorkspaceWriter,
    Diagnostics,
    Checkpoint,
    ExtensionClient,
    Automation,
    /// The Claude task queue.
    Orchestrator,
    /// The workspace watcher.
    Watcher,
    /// The browser page's actor.
    Dashboard,
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
    crate::actors::orchestrator::Orchestrator: actix::Handler<M>,
    crate::actors::watcher::Watcher: actix::Handler<M>,
    crate::actors::dashboard::Dashboard: actix::Handler<M>,
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
        Target::Orchestrator => flat(
            crate::actors::orchestrator::NAME,
            s.orchestrator.send(msg).await,
        ),
        Target::Watcher => flat(crate::actors::watcher::NAME, s.watcher.send(msg).await),
        Target::Dashboard => flat(crate::actors::dashboard::NAME, s.dashboard.send(msg).await),
    }
}

/// Arguments naming an actor.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActorArgs {
    actor: Target,
}

fn outcome(result: Result<(), ActorFault>) -> ToolResult {
    result?;
    Ok(CallToolResult::text("ok"))
}

/// Makes a singleton actor panic in a handler.
pub struct DebugCrashActor;

impl Tool for DebugCrashActor {
    type Args = ActorArgs;
    const NAME: &'static str = "debug_crash_actor";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "Test only: make a singleton actor panic in a handler.";

    async fn call(ctx: ToolContext, args: ActorArgs) -> ToolResult {
        outcome(send_to(&ctx, args.actor, Crash).await)
    }
}

/// Holds a request in flight inside a singleton actor, or blocks its thread.
pub struct DebugStallActor;

/// An actor, how long (`ms`), and whether its thread is blocked that long (`block`: a
/// busy actor, deaf to its mailbox and streams) rather than one request held.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StallArgs {
    actor: Target,
    #[serde(default)]
    #[schemars(range(max = 600_000))]
    ms: u64,
    #[serde(default)]
    block: bool,
}

impl Tool for DebugStallActor {
    type Args = StallArgs;
    const NAME: &'static str = "debug_stall_actor";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "Test only: keep a request in flight inside a singleton \
        actor for ms (block: block the actor's thread that long instead).";

    async fn call(ctx: ToolContext, args: StallArgs) -> ToolResult {
        let time = Duration::from_millis(args.ms);
        if args.block {
            return outcome(send_to(&ctx, args.actor, Freeze(time)).await);
        }
        outcome(send_to(&ctx, args.actor, Stall(time)).await)
    }
}

/// Tells the registry that the tool set changed.
pub struct DebugListChanged;

/// `immediate`: without the debounce.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListChangedArgs {
    #[serde(default)]
    immediate: bool,
}

impl Tool for DebugListChanged {
    type Args = ListChangedArgs;
    const NAME: &'static str = "debug_list_changed";
    const EFFECT: Effect = Effect::Adds;
    const DESCRIPTION: &'static str =
        "Test only: signal a tool-set change (debounced unless immediate).";

    async fn call(ctx: ToolContext, args: ListChangedArgs) -> ToolResult {
        ctx.services.registry.do_send(ToolsChanged {
            immediate: args.immediate,
        });
        Ok(CallToolResult::text("signalled"))
    }
}

/// Closes a session's connections from the bridge's side.
pub struct DebugCutConnections;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CutArgs {
    session_id: SessionId,
}

impl Tool for DebugCutConnections {
    type Args = CutArgs;
    const NAME: &'static str = "debug_cut_connections";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str =
        "Test only: close every connection of a session from the bridge's side (1001).";

    async fn call(ctx: ToolContext, args: CutArgs) -> ToolResult {
        let cut = ctx
            .services
            .registry
            .send(crate::actors::fault::CutConnections(args.session_id))
            .await;
        match cut {
            Ok(true) => Ok(CallToolResult::text("cut")),
            _ => Err(ToolError::refused("no such session")),
        }
    }
}

/// Forwarded to `extension/debugLink` like any editor tool: shows that a path is
/// confined because its type says so, whatever key it is under.
pub struct DebugForwardPaths;

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkArgs {
    target: WorkspacePath,
    #[serde(skip_serializing_if = "Option::is_none")]
    via: Option<Vec<WorkspacePath>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<String>,
}

impl Tool for DebugForwardPaths {
    type Args = LinkArgs;
    const NAME: &'static str = "debug_forward_paths";
    const EFFECT: Effect = Effect::Runs;
    const DESCRIPTION: &'static str =
        "Test only: forward paths under new keys (target, via) to the editor's debugLink.";
    const EDITOR: EditorUse = EditorUse::Required;

    async fn call(ctx: ToolContext, args: LinkArgs) -> ToolResult {
        super::editor::forward(ctx, crate::protocol::editor::Method::DebugLink, args).await
    }
}
