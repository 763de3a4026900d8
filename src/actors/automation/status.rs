//! What `/status` shows about automation, and the per-hook record behind it.

use std::collections::HashMap;

use actix::prelude::*;
use serde::Serialize;

use crate::automation::policy::{Hook, Trigger};
use crate::automation::SkipKind;

/// What `/status` shows about automation.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AutomationStatus {
    /// The policy file.
    pub policy: String,
    /// Enabled hooks, with what each did last.
    pub hooks: Vec<HookStatus>,
    /// Cap over all hooks.
    pub max_tasks_per_hour: u32,
    /// Tasks, commands and linter runs started in the last hour (what the cap counts).
    pub fired_last_hour: usize,
    /// Firings since the bridge started.
    pub fired: u64,
    /// Matches that did not fire (cooldown, cap, loop guard, refusal); filter misses
    /// are not counted here, only per hook.
    pub skipped: u64,
    /// Automation tasks and commands pending or running.
    pub in_flight: Vec<String>,
    /// Workspace events are not acted on now by hooks that change the workspace: an
    /// automation task or command is in flight or ended less than 2 s ago.
    pub quiet: bool,
    /// Files whose diagnostics come from the editor (the bridge's linters do not fire
    /// hooks for them while it is connected).
    pub editor_files: usize,
    /// The repository's HEAD as automation last read it (`branch@commit`), which git
    /// hooks compare the next read with; absent outside a repository.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_head: Option<String>,
    /// Why the last edit of the policy file was refused (the old policy stays).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_reload_error: Option<String>,
}

/// One hook's record.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookStatus {
    /// The key it is declared under.
    pub name: &'static str,
    /// `task`, `notify` or `command`.
    pub action: &'static str,
    /// Firings since the bridge started.
    pub fired: u64,
    /// Events it saw and did not fire for (filter misses included).
    pub skipped: u64,
    /// Its last firing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_fired: Option<LastFired>,
    /// The last event it did not fire for, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_skip: Option<LastSkip>,
}

/// A hook's last firing.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastFired {
    /// When (RFC 3339).
    pub at: String,
    /// What it fired for.
    pub subject: String,
    /// The task it started, once the orchestrator accepted it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// How it went: `started`, `notified`, `running`, `exit 0`, `exit 1`,
    /// `timed out`, or why it did not start.
    pub result: String,
}

/// The last event a hook did not fire for.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastSkip {
    /// When (RFC 3339).
    pub at: String,
    /// The event's subject.
    pub subject: String,
    /// Why, for machines.
    pub kind: SkipKind,
    /// Why, for people.
    pub reason: String,
}

/// Ask for [`AutomationStatus`].
#[derive(Debug, Message)]
#[rtype(result = "AutomationStatus")]
pub struct GetAutomationStatus;

/// Per-hook records, kept across policy reloads, and counted in the metrics
/// (`ide_bridge_automation_hooks_total`).
pub struct HookRecords {
    by_hook: HashMap<&'static str, Record>,
    metrics: std::sync::Arc<crate::metrics::Metrics>,
}

#[derive(Debug, Default)]
struct Record {
    fired: u64,
    skipped: u64,
    last_fired: Option<LastFired>,
    last_skip: Option<LastSkip>,
}

impl HookRecords {
    /// No records yet.
    pub fn new(metrics: std::sync::Arc<crate::metrics::Metrics>) -> Self {
        Self {
            by_hook: HashMap::new(),
            metrics,
        }
    }

    /// `hook` fired for `subject`.
    pub fn fired(&mut self, hook: &'static str, subject: &str, result: &str) {
        self.metrics.count_hook_outcome(hook, "fired");
        let r = self.by_hook.entry(hook).or_default();
        r.fired += 1;
        r.last_fired = Some(LastFired {
            at: crate::actors::activity_log::iso_now(),
            subject: subject.to_string(),
            task: None,
            result: result.to_string(),
        });
    }

    /// What became of `hook`'s last firing for `subject` (its task id, its result).
    pub fn settled(
        &mut self,
        hook: &'static str,
        subject: &str,
        task: Option<String>,
        result: String,
    ) {
        if let Some(last) = self
            .by_hook
            .get_mut(hook)
            .and_then(|r| r.last_fired.as_mut())
            .filter(|l| l.subject == subject)
        {
            if task.is_some() {
                last.task = task;
            }
            last.result = result;
        }
    }

    /// `hook`'s firing for `subject` could not be carried out (the orchestrator
    /// refused the task): it counts as a `refused` skip, not a firing.
    pub fn unfired(&mut self, hook: &'static str, subject: &str, reason: &str) {
        if let Some(r) = self.by_hook.get_mut(hook) {
            r.fired = r.fired.saturating_sub(1);
            if let Some(last) = r.last_fired.as_mut().filter(|l| l.subject == subject) {
                last.result = format!("not started: {reason}");
            }
        }
        self.skipped(hook, subject, SkipKind::Refused, reason);
    }

    /// `hook` did not fire for `subject`.
    pub fn skipped(&mut self, hook: &'static str, subject: &str, kind: SkipKind, reason: &str) {
        let label = serde_json::to_value(kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        self.metrics.count_hook_outcome(hook, label);
        let r = self.by_hook.entry(hook).or_default();
        r.skipped += 1;
        r.last_skip = Some(LastSkip {
            at: crate::actors::activity_log::iso_now(),
            subject: subject.to_string(),
            kind,
            reason: reason.to_string(),
        });
    }

    /// The status of each of `hooks`.
    pub fn status(&self, hooks: &[Hook]) -> Vec<HookStatus> {
        hooks
            .iter()
            .map(|h| {
                let r = self.by_hook.get(h.name);
                HookStatus {
                    name: h.name,
                    action: h.action.name(),
                    fired: r.map_or(0, |r| r.fired),
                    skipped: r.map_or(0, |r| r.skipped),
                    last_fired: r.and_then(|r| r.last_fired.clone()),
                    last_skip: r.and_then(|r| r.last_skip.clone()),
                }
            })
            .collect()
    }
}

/// Whether any hook waits for file changes on disk (otherwise the watcher's batches
/// are not looked at).
pub fn wants_file_changes(hooks: &[Hook]) -> bool {
    hooks
        .iter()
        .any(|h| matches!(h.trigger, Trigger::FileChange { .. }))
}
