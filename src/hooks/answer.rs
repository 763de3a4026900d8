//! What the bridge answers a hook: the JSON a command hook prints on stdout (and an
//! http hook returns as its body), in the shapes both CLI versions read.

use serde_json::{json, Value};

use super::input::HookEvent;

/// The bridge's answer to one hook invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookAnswer {
    /// No opinion: the CLI carries on as if no hook ran.
    Nothing,
    /// Text added to what the model reads next (`additionalContext`).
    Context {
        /// The event being answered (the CLI checks it matches).
        event: HookEvent,
        /// The text.
        text: String,
    },
    /// `PreToolUse`: the tool does not run; the model reads the reason as the tool's
    /// error.
    Deny {
        /// Why, written for the model.
        reason: String,
    },
    /// `PreToolUse`: the CLI asks the person in its permission dialog (2.1.332 shows
    /// the reason there); under `-p` nobody is asked and it is a refusal.
    Ask {
        /// Why the person is asked.
        reason: String,
    },
    /// `Stop`: the agent keeps working; the model reads the reason.
    KeepWorking {
        /// Why, written for the model.
        reason: String,
    },
    /// `PermissionRequest`: the person decided in the page.
    Permission {
        /// Allowed (else denied).
        allow: bool,
        /// Shown to the model when denied.
        message: String,
    },
}

impl HookAnswer {
    /// Every [`HookAnswer::outcome`].
    pub const OUTCOMES: [&'static str; 7] = [
        "none", "context", "denied", "asked", "held", "allowed", "refused",
    ];

    /// The JSON to print, or `None` for [`HookAnswer::Nothing`] (an empty stdout).
    pub fn to_json(&self) -> Option<Value> {
        Some(match self {
            HookAnswer::Nothing => return None,
            HookAnswer::Context { event, text } => json!({
                "hookSpecificOutput": {
                    "hookEventName": event.as_str(),
                    "additionalContext": text,
                }
            }),
            HookAnswer::Deny { reason } => pre_tool_decision("deny", reason),
            HookAnswer::Ask { reason } => pre_tool_decision("ask", reason),
            HookAnswer::KeepWorking { reason } => json!({ "decision": "block", "reason": reason }),
            HookAnswer::Permission { allow: true, .. } => json!({
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": { "behavior": "allow" },
                }
            }),
            HookAnswer::Permission {
                allow: false,
                message,
            } => json!({
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": { "behavior": "deny", "message": message },
                }
            }),
        })
    }

    /// What the timeline and metrics call it.
    pub fn outcome(&self) -> &'static str {
        match self {
            HookAnswer::Nothing => "none",
            HookAnswer::Context { .. } => "context",
            HookAnswer::Deny { .. } => "denied",
            HookAnswer::Ask { .. } => "asked",
            HookAnswer::KeepWorking { .. } => "held",
            HookAnswer::Permission { allow: true, .. } => "allowed",
            HookAnswer::Permission { allow: false, .. } => "refused",
        }
    }
}

/// A `PreToolUse` permission decision with its reason.
fn pre_tool_decision(decision: &str, reason: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_shaped_as_the_cli_reads_them() {
        assert_eq!(HookAnswer::Nothing.to_json(), None);
        let deny = HookAnswer::Deny {
            reason: "held".into(),
        }
        .to_json()
        .unwrap();
        assert_eq!(deny["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(deny["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        let ask = HookAnswer::Ask { reason: "r".into() }.to_json().unwrap();
        assert_eq!(ask["hookSpecificOutput"]["permissionDecision"], "ask");
        assert_eq!(ask["hookSpecificOutput"]["permissionDecisionReason"], "r");
        let ctx = HookAnswer::Context {
            event: HookEvent::PostToolUse,
            text: "n".into(),
        }
        .to_json()
        .unwrap();
        assert_eq!(ctx["hookSpecificOutput"]["hookEventName"], "PostToolUse");
        assert_eq!(ctx["hookSpecificOutput"]["additionalContext"], "n");
        let stop = HookAnswer::KeepWorking { reason: "r".into() }
            .to_json()
            .unwrap();
        assert_eq!(
            (stop["decision"].as_str(), stop["reason"].as_str()),
            (Some("block"), Some("r"))
        );
        let allow = HookAnswer::Permission {
            allow: true,
            message: String::new(),
        }
        .to_json()
        .unwrap();
        assert_eq!(allow["hookSpecificOutput"]["decision"]["behavior"], "allow");
    }
}
