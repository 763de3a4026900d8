//! Automation: a policy file whose hooks turn events (diagnostics appearing or
//! clearing, files saved or changed on disk, Claude tasks ending, git commits and
//! branch switches, agents coming and going, commands failing) into Claude tasks,
//! notifications or allowlisted commands. This module decides; the Automation actor
//! feeds it events and carries out what it decides.

pub mod events;
pub mod gate;
pub mod git;
pub mod policy;
pub mod template;

use std::collections::HashMap;
use std::sync::Arc;

use globset::GlobSet;
use serde::{Deserialize, Serialize};

use crate::tasks::TaskStatus;
use gate::{Gate, Skip};
use ide_bridge_protocol::id::SessionId;
use ide_bridge_workspace::diagnostics::{Diagnostic, Severity};
use policy::{Action, DiagnosticsState, Hook, Policy, Trigger};
use template::{Value, Vars};

/// Files whose diagnostics state is remembered per hook, at most.
pub const MAX_TRACKED_FILES: usize = 2_000;

/// A hook that fired.
#[derive(Debug, Clone, PartialEq)]
pub struct Firing {
    /// The hook.
    pub hook: &'static str,
    /// What it fired for: a workspace-relative file, a branch, a session, a program…
    pub subject: String,
    /// What to do, its templates rendered.
    pub deed: Action,
    /// Timeout of the task or command.
    pub timeout_ms: u64,
}

/// Why a hook that saw an event did not fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SkipKind {
    /// The hook fired for the same subject too recently.
    Cooldown,
    /// The hourly cap over all hooks is reached.
    HourlyCap,
    /// The event is automation's own doing (its task or command in flight or just
    /// ended, or its own task ending).
    LoopGuard,
    /// The event did not pass the hook's filter (patterns, change kinds, branches…).
    Filter,
    /// The editor reports this file's diagnostics; the bridge's linters do not count.
    EditorWins,
    /// The firing could not be carried out (prompt too long, an argument that would be
    /// an option, the orchestrator refused the task, the command was refused).
    Refused,
    /// A done-gate already kept the agent working `maxHolds` times for this prompt.
    HoldsSpent,
}

impl SkipKind {
    /// Routine skips are logged at debug level and not recorded in the timeline.
    pub fn routine(self) -> bool {
        !matches!(
            self,
            SkipKind::HourlyCap | SkipKind::Refused | SkipKind::HoldsSpent
        )
    }
}

/// What a hook made of an event.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Carry this out.
    Fire(Firing),
    /// The hook saw the event but did not fire.
    Skipped {
        /// The hook.
        hook: &'static str,
        /// The event's subject.
        subject: String,
        /// Why, for people.
        reason: String,
        /// Why, for machines.
        kind: SkipKind,
    },
}

/// An event, with files already made workspace-relative.
#[derive(Debug, Clone)]
pub enum Event {
    /// The file's diagnostics are now these (empty: none).
    Diagnostics {
        /// Workspace-relative path.
        file: String,
        /// All of its diagnostics.
        diagnostics: Vec<Diagnostic>,
    },
    /// The editor saved the file.
    FileSaved {
        /// Workspace-relative path.
        file: String,
    },
    /// A file changed on disk.
    FileChanged {
        /// Workspace-relative path.
        file: String,
        /// `created`, `modified`, `removed` or `renamed`.
        change: &'static str,
        /// The old path of a rename.
        from: Option<String>,
    },
    /// A Claude task ended.
    TaskEnded {
        /// Its id.
        task: String,
        /// How.
        status: TaskStatus,
        /// The hook that started it, when automation did.
        hook: Option<String>,
        /// The agent session that started it, when one did.
        session: Option<SessionId>,
        /// Its output (tail) or error.
        output: String,
    },
    /// A commit was made.
    GitCommit {
        /// The branch (or `HEAD` when detached).
        branch: String,
        /// The new commit.
        commit: String,
        /// Its subject line.
        subject: String,
    },
    /// Another branch was checked out.
    BranchSwitched {
        /// The new branch.
        branch: String,
        /// The previous one.
        previous: String,
        /// The commit now checked out.
        commit: String,
    },
    /// An agent connected or went for good.
    Agent {
        /// Connected (true) or gone.
        connected: bool,
        /// Its session id.
        session: SessionId,
        /// Its client name.
        client: String,
    },
    /// A `runCommand` failed.
    CommandFailed {
        /// The program.
        program: String,
        /// The whole command line.
        command: String,
        /// Exit code, if it exited.
        exit_code: Option<i32>,
        /// It ran past its timeout.
        timed_out: bool,
        /// Output tail.
        output: String,
        /// The agent session that ran it.
        session: Option<SessionId>,
    },
    /// An agent changed a file (its own tools, or the bridge's write tools).
    AgentEdited {
        /// Its session.
        session: SessionId,
        /// How people see it (`claude-code 1a2b3c4d`).
        agent: String,
        /// Workspace-relative path.
        file: String,
        /// The tool (`Edit`, `Write`, `replaceBlock`, …).
        tool: String,
    },
    /// An agent's own shell command failed.
    AgentCommandFailed {
        session: SessionId,
        agent: String,
        /// The whole command line.
        command: String,
        /// Its first word.
        program: String,
        /// What the CLI reported (`Exit code 1`).
        error: String,
    },
    /// An agent is ending its turn.
    AgentStopped {
        session: SessionId,
        agent: String,
        /// Its last message (bounded by the sender).
        message: String,
    },
    /// The person submitted a prompt to an agent.
    PromptSubmitted {
        session: SessionId,
        agent: String,
        /// The prompt (bounded by the sender).
        prompt: String,
    },
    /// A write to a claimed file was refused.
    ClaimRefused {
        /// The refused agent's session (empty when the bridge could not name it).
        session: SessionId,
        agent: String,
        /// Who holds the claim.
        holder: String,
        /// Workspace-relative path.
        file: String,
        tool: String,
    },
    /// An agent proposed a change to a file (before it is written).
    EditProposed {
        session: SessionId,
        agent: String,
        /// Workspace-relative path.
        file: String,
        /// `Edit`, `Write`, `openDiff`.
        tool: String,
    },
}

impl Event {
    /// Made by the workspace (files, diagnostics, git) or by an agent's work: while
    /// automation's own task or command runs, such events are taken as its doing (an
    /// automation task is an agent too). An agent stopping is not: the done-gate checks
    /// every stop, and the stops of automation's own tasks never reach it.
    pub fn from_workspace(&self) -> bool {
        matches!(
            self,
            Event::Diagnostics { .. }
                | Event::FileSaved { .. }
                | Event::FileChanged { .. }
                | Event::GitCommit { .. }
                | Event::BranchSwitched { .. }
                | Event::AgentEdited { .. }
                | Event::AgentCommandFailed { .. }
                | Event::PromptSubmitted { .. }
                | Event::ClaimRefused { .. }
        )
    }

    /// The file it is about, if any.
    pub fn file(&self) -> Option<&str> {
        match self {
            Event::Diagnostics { file, .. }
            | Event::FileSaved { file }
            | Event::FileChanged { file, .. }
            | Event::AgentEdited { file, .. }
            | Event::ClaimRefused { file, .. }
            | Event::EditProposed { file, .. } => Some(file),
            _ => None,
        }
    }
}

/// What the hook saw: the subject (cooldown key), its template variables, or why the
/// hook's filter let it pass.
enum Seen {
    /// The hook is not about this kind of event (or no state transition happened).
    Unrelated,
    /// The event's kind is the hook's, but its filter refused it.
    Filtered { subject: String, reason: String },
    /// An automation task's own end, for a hook that could loop on it.
    OwnDoing { subject: String },
    /// The hook fires (if the gate admits it).
    Matched { subject: String, vars: Vars },
    /// A diagnostics state change the hook fires on: remembered only once it fired, so
    /// that a firing the loop guard, a cooldown or the cap held back happens at the
    /// file's next report.
    Transition {
        subject: String,
        vars: Vars,
        /// The (hook, file) and its matching diagnostics' fingerprint (`None`: none).
        key: (&'static str, String),
        now: Option<u64>,
    },
}

/// What the engine keeps across a restart: without it, every error in the workspace
/// would be new to a restarted bridge (its diagnostics hooks fire for each), and a
/// bridge restarting in a loop would start past the hourly cap.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remembered {
    /// Per diagnostics hook and file: the fingerprint of its matching diagnostics.
    pub diagnostics: Vec<(String, String, u64)>,
    /// When (Unix ms) each firing the hourly cap counts happened, in the last hour.
    pub counted_at: Vec<u64>,
}

/// The policy with its cooldowns, hourly cap and per-file diagnostics state.
#[derive(Debug)]
pub struct Engine {
    policy: Policy,
    /// The policy's hooks, shared so that handling an event does not copy them.
    hooks: Arc<[Hook]>,
    gate: Gate,
    /// Hash of the matching diagnostics per (hook, file) while there are some.
    in_error: HashMap<(&'static str, String), u64>,
    /// Counts changes of what [`Remembered`] holds.
    revision: u64,
}

impl Engine {
    /// An engine for `policy`.
    pub fn new(policy: Policy) -> Self {
        Self {
            hooks: policy.hooks.clone().into(),
            policy,
            gate: Gate::default(),
            in_error: HashMap::new(),
            revision: 0,
        }
    }

    /// Changes when what [`Engine::remember`] returns may have changed.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// What to keep across a restart, at `now_ms` on the engine's clock and
    /// `unix_now_ms` on the wall clock.
    pub fn remember(&self, now_ms: u64, unix_now_ms: u64) -> Remembered {
        Remembered {
            diagnostics: self
                .in_error
                .iter()
                .map(|((hook, file), h)| (hook.to_string(), file.clone(), *h))
                .collect(),
            counted_at: self
                .gate
                .counted(now_ms)
                .map(|t| unix_now_ms.saturating_sub(now_ms - t))
                .collect(),
        }
    }

    /// Takes back what an earlier run remembered (the state of hooks the policy no
    /// longer has is dropped). Firings of the last hour are counted again at their
    /// times, mapped onto this run's clock (which must read at least an hour by then
    /// for them to keep their age).
    pub fn restore(&mut self, remembered: Remembered, now_ms: u64, unix_now_ms: u64) {
        let hooks: Vec<&'static str> = self.hooks.iter().map(|h| h.name).collect();
        for (hook, file, h) in remembered.diagnostics {
            let Some(name) = hooks.iter().find(|n| **n == hook) else {
                continue;
            };
            if self.in_error.len() < MAX_TRACKED_FILES {
                self.in_error.insert((name, file), h);
            }
        }
        let mut counted: Vec<u64> = remembered
            .counted_at
            .into_iter()
            .filter(|&at| unix_now_ms.saturating_sub(at) < gate::HOUR_MS)
            .map(|at| now_ms.saturating_sub(unix_now_ms.saturating_sub(at)))
            .collect();
        counted.sort_unstable();
        self.gate.restore_counted(counted);
    }

    /// The current policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Swaps the policy, keeping cooldowns, the hourly count and the diagnostics state.
    pub fn replace(&mut self, policy: Policy) {
        self.hooks = policy.hooks.clone().into();
        self.policy = policy;
    }

    /// Firings in the hour before `now_ms`.
    pub fn fired_last_hour(&self, now_ms: u64) -> usize {
        self.gate.fired_last_hour(now_ms)
    }

    /// Restarts every hook's cooldown for `subject`.
    pub fn touch(&mut self, subject: &str, now_ms: u64) {
        let names: Vec<&'static str> = self.policy.hooks.iter().map(|h| h.name).collect();
        self.gate.touch(subject, &names, now_ms);
    }

    /// Runs `event` through every hook. With `quiet` (an automation task or command is
    /// in flight or just ended) hooks that act on the workspace do not fire for
    /// workspace events; a diagnostics change they skip is not taken as reported (the
    /// caller may hand it over again once quiet, or [`Engine::acknowledge`] it).
    pub fn handle(&mut self, event: &Event, now_ms: u64, quiet: bool) -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        let hooks = Arc::clone(&self.hooks);
        for hook in hooks.iter() {
            let skipped = |subject: String, reason: String, kind: SkipKind| Outcome::Skipped {
                hook: hook.name,
                subject,
                reason,
                kind,
            };
            let outcome = match self.sees(hook, event) {
                Seen::Unrelated => continue,
                Seen::Filtered { subject, reason } => skipped(subject, reason, SkipKind::Filter),
                Seen::OwnDoing { subject } => skipped(
                    subject,
                    "loop guard: the task was started by automation".into(),
                    SkipKind::LoopGuard,
                ),
                Seen::Matched { subject, .. } | Seen::Transition { subject, .. }
                    if quiet && event.from_workspace() && hook.action.acts_on_workspace() =>
                {
                    skipped(
                        subject,
                        "loop guard: an automation task or command is in flight or just ended \
                         (its own edits never trigger automation)"
                            .into(),
                        SkipKind::LoopGuard,
                    )
                }
                Seen::Matched { subject, vars } => {
                    let outcome = self.try_fire(hook, subject, &vars, now_ms);
                    if matches!(outcome, Outcome::Fire(_)) {
                        self.revision += 1;
                    }
                    outcome
                }
                Seen::Transition {
                    subject,
                    vars,
                    key,
                    now,
                } => {
                    let outcome = self.try_fire(hook, subject, &vars, now_ms);
                    // Reported once fired; a firing the cap (or a refusal) took is
                    // reported too, as any capped firing is lost. A cooldown holds it
                    // for the file's next report.
                    let reported = match &outcome {
                        Outcome::Fire(_) => true,
                        Outcome::Skipped { kind, .. } => {
                            matches!(kind, SkipKind::HourlyCap | SkipKind::Refused)
                        }
                    };
                    if reported {
                        self.remember_diagnostics(key, now);
                        self.revision += 1;
                    }
                    outcome
                }
            };
            outcomes.push(outcome);
        }
        outcomes
    }

    /// Takes a diagnostics report as seen without firing anything (automation's own
    /// work caused it): what it holds is no longer new to any diagnostics hook.
    pub fn acknowledge(&mut self, event: &Event) {
        let Event::Diagnostics { file, diagnostics } = event else {
            return;
        };
        let hooks = Arc::clone(&self.hooks);
        for hook in hooks.iter() {
            if let Trigger::Diagnostics { min_severity, .. } = &hook.trigger {
                let matching = matching(diagnostics, *min_severity);
                let now = (!matching.is_empty()).then(|| fingerprint(&matching));
                self.remember_diagnostics((hook.name, file.clone()), now);
            }
        }
    }

    /// Keeps the fingerprint of a (hook, file)'s matching diagnostics (`None`: it has
    /// none), at most [`MAX_TRACKED_FILES`] of them.
    fn remember_diagnostics(&mut self, key: (&'static str, String), now: Option<u64>) {
        let changed = match now {
            Some(h) => {
                if self.in_error.len() >= MAX_TRACKED_FILES && !self.in_error.contains_key(&key) {
                    self.in_error.clear();
                }
                self.in_error.insert(key, h) != Some(h)
            }
            None => self.in_error.remove(&key).is_some(),
        };
        if changed {
            self.revision += 1;
        }
    }

    /// What `hook` makes of `event`.
    fn sees(&mut self, hook: &Hook, event: &Event) -> Seen {
        let text = |s: &str| Value::Text(s.to_string());
        let filtered = |set: &Option<GlobSet>, value: &str, what: &str| {
            set.as_ref()
                .filter(|set| !set.is_match(value))
                .map(|_| format!("filter: {what} {value:?} matches none of the hook's patterns"))
        };
        match (&hook.trigger, event) {
            (Trigger::FileSave { patterns }, Event::FileSaved { file }) => {
                if patterns.is_match(file.as_str()) {
                    Seen::Matched {
                        subject: file.clone(),
                        vars: vec![("file", text(file))],
                    }
                } else {
                    Seen::Filtered {
                        subject: file.clone(),
                        reason: format!("filter: {file} matches none of the patterns"),
                    }
                }
            }
            (
                Trigger::FileChange { patterns, changes },
                Event::FileChanged { file, change, from },
            ) => {
                if !patterns.is_match(file.as_str()) {
                    Seen::Filtered {
                        subject: file.clone(),
                        reason: format!("filter: {file} matches none of the patterns"),
                    }
                } else if !changes.iter().any(|c| c == change) {
                    Seen::Filtered {
                        subject: file.clone(),
                        reason: format!(
                            "filter: the change is {change}, not one of {}",
                            changes.join(", ")
                        ),
                    }
                } else {
                    Seen::Matched {
                        subject: file.clone(),
                        vars: vec![
                            ("file", text(file)),
                            ("change", text(change)),
                            ("from", text(from.as_deref().unwrap_or(""))),
                        ],
                    }
                }
            }
            (
                Trigger::Diagnostics {
                    state,
                    min_severity,
                },
                Event::Diagnostics { file, diagnostics },
            ) => {
                let matching = matching(diagnostics, *min_severity);
                let key = (hook.name, file.clone());
                let before = self.in_error.get(&key).copied();
                let now = (!matching.is_empty()).then(|| fingerprint(&matching));
                let fires = match state {
                    DiagnosticsState::Error => now.is_some() && now != before,
                    DiagnosticsState::Cleared => before.is_some() && now.is_none(),
                };
                if fires {
                    Seen::Transition {
                        subject: file.clone(),
                        vars: vec![
                            ("file", text(file)),
                            ("diagnostics", Value::Diagnostics(matching)),
                        ],
                        key,
                        now,
                    }
                } else {
                    self.remember_diagnostics(key, now);
                    Seen::Unrelated
                }
            }
            (
                Trigger::TaskEnded { succeeded, origins },
                Event::TaskEnded {
                    task,
                    status,
                    hook: by_hook,
                    session,
                    output,
                },
            ) => {
                let done = *status == TaskStatus::Done;
                let failed = matches!(status, TaskStatus::Error | TaskStatus::Interrupted);
                if (*succeeded && !done) || (!*succeeded && !failed) {
                    return Seen::Unrelated;
                }
                // Each task is its own subject: a cooldown per agent let the first of
                // its parallel tasks' failures through and held back the rest.
                let subject = format!("task:{task}");
                let by_automation = by_hook.is_some();
                if (by_automation && !origins.automation) || (!by_automation && !origins.agent) {
                    return Seen::Filtered {
                        subject,
                        reason: "filter: the task's origin is not one of the hook's origins".into(),
                    };
                }
                if by_automation && hook.action.acts_on_workspace() {
                    return Seen::OwnDoing { subject };
                }
                let status = serde_json::to_value(status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                Seen::Matched {
                    subject,
                    vars: vec![
                        ("taskId", text(task)),
                        ("status", text(&status)),
                        ("hook", text(by_hook.as_deref().unwrap_or(""))),
                        ("session", text(session.as_deref().unwrap_or(""))),
                        ("output", Value::Output(output.clone())),
                    ],
                }
            }
            (
                Trigger::GitCommit { branches },
                Event::GitCommit {
                    branch,
                    commit,
                    subject,
                },
            ) => gate(filtered(branches, branch, "branch"), branch, || {
                vec![
                    ("branch", text(branch)),
                    ("commit", text(commit)),
                    ("subject", text(subject)),
                ]
            }),
            (
                Trigger::BranchSwitch { branches },
                Event::BranchSwitched {
                    branch,
                    previous,
                    commit,
                },
            ) => gate(filtered(branches, branch, "branch"), branch, || {
                vec![
                    ("branch", text(branch)),
                    ("previousBranch", text(previous)),
                    ("commit", text(commit)),
                ]
            }),
            (
                Trigger::Agent { connected, clients },
                Event::Agent {
                    connected: c,
                    session,
                    client,
                },
            ) if connected == c => gate(filtered(clients, client, "client"), session, || {
                vec![("session", text(session)), ("agent", text(client))]
            }),
            (
                Trigger::CommandFailed { commands },
                Event::CommandFailed {
                    program,
                    command,
                    exit_code,
                    timed_out,
                    output,
                    session,
                },
            ) => gate(filtered(commands, program, "program"), program, || {
                let exit = match (exit_code, timed_out) {
                    (_, true) => "timed out".to_string(),
                    (Some(c), _) => c.to_string(),
                    (None, _) => "killed".to_string(),
                };
                vec![
                    ("command", text(command)),
                    ("program", text(program)),
                    ("exitCode", text(&exit)),
                    ("session", text(session.as_deref().unwrap_or(""))),
                    ("output", Value::Output(output.clone())),
                ]
            }),
            (
                Trigger::AgentEdited { patterns },
                Event::AgentEdited {
                    session,
                    agent,
                    file,
                    tool,
                },
            ) => gate(filtered(patterns, file, "file"), file, || {
                vec![
                    ("agent", text(agent)),
                    ("session", text(session)),
                    ("file", text(file)),
                    ("tool", text(tool)),
                ]
            }),
            (
                Trigger::AgentCommandFailed { commands },
                Event::AgentCommandFailed {
                    session,
                    agent,
                    command,
                    program,
                    error,
                },
            ) => gate(filtered(commands, program, "program"), program, || {
                vec![
                    ("agent", text(agent)),
                    ("session", text(session)),
                    ("command", text(command)),
                    ("program", text(program)),
                    ("error", text(error)),
                ]
            }),
            (
                Trigger::AgentStop,
                Event::AgentStopped {
                    session,
                    agent,
                    message,
                },
            ) => gate(None, session, || {
                vec![
                    ("agent", text(agent)),
                    ("session", text(session)),
                    ("message", Value::Output(message.clone())),
                ]
            }),
            (
                Trigger::PromptSubmitted,
                Event::PromptSubmitted {
                    session,
                    agent,
                    prompt,
                },
            ) => gate(None, session, || {
                vec![
                    ("agent", text(agent)),
                    ("session", text(session)),
                    ("prompt", Value::Output(prompt.clone())),
                ]
            }),
            (
                Trigger::ClaimRefused { patterns },
                Event::ClaimRefused {
                    session,
                    agent,
                    holder,
                    file,
                    tool,
                },
            ) => gate(filtered(patterns, file, "file"), file, || {
                vec![
                    ("agent", text(agent)),
                    ("session", text(session)),
                    ("holder", text(holder)),
                    ("file", text(file)),
                    ("tool", text(tool)),
                ]
            }),
            (
                Trigger::EditProposed { patterns },
                Event::EditProposed {
                    session,
                    agent,
                    file,
                    tool,
                },
            ) => gate(filtered(patterns, file, "file"), file, || {
                vec![
                    ("agent", text(agent)),
                    ("session", text(session)),
                    ("file", text(file)),
                    ("tool", text(tool)),
                ]
            }),
            _ => Seen::Unrelated,
        }
    }

    fn try_fire(&mut self, hook: &Hook, subject: String, vars: &Vars, now_ms: u64) -> Outcome {
        let skipped = |subject: String, reason: String, kind: SkipKind| Outcome::Skipped {
            hook: hook.name,
            subject,
            reason,
            kind,
        };
        let nonce = template::nonce();
        let deed = match &hook.action {
            Action::Task { prompt } => {
                let prompt = template::render(prompt, vars, &nonce, template::Target::Prompt);
                if prompt.len() > crate::tasks::MAX_PROMPT_BYTES {
                    let reason = format!(
                        "the rendered prompt is {} bytes (max {})",
                        prompt.len(),
                        crate::tasks::MAX_PROMPT_BYTES
                    );
                    return skipped(subject, reason, SkipKind::Refused);
                }
                Action::Task { prompt }
            }
            Action::Notify { message } => Action::Notify {
                message: template::render(message, vars, &nonce, template::Target::Plain),
            },
            Action::Command { program, args } => {
                let mut rendered = Vec::with_capacity(args.len());
                for arg in args {
                    let out = template::render(arg, vars, &nonce, template::Target::Plain);
                    // A value from the event must not turn into an option.
                    if out.starts_with('-') && !arg.starts_with('-') {
                        let reason = format!(
                            "argument {arg:?} became {out:?}, which would be read as an option"
                        );
                        return skipped(subject, reason, SkipKind::Refused);
                    }
                    rendered.push(out);
                }
                Action::Command {
                    program: program.clone(),
                    args: rendered,
                }
            }
            Action::Diagnostics { min_severity } => Action::Diagnostics {
                min_severity: *min_severity,
            },
            // An edit gate checks every proposal: no cooldown, and not a task the
            // hourly cap counts.
            Action::CheckEdit { min_severity } => {
                return Outcome::Fire(Firing {
                    hook: hook.name,
                    subject,
                    deed: Action::CheckEdit {
                        min_severity: *min_severity,
                    },
                    timeout_ms: hook.timeout_ms,
                })
            }
        };
        // A done-gate checks every stop: not a firing the hourly cap counts (its
        // `maxHolds` bounds it). A notification starts nothing: the cap does not count
        // it either, its cooldown holds.
        if hook.hold.is_some() {
            return Outcome::Fire(Firing {
                hook: hook.name,
                subject,
                deed,
                timeout_ms: hook.timeout_ms,
            });
        }
        let cap =
            (!matches!(deed, Action::Notify { .. })).then_some(self.policy.max_tasks_per_hour);
        match self
            .gate
            .admit(hook.name, &subject, hook.cooldown_ms, cap, now_ms)
        {
            Ok(()) => Outcome::Fire(Firing {
                hook: hook.name,
                subject,
                deed,
                timeout_ms: hook.timeout_ms,
            }),
            Err(skip) => {
                let kind = match skip {
                    Skip::Cooldown { .. } => SkipKind::Cooldown,
                    Skip::HourlyCap(_) => SkipKind::HourlyCap,
                };
                skipped(subject, skip.to_string(), kind)
            }
        }
    }
}

/// What a hook whose filter said `filter` sees of an event about `subject`: filtered,
/// or matched with the event's variables.
fn gate(filter: Option<String>, subject: &str, vars: impl FnOnce() -> Vars) -> Seen {
    match filter {
        Some(reason) => Seen::Filtered {
            subject: subject.to_string(),
            reason,
        },
        None => Seen::Matched {
            subject: subject.to_string(),
            vars: vars(),
        },
    }
}

/// The diagnostics at `min_severity` or above.
fn matching(diagnostics: &[Diagnostic], min_severity: Severity) -> Vec<Diagnostic> {
    diagnostics
        .iter()
        .filter(|d| d.severity <= min_severity)
        .cloned()
        .collect()
}

/// What identifies a set of diagnostics (message, severity, start): FNV-1a, which stays
/// the same across builds (fingerprints are kept across restarts and upgrades).
fn fingerprint(diagnostics: &[Diagnostic]) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(PRIME);
        }
    };
    for d in diagnostics {
        eat(&(d.message.len() as u64).to_le_bytes());
        eat(d.message.as_bytes());
        eat(&[d.severity as u8]);
        eat(&d.range.start.line.to_le_bytes());
        eat(&d.range.start.character.to_le_bytes());
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use ide_bridge_workspace::diagnostics::{Range, Severity};
    use serde_json::json;

    fn engine(policy: serde_json::Value) -> Engine {
        Engine::new(Policy::from_value(&policy).unwrap())
    }

    fn diag(message: &str, severity: Severity) -> Diagnostic {
        Diagnostic {
            message: message.into(),
            severity,
            range: Range::from_one_based(1, 1, 1, 2),
            source: None,
            code: None,
        }
    }

    fn diags(file: &str, list: &[Diagnostic]) -> Event {
        Event::Diagnostics {
            file: file.into(),
            diagnostics: list.to_vec(),
        }
    }

    fn prompt(f: &Firing) -> &str {
        match &f.deed {
            Action::Task { prompt } => prompt,
            other => panic!("not a task: {other:?}"),
        }
    }

    fn fired(outcomes: &[Outcome]) -> Vec<&Firing> {
        outcomes
            .iter()
            .filter_map(|o| match o {
                Outcome::Fire(f) => Some(f),
                _ => None,
            })
            .collect()
    }

    /// An event of each kind a policy may name, matching the hook [`every_event`] makes
    /// for it.
    fn sample(key: &str) -> Event {
        let s = |v: &str| v.to_string();
        match key {
            "onDiagnosticsStateChange" | "onDiagnosticsError" => {
                diags("a.rs", &[diag("bad", Severity::Error)])
            }
            "onFileSave" => Event::FileSaved { file: s("a.rs") },
            "onFileChange" => Event::FileChanged {
                file: s("a.rs"),
                change: "renamed",
                from: Some(s("b.rs")),
            },
            "onTaskFinished" => task_ended(TaskStatus::Done, None),
            "onTaskFailed" => task_ended(TaskStatus::Error, None),
            "onGitCommit" => Event::GitCommit {
                branch: s("main"),
                commit: s("abc"),
                subject: s("Fix"),
            },
            "onBranchSwitch" => Event::BranchSwitched {
                branch: s("main"),
                previous: s("dev"),
                commit: s("abc"),
            },
            "onAgentConnected" | "onAgentDisconnected" => Event::Agent {
                connected: key == "onAgentConnected",
                session: "s1".into(),
                client: s("claude-code"),
            },
            "onCommandFailed" => Event::CommandFailed {
                program: s("cargo"),
                command: s("cargo test"),
                exit_code: Some(1),
                timed_out: false,
                output: s("failed"),
                session: Some("s1".into()),
            },
            "onAgentEdited" => Event::AgentEdited {
                session: "s1".into(),
                agent: s("claude-code s1"),
                file: s("a.rs"),
                tool: s("Edit"),
            },
            "onAgentCommandFailed" => Event::AgentCommandFailed {
                session: "s1".into(),
                agent: s("claude-code s1"),
                command: s("cargo test"),
                program: s("cargo"),
                error: s("Exit code 1"),
            },
            "onAgentStop" => Event::AgentStopped {
                session: "s1".into(),
                agent: s("claude-code s1"),
                message: s("done"),
            },
            "onPromptSubmitted" => Event::PromptSubmitted {
                session: "s1".into(),
                agent: s("claude-code s1"),
                prompt: s("go"),
            },
            "onClaimRefused" => Event::ClaimRefused {
                session: "s1".into(),
                agent: s("claude-code s1"),
                holder: s("the person"),
                file: s("a.rs"),
                tool: s("Edit"),
            },
            "onEditProposed" => Event::EditProposed {
                session: "s1".into(),
                agent: s("claude-code s1"),
                file: s("a.rs"),
                tool: s("Edit"),
            },
            other => panic!("no sample event for {other}: add one here"),
        }
    }

    /// The placeholders each event declares (its docs, the unknown-placeholder
    /// warnings) are the values it supplies when it fires: not one more or fewer.
    #[test]
    fn every_event_supplies_the_placeholders_it_declares() {
        for decl in super::events::EVENTS {
            let mut hook = json!({"action": "notify", "message": "m"});
            for field in decl.required {
                hook[field] = match *field {
                    "state" => json!("error"),
                    _ => json!(["**"]),
                };
            }
            let mut e = engine(json!({ decl.key: hook }));
            let hooks = Arc::clone(&e.hooks);
            let vars = match e.sees(&hooks[0], &sample(decl.key)) {
                Seen::Matched { vars, .. } | Seen::Transition { vars, .. } => vars,
                _ => panic!("{}: the sample event does not fire the hook", decl.key),
            };
            let mut supplied: Vec<&str> = vars.iter().map(|(name, _)| *name).collect();
            let mut declared: Vec<&str> = decl.placeholders.iter().map(|(name, _)| *name).collect();
            supplied.sort_unstable();
            declared.sort_unstable();
            assert_eq!(supplied, declared, "{}", decl.key);
        }
    }

    #[test]
    fn error_state_fires_on_new_or_changed_errors_only() {
        let mut e = engine(json!({"onDiagnosticsStateChange": {
            "state": "error", "prompt": "Fix {{file}}\n{{diagnostics}}", "cooldownMs": 5000}}));
        let err = diag("bad", Severity::Error);
        let warn = diag("meh", Severity::Warning);
        // Below minSeverity: nothing.
        assert!(e
            .handle(&diags("a.rs", std::slice::from_ref(&warn)), 0, false)
            .is_empty());
        let out = e.handle(&diags("a.rs", &[err.clone(), warn.clone()]), 10, false);
        let f = fired(&out);
        assert_eq!(f.len(), 1);
        assert!(prompt(f[0]).starts_with("Fix \"a.rs\"\n--- BEGIN DIAGNOSTIC DATA "));
        assert!(prompt(f[0]).contains("error line 1, column 1: bad"));
        assert!(!prompt(f[0]).contains("meh"), "severity-filtered");
        // Only the warning changed: the matching set is the same, no firing.
        assert!(e
            .handle(&diags("a.rs", std::slice::from_ref(&err)), 6_000, false)
            .is_empty());
        // A different error after the cooldown fires again.
        let out = e.handle(
            &diags("a.rs", &[diag("worse", Severity::Error)]),
            6_000,
            false,
        );
        assert_eq!(fired(&out).len(), 1);
    }

    #[test]
    fn an_error_held_back_by_the_loop_guard_or_a_cooldown_fires_at_the_files_next_report() {
        let mut e = engine(json!({"onDiagnosticsStateChange": {
            "state": "error", "prompt": "Fix {{file}}", "cooldownMs": 5000}}));
        let broken = |f: &str| diags(f, &[diag("bad", Severity::Error)]);
        // While an automation command runs: held back, not taken as reported.
        let out = e.handle(&broken("a.rs"), 0, true);
        assert!(
            matches!(
                &out[..],
                [Outcome::Skipped {
                    kind: SkipKind::LoopGuard,
                    ..
                }]
            ),
            "{out:?}"
        );
        assert_eq!(fired(&e.handle(&broken("a.rs"), 10, false)).len(), 1);
        // Reported: the same errors again are nothing new.
        assert!(e.handle(&broken("a.rs"), 20, false).is_empty());
        // Held back by the cooldown: it fires at a report after the cooldown.
        let worse = diags("a.rs", &[diag("worse", Severity::Error)]);
        let out = e.handle(&worse, 30, false);
        assert!(
            matches!(
                &out[..],
                [Outcome::Skipped {
                    kind: SkipKind::Cooldown,
                    ..
                }]
            ),
            "{out:?}"
        );
        assert_eq!(fired(&e.handle(&worse, 6_000, false)).len(), 1);
    }

    #[test]
    fn a_restarted_engine_knows_the_errors_it_reported_and_what_the_hour_started() {
        let policy = json!({"maxTasksPerHour": 2,
            "onDiagnosticsStateChange": {"state": "error", "prompt": "Fix {{file}}"},
            "onFileSave": {"patterns": ["*.md"], "prompt": "Read {{file}}"}});
        let broken = diags("a.rs", &[diag("bad", Severity::Error)]);
        let saved = |f: &str| Event::FileSaved { file: f.into() };
        let mut before = engine(policy.clone());
        assert_eq!(fired(&before.handle(&broken, 1_000, false)).len(), 1);
        assert_eq!(fired(&before.handle(&saved("x.md"), 2_000, false)).len(), 1);
        let revision = before.revision();
        assert_eq!(
            fired(&before.handle(&saved("w.md"), 2_000, false)).len(),
            0,
            "capped"
        );
        assert_eq!(before.revision(), revision, "a skip changes nothing kept");
        let unix = 1_800_000_000_000;
        let kept = before.remember(2_000, unix);
        let text = serde_json::to_string(&kept).unwrap();
        let kept: Remembered = serde_json::from_str(&text).unwrap();
        // Ten minutes later, on a fresh clock that starts an hour in.
        let mut after = engine(policy.clone());
        let (now, unix_now) = (gate::HOUR_MS, unix + 600_000);
        after.restore(kept.clone(), now, unix_now);
        assert!(
            after.handle(&broken, now, false).is_empty(),
            "the same error is not new"
        );
        assert_eq!(after.fired_last_hour(now), 2);
        assert!(
            matches!(
                &after.handle(&saved("z.md"), now, false)[..],
                [Outcome::Skipped {
                    kind: SkipKind::HourlyCap,
                    ..
                }]
            ),
            "the firings before the restart still count"
        );
        // Once the first of them is an hour old, one more may start.
        let first_gone = now + gate::HOUR_MS - 600_000 - 1_000;
        assert_eq!(
            fired(&after.handle(&saved("z.md"), first_gone, false)).len(),
            1
        );
        // A firing the hour no longer holds is not counted; a hook the policy dropped
        // is forgotten.
        let mut later = engine(json!({"onFileSave": {"patterns": ["*.md"], "prompt": "x"}}));
        later.restore(kept, gate::HOUR_MS, unix + 3_601_000);
        assert_eq!(later.fired_last_hour(gate::HOUR_MS), 0);
        assert_eq!(later.remember(gate::HOUR_MS, unix).diagnostics, vec![]);
    }

    #[test]
    fn cleared_state_fires_when_matching_diagnostics_go_away() {
        let mut e = engine(json!({"onDiagnosticsStateChange": {
            "state": "cleared", "minSeverity": "warning", "prompt": "{{file}} is clean"}}));
        // Nothing to clear yet.
        assert!(e.handle(&diags("a.rs", &[]), 0, false).is_empty());
        assert!(e
            .handle(&diags("a.rs", &[diag("w", Severity::Warning)]), 1, false)
            .is_empty());
        // A hint does not count as the state at warning level.
        let out = e.handle(&diags("a.rs", &[diag("h", Severity::Hint)]), 2, false);
        assert_eq!(prompt(fired(&out)[0]), "\"a.rs\" is clean");
        assert!(e.handle(&diags("a.rs", &[]), 3, false).is_empty());
    }

    #[test]
    fn file_save_matches_patterns_against_the_relative_path() {
        let mut e = engine(json!({"onFileSave": {
            "patterns": ["src/**/*.rs", "*.py"], "prompt": "Review {{file}}"}}));
        let saved = |f: &str| Event::FileSaved { file: f.into() };
        assert_eq!(fired(&e.handle(&saved("src/a/b.rs"), 0, false)).len(), 1);
        assert_eq!(fired(&e.handle(&saved("tools/x.py"), 0, false)).len(), 1);
        assert!(fired(&e.handle(&saved("README.md"), 0, false)).is_empty());
        let out = e.handle(&saved("lib/a.rs"), 0, false);
        assert!(matches!(
            &out[0],
            Outcome::Skipped {
                kind: SkipKind::Filter,
                ..
            }
        ));
    }

    #[test]
    fn cooldown_and_cap_are_reported_as_skips() {
        let mut e = engine(json!({"maxTasksPerHour": 2, "onFileSave": {
            "patterns": ["*"], "prompt": "p", "cooldownMs": 5000}}));
        let saved = |f: &str| Event::FileSaved { file: f.into() };
        assert_eq!(fired(&e.handle(&saved("a"), 0, false)).len(), 1);
        let out = e.handle(&saved("a"), 4_900, false);
        assert!(
            matches!(&out[0], Outcome::Skipped { kind: SkipKind::Cooldown, reason, .. } if reason.starts_with("cooldown"))
        );
        assert_eq!(fired(&e.handle(&saved("a"), 5_100, false)).len(), 1);
        let out = e.handle(&saved("b"), 5_200, false);
        assert!(
            matches!(&out[0], Outcome::Skipped { kind: SkipKind::HourlyCap, reason, .. } if reason.starts_with("hourly cap"))
        );
    }

    /// The cap counts what starts something: notifications and the done-gate's checks
    /// fire past it.
    #[test]
    fn notifications_and_the_done_gate_are_not_held_back_by_the_cap() {
        let mut e = engine(json!({"maxTasksPerHour": 1,
            "onFileSave": {"patterns": ["*"], "prompt": "p", "cooldownMs": 5000},
            "onAgentEdited": {"action": "notify", "message": "m", "cooldownMs": 5000},
            "onAgentStop": {"action": "command", "command": "git", "args": ["diff", "--exit-code"]}}));
        assert_eq!(
            fired(&e.handle(&Event::FileSaved { file: "a".into() }, 0, false)).len(),
            1
        );
        for i in 0..5 {
            let edited = Event::AgentEdited {
                session: "s".into(),
                agent: "A".into(),
                file: format!("f{i}"),
                tool: "Edit".into(),
            };
            assert_eq!(
                fired(&e.handle(&edited, 10 + i, false)).len(),
                1,
                "notification {i}"
            );
        }
        for i in 0..3 {
            let stopped = Event::AgentStopped {
                session: "s".into(),
                agent: "A".into(),
                message: String::new(),
            };
            assert_eq!(
                fired(&e.handle(&stopped, 20 + i, false)).len(),
                1,
                "stop {i}"
            );
        }
        assert_eq!(e.fired_last_hour(30), 1);
        let out = e.handle(&Event::FileSaved { file: "b".into() }, 30, false);
        assert!(
            matches!(
                &out[0],
                Outcome::Skipped {
                    kind: SkipKind::HourlyCap,
                    ..
                }
            ),
            "{out:?}"
        );
    }

    #[test]
    fn suppressed_events_track_state_but_never_fire() {
        let mut e =
            engine(json!({"onDiagnosticsStateChange": {"state": "cleared", "prompt": "p"}}));
        assert!(e
            .handle(&diags("a.rs", &[diag("x", Severity::Error)]), 0, true)
            .is_empty());
        let out = e.handle(&diags("a.rs", &[]), 1, true);
        assert!(matches!(
            &out[0],
            Outcome::Skipped {
                kind: SkipKind::LoopGuard,
                ..
            }
        ));
        assert_eq!(e.fired_last_hour(2), 0);
    }

    #[test]
    fn a_long_template_with_many_diagnostics_stays_within_the_prompt_limit() {
        let mut e = engine(json!({"onDiagnosticsStateChange": {"state": "error",
            "prompt": format!("{}{{{{diagnostics}}}}", "x".repeat(16_000))}}));
        let many: Vec<Diagnostic> = (0..40)
            .map(|i| diag(&format!("{i}{}", "m".repeat(600)), Severity::Error))
            .collect();
        let out = e.handle(&diags("a.rs", &many), 0, false);
        // 25 listed × ~520 bytes + 16 000 stays under 32 KiB: it fires.
        assert_eq!(fired(&out).len(), 1);
        assert!(prompt(fired(&out)[0]).len() <= crate::tasks::MAX_PROMPT_BYTES);
    }

    fn skip_kind(out: &[Outcome]) -> Option<SkipKind> {
        out.iter().find_map(|o| match o {
            Outcome::Skipped { kind, .. } => Some(*kind),
            _ => None,
        })
    }

    fn changed(file: &str, change: &'static str) -> Event {
        Event::FileChanged {
            file: file.into(),
            change,
            from: None,
        }
    }

    #[test]
    fn file_changes_filter_on_patterns_and_kinds() {
        let mut e = engine(json!({"onFileChange": {"patterns": ["src/**"],
            "changes": ["created", "modified"], "prompt": "{{change}} {{file}}"}}));
        let out = e.handle(&changed("src/a.rs", "created"), 0, false);
        assert_eq!(prompt(fired(&out)[0]), r#""created" "src/a.rs""#);
        let out = e.handle(&changed("src/b.rs", "removed"), 0, false);
        assert_eq!(skip_kind(&out), Some(SkipKind::Filter));
        let out = e.handle(&changed("docs/x.md", "modified"), 0, false);
        assert_eq!(skip_kind(&out), Some(SkipKind::Filter));
        // Quiet: a task hook holds back, a notify hook does not.
        let out = e.handle(&changed("src/c.rs", "modified"), 0, true);
        assert_eq!(skip_kind(&out), Some(SkipKind::LoopGuard));
        let mut n = engine(
            json!({"onFileChange": {"patterns": ["*"], "action": "notify",
            "message": "{{file}} {{change}}"}}),
        );
        let out = n.handle(&changed("a", "modified"), 0, true);
        assert_eq!(
            fired(&out)[0].deed,
            Action::Notify {
                message: "a modified".into()
            }
        );
    }

    fn task_ended(status: TaskStatus, hook: Option<&str>) -> Event {
        Event::TaskEnded {
            task: "t1".into(),
            status,
            hook: hook.map(str::to_string),
            session: hook.is_none().then(|| "s1".into()),
            output: "all good\n".into(),
        }
    }

    #[test]
    fn task_hooks_tell_success_from_failure_and_never_loop() {
        let mut e = engine(json!({
            "onTaskFinished": {"prompt": "{{taskId}} {{status}}\n{{output}}"},
            "onTaskFailed": {"action": "notify", "message": "{{taskId}} failed"}}));
        let out = e.handle(&task_ended(TaskStatus::Done, None), 0, false);
        let f = fired(&out);
        assert_eq!(f.len(), 1);
        assert!(prompt(f[0]).starts_with("\"t1\" \"done\"\n--- BEGIN OUTPUT DATA "));
        assert!(prompt(f[0]).contains("\nall good\n--- END OUTPUT DATA "));
        // An automation task's end would start another task: the loop guard holds.
        let out = e.handle(
            &task_ended(TaskStatus::Done, Some("onFileSave")),
            10_000,
            false,
        );
        assert_eq!(skip_kind(&out), Some(SkipKind::LoopGuard));
        // A notification about it cannot loop.
        let out = e.handle(&task_ended(TaskStatus::Error, Some("onFileSave")), 0, false);
        assert_eq!(fired(&out)[0].hook, "onTaskFailed");
        // Cancelled is neither.
        assert!(e
            .handle(&task_ended(TaskStatus::Cancelled, None), 0, false)
            .is_empty());
    }

    #[test]
    fn git_agent_and_command_hooks_filter_and_render() {
        let mut e = engine(json!({
            "onGitCommit": {"branches": ["main"], "prompt": "{{branch}} {{commit}} {{subject}}"},
            "onBranchSwitch": {"action": "notify", "message": "{{previousBranch}} -> {{branch}}"},
            "onAgentConnected": {"clients": ["claude*"], "action": "notify", "message": "{{agent}} {{session}}"},
            "onAgentDisconnected": {"action": "notify", "message": "bye {{agent}}"},
            "onCommandFailed": {"commands": ["cargo"], "prompt": "{{command}} exited {{exitCode}}"}}));
        let commit = |branch: &str| Event::GitCommit {
            branch: branch.into(),
            commit: "abc".into(),
            subject: "Fix\nit".into(),
        };
        assert_eq!(
            prompt(fired(&e.handle(&commit("main"), 0, false))[0]),
            r#""main" "abc" "Fix it""#
        );
        assert_eq!(
            skip_kind(&e.handle(&commit("topic"), 0, false)),
            Some(SkipKind::Filter)
        );
        let switched = Event::BranchSwitched {
            branch: "b".into(),
            previous: "a".into(),
            commit: "c".into(),
        };
        assert_eq!(
            fired(&e.handle(&switched, 0, false))[0].deed,
            Action::Notify {
                message: "a -> b".into()
            }
        );
        let agent = |connected: bool, client: &str| Event::Agent {
            connected,
            session: "s9".into(),
            client: client.into(),
        };
        assert_eq!(
            fired(&e.handle(&agent(true, "claude-code"), 0, false)).len(),
            1
        );
        assert_eq!(
            skip_kind(&e.handle(&agent(true, "cursor"), 0, false)),
            Some(SkipKind::Filter)
        );
        let out = e.handle(&agent(false, "cursor"), 0, false);
        assert_eq!(fired(&out)[0].hook, "onAgentDisconnected");
        let failed = |program: &str| Event::CommandFailed {
            program: program.into(),
            command: format!("{program} test"),
            exit_code: Some(101),
            timed_out: false,
            output: String::new(),
            session: None,
        };
        assert_eq!(
            prompt(fired(&e.handle(&failed("cargo"), 0, false))[0]),
            r#""cargo test" exited "101""#
        );
        assert_eq!(
            skip_kind(&e.handle(&failed("npm"), 0, false)),
            Some(SkipKind::Filter)
        );
        // The same program again within the cooldown.
        assert_eq!(
            skip_kind(&e.handle(&failed("cargo"), 1_000, false)),
            Some(SkipKind::Cooldown)
        );
    }

    #[test]
    fn a_command_argument_that_would_become_an_option_is_refused() {
        let mut e = engine(
            json!({"onFileChange": {"patterns": ["*"], "action": "command",
            "command": "cargo", "args": ["fmt", "--", "{{file}}"]}}),
        );
        let out = e.handle(&changed("src/a.rs", "modified"), 0, false);
        assert_eq!(
            fired(&out)[0].deed,
            Action::Command {
                program: "cargo".into(),
                args: vec!["fmt".into(), "--".into(), "src/a.rs".into()]
            }
        );
        let out = e.handle(&changed("-rf", "modified"), 0, false);
        assert_eq!(skip_kind(&out), Some(SkipKind::Refused));
        // Refused firings do not count against the hourly cap.
        assert_eq!(e.fired_last_hour(1), 1);
    }
}
