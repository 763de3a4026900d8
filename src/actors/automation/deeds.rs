//! Carrying out what a hook decided: a Claude task on the Orchestrator (followed until
//! it ends), a notification to agents, the editor and the timeline, or an allowlisted
//! command run like `runCommand`.

use std::time::Duration;

use actix::prelude::*;
use serde_json::json;

use super::{Automation, NAME, SETTLE_MS};
use crate::actors::activity_log::LifecycleEvent;
use crate::actors::messages::editor::NotifyEditor;
use crate::actors::messages::registry::Announce;
use crate::actors::orchestrator::{Enqueue, Follow, TaskError};
use crate::actors::supervise::guard;
use crate::automation::policy::Action;
use crate::automation::Firing;
use crate::exec::{Confined, ConfinedError, RunOutput};
use crate::orchestrator::{TaskId, TaskOrigin};

/// Why a hook's task did not start.
#[derive(Debug, thiserror::Error)]
enum NotStarted {
    #[error(transparent)]
    Refused(#[from] TaskError),
    #[error("orchestrator unavailable: {0}")]
    Unavailable(#[from] MailboxError),
}

/// The orchestrator answered a hook's enqueue: the task's id, or why it did not start.
#[derive(Debug, Message)]
#[rtype(result = "()")]
struct Started {
    hook: &'static str,
    subject: String,
    result: Result<TaskId, NotStarted>,
}

/// A hook's task ended.
#[derive(Debug, Message)]
#[rtype(result = "()")]
struct TaskEnded {
    id: TaskId,
    subject: String,
}

/// A hook's command ended (or was refused).
#[derive(Debug, Message)]
#[rtype(result = "()")]
struct CommandEnded {
    hook: &'static str,
    subject: String,
    key: String,
    line: String,
    result: Result<RunOutput, ConfinedError>,
}

impl Automation {
    /// Does what `firing` asks.
    pub(super) fn carry_out(&mut self, firing: Firing, ctx: &mut Context<Self>) {
        let Firing {
            hook,
            subject,
            deed,
            timeout_ms,
        } = firing;
        self.fired += 1;
        match deed {
            Action::Task { prompt } => {
                self.records.fired(hook, &subject, "starting");
                let enqueue = Enqueue {
                    origin: TaskOrigin::Automation {
                        hook: hook.to_string(),
                        file: subject.clone(),
                    },
                    prompt,
                    timeout_ms,
                };
                // Until the orchestrator answers, count the task as in flight.
                self.in_flight.insert(placeholder(hook, &subject));
                let ask = self.links.orchestrator.enqueue.send(enqueue);
                let me = ctx.address();
                actix_rt::spawn(async move {
                    let result = match ask.await {
                        Ok(r) => r.map(|t| t.id).map_err(NotStarted::from),
                        Err(e) => Err(NotStarted::from(e)),
                    };
                    me.do_send(Started {
                        hook,
                        subject,
                        result,
                    });
                });
            }
            Action::Notify { message } => {
                self.records.fired(hook, &subject, "notified");
                tracing::info!(hook, subject, message, "automation notice");
                let data = json!({
                    "event": "automation_notice",
                    "hook": hook,
                    "subject": subject,
                    "message": message,
                });
                self.links.agents.do_send(Announce(data.clone()));
                self.links.editor.do_send(NotifyEditor {
                    method: crate::protocol::editor::BridgeNotification::AutomationNotice,
                    params: data,
                });
                self.record(
                    LifecycleEvent::AutomationNotice,
                    format!("{hook} {subject}: {message}"),
                );
            }
            Action::CheckEdit { .. } => {
                // Only a proposal asks an edit gate, and the proposer runs the check.
                self.records
                    .fired(hook, &subject, "edits are checked when proposed only");
            }
            Action::Diagnostics { .. } => {
                // Only a done-gate checks diagnostics, and the gate runs its own check.
                self.records
                    .fired(hook, &subject, "diagnostics are checked at a stop only");
            }
            Action::Command { program, args } => {
                let line = crate::exec::command_line(&program, &args);
                self.records.fired(hook, &subject, "running");
                self.record(
                    LifecycleEvent::AutomationFired,
                    format!("{hook} {subject} → command {line}"),
                );
                let key = format!("command:{hook}:{subject}");
                self.in_flight.insert(key.clone());
                let command = Confined {
                    program,
                    args,
                    cwd: self.workspace.root().to_path_buf(),
                    timeout: Some(Duration::from_millis(timeout_ms)),
                };
                let (settings, workspace) = (self.settings.clone(), self.workspace.clone());
                let me = ctx.address();
                actix_rt::spawn(async move {
                    let result = command.run(&settings.command_rules(), &workspace).await;
                    me.do_send(CommandEnded {
                        hook,
                        subject,
                        key,
                        line,
                        result,
                    });
                });
            }
        }
    }

    /// The orchestrator answered a hook's enqueue: follow the task until it ends.
    fn started(&mut self, msg: Started, ctx: &mut Context<Self>) {
        let Started {
            hook,
            subject,
            result,
        } = msg;
        self.in_flight.remove(&placeholder(hook, &subject));
        match result {
            Ok(id) => {
                tracing::info!(hook, subject, task = %id, "automation task started");
                self.records
                    .settled(hook, &subject, Some(id.to_string()), "started".into());
                self.record(
                    LifecycleEvent::AutomationFired,
                    format!("{hook} {subject} → task {id}"),
                );
                self.in_flight.insert(id.to_string());
                let follow = self.links.orchestrator.follow.send(Follow(id.clone()));
                let me = ctx.address();
                actix_rt::spawn(async move {
                    if let Ok(Some(mut output)) = follow.await {
                        while output.recv().await.is_some() {}
                    }
                    me.do_send(TaskEnded { id, subject });
                });
            }
            Err(e) => {
                self.fired -= 1;
                self.skipped += 1;
                tracing::warn!(hook, subject, error = %e, "automation task not started");
                self.records.unfired(hook, &subject, &e.to_string());
                self.record(
                    LifecycleEvent::AutomationFired,
                    format!("{hook} {subject}: not started ({e})"),
                );
            }
        }
    }

    /// Automation's own task or command ended: workspace events are its doing for
    /// [`SETTLE_MS`] more, and every hook's cooldown for its subject restarts.
    pub(super) fn settle(&mut self, key: &str, subject: &str) {
        self.in_flight.remove(key);
        let now = self.clock.now_ms();
        self.settle_until = now + SETTLE_MS;
        self.engine.touch(subject, now);
    }

    fn command_ended(&mut self, msg: CommandEnded) {
        self.settle(&msg.key, &msg.subject);
        let result = match &msg.result {
            Ok(out) if out.timed_out => "timed out".to_string(),
            Ok(out) => match out.exit_code {
                Some(code) => format!("exit {code}"),
                None => "killed".to_string(),
            },
            Err(e) => format!("not run: {e}"),
        };
        match &msg.result {
            Ok(out) if out.exit_code == Some(0) => {
                tracing::info!(
                    hook = msg.hook,
                    command = msg.line,
                    "automation command succeeded"
                )
            }
            _ => {
                tracing::warn!(
                    hook = msg.hook,
                    command = msg.line,
                    result,
                    "automation command failed"
                )
            }
        }
        self.record(
            LifecycleEvent::AutomationFired,
            format!(
                "{} {}: command {} → {result}",
                msg.hook, msg.subject, msg.line
            ),
        );
        self.records.settled(msg.hook, &msg.subject, None, result);
    }
}

fn placeholder(hook: &str, subject: &str) -> String {
    format!("starting:{hook}:{subject}")
}

impl Handler<Started> for Automation {
    type Result = ();
    fn handle(&mut self, msg: Started, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| act.started(msg, ctx));
    }
}

impl Handler<TaskEnded> for Automation {
    type Result = ();
    fn handle(&mut self, msg: TaskEnded, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            act.settle(&msg.id, &msg.subject);
            tracing::debug!(task = %msg.id, "automation task ended");
        });
    }
}

impl Handler<CommandEnded> for Automation {
    type Result = ();
    fn handle(&mut self, msg: CommandEnded, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| act.command_ended(msg));
    }
}
