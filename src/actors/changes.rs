//! The Changes actor: what each agent changed, hunk by hunk ([`crate::changes`]), kept
//! across restarts in the workspace's state directory. It snapshots a file before an
//! agent writes it and diffs it after; it answers the page and the tools (list, who
//! changed a line, keep, undo); undos are written through the workspace writer. The
//! editor is told which lines each agent changed (`bridge/agentChanges`) and the page
//! that the change sets moved. It runs on a thread of its own: it reads files.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde::Serialize;
use serde_json::json;

use super::messages::activity::RecordLifecycle;
pub use super::messages::changes::{AgentWrote, Baseline, BeforeWrite, CommandRan, WriteAbandoned};
use super::messages::dashboard::ChangesUpdated;
use super::messages::editor::NotifyEditor;
use super::messages::session::SessionId;
use super::supervise::{guard, restarted, ActorFault};
use super::writer::{WorkspaceWriter, Write, WriteOp};
use crate::actors::activity_log::{now_ms, LifecycleEvent};
use crate::changes::{AgentWrite, Change, Declined, FileUndo, Ledger, Limits, Owner, Selection};
use crate::metrics::Metrics;
use crate::persist::snapshot_file::SnapshotFile;
use crate::workspace::files::{read_regular_max, FileError};
use crate::workspace::{Root, Workspace};

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "changes";

/// Snapshots waiting for their write: at most this many, each at most this old, and
/// at most [`MAX_PENDING_PER_SESSION`] of one agent (its oldest go first, so that an
/// agent whose writes never report back loses its own records, not the others').
const MAX_PENDING: usize = 256;
const MAX_PENDING_PER_SESSION: usize = 64;
const PENDING_TTL: Duration = Duration::from_secs(600);
/// Snapshots given up are logged at most this often (with how many).
const DROP_LOG_EVERY: Duration = Duration::from_secs(10);
/// Changes within this long make one save and one word to the page.
const SETTLE: Duration = Duration::from_millis(300);

/// The change sets, filtered.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<Change>, ActorFault>")]
pub struct ListChanges(pub Selection);

/// Who last changed each line of a file (resolved path, workspace-relative name).
#[derive(Debug, Message)]
#[rtype(result = "Result<Result<Vec<LineRun>, String>, ActorFault>")]
pub struct WhoChanged {
    pub path: PathBuf,
    pub display: String,
}

/// Lines `from..=to` were last changed by `by` (`None`: nobody since the file was first
/// followed).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LineRun {
    pub from: usize,
    pub to: usize,
    pub by: Option<String>,
    pub session: Option<SessionId>,
}

/// The person keeps the selected hunks: answers how many.
#[derive(Debug, Message)]
#[rtype(result = "Result<usize, ActorFault>")]
pub struct KeepChanges(pub Selection);

/// Undoes the selected hunks.
#[derive(Debug, Message)]
#[rtype(result = "Result<UndoReport, ActorFault>")]
pub struct UndoChanges {
    pub selection: Selection,
    /// Who undoes them: the person (the page) or an agent ([`Owner::Undid`],
    /// `undoChanges`); the lines put back are theirs.
    pub by: Owner,
}

/// What an undo did: per file, the hunks reverted, and those it declined with why.
#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UndoReport {
    pub undone: Vec<UndoneHunk>,
    pub declined: Vec<Declined>,
}

/// One hunk undone.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UndoneHunk {
    pub change: u64,
    pub hunk: usize,
    pub file: String,
    pub session: SessionId,
    pub agent: String,
    /// 1-based, inclusive, in the file before the undo.
    pub from: usize,
    pub to: usize,
}

/// Save the change sets now (shutdown): answers once they are on disk.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct FlushChanges;

/// Counters for `/status`.
#[derive(Debug, Message)]
#[rtype(result = "Result<ChangesStatus, ActorFault>")]
pub struct GetChangesStatus;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangesStatus {
    /// Hunks waiting for the person.
    pub open_hunks: usize,
    pub changes: usize,
    /// Changes dropped to stay within the limits.
    pub dropped: u64,
}

/// Where the Changes actor reports.
pub struct ChangesLinks {
    pub writer: Addr<WorkspaceWriter>,
    /// `bridge/agentChanges`.
    pub editor: Recipient<NotifyEditor>,
    /// The page's Changes view.
    pub page: Recipient<ChangesUpdated>,
    pub activity: Recipient<RecordLifecycle>,
}

/// A write under way: the text before it (`None`: no such file) and, once a later
/// write of the same agent to the same file ended first, the text after it.
struct Pending {
    call: Option<String>,
    before: Option<String>,
    after: Option<String>,
    at: Instant,
}

/// The change sets of one bridge.
pub struct ChangesActor {
    ledger: Ledger,
    workspace: Workspace,
    /// Writes under way, by agent and file, in the order they started.
    pending: HashMap<(SessionId, PathBuf), VecDeque<Pending>>,
    file: Option<SnapshotFile<Ledger>>,
    links: ChangesLinks,
    metrics: Arc<Metrics>,
    limits: Limits,
    /// A save and a word to the page are due.
    settling: Option<SpawnHandle>,
    /// Snapshots given up since the last log line about them, and when that was.
    dropped: (usize, Option<Instant>),
}

/// `path`'s text (`None`: no such file), read beneath `root`: without blocking on what
/// is not a regular file (a FIFO swapped in would hold the actor for good) and without
/// following a link out of the workspace (whose target's text would land in the change
/// sets).
fn read_text(root: &Root, path: &Path, max: usize) -> Result<Option<String>, String> {
    let bytes = match read_regular_max(root, path, max as u64) {
        Ok(bytes) => bytes,
        Err(FileError::NotFound(_)) => return Ok(None),
        Err(FileError::TooLarge { .. }) => {
            return Err(format!("larger than {max} bytes: not followed"))
        }
        Err(e) => return Err(e.to_string()),
    };
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| "not UTF-8 text".to_string())
}

impl ChangesActor {
    /// The change sets kept at `path` (when given) for `workspace`.
    pub fn new(
        workspace: Workspace,
        path: Option<PathBuf>,
        limits: Limits,
        links: ChangesLinks,
        metrics: Arc<Metrics>,
    ) -> Self {
        let ledger = path
            .as_deref()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|b| {
                serde_json::from_slice::<Ledger>(&b)
                    .map_err(|e| tracing::warn!(%e, "ignoring an unreadable changes file"))
                    .ok()
            })
            .map_or_else(|| Ledger::new(limits), |l| l.with_limits(limits));
        Self {
            ledger,
            workspace,
            pending: HashMap::new(),
            file: path.map(|p| SnapshotFile::start(p, "the agents' change sets")),
            links,
            metrics,
            limits,
            settling: None,
            dropped: (0, None),
        }
    }

    /// Makes room for a snapshot of `session`'s: drops its oldest when it has
    /// [`MAX_PENDING_PER_SESSION`], and the oldest of the agent with the most when all
    /// have [`MAX_PENDING`].
    fn make_room(&mut self, session: &SessionId) {
        let of = |pending: &HashMap<(SessionId, PathBuf), VecDeque<Pending>>, s: &SessionId| {
            pending
                .iter()
                .filter(|((owner, _), _)| owner == s)
                .map(|(_, w)| w.len())
                .sum::<usize>()
        };
        let mut victim =
            (of(&self.pending, session) >= MAX_PENDING_PER_SESSION).then(|| session.clone());
        if victim.is_none()
            && self.pending.values().map(VecDeque::len).sum::<usize>() >= MAX_PENDING
        {
            victim = self
                .pending
                .keys()
                .map(|(s, _)| s)
                .max_by_key(|s| of(&self.pending, s))
                .cloned();
        }
        let Some(victim) = victim else { return };
        let oldest = self
            .pending
            .iter()
            .filter(|((s, _), _)| *s == victim)
            .filter_map(|(key, w)| w.front().map(|p| (p.at, key.clone())))
            .min_by_key(|(at, _)| *at)
            .map(|(_, key)| key);
        if let Some(key) = oldest {
            if let Some(writes) = self.pending.get_mut(&key) {
                writes.pop_front();
                if writes.is_empty() {
                    self.pending.remove(&key);
                }
            }
            self.dropped.0 += 1;
            let now = Instant::now();
            if self
                .dropped
                .1
                .is_none_or(|at| now.duration_since(at) >= DROP_LOG_EVERY)
            {
                tracing::warn!(
                    session = %victim,
                    dropped = self.dropped.0,
                    "too many writes under way without an end: the oldest are not recorded in the change sets"
                );
                self.dropped = (0, Some(now));
            }
        }
    }

    /// Tells the editor (for `file`) now; saves and tells the page within
    /// [`SETTLE`], once for every change meanwhile (a burst of writes costs one
    /// snapshot of the change sets, not one each).
    fn changed(&mut self, file: Option<&str>, ctx: &mut Context<Self>) {
        if let Some(file) = file {
            self.tell_editor(file, true);
        }
        if self.settling.is_none() {
            self.settling = Some(ctx.run_later(SETTLE, |act, _| {
                act.settling = None;
                act.flush();
            }));
        }
    }

    /// Saves the change sets and tells the page they moved.
    fn flush(&mut self) {
        if let Some(f) = &self.file {
            f.save(self.ledger.clone());
        }
        self.links.page.do_send(ChangesUpdated);
    }

    /// `bridge/agentChanges` for `file`: the lines each agent changed that the person
    /// has not decided on yet, and whether the file was just `written` (an agent's
    /// write, an undo: an editor reloads it) or only the marks changed (a keep).
    fn tell_editor(&mut self, file: &str, written: bool) {
        let path = self.workspace.root().join(file);
        let Ok(Some(text)) = read_text(self.workspace.dir(), &path, self.limits.max_file_bytes)
        else {
            return;
        };
        let open: std::collections::HashSet<u64> = self
            .ledger
            .changes()
            .filter(|c| c.file == file && c.open().next().is_some())
            .map(|c| c.id)
            .collect();
        let runs: Vec<serde_json::Value> = self
            .ledger
            .owners(file, &text)
            .into_iter()
            .filter_map(|(from, to, owner)| match owner {
                Owner::Agent {
                    change,
                    session,
                    agent,
                } if open.contains(&change) => Some(json!({
                    "startLine": from, "endLine": to, "agent": agent, "session": session,
                })),
                _ => None,
            })
            .collect();
        self.links.editor.do_send(NotifyEditor {
            method: crate::protocol::editor::BridgeNotification::AgentChanges,
            params: json!({
                "file": path.display().to_string(), "changes": runs, "written": written,
            }),
        });
    }

    fn drop_stale_pending(&mut self) {
        let now = Instant::now();
        for writes in self.pending.values_mut() {
            writes.retain(|w| now.duration_since(w.at) < PENDING_TTL);
        }
        self.pending.retain(|_, writes| !writes.is_empty());
    }

    /// Forgets the write `call` of `session` to `path` (it did not happen): the writes
    /// around it keep their texts.
    fn drop_pending(&mut self, session: &SessionId, path: &Path, call: &Option<String>) {
        let key = (session.clone(), path.to_path_buf());
        let Some(writes) = self.pending.get_mut(&key) else {
            return;
        };
        if let Some(i) = writes.iter().position(|w| &w.call == call) {
            writes.remove(i);
        }
        if writes.is_empty() {
            self.pending.remove(&key);
        }
    }

    /// Takes the write `call` of `session` to `path` from those under way: its text
    /// before, and after when a later write of the same file started meanwhile (that
    /// one's text before). The write before it, if still under way, ends where this
    /// one began.
    fn take_pending(
        &mut self,
        session: &SessionId,
        path: &Path,
        call: &Option<String>,
    ) -> Option<(Option<String>, Option<String>)> {
        let key = (session.clone(), path.to_path_buf());
        let writes = self.pending.get_mut(&key)?;
        let i = writes
            .iter()
            .position(|w| &w.call == call)
            // A write without a name is the oldest unnamed one; a named write that is
            // not here was not followed (too large, too many under way).
            .or_else(|| {
                call.is_none()
                    .then(|| writes.iter().position(|w| w.call.is_none()))?
            })?;
        let next_before = writes
            .get(i + 1)
            .map(|w| w.before.clone().unwrap_or_default());
        let this = writes.remove(i)?;
        if i > 0 {
            if let Some(prev) = writes.get_mut(i - 1) {
                prev.after
                    .get_or_insert_with(|| this.before.clone().unwrap_or_default());
            }
        }
        if writes.is_empty() {
            self.pending.remove(&key);
        }
        Some((this.before, this.after.or(next_before)))
    }
}

impl Actor for ChangesActor {
    type Context = Context<Self>;

    fn stopping(&mut self, _: &mut Context<Self>) -> Running {
        // What is not saved yet goes to disk on the way out.
        if self.settling.take().is_some() {
            self.flush();
        }
        Running::Stop
    }
}

impl Supervised for ChangesActor {
    fn restarting(&mut self, _: &mut Context<Self>) {
        self.settling = None;
        self.flush();
        restarted(
            NAME,
            &self.metrics,
            &self.links.activity,
            "kept the change sets",
        );
    }
}

impl Handler<BeforeWrite> for ChangesActor {
    type Result = ();
    fn handle(&mut self, msg: BeforeWrite, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            act.drop_stale_pending();
            act.make_room(&msg.session);
            let text = match msg.baseline {
                Baseline::Text(text) if text.len() <= act.limits.max_file_bytes => Ok(Some(text)),
                Baseline::Text(_) => Err("larger than the limit: not followed".to_string()),
                Baseline::Absent => Ok(None),
                Baseline::Disk => {
                    read_text(act.workspace.dir(), &msg.path, act.limits.max_file_bytes)
                }
            };
            match text {
                Ok(text) => act
                    .pending
                    .entry((msg.session, msg.path))
                    .or_default()
                    .push_back(Pending {
                        call: msg.call,
                        before: text,
                        after: None,
                        at: Instant::now(),
                    }),
                Err(why) => tracing::debug!(path = %msg.path.display(), why, "not followed"),
            }
        });
    }
}

impl Handler<AgentWrote> for ChangesActor {
    type Result = ();
    fn handle(&mut self, msg: AgentWrote, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| {
            let Some((before, after)) = act.take_pending(&msg.session, &msg.path, &msg.call) else {
                return;
            };
            let after = match after {
                Some(text) => text,
                None => {
                    match read_text(act.workspace.dir(), &msg.path, act.limits.max_file_bytes) {
                        Ok(Some(text)) => text,
                        // Deleted: every line went.
                        Ok(None) => String::new(),
                        Err(why) => {
                            tracing::debug!(path = %msg.path.display(), why, "not followed");
                            return;
                        }
                    }
                }
            };
            let recorded = act
                .ledger
                .record(AgentWrite {
                    session: &msg.session,
                    agent: &msg.agent,
                    file: &msg.display,
                    tool: &msg.tool,
                    before: before.as_deref(),
                    after: &after,
                    at_ms: now_ms(),
                })
                .is_some();
            if recorded {
                act.changed(Some(&msg.display), ctx);
            }
        });
    }
}

impl Handler<CommandRan> for ChangesActor {
    type Result = ();
    fn handle(&mut self, msg: CommandRan, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| {
            let by = msg.ended_by.map(|agent| Owner::Ran {
                session: msg.session.clone(),
                agent,
            });
            for file in &msg.files {
                if !act.ledger.follows(file) {
                    continue;
                }
                let path = act.workspace.dir().path().join(file);
                let Ok(Some(text)) =
                    read_text(act.workspace.dir(), &path, act.limits.max_file_bytes)
                else {
                    continue;
                };
                let moved = match &by {
                    Some(by) => act.ledger.ran(file, &text, by),
                    None => act.ledger.command_starts(file, &text),
                };
                if moved {
                    act.changed(None, ctx);
                }
            }
        });
    }
}

impl Handler<WriteAbandoned> for ChangesActor {
    type Result = ();
    fn handle(&mut self, msg: WriteAbandoned, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            act.drop_pending(&msg.session, &msg.path, &msg.call);
        });
    }
}

impl Handler<ListChanges> for ChangesActor {
    type Result = Result<Vec<Change>, ActorFault>;
    fn handle(&mut self, msg: ListChanges, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            let s = &msg.0;
            act.ledger
                .changes()
                .filter(|c| s.change.is_none_or(|id| id == c.id))
                .filter(|c| s.file.as_deref().is_none_or(|f| f == c.file))
                .filter(|c| s.session.as_deref().is_none_or(|x| x == c.session))
                .cloned()
                .collect()
        })
    }
}

impl Handler<WhoChanged> for ChangesActor {
    type Result = Result<Result<Vec<LineRun>, String>, ActorFault>;
    fn handle(&mut self, msg: WhoChanged, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            let text = match read_text(act.workspace.dir(), &msg.path, act.limits.max_file_bytes)? {
                Some(t) => t,
                None => return Err(format!("{} does not exist", msg.display)),
            };
            Ok(act
                .ledger
                .owners(&msg.display, &text)
                .into_iter()
                .map(|(from, to, owner)| {
                    let by = owner.who().map(str::to_string);
                    let session = match owner {
                        Owner::Agent { session, .. }
                        | Owner::Undid { session, .. }
                        | Owner::Ran { session, .. } => Some(session),
                        Owner::Base | Owner::Person => None,
                    };
                    LineRun {
                        from,
                        to,
                        by,
                        session,
                    }
                })
                .collect())
        })
    }
}

impl Handler<KeepChanges> for ChangesActor {
    type Result = Result<usize, ActorFault>;
    fn handle(&mut self, msg: KeepChanges, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, ctx| {
            if !msg.0.is_given() {
                return 0;
            }
            let (kept, files) = act.ledger.keep(&msg.0);
            if kept > 0 {
                act.changed(None, ctx);
                for f in files {
                    act.tell_editor(&f, false);
                }
            }
            kept
        })
    }
}

impl Handler<UndoChanges> for ChangesActor {
    type Result = ResponseActFuture<Self, Result<UndoReport, ActorFault>>;
    fn handle(&mut self, msg: UndoChanges, ctx: &mut Context<Self>) -> Self::Result {
        let planned = guard(NAME, self, ctx, |act, _| {
            let mut declined = Vec::new();
            let mut plans: Vec<(FileUndo, Option<crate::workspace::files::Fingerprint>)> =
                Vec::new();
            if !msg.selection.is_given() {
                return (plans, declined);
            }
            let mut files: Vec<String> = act.ledger.changes().map(|c| c.file.clone()).collect();
            files.sort();
            files.dedup();
            for file in files {
                let path = act.workspace.root().join(&file);
                let text = match read_text(act.workspace.dir(), &path, act.limits.max_file_bytes) {
                    Ok(text) => text,
                    Err(why) => {
                        let why = format!("the file cannot be read ({why}); nothing was changed");
                        declined.extend(act.ledger.decline_all(&file, &msg.selection, &why));
                        continue;
                    }
                };
                let fingerprint = text
                    .as_deref()
                    .map(|t| crate::workspace::files::fingerprint(t.as_bytes()));
                let (plan, refused) = act.ledger.plan_undo(&file, text.as_deref(), &msg.selection);
                declined.extend(refused);
                plans.extend(plan.map(|p| (p, fingerprint)));
            }
            (plans, declined)
        });
        let (plans, declined) = match planned {
            Ok(p) => p,
            Err(fault) => return Box::pin(fut::ready(Err(fault))),
        };
        let writer = self.links.writer.clone();
        let root = self.workspace.root().to_path_buf();
        let by = msg.by;
        let work = async move {
            let mut written = Vec::new();
            let mut declined = declined;
            for (plan, fingerprint) in plans {
                let path = root.join(&plan.file);
                let op = match &plan.text {
                    Some(text) => WriteOp::Create {
                        content: text.clone(),
                        directory: false,
                        overwrite: true,
                    },
                    None => WriteOp::Delete { recursive: false },
                };
                let write = Write {
                    path,
                    expected: fingerprint,
                    op,
                };
                match writer.send(write).await {
                    Ok(Ok(_)) => written.push(plan),
                    Ok(Err(e)) => declined.extend(plan.reverted.iter().map(|r| Declined {
                        change: r.change,
                        hunk: r.hunk,
                        file: plan.file.clone(),
                        why: format!("the write was refused: {e}"),
                    })),
                    Err(_) => declined.extend(plan.reverted.iter().map(|r| Declined {
                        change: r.change,
                        hunk: r.hunk,
                        file: plan.file.clone(),
                        why: "the workspace writer restarted; nothing was changed".into(),
                    })),
                }
            }
            (written, declined)
        };
        Box::pin(
            fut::wrap_future::<_, Self>(work).map(move |(written, declined), act, ctx| {
                let mut report = UndoReport {
                    undone: Vec::new(),
                    declined,
                };
                for plan in &written {
                    act.ledger.undone(plan, &by);
                    report
                        .undone
                        .extend(plan.reverted.iter().map(|r| UndoneHunk {
                            change: r.change,
                            hunk: r.hunk,
                            file: plan.file.clone(),
                            session: r.session.clone(),
                            agent: r.agent.clone(),
                            from: r.lines.0,
                            to: r.lines.1,
                        }));
                }
                for plan in &written {
                    act.links.activity.do_send(RecordLifecycle {
                        event: LifecycleEvent::ChangesUndone,
                        session_id: plan
                            .reverted
                            .first()
                            .map(|r| SessionId::from(r.session.as_str())),
                        detail: format!(
                            "{} undid {} of {}",
                            by.who().unwrap_or("the person"),
                            hunks(plan.reverted.len()),
                            plan.file
                        ),
                    });
                }
                if !written.is_empty() {
                    act.changed(None, ctx);
                    for plan in &written {
                        act.tell_editor(&plan.file, true);
                    }
                }
                Ok(report)
            }),
        )
    }
}

/// "1 hunk", "3 hunks".
fn hunks(n: usize) -> String {
    if n == 1 {
        "1 hunk".to_string()
    } else {
        format!("{n} hunks")
    }
}

impl Handler<FlushChanges> for ChangesActor {
    type Result = ResponseFuture<()>;
    fn handle(&mut self, _: FlushChanges, ctx: &mut Context<Self>) -> Self::Result {
        if let Some(handle) = self.settling.take() {
            ctx.cancel_future(handle);
        }
        let written = self
            .file
            .as_ref()
            .map(|f| f.save_and_wait(self.ledger.clone()));
        Box::pin(async move {
            if let Some(written) = written {
                let _ = written.await;
            }
        })
    }
}

impl Handler<GetChangesStatus> for ChangesActor {
    type Result = Result<ChangesStatus, ActorFault>;
    fn handle(&mut self, _: GetChangesStatus, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| ChangesStatus {
            open_hunks: act.ledger.changes().map(|c| c.open().count()).sum(),
            changes: act.ledger.changes().count(),
            dropped: act.ledger.dropped,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the change sets read is the workspace's regular files: a FIFO is refused at
    /// once (not waited on), a link out of the workspace is not followed (its target's
    /// text never reaches the change sets), a missing file is no text.
    #[test]
    fn only_regular_files_beneath_the_root_are_read() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "TOPSECRET\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = Root::open(dir.path()).unwrap();
        let at = |name: &str| root.path().join(name);
        std::fs::write(at("plain.txt"), "text\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), at("leak.txt")).unwrap();
        let fifo = std::ffi::CString::new(at("pipe.txt").to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);

        assert_eq!(
            read_text(&root, &at("plain.txt"), 1024),
            Ok(Some("text\n".into()))
        );
        assert_eq!(read_text(&root, &at("missing.txt"), 1024), Ok(None));
        let leak = read_text(&root, &at("leak.txt"), 1024);
        assert!(leak.is_err(), "{leak:?}");
        let pipe = read_text(&root, &at("pipe.txt"), 1024);
        assert!(pipe.as_ref().is_err_and(|e| e.contains("FIFO")), "{pipe:?}");
        let large = read_text(&root, &at("plain.txt"), 2);
        assert!(large.is_err(), "{large:?}");
    }
}
