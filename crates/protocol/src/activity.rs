//! The activity timeline's entries: what the activity log keeps, writes to its file one
//! JSON line each, and answers queries with (the activity resource, the page).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::id::SessionId;

/// Lifecycle events recorded in the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LifecycleEvent {
    /// An agent connected with a new session.
    AgentConnected,
    /// An agent reattached to its session within the grace period.
    AgentReconnected,
    /// A second session turned out to serve the same client process and was merged
    /// into the first.
    SessionMerged,
    /// An agent's connection closed; its session waits in grace.
    AgentDisconnected,
    /// A session's grace period ran out.
    GraceExpired,
    /// A session was evicted to make room for a new agent.
    SessionEvicted,
    /// A connection was refused.
    ConnectionRefused,
    /// A supervised actor restarted after a fault.
    ActorRestarted,
    /// A session was restored from a checkpoint at start-up.
    SessionRestored,
    EditorConnected,
    EditorDisconnected,
    /// An editor request timed out; the circuit breaker opened.
    CircuitOpened,
    /// The editor answered again; the circuit breaker closed.
    CircuitClosed,
    /// A Claude task asked to use a tool; the policy decided.
    PermissionDecision,
    /// An automation hook started a task (or was skipped).
    AutomationFired,
    /// The automation policy was reloaded, or an edit of it was refused.
    AutomationPolicy,
    /// A `notify` hook's message.
    AutomationNotice,
    BridgeStarted,
    BridgeStopping,
    /// An agent (or the person) claimed files.
    FilesClaimed,
    /// A claim was released, expired, or ended with its agent.
    ClaimEnded,
    /// A write to a claimed file was refused (a bridge tool or a native Edit/Write).
    WriteRefused,
    /// A Claude Code conversation started or ended (its hooks said so).
    CliSession,
    /// The person submitted a prompt to an agent.
    PromptSubmitted,
    /// An agent ended its turn, or the done-gate kept it working.
    AgentStopped,
    /// An agent's permission dialog was answered in the page.
    PermissionAnswered,
    /// The person undid hunks an agent wrote.
    ChangesUndone,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CallStatus {
    /// The tool returned a result without `isError`.
    Success,
    /// The tool returned `isError: true`.
    Error,
    /// The per-tool timeout fired.
    Timeout,
    /// The client cancelled it, or its connection closed.
    Cancelled,
    /// Refused before running (concurrency cap, editor missing).
    Rejected,
    /// Answered with the expected refusal, not a failure (e.g. `openDiff` without an
    /// editor: the CLI then asks in the terminal).
    Declined,
}

impl CallStatus {
    /// Every status, in declaration order (`status as usize` indexes it).
    pub const ALL: [CallStatus; 6] = [
        CallStatus::Success,
        CallStatus::Error,
        CallStatus::Timeout,
        CallStatus::Cancelled,
        CallStatus::Rejected,
        CallStatus::Declined,
    ];

    /// Lowercase name, as in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Success => "success",
            CallStatus::Error => "error",
            CallStatus::Timeout => "timeout",
            CallStatus::Cancelled => "cancelled",
            CallStatus::Rejected => "rejected",
            CallStatus::Declined => "declined",
        }
    }
}

/// One timeline entry.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Monotonic id shared by all entry kinds.
    pub id: u64,
    /// Unix milliseconds.
    pub timestamp: u64,
    /// What happened.
    #[serde(flatten)]
    pub kind: EntryKind,
}

/// The two kinds of entries.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum EntryKind {
    /// A finished tool call.
    #[serde(rename_all = "camelCase")]
    ToolCall {
        /// Tool name (a bridge tool's is its static name: no copy per call).
        tool: Cow<'static, str>,
        /// The session that called it.
        session_id: SessionId,
        /// How the call ended.
        status: CallStatus,
        /// Milliseconds from dispatch to answer.
        #[serde(default)]
        duration_ms: u64,
        /// Short argument summary (no secrets, no file contents).
        #[serde(default)]
        summary: String,
        /// A call of one of the agent's own tools (Claude Code's Read, Edit, Bash, …),
        /// seen through its hooks, not a call of a bridge tool.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        native: bool,
        /// A native call's id (the CLI's `tool_use_id`): after a crash, the calls an
        /// agent's transcript shows are not recorded a second time.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
    },
    /// A lifecycle event.
    #[serde(rename_all = "camelCase")]
    Lifecycle {
        /// What happened.
        event: LifecycleEvent,
        /// Session concerned, if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        session_id: Option<SessionId>,
        /// Shown after the event in the timeline.
        #[serde(default)]
        detail: String,
    },
}

impl Entry {
    /// The entry as one line of JSON (no newline), as the activity log's file holds it.
    /// Not generic, so that it is compiled with this crate's optimisation (level 3 in
    /// release builds): every tool call writes one.
    pub fn to_line(&self) -> serde_json::Result<String> {
        let EntryKind::ToolCall {
            tool,
            session_id,
            status,
            duration_ms,
            summary,
            native,
            call_id,
        } = &self.kind
        else {
            return crate::escape::to_json(self, 192 + self.kind.text_len());
        };
        // Every tool call writes one: written directly (serde's path for the flattened
        // kind goes through a map serialiser), the text serde gives (a test holds them
        // equal), in the declarations' field order.
        use crate::escape::{write_str, write_u64};
        let mut out = Vec::with_capacity(192 + self.kind.text_len());
        out.extend_from_slice(br#"{"id":"#);
        write_u64(&mut out, self.id);
        out.extend_from_slice(br#","timestamp":"#);
        write_u64(&mut out, self.timestamp);
        out.extend_from_slice(br#","kind":"toolCall","tool":"#);
        write_str(&mut out, tool);
        out.extend_from_slice(br#","sessionId":"#);
        write_str(&mut out, session_id);
        out.extend_from_slice(br#","status":""#);
        out.extend_from_slice(status.as_str().as_bytes());
        out.extend_from_slice(br#"","durationMs":"#);
        write_u64(&mut out, *duration_ms);
        out.extend_from_slice(br#","summary":"#);
        write_str(&mut out, summary);
        if *native {
            out.extend_from_slice(br#","native":true"#);
        }
        if let Some(call_id) = call_id {
            out.extend_from_slice(br#","callId":"#);
            write_str(&mut out, call_id);
        }
        out.push(b'}');
        debug_assert!(std::str::from_utf8(&out).is_ok());
        // SAFETY: every piece above is UTF-8: ASCII literals and digits, a status's
        // name and `write_str`'s escaped copies of `str`s.
        Ok(unsafe { String::from_utf8_unchecked(out) })
    }
}

impl EntryKind {
    /// Bytes of the entry's free text (names, summary, detail): what its line is sized
    /// from.
    fn text_len(&self) -> usize {
        match self {
            EntryKind::ToolCall {
                tool,
                session_id,
                summary,
                call_id,
                ..
            } => {
                tool.len()
                    + session_id.len()
                    + summary.len()
                    + call_id.as_ref().map_or(0, String::len)
            }
            EntryKind::Lifecycle {
                session_id, detail, ..
            } => session_id.as_ref().map_or(0, |s| s.len()) + detail.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_the_entry_as_json_and_reads_back() {
        let entries = [
            Entry {
                id: 7,
                timestamp: 1_700_000_000_000,
                kind: EntryKind::ToolCall {
                    tool: "openFile".into(),
                    session_id: "s-1".into(),
                    status: CallStatus::Error,
                    duration_ms: 12,
                    summary: "path=\"a b\\c\"\n".repeat(40),
                    native: true,
                    call_id: Some("toolu_\"01".into()),
                },
            },
            Entry {
                id: u64::MAX,
                timestamp: 0,
                kind: EntryKind::ToolCall {
                    tool: "debug_\u{1}tool".into(),
                    session_id: "s\"2".into(),
                    status: CallStatus::Declined,
                    duration_ms: 0,
                    summary: String::new(),
                    native: false,
                    call_id: None,
                },
            },
            Entry {
                id: 8,
                timestamp: 1,
                kind: EntryKind::Lifecycle {
                    event: LifecycleEvent::AgentConnected,
                    session_id: None,
                    detail: String::new(),
                },
            },
        ];
        for (i, status) in CallStatus::ALL.iter().enumerate() {
            assert_eq!(*status as usize, i);
        }
        let each_status = CallStatus::ALL.map(|status| Entry {
            id: 1,
            timestamp: 2,
            kind: EntryKind::ToolCall {
                tool: "t".into(),
                session_id: "s".into(),
                status,
                duration_ms: 3,
                summary: "x".into(),
                native: false,
                call_id: None,
            },
        });
        for entry in entries.into_iter().chain(each_status) {
            let line = entry.to_line().unwrap();
            assert_eq!(line, serde_json::to_string(&entry).unwrap());
            assert!(!line.contains('\n'));
            let back: Entry = serde_json::from_str(&line).unwrap();
            assert_eq!(back.to_line().unwrap(), line);
        }
    }
}
