//! Automation: a policy file whose hooks turn editor events (diagnostics appearing or
//! clearing, files saved) into Claude tasks. This module decides; the Automation actor
//! feeds it events, starts the tasks and reloads the policy.

pub mod gate;
pub mod policy;
pub mod template;

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use crate::diagnostics::Diagnostic;
use gate::{Gate, Skip};
use policy::{DiagnosticsState, Hook, Policy, Trigger};

/// Files whose diagnostics state is remembered per hook, at most.
pub const MAX_TRACKED_FILES: usize = 2_000;

/// A task a hook wants started.
#[derive(Debug, Clone, PartialEq)]
pub struct Firing {
    /// The hook.
    pub hook: &'static str,
    /// The file it fired for (workspace-relative).
    pub file: String,
    /// The rendered prompt.
    pub prompt: String,
    /// Task timeout.
    pub timeout_ms: u64,
}

/// What a hook made of an event.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Start this task.
    Fire(Firing),
    /// The hook matched but did not fire.
    Skipped {
        /// The hook.
        hook: &'static str,
        /// The file.
        file: String,
        /// Why.
        reason: String,
        /// A cooldown (routine) rather than something worth a log entry.
        routine: bool,
    },
}

/// An editor event, with the file already made workspace-relative.
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
}

/// The policy with its cooldowns, hourly cap and per-file diagnostics state.
#[derive(Debug)]
pub struct Engine {
    policy: Policy,
    gate: Gate,
    /// Hash of the matching diagnostics per (hook, file) while there are some.
    in_error: HashMap<(&'static str, String), u64>,
}

impl Engine {
    /// An engine for `policy`.
    pub fn new(policy: Policy) -> Self {
        Self {
            policy,
            gate: Gate::default(),
            in_error: HashMap::new(),
        }
    }

    /// The current policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Swaps the policy, keeping cooldowns, the hourly count and the diagnostics state.
    pub fn replace(&mut self, policy: Policy) {
        self.policy = policy;
    }

    /// Tasks started in the hour before `now_ms`.
    pub fn fired_last_hour(&self, now_ms: u64) -> usize {
        self.gate.fired_last_hour(now_ms)
    }

    /// Restarts every hook's cooldown for `file`.
    pub fn touch(&mut self, file: &str, now_ms: u64) {
        let names: Vec<&'static str> = self.policy.hooks.iter().map(|h| h.name).collect();
        self.gate.touch(file, &names, now_ms);
    }

    /// Runs `event` through every hook. With `suppressed` (an automation task is in
    /// flight) the diagnostics state is still tracked but nothing fires.
    pub fn handle(&mut self, event: &Event, now_ms: u64, suppressed: bool) -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        let hooks = self.policy.hooks.clone();
        for hook in &hooks {
            let Some((file, diagnostics)) = self.matches(hook, event) else {
                continue;
            };
            let outcome = if suppressed {
                Outcome::Skipped {
                    hook: hook.name,
                    file: file.to_string(),
                    reason:
                        "an automation task is in flight (its own edits never trigger automation)"
                            .into(),
                    routine: true,
                }
            } else {
                self.try_fire(hook, file, &diagnostics, now_ms)
            };
            outcomes.push(outcome);
        }
        outcomes
    }

    /// The file and the diagnostics to render when `event` sets `hook` off.
    fn matches<'e>(&mut self, hook: &Hook, event: &'e Event) -> Option<(&'e str, Vec<Diagnostic>)> {
        match (&hook.trigger, event) {
            (Trigger::FileSave { patterns }, Event::FileSaved { file }) => patterns
                .is_match(file.as_str())
                .then(|| (file.as_str(), Vec::new())),
            (
                Trigger::Diagnostics {
                    state,
                    min_severity,
                },
                Event::Diagnostics { file, diagnostics },
            ) => {
                let matching: Vec<Diagnostic> = diagnostics
                    .iter()
                    .filter(|d| d.severity <= *min_severity)
                    .cloned()
                    .collect();
                let key = (hook.name, file.clone());
                let before = self.in_error.get(&key).copied();
                let now = (!matching.is_empty()).then(|| fingerprint(&matching));
                match now {
                    Some(h) => {
                        if self.in_error.len() >= MAX_TRACKED_FILES && before.is_none() {
                            self.in_error.clear();
                        }
                        self.in_error.insert(key, h);
                    }
                    None => {
                        self.in_error.remove(&key);
                    }
                }
                let fires = match state {
                    DiagnosticsState::Error => now.is_some() && now != before,
                    DiagnosticsState::Cleared => before.is_some() && now.is_none(),
                };
                fires.then_some((file.as_str(), matching))
            }
            _ => None,
        }
    }

    fn try_fire(
        &mut self,
        hook: &Hook,
        file: &str,
        diagnostics: &[Diagnostic],
        now_ms: u64,
    ) -> Outcome {
        let skipped = |reason: String, routine: bool| Outcome::Skipped {
            hook: hook.name,
            file: file.to_string(),
            reason,
            routine,
        };
        let prompt = template::render(&hook.prompt, file, diagnostics, &template::nonce());
        if prompt.len() > crate::orchestrator::MAX_PROMPT_BYTES {
            return skipped(
                format!(
                    "the rendered prompt is {} bytes (max {})",
                    prompt.len(),
                    crate::orchestrator::MAX_PROMPT_BYTES
                ),
                false,
            );
        }
        match self.gate.admit(
            hook.name,
            file,
            hook.cooldown_ms,
            self.policy.max_tasks_per_hour,
            now_ms,
        ) {
            Ok(()) => Outcome::Fire(Firing {
                hook: hook.name,
                file: file.to_string(),
                prompt,
                timeout_ms: hook.timeout_ms,
            }),
            Err(skip) => {
                let routine = matches!(skip, Skip::Cooldown { .. });
                skipped(skip.to_string(), routine)
            }
        }
    }
}

fn fingerprint(diagnostics: &[Diagnostic]) -> u64 {
    let mut h = DefaultHasher::new();
    for d in diagnostics {
        d.message.hash(&mut h);
        (d.severity as u8).hash(&mut h);
        (d.range.start.line, d.range.start.character).hash(&mut h);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::{Range, Severity};
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

    fn fired(outcomes: &[Outcome]) -> Vec<&Firing> {
        outcomes
            .iter()
            .filter_map(|o| match o {
                Outcome::Fire(f) => Some(f),
                _ => None,
            })
            .collect()
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
        assert!(f[0]
            .prompt
            .starts_with("Fix a.rs\n--- BEGIN DIAGNOSTIC DATA "));
        assert!(f[0].prompt.contains("error line 1, column 1: bad"));
        assert!(!f[0].prompt.contains("meh"), "severity-filtered");
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
        assert_eq!(fired(&out)[0].prompt, "a.rs is clean");
        assert!(e.handle(&diags("a.rs", &[]), 3, false).is_empty());
    }

    #[test]
    fn file_save_matches_patterns_against_the_relative_path() {
        let mut e = engine(json!({"onFileSave": {
            "patterns": ["src/**/*.rs", "*.py"], "prompt": "Review {{file}}"}}));
        let saved = |f: &str| Event::FileSaved { file: f.into() };
        assert_eq!(fired(&e.handle(&saved("src/a/b.rs"), 0, false)).len(), 1);
        assert_eq!(fired(&e.handle(&saved("tools/x.py"), 0, false)).len(), 1);
        assert!(e.handle(&saved("README.md"), 0, false).is_empty());
        assert!(e.handle(&saved("lib/a.rs"), 0, false).is_empty());
    }

    #[test]
    fn cooldown_and_cap_are_reported_as_skips() {
        let mut e = engine(json!({"maxTasksPerHour": 2, "onFileSave": {
            "patterns": ["*"], "prompt": "p", "cooldownMs": 5000}}));
        let saved = |f: &str| Event::FileSaved { file: f.into() };
        assert_eq!(fired(&e.handle(&saved("a"), 0, false)).len(), 1);
        let out = e.handle(&saved("a"), 4_900, false);
        assert!(
            matches!(&out[0], Outcome::Skipped { routine: true, reason, .. } if reason.starts_with("cooldown"))
        );
        assert_eq!(fired(&e.handle(&saved("a"), 5_100, false)).len(), 1);
        let out = e.handle(&saved("b"), 5_200, false);
        assert!(
            matches!(&out[0], Outcome::Skipped { routine: false, reason, .. } if reason.starts_with("hourly cap"))
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
        assert!(matches!(&out[0], Outcome::Skipped { routine: true, .. }));
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
        assert!(fired(&out)[0].prompt.len() <= crate::orchestrator::MAX_PROMPT_BYTES);
    }
}
