//! Dashboard actor: what the browser page needs beyond the status every actor already
//! reports. It owns the sign-ins ([`logins`]), the pages watching (their event
//! streams), the diffs shown in the page while no editor is connected ([`diffs`]), the
//! tool requests of Claude tasks waiting for approval ([`approvals`]), the reviews
//! agents presented, and an hour of tool-call samples for the charts ([`samples`]).
//!
//! It sends nothing to other actors: the HTTP layer and the tools ask it and act on
//! the answers (the page's clicks reach the editor and the agents from there).

pub mod approvals;
pub mod diffs;
pub mod logins;
pub mod samples;
mod waiting;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use super::activity_log::now_ms;
use super::event_stream::{EventSender, Offered};
use super::messages::activity::RecordLifecycle;
use super::messages::dashboard::{AskApproval, ChangesUpdated};
use super::messages::editor::CloseSessionDiffs;
use super::messages::session::SessionId;
use super::messages::watch::WorkspaceChanged;
use super::supervise::{guard, restarted};
use crate::metrics::Metrics;
use crate::persist::snapshot_file::SnapshotFile;
use crate::review::Draft;
use approvals::{ApprovalView, PendingApprovals};
use diffs::{DiffAnswer, DiffCheck, DiffOffer, DiffView, PendingDiffs};
pub use logins::LoginRefused;
use logins::{LoginLimits, Logins, SavedSession};
use samples::{Sample, Sampler};

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "dashboard";

/// How often the actor looks after what it holds (closed pages, abandoned diffs).
const TICK: Duration = Duration::from_secs(1);
/// How much time one tool-call sample covers.
pub const SAMPLE_INTERVAL: Duration = Duration::from_secs(10);
/// Ticks between two metric samples.
const SAMPLE_EVERY_TICKS: u64 = SAMPLE_INTERVAL.as_secs() / TICK.as_secs();
/// Events queued for one page; a page that falls this far behind is dropped.
const STREAM_QUEUE: usize = 256;

/// Limits from `[ui]`.
#[derive(Debug, Clone)]
pub struct DashboardConfig {
    pub logins: LoginLimits,
    /// How long diffs wait in the page after the last page closed.
    pub diff_wait: Duration,
    /// Most diffs waiting in the page at once.
    pub max_pending_diffs: usize,
    /// Reviews kept (oldest dropped).
    pub max_reviews: usize,
    /// Pages watching at once.
    pub max_streams: usize,
    /// Where signed-in browsers are kept across restarts (`None`: memory only).
    pub sessions_path: Option<PathBuf>,
    /// Where the presented reviews are kept across restarts (`None`: memory only).
    pub reviews_path: Option<PathBuf>,
}

/// A review an agent presented.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PresentedReview {
    pub id: u64,
    pub session_id: SessionId,
    /// Unix ms.
    pub created_at: u64,
    pub base_ref: Option<String>,
    pub draft: Draft,
}

/// A review as the history lists it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewHead {
    pub id: u64,
    pub title: String,
    pub session_id: SessionId,
    pub created_at: u64,
    pub references: usize,
}

/// What the page section of `/status` shows.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageStatus {
    /// Browsers signed in.
    pub signed_in: usize,
    /// Pages with their event stream open.
    pub watching: usize,
    pub pending_diffs: usize,
    pub pending_approvals: usize,
    pub reviews: usize,
}

/// Why the page cannot take something.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageRefusal {
    /// No page watches: nobody would see it.
    #[error("no browser page is watching the bridge")]
    NobodyWatching,
    /// `ui.max_pending_diffs` diffs wait already.
    #[error("{0} diffs wait in the browser page already (ui.max_pending_diffs)")]
    TooManyDiffs(usize),
    /// `ui.max_streams` pages watch already.
    #[error("{0} browser pages watch already (ui.max_streams); close one")]
    TooManyPages(usize),
}

/// A new one-time sign-in code.
#[derive(Debug, Message)]
#[rtype(result = "Option<String>")]
pub struct IssueLoginCode;

/// Exchange a code for a session cookie.
#[derive(Debug, Message)]
#[rtype(result = "Result<String, LoginRefused>")]
pub struct RedeemLoginCode(pub String);

/// Is this cookie a signed-in browser?
#[derive(Debug, Message)]
#[rtype(result = "bool")]
pub struct CheckBrowser(pub String);

/// End the browser session this cookie names.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct SignOut(pub String);

/// Open a page's event stream (JSON lines naming what changed) for the browser the
/// cookie signs in; the stream ends when that sign-in does.
#[derive(Debug, Message)]
#[rtype(result = "Result<mpsc::Receiver<Arc<str>>, PageRefusal>")]
pub struct WatchPage {
    pub cookie: String,
    /// The page's connection, shut down if it falls behind.
    pub socket: Option<std::sync::Weak<std::net::TcpStream>>,
}

/// A page's event stream and the sign-in it belongs to.
struct Stream {
    cookie: String,
    events: EventSender,
}

/// Show a diff in the page; the receiver gets the decision.
#[derive(Debug, Message)]
#[rtype(result = "Result<oneshot::Receiver<DiffAnswer>, PageRefusal>")]
pub struct OfferDiff(pub DiffOffer);

/// The language server's check of the offer with this `check_token`: shown with it
/// (nothing when it was decided meanwhile).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct CheckedDiff {
    pub check_token: u64,
    pub check: DiffCheck,
}

/// Reject a session's diff in tab `tab` (the agent's `close_tab`); how many.
#[derive(Debug, Message)]
#[rtype(result = "usize")]
pub struct CloseDiffTab {
    pub session: SessionId,
    pub tab: String,
}

/// The diffs waiting in the page.
#[derive(Debug, Message)]
#[rtype(result = "Vec<DiffView>")]
pub struct ListDiffs;

/// The person's decision on diff `id`: accepted (with `content`, their edit, or the
/// proposal as it is when `None`) or rejected; false when it no longer waits.
#[derive(Debug, Message)]
#[rtype(result = "bool")]
pub struct DecideDiff {
    pub id: u64,
    pub accept: bool,
    pub content: Option<String>,
}

/// At most this many tool requests wait in the page; more are not shown (their askers
/// fall back to their own default).
pub const MAX_PENDING_APPROVALS: usize = 32;

/// The tool requests waiting for approval.
#[derive(Debug, Message)]
#[rtype(result = "Vec<ApprovalView>")]
pub struct ListApprovals;

/// Agent `0` has moved on (a hook of its later work arrived), so the dialog it showed
/// was answered in its terminal: its requests leave the page.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct WithdrawApprovals(pub SessionId);

/// The person's decision on request `id`; false when it no longer waits.
#[derive(Debug, Message)]
#[rtype(result = "bool")]
pub struct DecideApproval {
    pub id: u64,
    pub allow: bool,
}

/// Keep a presented review; answers its id and whether a page is watching.
#[derive(Debug, Message)]
#[rtype(result = "Option<(u64, bool)>")]
pub struct AddReview {
    pub session_id: SessionId,
    pub base_ref: Option<String>,
    pub draft: Draft,
}

/// The review history, newest first.
#[derive(Debug, Message)]
#[rtype(result = "Vec<ReviewHead>")]
pub struct ListReviews;

/// One review.
#[derive(Debug, Message)]
#[rtype(result = "Option<Arc<PresentedReview>>")]
pub struct GetReview(pub u64);

/// The tool-call samples, oldest first.
#[derive(Debug, Message)]
#[rtype(result = "Vec<Sample>")]
pub struct GetSamples;

/// Write the signed-in browsers and the reviews now and answer once they are on disk
/// (shutdown).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct FlushSessions;

/// Counts for `/status`.
#[derive(Debug, Message)]
#[rtype(result = "PageStatus")]
pub struct GetPageStatus;

/// Holds what the browser page shows and waits on.
pub struct Dashboard {
    config: DashboardConfig,
    logins: Logins,
    streams: Vec<Stream>,
    /// Since when no page has watched (`None`: one watches).
    unwatched_since: Option<Instant>,
    diffs: PendingDiffs,
    approvals: PendingApprovals,
    reviews: VecDeque<Arc<PresentedReview>>,
    next_review: u64,
    sampler: Sampler,
    ticks: u64,
    /// Where signed-in browsers are written (absent: memory only).
    session_file: Option<SnapshotFile<Vec<logins::SavedSession>>>,
    /// Where the reviews are written when one is added (absent: memory only).
    review_file: Option<SnapshotFile<Vec<Arc<PresentedReview>>>>,
    activity: Recipient<RecordLifecycle>,
    metrics: Arc<Metrics>,
}

/// What an earlier run kept in `path` (`what` it is, for the log); nothing when it is
/// missing or unreadable.
fn load<T: serde::de::DeserializeOwned>(path: &std::path::Path, what: &str) -> Vec<T> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            tracing::warn!(path = %path.display(), %e, "ignoring an unreadable file of {what}");
            Vec::new()
        }),
        Err(_) => Vec::new(),
    }
}

impl Dashboard {
    pub fn new(
        config: DashboardConfig,
        activity: Recipient<RecordLifecycle>,
        metrics: Arc<Metrics>,
    ) -> Self {
        let saved = config
            .sessions_path
            .as_deref()
            .map(|p| load::<SavedSession>(p, "signed-in browsers"))
            .unwrap_or_default();
        let mut reviews: VecDeque<Arc<PresentedReview>> = config
            .reviews_path
            .as_deref()
            .map(|p| load::<Arc<PresentedReview>>(p, "reviews"))
            .unwrap_or_default()
            .into_iter()
            .take(config.max_reviews)
            .collect();
        reviews
            .make_contiguous()
            .sort_by_key(|r| std::cmp::Reverse(r.id));
        let next_review = reviews.front().map_or(0, |r| r.id);
        let review_file = config
            .reviews_path
            .clone()
            .map(|path| SnapshotFile::start(path, "the presented reviews"));
        let logins = Logins::restored(config.logins, saved, Instant::now(), now_ms());
        let session_file = config
            .sessions_path
            .clone()
            .map(|path| SnapshotFile::start(path, "the signed-in browsers"));
        if logins.sessions() > 0 {
            tracing::info!(
                browsers = logins.sessions(),
                "browsers signed in to the page before the restart stay signed in"
            );
        }
        Self {
            logins,
            config,
            streams: Vec::new(),
            unwatched_since: Some(Instant::now()),
            diffs: PendingDiffs::default(),
            approvals: PendingApprovals::default(),
            reviews,
            next_review,
            sampler: Sampler::new(Arc::clone(&metrics)),
            ticks: 0,
            session_file,
            review_file,
            activity,
            metrics,
        }
    }

    /// Tells every page that `kind` changed; a page that does not keep up is dropped.
    fn broadcast(&mut self, event: Value) {
        let line: Arc<str> = Arc::from(event.to_string());
        self.streams.retain(|s| match s.events.offer(&line) {
            Offered::Queued => true,
            Offered::FellBehind => {
                tracing::warn!(
                    queued = STREAM_QUEUE,
                    "dropping a browser page's event stream: it fell behind (its connection is closed)"
                );
                false
            }
            Offered::Gone => false,
        });
        self.note_watchers();
    }

    /// Forgets closed pages and those whose sign-in ended, and remembers when the last
    /// one went.
    fn note_watchers(&mut self) {
        let now = Instant::now();
        let logins = &self.logins;
        self.streams
            .retain(|s| !s.events.is_closed() && logins.is_live(&s.cookie, now));
        match (self.streams.is_empty(), self.unwatched_since) {
            (true, None) => self.unwatched_since = Some(Instant::now()),
            (false, Some(_)) => self.unwatched_since = None,
            _ => {}
        }
    }

    /// Writes the signed-in browsers when they changed, off the actor's thread.
    fn save_sessions(&mut self, now: Instant) {
        if let Some(file) = &self.session_file {
            if let Some(sessions) = self.logins.to_save(now, now_ms()) {
                file.save(sessions);
            }
        }
    }

    fn tick(&mut self) {
        let now = Instant::now();
        self.logins.expire(now);
        self.save_sessions(now);
        self.note_watchers();
        if self.diffs.forget_abandoned() > 0 {
            self.broadcast(json!({ "kind": "diffs" }));
        }
        if self.approvals.forget_abandoned() > 0 {
            self.broadcast(json!({ "kind": "approvals" }));
        }
        let unwatched_long = self
            .unwatched_since
            .is_some_and(|since| now.duration_since(since) >= self.config.diff_wait);
        if unwatched_long && !self.diffs.is_empty() {
            let n = self.settle_diffs(|_| true, |_| DiffAnswer::Unanswered);
            tracing::warn!(
                diffs = n,
                waited_ms = self.config.diff_wait.as_millis() as u64,
                "no browser page watched: handing the diffs back to their agents (they ask in the terminal)"
            );
        }
        self.ticks += 1;
        if self.ticks.is_multiple_of(SAMPLE_EVERY_TICKS) {
            self.sampler.sample(now_ms());
        }
    }

    fn add_review(&mut self, msg: AddReview) -> (u64, bool) {
        self.next_review += 1;
        let id = self.next_review;
        if self.reviews.len() >= self.config.max_reviews {
            self.reviews.pop_back();
        }
        self.reviews.push_front(Arc::new(PresentedReview {
            id,
            session_id: msg.session_id,
            created_at: now_ms(),
            base_ref: msg.base_ref,
            draft: msg.draft,
        }));
        if let Some(file) = &self.review_file {
            // Shared, not copied: the file's own thread writes them out.
            file.save(self.reviews.iter().cloned().collect());
        }
        self.broadcast(json!({ "kind": "reviews", "id": id }));
        (id, !self.streams.is_empty())
    }
}

impl Actor for Dashboard {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(TICK, |act, ctx| {
            let _ = guard(NAME, act, ctx, |act, _| act.tick());
        });
    }
}

impl Supervised for Dashboard {
    fn restarting(&mut self, _: &mut Context<Self>) {
        // Everything is kept (sign-ins, waiting diffs and approvals, reviews); the
        // tick timer died with the old context and `started` arms it again.
        restarted(
            NAME,
            &self.metrics,
            &self.activity,
            "kept sign-ins, waiting diffs, approvals and reviews",
        );
    }
}

impl Handler<IssueLoginCode> for Dashboard {
    type Result = Option<String>;
    fn handle(&mut self, _: IssueLoginCode, ctx: &mut Context<Self>) -> Option<String> {
        guard(NAME, self, ctx, |act, _| act.logins.issue(Instant::now())).ok()
    }
}

impl Handler<RedeemLoginCode> for Dashboard {
    type Result = Result<String, LoginRefused>;
    fn handle(&mut self, msg: RedeemLoginCode, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            let now = Instant::now();
            let cookie = act.logins.redeem(&msg.0, now);
            // Kept at once, so a restart right after signing in keeps the browser.
            act.save_sessions(now);
            cookie
        })
        .unwrap_or(Err(LoginRefused::Unknown))
    }
}

impl Handler<CheckBrowser> for Dashboard {
    type Result = bool;
    fn handle(&mut self, msg: CheckBrowser, ctx: &mut Context<Self>) -> bool {
        guard(NAME, self, ctx, |act, _| {
            act.logins.check(&msg.0, Instant::now())
        })
        .unwrap_or(false)
    }
}

impl Handler<SignOut> for Dashboard {
    type Result = ();
    fn handle(&mut self, msg: SignOut, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            act.logins.end(&msg.0);
            act.note_watchers();
            act.save_sessions(Instant::now());
        });
    }
}

impl Handler<WatchPage> for Dashboard {
    type Result = Result<mpsc::Receiver<Arc<str>>, PageRefusal>;
    fn handle(&mut self, msg: WatchPage, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            act.note_watchers();
            if act.streams.len() >= act.config.max_streams {
                return Err(PageRefusal::TooManyPages(act.streams.len()));
            }
            let (tx, rx) = EventSender::channel(STREAM_QUEUE, msg.socket);
            act.streams.push(Stream {
                cookie: msg.cookie,
                events: tx,
            });
            act.unwatched_since = None;
            Ok(rx)
        })
        .unwrap_or(Err(PageRefusal::NobodyWatching))
    }
}

impl Handler<OfferDiff> for Dashboard {
    type Result = Result<oneshot::Receiver<DiffAnswer>, PageRefusal>;
    fn handle(&mut self, msg: OfferDiff, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| {
            act.note_watchers();
            if act.streams.is_empty() {
                return Err(PageRefusal::NobodyWatching);
            }
            act.diffs.forget_abandoned();
            let same_tab = act.diffs.any(|d| d.tab_name == msg.0.tab);
            if act.diffs.len() >= act.config.max_pending_diffs && !same_tab {
                return Err(PageRefusal::TooManyDiffs(act.diffs.len()));
            }
            // A new diff in the same tab rejects the old one.
            act.diffs
                .settle(|d| d.tab_name == msg.0.tab, DiffAnswer::Rejected);
            let now = now_ms();
            let answer = act.diffs.add(|id| msg.0.into_view(id, now));
            act.broadcast(json!({ "kind": "diffs" }));
            Ok(answer)
        })
        .unwrap_or(Err(PageRefusal::NobodyWatching))
    }
}

impl Dashboard {
    /// Answers the diffs `which` selects and tells the pages; how many.
    fn settle_diffs(
        &mut self,
        which: impl Fn(&DiffView) -> bool,
        answer: impl Fn(&DiffView) -> DiffAnswer,
    ) -> usize {
        let n = self.diffs.settle_with(which, answer);
        if n > 0 {
            self.broadcast(json!({ "kind": "diffs" }));
        }
        n
    }

    /// Rejects the diffs `which` selects; how many.
    fn reject(&mut self, which: impl Fn(&DiffView) -> bool) -> usize {
        self.settle_diffs(which, |_| DiffAnswer::Rejected)
    }
}

impl Handler<CheckedDiff> for Dashboard {
    type Result = ();
    fn handle(&mut self, msg: CheckedDiff, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            let token = msg.check_token;
            let mut check = Some(msg.check);
            let shown = act.diffs.update(
                |d| token != 0 && d.check_token == token,
                |d| d.check = check.take(),
            );
            if shown > 0 {
                act.broadcast(json!({ "kind": "diffs" }));
            }
        });
    }
}

impl Handler<CloseDiffTab> for Dashboard {
    type Result = usize;
    fn handle(&mut self, msg: CloseDiffTab, ctx: &mut Context<Self>) -> usize {
        guard(NAME, self, ctx, |act, _| {
            act.reject(|d| d.session_id == msg.session && d.tab_name == msg.tab)
        })
        .unwrap_or(0)
    }
}

impl Handler<CloseSessionDiffs> for Dashboard {
    type Result = usize;
    fn handle(&mut self, msg: CloseSessionDiffs, ctx: &mut Context<Self>) -> usize {
        guard(NAME, self, ctx, |act, _| {
            act.reject(|d| d.session_id == msg.session_id)
        })
        .unwrap_or(0)
    }
}

impl Handler<ListDiffs> for Dashboard {
    type Result = Vec<DiffView>;
    fn handle(&mut self, _: ListDiffs, _: &mut Context<Self>) -> Vec<DiffView> {
        self.diffs.views()
    }
}

impl Handler<DecideDiff> for Dashboard {
    type Result = bool;
    fn handle(&mut self, msg: DecideDiff, ctx: &mut Context<Self>) -> bool {
        guard(NAME, self, ctx, |act, _| {
            let answer = |d: &DiffView| match (msg.accept, &msg.content) {
                (true, Some(text)) => DiffAnswer::Saved(text.clone()),
                (true, None) => DiffAnswer::Saved(d.proposed.clone()),
                (false, _) => DiffAnswer::Rejected,
            };
            act.settle_diffs(|d| d.id == msg.id, answer) > 0
        })
        .unwrap_or(false)
    }
}

impl Handler<AskApproval> for Dashboard {
    type Result = MessageResult<AskApproval>;
    fn handle(&mut self, msg: AskApproval, ctx: &mut Context<Self>) -> Self::Result {
        let decision = guard(NAME, self, ctx, |act, _| {
            act.note_watchers();
            if msg.only_if_watched && act.streams.is_empty() {
                // Nobody would see it: the receiver closes at once.
                return oneshot::channel().1;
            }
            act.approvals.forget_abandoned();
            if act.approvals.len() >= MAX_PENDING_APPROVALS {
                // The asker falls back to its own default (the terminal's dialog, or
                // a task's denial) instead of growing the list without bound.
                tracing::warn!(
                    waiting = act.approvals.len(),
                    tool = %msg.tool,
                    "approval not shown in the page: too many wait already"
                );
                return oneshot::channel().1;
            }
            let now = now_ms();
            let rx = act.approvals.add(|id| approvals::view_of(msg, id, now));
            act.broadcast(json!({ "kind": "approvals" }));
            rx
        });
        // A fault: the sender is gone, so the task denies at once.
        MessageResult(decision.unwrap_or_else(|_| oneshot::channel().1))
    }
}

impl Handler<ChangesUpdated> for Dashboard {
    type Result = ();
    fn handle(&mut self, _: ChangesUpdated, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            act.broadcast(json!({ "kind": "changes" }));
        });
    }
}

impl Handler<WithdrawApprovals> for Dashboard {
    type Result = ();
    fn handle(&mut self, msg: WithdrawApprovals, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            let n = act
                .approvals
                .withdraw(|a| a.session.as_ref() == Some(&msg.0));
            if n > 0 {
                tracing::info!(session = %msg.0, n, "answered in the terminal: approvals leave the page");
                act.broadcast(json!({ "kind": "approvals" }));
            }
        });
    }
}

impl Handler<ListApprovals> for Dashboard {
    type Result = Vec<ApprovalView>;
    fn handle(&mut self, _: ListApprovals, _: &mut Context<Self>) -> Vec<ApprovalView> {
        // A dialog answered in the terminal ended its hook: it no longer waits here.
        self.approvals.forget_abandoned();
        self.approvals.views()
    }
}

impl Handler<DecideApproval> for Dashboard {
    type Result = bool;
    fn handle(&mut self, msg: DecideApproval, ctx: &mut Context<Self>) -> bool {
        guard(NAME, self, ctx, |act, _| {
            let decided = act.approvals.settle(|a| a.id == msg.id, msg.allow) > 0;
            if decided {
                act.broadcast(json!({ "kind": "approvals" }));
            }
            decided
        })
        .unwrap_or(false)
    }
}

impl Handler<AddReview> for Dashboard {
    type Result = Option<(u64, bool)>;
    fn handle(&mut self, msg: AddReview, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| act.add_review(msg)).ok()
    }
}

impl Handler<ListReviews> for Dashboard {
    type Result = Vec<ReviewHead>;
    fn handle(&mut self, _: ListReviews, _: &mut Context<Self>) -> Vec<ReviewHead> {
        self.reviews
            .iter()
            .map(|r| ReviewHead {
                id: r.id,
                title: r.draft.title.clone(),
                session_id: r.session_id.clone(),
                created_at: r.created_at,
                references: r.draft.refs.len(),
            })
            .collect()
    }
}

impl Handler<GetReview> for Dashboard {
    type Result = Option<Arc<PresentedReview>>;
    fn handle(&mut self, msg: GetReview, _: &mut Context<Self>) -> Self::Result {
        self.reviews.iter().find(|r| r.id == msg.0).cloned()
    }
}

impl Handler<GetSamples> for Dashboard {
    type Result = Vec<Sample>;
    fn handle(&mut self, _: GetSamples, _: &mut Context<Self>) -> Vec<Sample> {
        self.sampler.samples()
    }
}

impl Handler<FlushSessions> for Dashboard {
    type Result = ResponseFuture<()>;
    fn handle(&mut self, _: FlushSessions, _: &mut Context<Self>) -> Self::Result {
        let written = self
            .session_file
            .as_ref()
            .map(|file| file.save_and_wait(self.logins.snapshot(Instant::now(), now_ms())));
        let reviews = self
            .review_file
            .as_ref()
            .map(|file| file.save_and_wait(self.reviews.iter().cloned().collect()));
        Box::pin(async move {
            for written in [written, reviews].into_iter().flatten() {
                let _ = written.await;
            }
        })
    }
}

impl Handler<GetPageStatus> for Dashboard {
    type Result = MessageResult<GetPageStatus>;
    fn handle(&mut self, _: GetPageStatus, _: &mut Context<Self>) -> Self::Result {
        MessageResult(PageStatus {
            signed_in: self.logins.sessions(),
            watching: self
                .streams
                .iter()
                .filter(|s| !s.events.is_closed())
                .count(),
            pending_diffs: self.diffs.len(),
            pending_approvals: self.approvals.len(),
            reviews: self.reviews.len(),
        })
    }
}

impl Handler<WorkspaceChanged> for Dashboard {
    type Result = ();
    fn handle(&mut self, msg: WorkspaceChanged, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, _| {
            // A review whose files changed may have moved references: its page asks again.
            let moved: Vec<u64> = act
                .reviews
                .iter()
                .filter(|r| {
                    msg.changes
                        .iter()
                        .any(|c| r.draft.bases.contains_key(&c.path))
                })
                .map(|r| r.id)
                .collect();
            if !moved.is_empty() {
                act.broadcast(json!({ "kind": "reviewsMoved", "ids": moved }));
            }
        });
    }
}

#[cfg(feature = "fault-injection")]
crate::actors::fault::fault_handlers!(Dashboard, NAME);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actors::messages::dashboard::Asker;
    use crate::actors::test_support::Capture;

    fn offer(tab: &str, proposed: &str) -> OfferDiff {
        OfferDiff(DiffOffer {
            session: SessionId::from("s-1"),
            tab: tab.into(),
            old_path: "/w/a".into(),
            new_path: "/w/a".into(),
            original: "old\n".into(),
            proposed: proposed.into(),
            check_token: tab.len() as u64,
        })
    }

    fn config() -> DashboardConfig {
        DashboardConfig {
            logins: LoginLimits {
                code_ttl: Duration::from_secs(60),
                idle_ttl: Duration::from_secs(600),
                max_sessions: 2,
            },
            diff_wait: Duration::from_secs(30),
            max_pending_diffs: 4,
            max_reviews: 2,
            max_streams: 2,
            sessions_path: None,
            reviews_path: None,
        }
    }

    #[actix_rt::test]
    async fn a_decision_reaches_the_agent_once_with_the_edit_or_the_proposal() {
        let (activity, _rx) = Capture::start();
        let d = Dashboard::new(config(), activity, Arc::new(Metrics::new())).start();
        let unwatched = d.send(offer("t", "new\n")).await.unwrap();
        assert_eq!(unwatched.unwrap_err(), PageRefusal::NobodyWatching);
        let code = d.send(IssueLoginCode).await.unwrap().unwrap();
        let cookie = d.send(RedeemLoginCode(code)).await.unwrap().unwrap();
        let _page = d
            .send(WatchPage {
                cookie,
                socket: None,
            })
            .await
            .unwrap()
            .unwrap();

        let as_proposed = d.send(offer("a", "proposed\n")).await.unwrap().unwrap();
        let edited = d.send(offer("bb", "proposed\n")).await.unwrap().unwrap();
        let rejected = d.send(offer("ccc", "proposed\n")).await.unwrap().unwrap();
        // A check lands on its own offer only.
        let check = DiffCheck {
            summary: "adds 1 error: E".into(),
            errors_added: 1,
            added: vec!["1:1 Error: E".into()],
        };
        d.send(CheckedDiff {
            check_token: 2,
            check: check.clone(),
        })
        .await
        .unwrap();
        let checks: Vec<Option<DiffCheck>> = d
            .send(ListDiffs)
            .await
            .unwrap()
            .into_iter()
            .map(|v| v.check)
            .collect();
        assert_eq!(checks, vec![None, Some(check), None]);
        let ids: Vec<u64> = d
            .send(ListDiffs)
            .await
            .unwrap()
            .iter()
            .map(|v| v.id)
            .collect();
        let decide = |id, accept, content: Option<&str>| DecideDiff {
            id,
            accept,
            content: content.map(str::to_string),
        };
        assert!(d.send(decide(ids[0], true, None)).await.unwrap());
        assert!(d.send(decide(ids[1], true, Some("mine\n"))).await.unwrap());
        assert!(d
            .send(decide(ids[2], false, Some("ignored")))
            .await
            .unwrap());
        assert!(
            !d.send(decide(ids[0], false, None)).await.unwrap(),
            "decided once"
        );
        assert_eq!(
            as_proposed.await,
            Ok(DiffAnswer::Saved("proposed\n".into()))
        );
        assert_eq!(edited.await, Ok(DiffAnswer::Saved("mine\n".into())));
        assert_eq!(rejected.await, Ok(DiffAnswer::Rejected));
        assert!(d.send(ListDiffs).await.unwrap().is_empty());
    }

    #[actix_rt::test]
    async fn approvals_wait_up_to_the_cap_and_an_abandoned_one_frees_its_place() {
        let (activity, _rx) = Capture::start();
        let d = Dashboard::new(config(), activity, Arc::new(Metrics::new())).start();
        let ask = |n: usize| AskApproval {
            asker: Asker::Agent {
                session: SessionId::from(format!("s-{n}").as_str()),
                agent: format!("agent {n}"),
            },
            tool: "Bash".into(),
            input: json!({ "command": "true" }),
            timeout: Duration::from_secs(60),
            only_if_watched: false,
        };
        let mut waiting = Vec::new();
        for n in 0..MAX_PENDING_APPROVALS {
            waiting.push(d.send(ask(n)).await.unwrap());
        }
        let mut refused = d.send(ask(99)).await.unwrap();
        assert_eq!(
            d.send(ListApprovals).await.unwrap().len(),
            MAX_PENDING_APPROVALS,
            "one past the cap is not listed"
        );
        assert!(matches!(
            refused.try_recv(),
            Err(oneshot::error::TryRecvError::Closed)
        ));
        drop(waiting.pop());
        let mut admitted = d.send(ask(100)).await.unwrap();
        assert!(matches!(
            admitted.try_recv(),
            Err(oneshot::error::TryRecvError::Empty)
        ));
        assert_eq!(
            d.send(ListApprovals).await.unwrap().len(),
            MAX_PENDING_APPROVALS
        );
    }
}
