//! The Claims actor: keeps the file claims ([`crate::claims`]), answers whether a write
//! may happen (for the bridge's write tools and for the CLI's Edit/Write through the
//! pre-tool hook), expires claims, ends those of agents gone for good, keeps them across
//! restarts (`claims.json` in the workspace's state directory, 0600), and tells the
//! editor (`bridge/claimsChanged`) and the timeline about every change.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use serde_json::json;

use super::messages::activity::{LifecycleEvent, RecordLifecycle};
use super::messages::automation::BridgeEvent;
pub use super::messages::claims::{AgentGone, ClaimHolders, ClaimsLink, ClaimsMove};
use super::messages::editor::NotifyEditor;
use super::messages::session::SessionId;
use super::supervise::{guard, restarted, ActorFault};
use crate::automation::Event;
use crate::coordination::claims::{in_workspace, Claim, ClaimError, ClaimTable, Holder};
use crate::metrics::Metrics;
use crate::persist::snapshot_file::SnapshotFile;

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "claims";

/// Claim files for `holder` (renewing the holder's own claim with the same patterns).
#[derive(Debug, Message)]
#[rtype(result = "Result<Result<Claim, ClaimError>, ActorFault>")]
pub struct ClaimFiles {
    pub holder: Holder,
    /// Workspace-relative paths or globs.
    pub patterns: Vec<String>,
    pub reason: String,
    /// How long the claim lasts.
    pub ttl: Duration,
}

/// Release `holder`'s claims: all with `paths = None`, else those naming or covering one
/// of `paths`. Answers the released claims.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<Claim>, ActorFault>")]
pub struct ReleaseFiles {
    pub holder: Holder,
    pub paths: Option<Vec<String>>,
}

/// Release the claim `id`, whoever holds it (the person, from the page).
#[derive(Debug, Message)]
#[rtype(result = "Result<Option<Claim>, ActorFault>")]
pub struct ReleaseClaim(pub u64);

/// Every claim held now, oldest first.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<Claim>, ActorFault>")]
pub struct ListClaims;

/// May the agent `by` (`None`: an agent the bridge cannot name) write `path`
/// (workspace-relative)? `Some(reason)` refuses, naming the holder; the refusal is
/// counted and recorded.
#[derive(Debug, Message)]
#[rtype(result = "Result<Option<String>, ActorFault>")]
pub struct CheckWrite {
    pub by: Option<SessionId>,
    /// How people see the writer (for the timeline and automation).
    pub agent: String,
    pub path: String,
    /// What tried (`Edit`, `createFile`), for the timeline.
    pub tool: String,
}

/// The claims of others that a shell command names (a word of it is a claimed path):
/// the holders' notes, for the model to read as context (a command is not refused).
#[derive(Debug, Message)]
#[rtype(result = "Result<Option<String>, ActorFault>")]
pub struct ClaimsNamedIn {
    pub by: Option<SessionId>,
    pub command: String,
}

/// Where the Claims actor reports.
pub struct ClaimsLinks {
    /// `bridge/claimsChanged` for the editor's status line.
    pub editor: Recipient<NotifyEditor>,
    /// Claims made, ended and refused writes.
    pub activity: Recipient<RecordLifecycle>,
    /// Refused writes (`onClaimRefused`), when a policy is loaded.
    pub automation: Option<Recipient<BridgeEvent>>,
    /// The sessions holding claims, after every change.
    pub holders: Recipient<ClaimHolders>,
}

/// The claims of one bridge.
pub struct ClaimsActor {
    table: ClaimTable,
    root: PathBuf,
    file: Option<SnapshotFile<ClaimTable>>,
    links: ClaimsLinks,
    metrics: Arc<Metrics>,
    expiry: Option<SpawnHandle>,
    /// Writes refused since start.
    refused: u64,
}

/// Unix ms now.
fn now_ms() -> u64 {
    super::activity_log::now_ms()
}

impl ClaimsActor {
    /// The claims kept at `path` (when given; claims of agents whose process is gone are
    /// dropped on load) for the workspace at `root`.
    pub fn new(
        root: PathBuf,
        path: Option<PathBuf>,
        links: ClaimsLinks,
        metrics: Arc<Metrics>,
    ) -> Self {
        let table = path
            .as_deref()
            .map(|p| load(p).restored(now_ms(), crate::lockfile::pid_alive))
            .unwrap_or_default();
        Self {
            table,
            root,
            file: None,
            links,
            metrics,
            expiry: None,
            refused: 0,
        }
        .persisting(path)
    }

    fn persisting(mut self, path: Option<PathBuf>) -> Self {
        self.file = path.map(|p| SnapshotFile::start(p, "the file claims"));
        self
    }

    /// Saves, tells the editor and the registry, re-arms the expiry timer.
    fn changed(&mut self, ctx: &mut Context<Self>) {
        if let Some(file) = &self.file {
            file.save(self.table.clone());
        }
        self.tell_holders();
        self.links.editor.do_send(NotifyEditor {
            method: crate::protocol::editor::BridgeNotification::ClaimsChanged,
            params: json!({ "claims": views(self.table.list(), now_ms()) }),
        });
        self.arm_expiry(ctx);
    }

    /// Tells the registry which sessions hold claims.
    fn tell_holders(&self) {
        let now = now_ms();
        let mut holders: Vec<SessionId> = self
            .table
            .list()
            .iter()
            // One past its end (the expiry timer late after a suspend) holds nothing.
            .filter(|c| c.expires_ms > now)
            .filter_map(|c| match &c.holder {
                Holder::Agent { session, .. } => Some(session.clone()),
                _ => None,
            })
            .collect();
        holders.sort();
        holders.dedup();
        self.links.holders.do_send(ClaimHolders(holders));
    }

    fn arm_expiry(&mut self, ctx: &mut Context<Self>) {
        if let Some(h) = self.expiry.take() {
            ctx.cancel_future(h);
        }
        if let Some(at) = self.table.next_expiry() {
            let wait = Duration::from_millis(at.saturating_sub(now_ms()));
            self.expiry = Some(ctx.run_later(wait, |act, ctx| {
                act.expiry = None;
                let gone = act.table.expire(now_ms());
                act.ended(&gone, "expired");
                act.changed(ctx);
            }));
        }
    }

    fn record(&self, event: LifecycleEvent, session: Option<&str>, detail: String) {
        self.links.activity.do_send(RecordLifecycle {
            event,
            session_id: session.map(SessionId::from),
            detail,
        });
    }

    fn ended(&self, claims: &[Claim], how: &str) {
        for c in claims {
            self.record(
                LifecycleEvent::ClaimEnded,
                holder_session(&c.holder),
                format!("{} {how}: {}", c.holder.describe(), c.patterns.join(", ")),
            );
        }
    }
}

/// The agent session holding a claim, if an agent does.
fn holder_session(holder: &Holder) -> Option<&str> {
    match holder {
        Holder::Agent { session, .. } => Some(session),
        Holder::Person => None,
    }
}

/// The claims as the editor, `/status`, the page and the tools show them.
pub fn views(claims: &[Claim], now_ms: u64) -> Vec<crate::coordination::claims::ClaimView> {
    claims.iter().map(|c| c.view(now_ms)).collect()
}

fn load(path: &Path) -> ClaimTable {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            tracing::warn!(path = %path.display(), %e, "ignoring an unreadable claims file");
            ClaimTable::default()
        }),
        Err(_) => ClaimTable::default(),
    }
}

impl Actor for ClaimsActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.tell_holders();
        self.arm_expiry(ctx);
    }
}

impl Supervised for ClaimsActor {
    fn restarting(&mut self, ctx: &mut Context<Self>) {
        self.expiry = None;
        self.arm_expiry(ctx);
        restarted(NAME, &self.metrics, &self.links.activity, "kept the claims");
    }
}

impl Handler<ClaimFiles> for ClaimsActor {
    type Result = Result<Result<Claim, ClaimError>, ActorFault>;
    fn handle(&mut self, msg: ClaimFiles, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, ctx| {
            let ttl = u64::try_from(msg.ttl.as_millis()).unwrap_or(u64::MAX);
            let patterns = msg
                .patterns
                .iter()
                .map(|p| in_workspace(&act.root, p))
                .collect::<Result<Vec<_>, _>>()?;
            let claim = act
                .table
                .claim(msg.holder, &patterns, &msg.reason, ttl, now_ms())?;
            act.record(
                LifecycleEvent::FilesClaimed,
                holder_session(&claim.holder),
                format!(
                    "{} claimed {} for {} min{}",
                    claim.holder.describe(),
                    claim.patterns.join(", "),
                    ttl.div_ceil(60_000),
                    if claim.reason.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", claim.reason)
                    }
                ),
            );
            act.changed(ctx);
            Ok(claim)
        })
    }
}

impl Handler<ReleaseFiles> for ClaimsActor {
    type Result = Result<Vec<Claim>, ActorFault>;
    fn handle(&mut self, msg: ReleaseFiles, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, ctx| {
            // A path outside the workspace names no claim: it releases nothing.
            let paths = msg.paths.as_ref().map(|ps| {
                ps.iter()
                    .filter_map(|p| in_workspace(&act.root, p).ok())
                    .collect::<Vec<_>>()
            });
            let gone = act.table.release(&msg.holder, paths.as_deref());
            if !gone.is_empty() {
                act.ended(&gone, "released");
                act.changed(ctx);
            }
            gone
        })
    }
}

impl Handler<ReleaseClaim> for ClaimsActor {
    type Result = Result<Option<Claim>, ActorFault>;
    fn handle(&mut self, msg: ReleaseClaim, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, ctx| {
            let gone = act.table.release_id(msg.0);
            if let Some(c) = &gone {
                act.ended(std::slice::from_ref(c), "released by the person");
                act.changed(ctx);
            }
            gone
        })
    }
}

impl Handler<ListClaims> for ClaimsActor {
    type Result = Result<Vec<Claim>, ActorFault>;
    fn handle(&mut self, _: ListClaims, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            let now = now_ms();
            act.table
                .list()
                .iter()
                .filter(|c| c.expires_ms > now)
                .cloned()
                .collect()
        })
    }
}

/// The holder a session id stands for when asking (its label does not matter for
/// comparisons).
fn asker(by: &Option<SessionId>) -> Option<Holder> {
    by.as_ref().map(|s| Holder::Agent {
        session: s.clone(),
        label: String::new(),
        pid: None,
    })
}

impl Handler<CheckWrite> for ClaimsActor {
    type Result = Result<Option<String>, ActorFault>;
    fn handle(&mut self, msg: CheckWrite, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            let now = now_ms();
            let asker = asker(&msg.by);
            let claim = act
                .table
                .blocking(&msg.path, asker.as_ref())
                .filter(|c| c.expires_ms > now)?;
            let text = claim.refusal(&msg.path, now);
            act.refused += 1;
            let holder = claim.holder.describe();
            act.record(
                LifecycleEvent::WriteRefused,
                msg.by.as_deref(),
                format!(
                    "{} of {} by {} refused: claimed by {holder}",
                    msg.tool, msg.path, msg.agent
                ),
            );
            if let Some(automation) = &act.links.automation {
                automation.do_send(BridgeEvent::Policy(Event::ClaimRefused {
                    session: msg.by.unwrap_or_else(|| SessionId::from("")),
                    agent: msg.agent,
                    holder,
                    file: msg.path,
                    tool: msg.tool,
                }));
            }
            Some(text)
        })
    }
}

impl Handler<ClaimsNamedIn> for ClaimsActor {
    type Result = Result<Option<String>, ActorFault>;
    fn handle(&mut self, msg: ClaimsNamedIn, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            if act.table.list().is_empty() {
                return None;
            }
            let now = now_ms();
            let asker = asker(&msg.by);
            let mut notes: Vec<String> = Vec::new();
            for path in crate::coordination::claims::command_paths(&act.root, &msg.command) {
                if let Some(c) = act
                    .table
                    .blocking(&path, asker.as_ref())
                    .filter(|c| c.expires_ms > now)
                {
                    let note = c.refusal(&path, now);
                    if !notes.contains(&note) {
                        notes.push(note);
                    }
                }
                if notes.len() >= 5 {
                    break;
                }
            }
            (!notes.is_empty()).then(|| {
                format!(
                    "ide-bridge: this command names claimed files. {} Avoid changing them \
                     with this command.",
                    notes.join(" ")
                )
            })
        })
    }
}

impl Handler<AgentGone> for ClaimsActor {
    type Result = ();
    fn handle(&mut self, msg: AgentGone, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| {
            let gone = act.table.release_session(&msg.0);
            if !gone.is_empty() {
                act.ended(&gone, "ended with its agent");
                act.changed(ctx);
            }
        });
    }
}

impl Handler<ClaimsMove> for ClaimsActor {
    type Result = ();
    fn handle(&mut self, msg: ClaimsMove, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| {
            let to = Holder::Agent {
                session: msg.to.clone(),
                label: msg.label,
                pid: msg.pid,
            };
            let moved = act.table.move_to(msg.from.as_deref(), msg.pid, to.clone());
            if moved > 0 {
                act.record(
                    LifecycleEvent::FilesClaimed,
                    Some(&msg.to),
                    format!(
                        "{moved} claim(s) now held by {} (the same agent)",
                        to.describe()
                    ),
                );
                act.changed(ctx);
            }
        });
    }
}

/// Status of the claims for `/status`.
#[derive(Debug, Message)]
#[rtype(result = "Result<serde_json::Value, ActorFault>")]
pub struct GetClaimsStatus;

impl Handler<GetClaimsStatus> for ClaimsActor {
    type Result = Result<serde_json::Value, ActorFault>;
    fn handle(&mut self, _: GetClaimsStatus, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            json!({
                "held": views(act.table.list(), now_ms()),
                "refusedWrites": act.refused,
            })
        })
    }
}
