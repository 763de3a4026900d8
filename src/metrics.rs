//! Prometheus metrics. Counters are lock-free atomics owned by this registry; actors
//! only increment them (see docs/decisions.md).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::protocol::activity::CallStatus;
use crate::protocol::methods::Method;

/// One tool's calls so far ([`Metrics::tool_totals`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ToolTotals {
    pub calls: u64,
    /// Calls that failed: an error, a timeout or a refusal (a declined or cancelled
    /// call is not a failure, as in the timeline's totals).
    pub failed: u64,
    /// Time spent in all calls.
    pub seconds: f64,
}

/// Labels of a tool call.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ToolLabels {
    /// Tool name.
    pub tool: &'static str,
    /// success, error, timeout, cancelled or rejected.
    pub status: &'static str,
}

/// Labels naming a tool.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ToolNameLabel {
    /// Tool name.
    pub tool: &'static str,
}

/// Labels of a hook the bridge answered.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct HookLabels {
    /// The CLI's event name (`PreToolUse`, …).
    pub event: &'static str,
    /// What the bridge answered (`none`, `context`, `denied`, `held`, `allowed`,
    /// `refused`).
    pub outcome: &'static str,
}

/// Labels naming an MCP method.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct MethodLabel {
    /// A method the bridge knows (`initialize`, `tools/list`, …).
    pub method: &'static str,
}

/// Labels of what an automation hook did with an event.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct HookOutcomeLabels {
    /// The policy's event key (`onFileChange`, …).
    pub hook: &'static str,
    /// `fired`, or why it was skipped (`cooldown`, `hourlyCap`, `loopGuard`, `filter`, …).
    pub outcome: String,
}

/// Labels naming a Claude task's state or how it ended.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TaskStateLabel {
    /// `queued` or `running`; for ended tasks `done`, `error`, `cancelled`, `interrupted`.
    pub state: String,
}

/// Labels naming an actor.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ActorLabel {
    /// Actor name.
    pub actor: String,
}

/// One tool's series in `tool_calls` and `tool_duration`, looked up once: recording a
/// call then increments shared counters without hashing labels or taking the
/// families' locks (a call's one lookup per series before). The tool's duration series
/// appears (count 0) when its first call starts; a status's count series on the first
/// call that ends so.
pub struct ToolMeter {
    tool: &'static str,
    calls: Family<ToolLabels, Counter>,
    by_status: [OnceLock<Counter>; CallStatus::ALL.len()],
    duration: Histogram,
}

impl ToolMeter {
    /// The tool's name.
    pub fn tool(&self) -> &'static str {
        self.tool
    }

    /// Records one finished call.
    pub fn record(&self, status: CallStatus, seconds: f64) {
        self.by_status[status as usize]
            .get_or_init(|| {
                let labels = ToolLabels {
                    tool: self.tool,
                    status: status.as_str(),
                };
                self.calls.get_or_create(&labels).clone()
            })
            .inc();
        self.duration.observe(seconds);
    }
}

fn duration_histogram() -> Histogram {
    // 50 µs … ~105 s
    Histogram::new(exponential_buckets(0.000_05, 4.0, 12))
}

/// Every metric the bridge exports.
pub struct Metrics {
    registry: Registry,
    /// MCP requests from agents by method (known methods only): counted through
    /// [`Metrics::count_request`].
    mcp_requests: Family<MethodLabel, Counter>,
    /// Each method's series of `mcp_requests`, looked up on its first request (then a
    /// request increments it without hashing its label or taking the family's lock).
    mcp_request_series: [OnceLock<Counter>; Method::COUNT],
    /// Tool calls by tool and status.
    pub tool_calls: Family<ToolLabels, Counter>,
    /// Tool call duration by tool.
    pub tool_duration: Family<ToolNameLabel, Histogram, fn() -> Histogram>,
    /// Agent sessions (connected or in grace).
    pub active_sessions: Gauge,
    /// Requests refused with -32004.
    pub rate_limit_rejections: Counter,
    /// Notifications dropped by the notification rate limit.
    pub dropped_notifications: Counter,
    /// Singleton actor restarts by actor.
    pub actor_restarts: Family<ActorLabel, Counter>,
    /// Connections refused, all reasons together.
    pub rejected_connections: Counter,
    /// Connections refused, by reason (see [`Refusal`]).
    pub refused_connections: Family<ReasonLabel, Counter>,
    /// Connections dropped because their outbound queue passed
    /// `server.max_outbound_bytes` (a peer that does not read).
    pub outbound_overflow_drops: Counter,
    /// The agents' own tool calls (seen through hooks) by tool and status; tools
    /// outside [`NATIVE_TOOLS`] count as `other`.
    pub native_tool_calls: Family<ToolLabels, Counter>,
    /// Hooks answered, by event and outcome.
    pub hook_events: Family<HookLabels, Counter>,
    /// Hooks that had no effect, by reason ([`HookIgnored`]).
    pub hooks_ignored: Family<ReasonLabel, Counter>,
    /// An on-demand bridge: seconds since anything last used it (0 while in use).
    pub idle_seconds: Gauge,
    /// Automation hooks' firings and skips, by hook and outcome.
    pub automation_hooks: Family<HookOutcomeLabels, Counter>,
    /// Claude tasks queued and running now.
    pub claude_tasks: Family<TaskStateLabel, Gauge>,
    /// Claude tasks that ended, by how.
    pub claude_tasks_ended: Family<TaskStateLabel, Counter>,
}

/// What `/status` shows about hooks.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookCounts {
    /// Hooks answered (whatever the answer).
    pub answered: u64,
    /// Of which refused a write to a claimed file.
    pub denied: u64,
    /// Of which added a notice or a claim holder's note for the model.
    pub context: u64,
    /// Of which kept an agent working (the done-gate).
    pub held: u64,
    /// Hooks with no effect, by reason.
    pub ignored: BTreeMap<&'static str, u64>,
}

/// Why a hook had no effect: the `hooks_ignored` label, and the keys of `/status`
/// `hooks.ignored`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookIgnored {
    /// Not a hook input (not JSON, or an event name that is not text).
    Malformed,
    /// From a CLI the bridge has no session for.
    UnknownAgent,
    /// From a CLI working outside the workspace.
    OtherWorkspace,
    /// Over `hooks.max_input_bytes`.
    TooLarge,
    /// `hooks.enabled = false`.
    Disabled,
    /// An event the bridge does not handle (`Notification`, …).
    UnhandledEvent,
}

impl HookIgnored {
    /// Every reason.
    pub const ALL: [HookIgnored; 6] = [
        HookIgnored::Malformed,
        HookIgnored::UnknownAgent,
        HookIgnored::OtherWorkspace,
        HookIgnored::TooLarge,
        HookIgnored::Disabled,
        HookIgnored::UnhandledEvent,
    ];

    /// The label.
    pub fn as_str(self) -> &'static str {
        match self {
            HookIgnored::Malformed => "malformed",
            HookIgnored::UnknownAgent => "unknownAgent",
            HookIgnored::OtherWorkspace => "otherWorkspace",
            HookIgnored::TooLarge => "tooLarge",
            HookIgnored::Disabled => "disabled",
            HookIgnored::UnhandledEvent => "unhandledEvent",
        }
    }

    /// What it means for the person wondering why a hook did nothing.
    pub fn explain(self) -> &'static str {
        match self {
            HookIgnored::Malformed => "the input is not a Claude Code hook input",
            HookIgnored::UnknownAgent => {
                "the bridge has no session for this CLI: start it with --ide, or register \
                 `ide-bridge mcp` with `ide-bridge init`, so that the bridge knows it"
            }
            HookIgnored::OtherWorkspace => {
                "the CLI works outside the bridge's workspace (its cwd); only its writes to \
                 claimed files there are checked"
            }
            HookIgnored::TooLarge => "the input is over hooks.max_input_bytes",
            HookIgnored::Disabled => "hooks.enabled = false in the bridge's configuration",
            HookIgnored::UnhandledEvent => "the bridge does nothing on this event",
        }
    }
}

/// The CLI's own tools counted by name in `native_tool_calls` (any other name counts as
/// `other`, so that no input can grow the label set).
pub const NATIVE_TOOLS: [&str; 21] = [
    "Read",
    "Edit",
    "MultiEdit",
    "Write",
    "NotebookEdit",
    "NotebookRead",
    "Bash",
    "BashOutput",
    "KillShell",
    "Grep",
    "Glob",
    "LS",
    "WebFetch",
    "WebSearch",
    "Task",
    "Agent",
    "TodoWrite",
    "ToolSearch",
    "Skill",
    "ExitPlanMode",
    "SlashCommand",
];

/// The label a native tool is counted under.
pub fn native_tool_label(name: &str) -> &'static str {
    NATIVE_TOOLS
        .iter()
        .find(|t| **t == name)
        .copied()
        .unwrap_or("other")
}

/// Why a connection (WebSocket upgrade or HTTP MCP session) was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// Missing or wrong token (401).
    Unauthorized,
    /// Host or Origin refused (403).
    Forbidden,
    /// Part of a burst longer than the pacing holds (429).
    Burst,
    /// Every session slot holds a connected agent.
    MaxSessions,
    /// The bridge was shutting down (503).
    ShuttingDown,
    /// The session registry could not answer.
    Fault,
}

impl Refusal {
    /// Every reason, in the order status output lists them.
    pub const ALL: [Refusal; 6] = [
        Refusal::Unauthorized,
        Refusal::Forbidden,
        Refusal::Burst,
        Refusal::MaxSessions,
        Refusal::ShuttingDown,
        Refusal::Fault,
    ];

    /// The label value and status key.
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Unauthorized => "unauthorized",
            Refusal::Forbidden => "forbidden",
            Refusal::Burst => "burst",
            Refusal::MaxSessions => "maxSessions",
            Refusal::ShuttingDown => "shuttingDown",
            Refusal::Fault => "fault",
        }
    }
}

/// Label of `refused_connections`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ReasonLabel {
    /// Why ([`Refusal::as_str`]).
    pub reason: &'static str,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Creates and registers every metric.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("ide_bridge");
        let tool_calls = Family::<ToolLabels, Counter>::default();
        let mcp_requests = Family::<MethodLabel, Counter>::default();
        let tool_duration =
            Family::<ToolNameLabel, Histogram, fn() -> Histogram>::new_with_constructor(
                duration_histogram,
            );
        let active_sessions = Gauge::default();
        let rate_limit_rejections = Counter::default();
        let dropped_notifications = Counter::default();
        let actor_restarts = Family::<ActorLabel, Counter>::default();
        let rejected_connections = Counter::default();
        let refused_connections = Family::<ReasonLabel, Counter>::default();
        let outbound_overflow_drops = Counter::default();
        let native_tool_calls = Family::<ToolLabels, Counter>::default();
        let hook_events = Family::<HookLabels, Counter>::default();
        let hooks_ignored = Family::<ReasonLabel, Counter>::default();
        let idle_seconds = Gauge::default();
        let automation_hooks = Family::<HookOutcomeLabels, Counter>::default();
        let claude_tasks = Family::<TaskStateLabel, Gauge>::default();
        let claude_tasks_ended = Family::<TaskStateLabel, Counter>::default();
        registry.register(
            "automation_hooks",
            "Automation policy hooks by hook and outcome: fired, or the kind of skip",
            automation_hooks.clone(),
        );
        registry.register(
            "claude_tasks",
            "Claude tasks queued and running",
            claude_tasks.clone(),
        );
        registry.register(
            "claude_tasks_ended",
            "Claude tasks that ended, by status (done, error, cancelled, interrupted)",
            claude_tasks_ended.clone(),
        );
        registry.register(
            "idle_seconds",
            "Seconds since anything (agent, editor, page, task) last used an on-demand bridge",
            idle_seconds.clone(),
        );
        registry.register(
            "native_tool_calls",
            "The agents' own tool calls (Claude Code's Read, Edit, Bash, ...) seen through hooks, by tool and status",
            native_tool_calls.clone(),
        );
        registry.register(
            "hook_events",
            "Claude Code hooks answered, by event and outcome",
            hook_events.clone(),
        );
        registry.register(
            "hooks_ignored",
            "Claude Code hooks that had no effect, by reason",
            hooks_ignored.clone(),
        );
        registry.register(
            "mcp_requests",
            "MCP requests from agents by method",
            mcp_requests.clone(),
        );
        registry.register(
            "tool_calls",
            "Tool calls by tool and status",
            tool_calls.clone(),
        );
        registry.register(
            "tool_call_duration_seconds",
            "Tool call duration",
            tool_duration.clone(),
        );
        registry.register(
            "active_sessions",
            "Agent sessions, connected or in their grace period",
            active_sessions.clone(),
        );
        registry.register(
            "rate_limit_rejections",
            "Requests refused by the per-connection rate limit",
            rate_limit_rejections.clone(),
        );
        registry.register(
            "dropped_notifications",
            "Client notifications dropped by the notification rate limit",
            dropped_notifications.clone(),
        );
        registry.register(
            "actor_restarts",
            "Supervised actor restarts",
            actor_restarts.clone(),
        );
        registry.register(
            "rejected_connections",
            "WebSocket connections refused",
            rejected_connections.clone(),
        );
        registry.register(
            "refused_connections",
            "Connections refused, by reason",
            refused_connections.clone(),
        );
        registry.register(
            "outbound_overflow_drops",
            "Connections dropped because their peer did not read and the outbound queue passed server.max_outbound_bytes",
            outbound_overflow_drops.clone(),
        );
        // Series of a fixed few labels start at 0: a dashboard or an alert reads 0,
        // not "no data", before the first one counts.
        {
            use ide_bridge_automation::tasks::TaskStatus;
            for status in [
                TaskStatus::Done,
                TaskStatus::Error,
                TaskStatus::Cancelled,
                TaskStatus::Interrupted,
            ] {
                drop(claude_tasks_ended.get_or_create(&TaskStateLabel {
                    state: status.to_string(),
                }));
            }
            for state in ["queued", "running"] {
                drop(claude_tasks.get_or_create(&TaskStateLabel {
                    state: state.into(),
                }));
            }
            for reason in HookIgnored::ALL {
                drop(hooks_ignored.get_or_create(&ReasonLabel {
                    reason: reason.as_str(),
                }));
            }
            for reason in Refusal::ALL {
                drop(refused_connections.get_or_create(&ReasonLabel {
                    reason: reason.as_str(),
                }));
            }
        }
        Self {
            refused_connections,
            registry,
            mcp_requests,
            mcp_request_series: std::array::from_fn(|_| OnceLock::new()),
            tool_calls,
            tool_duration,
            active_sessions,
            rate_limit_rejections,
            dropped_notifications,
            actor_restarts,
            rejected_connections,
            outbound_overflow_drops,
            native_tool_calls,
            hook_events,
            hooks_ignored,
            idle_seconds,
            automation_hooks,
            claude_tasks,
            claude_tasks_ended,
        }
    }

    /// Counts what automation hook `hook` did: `fired`, or a skip's kind.
    pub fn count_hook_outcome(&self, hook: &'static str, outcome: impl Into<String>) {
        self.automation_hooks
            .get_or_create(&HookOutcomeLabels {
                hook,
                outcome: outcome.into(),
            })
            .inc();
    }

    /// Sets the Claude tasks queued and running now.
    pub fn set_claude_tasks(&self, queued: usize, running: usize) {
        for (state, n) in [("queued", queued), ("running", running)] {
            self.claude_tasks
                .get_or_create(&TaskStateLabel {
                    state: state.into(),
                })
                .set(i64::try_from(n).unwrap_or(i64::MAX));
        }
    }

    /// Counts a request for `method` in `mcp_requests`.
    pub fn count_request(&self, method: Method) {
        self.mcp_request_series[method.index()]
            .get_or_init(|| {
                self.mcp_requests
                    .get_or_create(&MethodLabel {
                        method: method.name(),
                    })
                    .clone()
            })
            .inc();
    }

    /// `tool`'s series, to record its calls with (see [`ToolMeter`]).
    pub fn tool_meter(&self, tool: &'static str) -> ToolMeter {
        ToolMeter {
            tool,
            calls: self.tool_calls.clone(),
            by_status: Default::default(),
            duration: self
                .tool_duration
                .get_or_create(&ToolNameLabel { tool })
                .clone(),
        }
    }

    /// Every tool's totals so far, read back from the exposition text (the histogram
    /// keeps its sum and count private): calls, calls that failed, seconds.
    pub fn tool_totals(&self) -> BTreeMap<String, ToolTotals> {
        let mut out: BTreeMap<String, ToolTotals> = BTreeMap::new();
        for line in self.encode().lines() {
            let Some((series, value)) = line.rsplit_once(' ') else {
                continue;
            };
            let Some((name, labels)) = series.split_once('{') else {
                continue;
            };
            let label = |key: &str| {
                labels
                    .split(',')
                    .find_map(|kv| kv.strip_prefix(key)?.strip_prefix("=\""))
                    .map(|v| v.trim_end_matches('}').trim_end_matches('"'))
            };
            let bridge_tool = matches!(
                name,
                "ide_bridge_tool_call_duration_seconds_count"
                    | "ide_bridge_tool_call_duration_seconds_sum"
                    | "ide_bridge_tool_calls_total"
            );
            let Some(tool) = label("tool").filter(|_| bridge_tool) else {
                continue;
            };
            let entry = out.entry(tool.to_string()).or_default();
            match name {
                "ide_bridge_tool_call_duration_seconds_count" => {
                    entry.calls = value.parse().unwrap_or(0)
                }
                "ide_bridge_tool_call_duration_seconds_sum" => {
                    entry.seconds = value.parse().unwrap_or(0.0)
                }
                // As the timeline counts errors: a declined diff (the CLI asks in the
                // terminal) and a cancelled call are not failures.
                "ide_bridge_tool_calls_total"
                    if !matches!(label("status"), Some("success" | "declined" | "cancelled")) =>
                {
                    entry.failed += value.parse::<u64>().unwrap_or(0)
                }
                _ => {}
            }
        }
        out
    }

    /// Counts a refused connection.
    pub fn refuse(&self, reason: Refusal) {
        self.rejected_connections.inc();
        self.refused_connections
            .get_or_create(&ReasonLabel {
                reason: reason.as_str(),
            })
            .inc();
    }

    /// Refused connections by reason, for status output.
    pub fn refused_by_reason(&self) -> Vec<(Refusal, u64)> {
        Refusal::ALL
            .iter()
            .map(|r| {
                let n = self
                    .refused_connections
                    .get_or_create(&ReasonLabel { reason: r.as_str() })
                    .get();
                (*r, n)
            })
            .collect()
    }

    /// Hooks answered and ignored, from the counters.
    pub fn hook_counts(&self) -> HookCounts {
        let mut counts = HookCounts::default();
        for event in crate::hooks::HookEvent::ALL {
            for outcome in crate::hooks::HookAnswer::OUTCOMES {
                let labels = HookLabels {
                    event: event.as_str(),
                    outcome,
                };
                let n = self.hook_events.get(&labels).map_or(0, |c| c.get());
                counts.answered += n;
                match outcome {
                    "denied" => counts.denied += n,
                    "context" => counts.context += n,
                    "held" => counts.held += n,
                    _ => {}
                }
            }
        }
        for reason in HookIgnored::ALL.map(HookIgnored::as_str) {
            let n = self
                .hooks_ignored
                .get(&ReasonLabel { reason })
                .map_or(0, |c| c.get());
            if n > 0 {
                counts.ignored.insert(reason, n);
            }
        }
        counts
    }

    /// Records a restart of `actor`.
    pub fn record_restart(&self, actor: &str) {
        self.actor_restarts
            .get_or_create(&ActorLabel {
                actor: actor.to_string(),
            })
            .inc();
    }

    /// Prometheus text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if let Err(err) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::error!(%err, "failed to encode metrics");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declined_and_cancelled_calls_are_not_failures_and_native_calls_stay_apart() {
        let m = Metrics::new();
        m.tool_meter("openDiff").record(CallStatus::Declined, 0.001);
        m.tool_meter("openDiff")
            .record(CallStatus::Cancelled, 0.001);
        m.tool_meter("openDiff").record(CallStatus::Error, 0.001);
        m.tool_meter("openDiff").record(CallStatus::Timeout, 0.001);
        m.native_tool_calls
            .get_or_create(&ToolLabels {
                tool: native_tool_label("Edit"),
                status: "error",
            })
            .inc();
        let totals = m.tool_totals();
        assert_eq!(totals["openDiff"].calls, 4);
        assert_eq!(totals["openDiff"].failed, 2);
        assert!(!totals.contains_key("Edit"), "{totals:?}");
        assert_eq!(native_tool_label("Evil\"tool"), "other");
    }
}
