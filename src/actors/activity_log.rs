//! ActivityLog actor: a bounded timeline of tool calls and lifecycle events. Tool
//! calls and lifecycle entries share one monotonic id so they merge into one timeline.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix::prelude::*;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use super::event_stream::{EventSender, Offered};
pub use super::messages::activity::{LifecycleEvent, RecordLifecycle};
use super::messages::session::SessionId;
use super::supervise::{guard, ActorFault};
use crate::metrics::Metrics;
use crate::persist::jsonl::{self, Appender};

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "activity_log";

pub use crate::protocol::activity::{CallStatus, Entry, EntryKind};

/// Record a finished tool call.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct RecordToolCall {
    /// Tool name (a bridge tool's is its static name).
    pub tool: Cow<'static, str>,
    /// The session that called it.
    pub session_id: SessionId,
    /// How the call ended.
    pub status: CallStatus,
    /// Milliseconds from dispatch to answer.
    pub duration_ms: u64,
    /// Argument summary.
    pub summary: String,
    /// One of the agent's own tools, seen through a hook (not a bridge tool).
    pub native: bool,
    /// A native call's id (the CLI's `tool_use_id`).
    pub call_id: Option<String>,
}

/// Query the timeline, newest last.
#[derive(Debug, Default, Message)]
#[rtype(result = "Result<Vec<Entry>, ActorFault>")]
pub struct Query {
    /// Only this session's entries.
    pub session_id: Option<SessionId>,
    /// Only calls of this tool.
    pub tool: Option<String>,
    /// Only calls that ended like this.
    pub status: Option<CallStatus>,
    /// Only entries at or after this Unix millisecond.
    pub since_ms: Option<u64>,
    /// Only entries after this id.
    pub after_id: Option<u64>,
    /// Include lifecycle entries.
    pub include_lifecycle: bool,
    /// At most this many: the first after the cursor when there is one (`after_id`,
    /// `since_ms`), so that paging with the last id seen loses nothing; else the newest.
    pub limit: usize,
}

/// Totals since start-up.
#[derive(Debug, Default, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Tool calls recorded (bridge tools and native ones).
    pub tool_calls: u64,
    /// Of which were the agents' own tools, seen through hooks.
    pub native_calls: u64,
    /// Of which ended with an error, timeout or rejection.
    pub tool_errors: u64,
    /// Of which were declined as expected (`openDiff` without an editor).
    pub tool_declined: u64,
    /// Supervised actor restarts.
    pub actor_restarts: u64,
    /// Entries loaded from the previous run's log.
    pub loaded_from_disk: u64,
    /// Corrupt lines skipped when loading it.
    pub skipped_on_load: u64,
}

/// Ask for [`Totals`].
#[derive(Debug, Message)]
#[rtype(result = "Result<Totals, ActorFault>")]
pub struct GetTotals;

/// Where and how the log is persisted.
#[derive(Debug, Clone)]
pub struct PersistConfig {
    /// The JSONL file.
    pub path: PathBuf,
    /// Rotate beyond this size.
    pub max_file_bytes: u64,
    /// Hand buffered lines to the writer thread this often.
    pub flush_every: Duration,
}

/// Lines buffered before they are handed over without waiting for the timer.
const FLUSH_BATCH: usize = 256;
/// Long-poll watchers kept at once.
pub const MAX_WATCHERS: usize = 64;
/// Lines queued for one stream subscriber before it counts as too slow.
const SUBSCRIBER_QUEUE: usize = 256;

struct Persistence {
    config: PersistConfig,
    appender: Appender,
    pending: Vec<String>,
    timer: Option<SpawnHandle>,
}

struct Watcher {
    after_id: u64,
    session_id: Option<SessionId>,
    tool: Option<String>,
    quiet: Option<Quiet>,
    reply: oneshot::Sender<Vec<Entry>>,
}

/// Calls that are no news to a watcher: any session's calls of these tools (reads of
/// the timeline itself; a watch's own end would otherwise end the next one at once,
/// and two agents watching would wake each other for ever).
#[derive(Debug, Clone)]
pub struct Quiet {
    pub tools: &'static [&'static str],
}

impl Quiet {
    fn hushes(&self, e: &Entry) -> bool {
        matches!(&e.kind, EntryKind::ToolCall { tool, native: false, .. }
            if self.tools.contains(&tool.as_ref()))
    }
}

/// The timeline of tool calls and lifecycle events, in memory and (optionally) on disk.
pub struct ActivityLog {
    tool_calls: VecDeque<Entry>,
    lifecycle: VecDeque<Entry>,
    next_id: u64,
    max_entries: usize,
    totals: Totals,
    metrics: Arc<Metrics>,
    persistence: Option<Persistence>,
    watchers: Vec<Watcher>,
    subscribers: Vec<EventSender>,
    max_subscribers: usize,
}

impl ActivityLog {
    /// A log keeping `max_entries` of each kind (batch-evicted at 120 %), in memory only.
    pub fn new(max_entries: usize, metrics: Arc<Metrics>) -> Self {
        Self {
            tool_calls: VecDeque::new(),
            lifecycle: VecDeque::new(),
            next_id: 1,
            max_entries,
            totals: Totals::default(),
            metrics,
            persistence: None,
            watchers: Vec::new(),
            subscribers: Vec::new(),
            max_subscribers: 8,
        }
    }

    /// Loads the previous log from `config.path` and appends to it from now on. I/O
    /// failures leave the log in memory only, with an error logged.
    pub fn persistent(mut self, config: PersistConfig, max_subscribers: usize) -> Self {
        self.max_subscribers = max_subscribers;
        self.reload(&config.path);
        match Appender::start(config.path.clone(), config.max_file_bytes) {
            Ok(appender) => {
                self.persistence = Some(Persistence {
                    config,
                    appender,
                    pending: Vec::new(),
                    timer: None,
                })
            }
            Err(e) => {
                tracing::error!(path = %config.path.display(), %e, "cannot open the activity log; entries stay in memory only")
            }
        }
        self
    }

    /// Merges the entries on disk into memory (by id) and moves `next_id` past them.
    fn reload(&mut self, path: &std::path::Path) {
        let known: std::collections::HashSet<u64> = self
            .tool_calls
            .iter()
            .chain(self.lifecycle.iter())
            .map(|e| e.id)
            .collect();
        let max_entries = self.max_entries;
        // Only the newest `max_entries` of each kind stay: trimmed as the file is read
        // (at twice that), so a log of any size costs that much at start-up, not its
        // whole length parsed (a 10 MiB log held 120 MB for the life of the process).
        let trim = |q: &mut VecDeque<Entry>, to: usize| {
            if q.len() > to {
                q.make_contiguous().sort_by_key(|e| e.id);
                let excess = q.len() - to;
                q.drain(..excess);
            }
        };
        let (mut added, mut unreadable) = (0, 0);
        let (tool_calls, lifecycle, next_id) =
            (&mut self.tool_calls, &mut self.lifecycle, &mut self.next_id);
        let read = jsonl::for_each_entry(path, |value| {
            let Ok(entry) = serde_json::from_value::<Entry>(value) else {
                unreadable += 1;
                return;
            };
            *next_id = (*next_id).max(entry.id + 1);
            if known.contains(&entry.id) {
                return;
            }
            added += 1;
            let q = match entry.kind {
                EntryKind::ToolCall { .. } => &mut *tool_calls,
                EntryKind::Lifecycle { .. } => &mut *lifecycle,
            };
            q.push_back(entry);
            if q.len() >= 2 * max_entries.max(1) {
                trim(q, max_entries);
            }
        });
        let skipped = match read {
            Ok(skipped) => skipped,
            Err(e) => {
                tracing::error!(path = %path.display(), %e, "cannot read the previous activity log");
                0
            }
        };
        if skipped > 0 {
            tracing::warn!(path = %path.display(), skipped, "skipped corrupt activity log lines");
        }
        self.totals.skipped_on_load += (skipped + unreadable) as u64;
        self.totals.loaded_from_disk += added;
        for q in [&mut self.tool_calls, &mut self.lifecycle] {
            q.make_contiguous().sort_by_key(|e| e.id);
            let excess = q.len().saturating_sub(self.max_entries);
            q.drain(..excess);
        }
    }

    fn push(&mut self, kind: EntryKind) {
        let entry = Entry {
            id: self.next_id,
            timestamp: now_ms(),
            kind,
        };
        self.next_id += 1;
        if self.persistence.is_some() || !self.subscribers.is_empty() {
            match entry.to_line() {
                Ok(line) => {
                    self.publish(&line);
                    if let Some(p) = &mut self.persistence {
                        p.pending.push(line);
                    }
                }
                Err(e) => tracing::error!(%e, "cannot serialise an activity entry"),
            }
        }
        if !self.watchers.is_empty() {
            self.wake_watchers(&entry);
        }
        let (queue, max) = match entry.kind {
            EntryKind::ToolCall { .. } => (&mut self.tool_calls, self.max_entries),
            EntryKind::Lifecycle { .. } => (&mut self.lifecycle, self.max_entries),
        };
        queue.push_back(entry);
        if queue.len() >= max + max / 5 {
            let excess = queue.len() - max;
            queue.drain(..excess);
        }
    }

    /// Arms the flush timer, or flushes at once when the batch is full.
    fn schedule_flush(&mut self, ctx: &mut Context<Self>) {
        let Some(p) = &mut self.persistence else {
            return;
        };
        if p.pending.len() >= FLUSH_BATCH {
            self.flush();
        } else if !p.pending.is_empty() && p.timer.is_none() {
            let every = p.config.flush_every;
            p.timer = Some(ctx.run_later(every, |act, _| {
                if let Some(p) = &mut act.persistence {
                    p.timer = None;
                }
                act.flush();
            }));
        }
    }

    /// Hands the buffered lines to the writer thread (never waits for the disk).
    fn flush(&mut self) {
        if let Some(p) = &mut self.persistence {
            if !p.pending.is_empty() {
                p.appender.append(std::mem::take(&mut p.pending));
            }
        }
    }

    fn publish(&mut self, line: &str) {
        if self.subscribers.is_empty() {
            return;
        }
        let line: Arc<str> = Arc::from(line);
        self.subscribers.retain(|s| match s.offer(&line) {
            Offered::Queued => true,
            Offered::FellBehind => {
                tracing::warn!(
                    "dropping an activity stream subscriber that does not keep up (its connection is closed)"
                );
                false
            }
            Offered::Gone => false,
        });
    }

    fn wake_watchers(&mut self, entry: &Entry) {
        let mut keep = Vec::with_capacity(self.watchers.len());
        for w in self.watchers.drain(..) {
            if w.reply.is_closed() {
                continue;
            }
            if entry.id > w.after_id && watch_matches(&w, entry) {
                let _ = w.reply.send(vec![entry.clone()]);
            } else {
                keep.push(w);
            }
        }
        self.watchers = keep;
    }

    fn query(&self, q: &Query) -> Vec<Entry> {
        let matches = |e: &&Entry| {
            if q.after_id.is_some_and(|after| e.id <= after) {
                return false;
            }
            if q.since_ms.is_some_and(|since| e.timestamp < since) {
                return false;
            }
            match &e.kind {
                EntryKind::ToolCall {
                    tool,
                    session_id,
                    status,
                    ..
                } => {
                    q.session_id
                        .as_ref()
                        .is_none_or(|s| s == session_id.as_str())
                        && q.tool.as_ref().is_none_or(|t| t == tool)
                        && q.status.is_none_or(|st| st == *status)
                }
                EntryKind::Lifecycle { session_id, .. } => {
                    q.include_lifecycle
                        && q.tool.is_none()
                        && q.status.is_none()
                        && q.session_id
                            .as_ref()
                            .is_none_or(|s| session_id.as_ref() == Some(s))
                }
            }
        };
        let mut out: Vec<Entry> = self
            .tool_calls
            .iter()
            .filter(matches)
            .chain(self.lifecycle.iter().filter(matches))
            .cloned()
            .collect();
        out.sort_by_key(|e| e.id);
        if q.after_id.is_some() || q.since_ms.is_some() {
            out.truncate(q.limit);
        } else {
            let skip = out.len().saturating_sub(q.limit);
            out.drain(..skip);
        }
        out
    }
}

/// Unix time in milliseconds.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The current time as an RFC 3339 string with milliseconds.
pub fn iso_now() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

fn watch_matches(w: &Watcher, e: &Entry) -> bool {
    if w.quiet.as_ref().is_some_and(|q| q.hushes(e)) {
        return false;
    }
    match &e.kind {
        EntryKind::ToolCall {
            tool, session_id, ..
        } => {
            w.session_id
                .as_ref()
                .is_none_or(|s| s == session_id.as_str())
                && w.tool.as_ref().is_none_or(|t| t == tool)
        }
        EntryKind::Lifecycle { session_id, .. } => {
            w.tool.is_none()
                && w.session_id
                    .as_ref()
                    .is_none_or(|s| session_id.as_ref() == Some(s))
        }
    }
}

/// Wait for entries after `after_id` (the newest id when absent) matching the filter.
/// Answers at once when some exist; otherwise when the next one arrives. The caller
/// applies its own timeout.
#[derive(Debug, Message)]
#[rtype(result = "Result<WatchStart, ActorFault>")]
pub struct Watch {
    /// Entries after this id.
    pub after_id: Option<u64>,
    /// Only this session.
    pub session_id: Option<SessionId>,
    /// Only this tool.
    pub tool: Option<String>,
    /// Not these.
    pub quiet: Option<Quiet>,
}

/// How a watch begins.
pub enum WatchStart {
    /// Entries already there.
    Ready(Vec<Entry>),
    /// Wait on this for the next matching entry.
    Waiting(oneshot::Receiver<Vec<Entry>>),
    /// Too many watchers already.
    Busy,
}

/// Subscribe to every new entry as a JSON line (for the SSE stream).
#[derive(Debug, Message)]
#[rtype(result = "Result<Option<mpsc::Receiver<Arc<str>>>, ActorFault>")]
pub struct Subscribe {
    /// The client's connection, shut down if it falls behind (`None`: the stream only
    /// ends).
    pub socket: Option<std::sync::Weak<std::net::TcpStream>>,
}

/// Of these native call ids (the CLI's `tool_use_id`s), those the timeline recorded
/// (its newest entries, read back from disk after a restart or a crash included).
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<String>, ActorFault>")]
pub struct Recorded(pub Vec<String>);

impl Handler<Recorded> for ActivityLog {
    type Result = Result<Vec<String>, ActorFault>;
    fn handle(&mut self, msg: Recorded, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            let known: std::collections::HashSet<&str> = act
                .tool_calls
                .iter()
                .filter_map(|e| match &e.kind {
                    EntryKind::ToolCall {
                        call_id: Some(id), ..
                    } => Some(id.as_str()),
                    _ => None,
                })
                .collect();
            msg.0
                .into_iter()
                .filter(|id| known.contains(id.as_str()))
                .collect()
        })
    }
}

/// Hand every buffered line to the writer and wait until it is on disk (shutdown).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct FlushNow;

impl Actor for ActivityLog {
    type Context = Context<Self>;
}

impl Supervised for ActivityLog {
    fn restarting(&mut self, _: &mut Context<Self>) {
        self.metrics.record_restart(NAME);
        self.totals.actor_restarts += 1;
        tracing::warn!(
            actor = NAME,
            "restarted after a fault; reloading the log from disk"
        );
        // The flush timer died with the old context: hand over what is buffered, then
        // merge whatever the disk holds that memory lost.
        if let Some(p) = &mut self.persistence {
            p.timer = None;
        }
        self.flush();
        if let Some(p) = &self.persistence {
            p.appender.flush();
            let path = p.config.path.clone();
            self.reload(&path);
        }
        self.watchers.clear();
        self.push(EntryKind::Lifecycle {
            event: LifecycleEvent::ActorRestarted,
            session_id: None,
            detail: NAME.to_string(),
        });
    }
}

impl Handler<RecordToolCall> for ActivityLog {
    type Result = ();
    fn handle(&mut self, msg: RecordToolCall, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| {
            act.totals.tool_calls += 1;
            act.totals.native_calls += u64::from(msg.native);
            if msg.status == CallStatus::Declined {
                act.totals.tool_declined += 1;
            }
            if !matches!(
                msg.status,
                CallStatus::Success | CallStatus::Cancelled | CallStatus::Declined
            ) {
                act.totals.tool_errors += 1;
            }
            act.push(EntryKind::ToolCall {
                tool: msg.tool,
                session_id: msg.session_id,
                status: msg.status,
                duration_ms: msg.duration_ms,
                summary: msg.summary,
                native: msg.native,
                call_id: msg.call_id,
            });
            act.schedule_flush(ctx);
        });
    }
}

impl Handler<RecordLifecycle> for ActivityLog {
    type Result = ();
    fn handle(&mut self, msg: RecordLifecycle, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| {
            if msg.event == LifecycleEvent::ActorRestarted {
                act.totals.actor_restarts += 1;
            }
            act.push(EntryKind::Lifecycle {
                event: msg.event,
                session_id: msg.session_id,
                detail: msg.detail,
            });
            act.schedule_flush(ctx);
        });
    }
}

impl Handler<Query> for ActivityLog {
    type Result = Result<Vec<Entry>, ActorFault>;
    fn handle(&mut self, msg: Query, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| act.query(&msg))
    }
}

impl Handler<GetTotals> for ActivityLog {
    type Result = MessageResult<GetTotals>;
    fn handle(&mut self, _: GetTotals, ctx: &mut Context<Self>) -> Self::Result {
        MessageResult(guard(NAME, self, ctx, |act, _| act.totals.clone()))
    }
}

impl Handler<Watch> for ActivityLog {
    type Result = Result<WatchStart, ActorFault>;
    fn handle(&mut self, msg: Watch, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            let after_id = msg.after_id.unwrap_or(act.next_id - 1);
            let mut ready = act.query(&Query {
                session_id: msg.session_id.clone(),
                tool: msg.tool.clone(),
                after_id: Some(after_id),
                include_lifecycle: true,
                limit: act.max_entries,
                ..Query::default()
            });
            if let Some(quiet) = &msg.quiet {
                ready.retain(|e| !quiet.hushes(e));
            }
            if !ready.is_empty() {
                return WatchStart::Ready(ready);
            }
            act.watchers.retain(|w| !w.reply.is_closed());
            if act.watchers.len() >= MAX_WATCHERS {
                return WatchStart::Busy;
            }
            let (reply, rx) = oneshot::channel();
            act.watchers.push(Watcher {
                after_id,
                session_id: msg.session_id,
                tool: msg.tool,
                quiet: msg.quiet,
                reply,
            });
            WatchStart::Waiting(rx)
        })
    }
}

impl Handler<Subscribe> for ActivityLog {
    type Result = Result<Option<mpsc::Receiver<Arc<str>>>, ActorFault>;
    fn handle(&mut self, msg: Subscribe, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            act.subscribers.retain(|s| !s.is_closed());
            if act.subscribers.len() >= act.max_subscribers {
                return None;
            }
            let (tx, rx) = EventSender::channel(SUBSCRIBER_QUEUE, msg.socket);
            act.subscribers.push(tx);
            Some(rx)
        })
    }
}

impl Handler<FlushNow> for ActivityLog {
    type Result = ();
    fn handle(&mut self, _: FlushNow, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            act.flush();
            if let Some(p) = &act.persistence {
                p.appender.flush();
            }
        });
    }
}

#[cfg(feature = "fault-injection")]
crate::actors::fault::fault_handlers!(ActivityLog, NAME);

#[cfg(test)]
mod tests {
    use super::*;

    fn call(log: &mut ActivityLog, tool: &'static str, session: &str) {
        log.totals.tool_calls += 1;
        log.push(EntryKind::ToolCall {
            tool: tool.into(),
            session_id: session.into(),
            status: CallStatus::Success,
            duration_ms: 1,
            summary: String::new(),
            native: false,
            call_id: None,
        });
    }

    #[test]
    fn evicts_in_a_batch_at_120_percent() {
        let mut log = ActivityLog::new(10, Arc::new(Metrics::new()));
        for _ in 0..11 {
            call(&mut log, "t", "s");
        }
        assert_eq!(log.tool_calls.len(), 11);
        call(&mut log, "t", "s");
        assert_eq!(
            log.tool_calls.len(),
            10,
            "12 = 120 % of 10 triggers eviction to 10"
        );
        assert_eq!(log.tool_calls.front().unwrap().id, 3);
    }

    #[test]
    fn a_cursor_pages_forward_without_gaps_and_no_cursor_gives_the_newest() {
        let mut log = ActivityLog::new(100, Arc::new(Metrics::new()));
        for _ in 0..10 {
            call(&mut log, "a", "s1");
        }
        let ids = |q: Query| log.query(&q).iter().map(|e| e.id).collect::<Vec<_>>();
        assert_eq!(
            ids(Query {
                after_id: Some(3),
                limit: 2,
                ..Default::default()
            }),
            [4, 5]
        );
        assert_eq!(
            ids(Query {
                since_ms: Some(0),
                limit: 2,
                ..Default::default()
            }),
            [1, 2]
        );
        assert_eq!(
            ids(Query {
                limit: 2,
                ..Default::default()
            }),
            [9, 10]
        );
    }

    #[test]
    fn query_merges_kinds_by_id_and_filters() {
        let mut log = ActivityLog::new(100, Arc::new(Metrics::new()));
        call(&mut log, "a", "s1");
        log.push(EntryKind::Lifecycle {
            event: LifecycleEvent::AgentConnected,
            session_id: Some("s2".into()),
            detail: String::new(),
        });
        call(&mut log, "b", "s2");
        let all = log.query(&Query {
            include_lifecycle: true,
            limit: 10,
            ..Default::default()
        });
        assert_eq!(all.iter().map(|e| e.id).collect::<Vec<_>>(), vec![1, 2, 3]);
        let s2 = log.query(&Query {
            session_id: Some("s2".into()),
            include_lifecycle: true,
            limit: 10,
            ..Default::default()
        });
        assert_eq!(s2.len(), 2);
        let newest = log.query(&Query {
            limit: 1,
            ..Default::default()
        });
        assert_eq!(newest[0].id, 3);
    }
}
