//! The Watcher actor: watches the workspace and sends each debounce window's changes
//! ([`WorkspaceChanged`]) to its subscribers (the DiagnosticsActor and Automation).
//!
//! With kernel events (inotify, [`crate::watch::kernel`]) it watches every directory the walker
//! does not ignore, one non-recursive watch each, so ignored trees (`target/`,
//! `node_modules/`) cost nothing; plus `.git` and `.git/refs/heads` for commits and
//! branch switches. When the tree has more than `watch.max_directories` directories, or
//! the kernel refuses a watch (`fs.inotify.max_user_watches`), it says so in `/status`
//! and the log, and polls instead: every `watch.poll_interval_ms` it stats the files
//! the walker visits (at most `watch.max_polled_files`) and git's refs. Walks and scans
//! run on blocking threads, never on the actor's.

use std::collections::{HashSet, VecDeque};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde::Serialize;

use super::activity_log::{iso_now, ActivityLog};
use super::messages::watch::{FileChange, WorkspaceChanged};
use super::supervise::{guard, restarted};
use crate::config::{WatchMode, WatchSettings};
use crate::metrics::Metrics;
use crate::watch::is_git_ref;
use crate::watch::kernel::{self, Change, Kernel, WatchError};
use crate::watch::pending::{Pending, Raw};
use crate::watch::poll::{self, Snapshot};
use crate::watch::rules::{Rules, IGNORE_FILES};
use crate::workspace::Workspace;

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "watcher";
/// Kernel events kept while the first watches are being added, at most.
const EARLY_EVENTS: usize = 16_384;
/// How long a move's first half waits for its second (the kernel sends them together;
/// a move out of the workspace has none).
const MOVE_PAIRING: Duration = Duration::from_millis(50);
/// Changed paths `/status` remembers.
pub const RECENT: usize = 20;

/// How the workspace is being watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The first walk is under way.
    Starting,
    /// Kernel events.
    Events,
    /// Polling.
    Polling,
    /// `watch.mode = "off"`.
    Off,
}

/// What `/status` shows about the watcher.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WatchStatus {
    /// How the workspace is being watched.
    pub mode: Mode,
    /// Why it polls (configured, too many directories, the kernel's watch limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Directories with a kernel watch.
    pub directories: usize,
    /// Files the last poll looked at.
    pub files_polled: usize,
    /// The last poll stopped at `watch.max_polled_files`: files beyond are not watched.
    pub poll_truncated: bool,
    /// Batches sent.
    pub batches: u64,
    /// Changes listed in them.
    pub changes_reported: u64,
    /// Events beyond `watch.max_batch` paths in their window, counted only (per event:
    /// a path written twice past the bound counts twice).
    pub changes_overflowed: u64,
    /// Times the kernel said its own queue overflowed (events were lost).
    pub kernel_overflows: u64,
    /// When the last batch was sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_batch_at: Option<String>,
    /// The last changes, newest last (`created src/a.rs`).
    pub recent: Vec<String>,
}

/// Ask for [`WatchStatus`].
#[derive(Debug, Message)]
#[rtype(result = "WatchStatus")]
pub struct GetWatchStatus;

/// A kernel event (or the error reading it).
type KernelEvent = io::Result<kernel::Event>;

/// A move's first half, waiting for its second.
struct MovedFrom {
    path: PathBuf,
    cookie: u32,
    /// Reports the move as a removal if no second half comes.
    timeout: SpawnHandle,
}

/// A walk's result (the first one, or one after the kernel lost events).
struct Walked {
    dirs: Vec<PathBuf>,
    files: HashSet<String>,
    rules: Rules,
    too_many: bool,
    /// Some entry could not be read: what the walk lacks is not known to be gone.
    errors: bool,
}

/// Watches the workspace (one per bridge).
pub struct Watcher {
    settings: WatchSettings,
    workspace: Workspace,
    subscribers: Vec<Recipient<WorkspaceChanged>>,
    mode: Mode,
    reason: Option<String>,
    kernel: Option<Kernel>,
    /// The kernel's event stream (cancelled when polling instead).
    events: Option<SpawnHandle>,
    moved_from: Option<MovedFrom>,
    /// Kernel events that came while the first watches were being added.
    early: Vec<kernel::Event>,
    rules: Option<Rules>,
    dirs: HashSet<PathBuf>,
    /// Files known to exist (bounded by `max_polled_files`): a file moved into place is
    /// `created` unless it is known, then `modified` (an atomic save).
    known: HashSet<String>,
    pending: Pending,
    first_pending: Option<Instant>,
    last_event: Instant,
    flush_timer: Option<SpawnHandle>,
    snapshot: Option<Snapshot>,
    scanning: bool,
    /// New directories waiting to be watched and walked (one walk at a time).
    new_dirs: HashSet<PathBuf>,
    walking_new: bool,
    /// The tree is being walked again after the kernel lost events.
    resyncing: bool,
    /// Another such walk is wanted (events were lost during one, or before the first
    /// watches were in place).
    resync_wanted: bool,
    /// Kernel queue overflows not yet logged.
    overflows_unlogged: u64,
    batches: u64,
    changes_reported: u64,
    changes_overflowed: u64,
    kernel_overflows: u64,
    last_batch_at: Option<String>,
    recent: VecDeque<String>,
    activity: Addr<ActivityLog>,
    metrics: Arc<Metrics>,
}

impl Watcher {
    /// A watcher of `workspace` that reports to `subscribers`.
    pub fn new(
        settings: WatchSettings,
        workspace: Workspace,
        subscribers: Vec<Recipient<WorkspaceChanged>>,
        activity: Addr<ActivityLog>,
        metrics: Arc<Metrics>,
    ) -> Self {
        let pending = Pending::new(settings.max_batch);
        Self {
            settings,
            workspace,
            subscribers,
            mode: Mode::Starting,
            reason: None,
            kernel: None,
            events: None,
            moved_from: None,
            early: Vec::new(),
            rules: None,
            dirs: HashSet::new(),
            known: HashSet::new(),
            pending,
            first_pending: None,
            last_event: Instant::now(),
            flush_timer: None,
            snapshot: None,
            scanning: false,
            new_dirs: HashSet::new(),
            walking_new: false,
            resyncing: false,
            resync_wanted: false,
            overflows_unlogged: 0,
            batches: 0,
            changes_reported: 0,
            changes_overflowed: 0,
            kernel_overflows: 0,
            last_batch_at: None,
            recent: VecDeque::new(),
            activity,
            metrics,
        }
    }

    fn root(&self) -> &Path {
        self.workspace.root()
    }

    fn relative(&self, path: &Path) -> Option<String> {
        Some(
            path.strip_prefix(self.root())
                .ok()?
                .to_string_lossy()
                .into_owned(),
        )
    }

    /// A walk of the whole tree on a blocking thread.
    fn walk_off_actor(&self) -> actix_rt::task::JoinHandle<Walked> {
        let root = self.root().to_path_buf();
        let (max_dirs, max_files) = (
            self.settings.max_directories,
            self.settings.max_polled_files,
        );
        actix_rt::task::spawn_blocking(move || walk(&root, max_dirs, max_files))
    }

    /// The tree passed `watch.max_directories` while watched: poll instead.
    fn grew_too_large(&mut self, ctx: &mut Context<Self>) {
        let max = self.settings.max_directories;
        self.poll_instead(
            format!("the workspace grew past {max} directories (watch.max_directories)"),
            ctx,
        );
    }

    /// Walks the tree off the actor, then watches it.
    fn begin(&mut self, ctx: &mut Context<Self>) {
        if self.settings.mode == WatchMode::Off {
            self.mode = Mode::Off;
            return;
        }
        let walk = self.walk_off_actor();
        ctx.spawn(walk.into_actor(self).map(|walked, act, ctx| match walked {
            Ok(walked) => act.walked(walked, ctx),
            Err(e) => act.poll_instead(format!("the first walk failed: {e}"), ctx),
        }));
    }

    fn walked(&mut self, walked: Walked, ctx: &mut Context<Self>) {
        self.rules = Some(walked.rules);
        self.known = walked.files;
        if self.settings.mode == WatchMode::Poll {
            return self.poll_instead("configured (watch.mode = \"poll\")".into(), ctx);
        }
        if walked.too_many {
            let max = self.settings.max_directories;
            return self.poll_instead(
                format!("the workspace has more than {max} directories (watch.max_directories)"),
                ctx,
            );
        }
        let (mut kernel, events) = match Kernel::open() {
            Ok(opened) => opened,
            Err(e) => return self.poll_instead(format!("kernel events unavailable: {e}"), ctx),
        };
        self.events = Some(ctx.add_stream(events));
        let root = self.root().to_path_buf();
        let dirs = walked.dirs;
        let watching = actix_rt::task::spawn_blocking(move || {
            let result = add_watches(&mut kernel, &root, &dirs);
            (kernel, dirs, result)
        });
        ctx.spawn(watching.into_actor(self).map(|done, act, ctx| match done {
            Ok((kernel, dirs, Ok(()))) => {
                act.dirs = dirs.into_iter().collect();
                act.kernel = Some(kernel);
                act.mode = Mode::Events;
                tracing::info!(
                    directories = act.dirs.len(),
                    "watching the workspace with kernel events"
                );
                for event in std::mem::take(&mut act.early) {
                    act.on_kernel(Ok(event), ctx);
                }
                // (Unless a replayed overflow started one already.)
                if std::mem::take(&mut act.resync_wanted) && !act.resyncing {
                    act.resync(ctx);
                }
            }
            Ok((kernel, dirs, Err(WatchLimit(count)))) => {
                kernel.close();
                act.poll_instead(watch_limit(count, Some(dirs.len())), ctx);
            }
            Err(e) => act.poll_instead(format!("adding watches failed: {e}"), ctx),
        }));
    }

    /// Switches to polling for `reason` (logged once, shown in `/status`).
    fn poll_instead(&mut self, reason: String, ctx: &mut Context<Self>) {
        if self.mode == Mode::Polling {
            return;
        }
        if self.settings.mode == WatchMode::Poll {
            tracing::info!(%reason, "polling the workspace");
        } else {
            tracing::warn!(%reason, "cannot watch the workspace with kernel events; polling it instead");
        }
        if let Some(kernel) = self.kernel.take() {
            kernel.close();
        }
        if let Some(events) = self.events.take() {
            ctx.cancel_future(events);
        }
        self.early.clear();
        self.dirs.clear();
        self.mode = Mode::Polling;
        self.reason = Some(reason);
        self.poll(ctx);
        ctx.run_interval(self.settings.poll_interval, |act, ctx| act.poll(ctx));
    }

    fn poll(&mut self, ctx: &mut Context<Self>) {
        if self.scanning {
            return;
        }
        self.scanning = true;
        let (root, max) = (self.root().to_path_buf(), self.settings.max_polled_files);
        let scan = actix_rt::task::spawn_blocking(move || poll::scan(&root, max));
        ctx.spawn(scan.into_actor(self).map(|scanned, act, ctx| {
            act.scanning = false;
            let Ok(snapshot) = scanned else { return };
            if let Some(before) = &act.snapshot {
                poll::diff(before, &snapshot, &mut act.pending);
            }
            act.snapshot = Some(snapshot);
            if !act.pending.is_empty() {
                act.flush(ctx);
            }
        }));
    }

    /// One kernel event.
    fn on_kernel(&mut self, event: KernelEvent, ctx: &mut Context<Self>) {
        let event = match event {
            Ok(event) => event,
            Err(e) => {
                return tracing::warn!(error = %e, "reading the workspace's kernel events failed")
            }
        };
        if self.kernel.is_none() {
            // The watches are being added (the map of watches is with that work): kept
            // until it is done, beyond the bound counted as an overflow.
            if self.mode == Mode::Starting {
                if self.early.len() < EARLY_EVENTS {
                    self.early.push(event);
                } else {
                    self.kernel_overflows += 1;
                    self.overflows_unlogged += 1;
                    self.resync_wanted = true;
                }
            }
            return;
        }
        // A move's first half is settled before anything that came after it (and before
        // that is read: a directory moved away no longer stands for its old path).
        if let Some(from) = self.moved_from.take() {
            ctx.cancel_future(from.timeout);
            if kernel::second_half(&event, from.cookie) {
                let Some(Change::MovedTo { path, .. }) =
                    self.kernel.as_mut().and_then(|k| k.change(&event))
                else {
                    return self.gone(&from.path, ctx);
                };
                self.gone(&from.path, ctx);
                self.arrived(&path, ctx);
                return self.renamed(&from.path, &path, ctx);
            }
            self.gone(&from.path, ctx);
        }
        let Some(change) = self.kernel.as_mut().and_then(|k| k.change(&event)) else {
            return;
        };
        match change {
            Change::Overflow => {
                // Logged once per window (a flood brings many).
                self.kernel_overflows += 1;
                self.overflows_unlogged += 1;
                self.touched(ctx);
                self.resync(ctx);
            }
            Change::Created { path, dir: true } => {
                let rel = self.relative(&path).unwrap_or_default();
                if rel.starts_with(".git/refs/heads/") {
                    // A branch name with a slash: its directory is watched like the rest
                    // of git's refs.
                    if let Some(kernel) = self.kernel.as_mut() {
                        let _ = kernel.watch(&path);
                    }
                    return self.file(&path, Raw::Created, ctx);
                }
                self.dir_appeared(&path, ctx);
            }
            Change::Created { path, dir: false } => self.file(&path, Raw::Created, ctx),
            Change::Modified(path) => self.file(&path, Raw::Modified, ctx),
            Change::Removed { path, dir } => {
                if dir || self.dirs.contains(&path) {
                    self.dir_gone(&path);
                } else {
                    self.file(&path, Raw::Removed, ctx);
                }
            }
            Change::MovedFrom { path, cookie, .. } => {
                let timeout = ctx.run_later(MOVE_PAIRING, |act, ctx| {
                    if let Some(from) = act.moved_from.take() {
                        act.gone(&from.path, ctx);
                    }
                });
                self.moved_from = Some(MovedFrom {
                    path,
                    cookie,
                    timeout,
                });
            }
            Change::MovedTo { path, .. } => self.arrived(&path, ctx),
        }
    }

    /// Something moved to `path`: a directory is walked; a file is `created`, or
    /// `modified` when a file was known there (an atomic save).
    fn arrived(&mut self, path: &Path, ctx: &mut Context<Self>) {
        if is_dir(path) {
            return self.dir_appeared(path, ctx);
        }
        let raw = match self.relative(path) {
            Some(rel) if self.known.contains(&rel) => Raw::Modified,
            _ => Raw::Created,
        };
        self.file(path, raw, ctx);
    }

    /// A path moved away (its new place is outside what is watched, or [`Self::renamed`]
    /// follows).
    fn gone(&mut self, path: &Path, ctx: &mut Context<Self>) {
        if self.dirs.contains(path) {
            return self.dir_gone(path);
        }
        self.file(path, Raw::Removed, ctx);
    }

    /// A watched directory was removed or moved away: it and every directory below it
    /// are forgotten and their watches taken down (a directory moved to an ignored
    /// place, or out of the workspace, must not be reported under its old path; moved
    /// within, its new place is walked and watched again).
    fn dir_gone(&mut self, path: &Path) {
        self.dirs.retain(|d| !d.starts_with(path));
        if let Some(kernel) = self.kernel.as_mut() {
            kernel.forget(path);
        }
    }

    fn renamed(&mut self, from: &Path, to: &Path, ctx: &mut Context<Self>) {
        let (Some(from_rel), Some(to_rel)) = (self.relative(from), self.relative(to)) else {
            return;
        };
        let ignored = |p: &Path| self.rules.as_ref().is_none_or(|r| r.is_ignored(p, false));
        if ignored(from) || ignored(to) || is_dir(to) {
            // A temporary file moved into place (an atomic save) was already reported
            // by `arrived`; a moved directory's files by its walk.
            return;
        }
        self.pending.forget(&from_rel);
        self.pending.forget(&to_rel);
        self.pending.add(to_rel, Raw::MovedFrom(from_rel));
        self.touched(ctx);
    }

    /// A file event for `path`.
    fn file(&mut self, path: &Path, raw: Raw, ctx: &mut Context<Self>) {
        let Some(rel) = self.relative(path) else {
            return;
        };
        if is_git_ref(&rel) {
            self.pending.git_refs_changed();
            return self.touched(ctx);
        }
        if rel.starts_with(".git/") || rel == ".git" {
            return;
        }
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if IGNORE_FILES.contains(&name) {
            self.reload_rules(ctx);
        }
        if self
            .rules
            .as_ref()
            .is_none_or(|r| r.is_ignored(path, false))
        {
            return;
        }
        match raw {
            Raw::Removed => {
                self.known.remove(&rel);
            }
            _ if self.known.len() < self.settings.max_polled_files => {
                self.known.insert(rel.clone());
            }
            _ => {}
        }
        self.pending.add(rel, raw);
        self.touched(ctx);
    }

    /// A directory appeared: watch it (unless ignored) and report what it already holds.
    /// Directories appearing together are walked together, one walk at a time.
    fn dir_appeared(&mut self, path: &Path, ctx: &mut Context<Self>) {
        if self.mode != Mode::Events || self.rules.as_ref().is_none_or(|r| r.is_ignored(path, true))
        {
            return;
        }
        if self.dirs.len() + self.new_dirs.len() >= self.settings.max_directories {
            return self.grew_too_large(ctx);
        }
        self.new_dirs.insert(path.to_path_buf());
        self.walk_new_dirs(ctx);
    }

    fn walk_new_dirs(&mut self, ctx: &mut Context<Self>) {
        if self.walking_new || self.new_dirs.is_empty() {
            return;
        }
        self.walking_new = true;
        let starts: Vec<PathBuf> = self.new_dirs.drain().collect();
        let max = self.settings.max_directories;
        let walk = actix_rt::task::spawn_blocking(move || walk_below(&starts, max));
        ctx.spawn(walk.into_actor(self).map(|walked, act, ctx| {
            act.walking_new = false;
            let Ok((dirs, files)) = walked else { return };
            if act.watch_new(dirs.clone(), ctx) {
                for file in &files {
                    act.file(file, Raw::Created, ctx);
                }
                act.relist(dirs, files, ctx);
                act.walk_new_dirs(ctx);
            }
        }));
    }

    /// After the kernel lost events: walks the tree again (off the actor), then watches
    /// the directories that appeared meanwhile (nothing else would: their creation was
    /// among the lost events), forgets those that went, and reports the files that
    /// appeared or went. What changed inside files is not known; the window's
    /// `overflowed` count tells subscribers that changes were lost. One walk at a time:
    /// events lost during one ask for one more.
    fn resync(&mut self, ctx: &mut Context<Self>) {
        if self.resyncing || self.mode == Mode::Starting {
            self.resync_wanted = true;
            return;
        }
        if self.mode != Mode::Events {
            // Polling compares whole scans: it loses nothing.
            return;
        }
        self.resyncing = true;
        self.resync_wanted = false;
        let walk = self.walk_off_actor();
        ctx.spawn(walk.into_actor(self).map(|walked, act, ctx| {
            act.resyncing = false;
            match walked {
                Ok(walked) if act.mode == Mode::Events => act.resynced(walked, ctx),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "walking the workspace again failed"),
            }
            if std::mem::take(&mut act.resync_wanted) {
                act.resync(ctx);
            }
        }));
    }

    /// What a walk after lost events found, against what the watcher holds. Events
    /// went on being handled during the walk, so each difference is checked on disk
    /// before it is acted on (a directory or file that came or went meanwhile is already
    /// known, and the walk's view of it is stale); after a walk that could not read
    /// everything, nothing is taken for gone.
    fn resynced(&mut self, walked: Walked, ctx: &mut Context<Self>) {
        if walked.too_many {
            return self.grew_too_large(ctx);
        }
        self.rules = Some(walked.rules);
        let certain = !walked.errors;
        let now: HashSet<&PathBuf> = walked.dirs.iter().collect();
        let gone: Vec<PathBuf> = self
            .dirs
            .iter()
            .filter(|d| certain && !now.contains(d) && !is_dir(d))
            .cloned()
            .collect();
        for dir in &gone {
            self.dir_gone(dir);
        }
        // Files beyond the bound are not known either way: then only what is certain.
        let max = self.settings.max_polled_files;
        let complete = walked.files.len() < max && self.known.len() < max;
        let root = self.root().to_path_buf();
        let appeared: Vec<PathBuf> = walked
            .files
            .iter()
            .filter(|f| complete && !self.known.contains(*f))
            .map(|f| root.join(f))
            .filter(|f| std::fs::symlink_metadata(f).is_ok_and(|m| m.is_file()))
            .collect();
        let went: Vec<String> = self
            .known
            .iter()
            .filter(|f| complete && certain && !walked.files.contains(*f))
            .filter(|f| {
                std::fs::symlink_metadata(root.join(f))
                    .is_err_and(|e| e.kind() == io::ErrorKind::NotFound)
            })
            .cloned()
            .collect();
        for file in &appeared {
            self.file(file, Raw::Created, ctx);
        }
        for rel in &went {
            // Out of the known set even when it is ignored now (never reported then).
            self.known.remove(rel);
            self.file(&root.join(rel), Raw::Removed, ctx);
        }
        // A branch created or switched meanwhile is read again by whoever follows refs,
        // and a directory of branches created meanwhile is watched from now on.
        self.pending.git_refs_changed();
        if let Some(kernel) = self.kernel.as_mut() {
            watch_git_refs(kernel, &root);
        }
        self.touched(ctx);
        let new: Vec<PathBuf> = walked
            .dirs
            .into_iter()
            .filter(|d| !self.dirs.contains(d))
            .collect();
        tracing::info!(
            appeared = appeared.len(),
            went = went.len(),
            errors = walked.errors,
            new_directories = new.len(),
            gone_directories = gone.len(),
            "walked the workspace again after the kernel lost events"
        );
        if self.watch_new(new.clone(), ctx) {
            self.relist(new, appeared, ctx);
        }
    }

    /// Lists `dirs` again now that they are watched: what was created in them between
    /// the walk and the watch (no kernel event will tell of it) is reported too.
    /// `reported` is what the walk already reported.
    fn relist(&mut self, dirs: Vec<PathBuf>, reported: Vec<PathBuf>, ctx: &mut Context<Self>) {
        if dirs.is_empty() {
            return;
        }
        let max = self.settings.max_directories;
        let list = actix_rt::task::spawn_blocking(move || list_in(&dirs, max));
        ctx.spawn(list.into_actor(self).map(move |listed, act, ctx| {
            let Ok((dirs, files)) = listed else { return };
            let reported: HashSet<PathBuf> = reported.into_iter().collect();
            for file in files.iter().filter(|f| !reported.contains(*f)) {
                act.file(file, Raw::Created, ctx);
            }
            for dir in dirs {
                if !act.dirs.contains(&dir) {
                    act.dir_appeared(&dir, ctx);
                }
            }
        }));
    }

    /// Adds kernel watches for `dirs`; false when the watcher had to poll instead.
    fn watch_new(&mut self, dirs: Vec<PathBuf>, ctx: &mut Context<Self>) -> bool {
        for dir in dirs {
            if self.dirs.contains(&dir) {
                continue;
            }
            if self.dirs.len() >= self.settings.max_directories {
                self.grew_too_large(ctx);
                return false;
            }
            let Some(kernel) = self.kernel.as_mut() else {
                return false;
            };
            match kernel.watch(&dir) {
                Ok(()) => {
                    self.dirs.insert(dir);
                }
                Err(WatchError::Limit) => {
                    let count = self.dirs.len();
                    self.poll_instead(watch_limit(count, None), ctx);
                    return false;
                }
                // Gone (or swapped for something else) already.
                Err(_) => {}
            }
        }
        true
    }

    fn reload_rules(&mut self, ctx: &mut Context<Self>) {
        let root = self.root().to_path_buf();
        let mut dirs: Vec<PathBuf> = self.dirs.iter().cloned().collect();
        dirs.push(root.clone());
        let build = actix_rt::task::spawn_blocking(move || Rules::new(&root, &dirs));
        ctx.spawn(build.into_actor(self).map(|rules, act, _| {
            if let Ok(rules) = rules {
                act.rules = Some(rules);
            }
        }));
    }

    /// Something was recorded: flush after the debounce window goes quiet (or, under a
    /// steady stream, at most every four windows).
    fn touched(&mut self, ctx: &mut Context<Self>) {
        let now = Instant::now();
        self.last_event = now;
        self.first_pending.get_or_insert(now);
        if self.flush_timer.is_none() {
            self.flush_timer = Some(ctx.run_later(self.settings.debounce, |act, ctx| {
                act.flush_timer = None;
                act.maybe_flush(ctx);
            }));
        }
    }

    fn maybe_flush(&mut self, ctx: &mut Context<Self>) {
        let debounce = self.settings.debounce;
        let quiet_for = self.last_event.elapsed();
        let waited = self.first_pending.map_or(Duration::ZERO, |t| t.elapsed());
        if quiet_for >= debounce || waited >= debounce * 4 {
            self.flush(ctx);
        } else {
            self.flush_timer = Some(ctx.run_later(debounce - quiet_for, |act, ctx| {
                act.flush_timer = None;
                act.maybe_flush(ctx);
            }));
        }
    }

    fn flush(&mut self, _: &mut Context<Self>) {
        self.first_pending = None;
        let (changes, mut overflowed, git_refs) = self.pending.take();
        let overflows = std::mem::take(&mut self.overflows_unlogged);
        // Lost events are changes nobody listed: counted, so that subscribers know to
        // look again.
        overflowed += overflows as usize;
        if overflows > 0 {
            tracing::warn!(
                overflows,
                "the kernel's event queue overflowed: some workspace changes were lost"
            );
        }
        if changes.is_empty() && overflowed == 0 && !git_refs {
            return;
        }
        if overflowed > 0 {
            tracing::warn!(
                listed = changes.len(),
                unlisted = overflowed,
                "more workspace changes in one window than watch.max_batch: the rest are counted, not listed"
            );
        }
        self.batches += 1;
        self.changes_reported += changes.len() as u64;
        self.changes_overflowed += overflowed as u64;
        self.last_batch_at = Some(iso_now());
        for c in changes.iter().rev().take(RECENT).rev() {
            if self.recent.len() == RECENT {
                self.recent.pop_front();
            }
            self.recent.push_back(describe(c));
        }
        tracing::debug!(
            changes = changes.len(),
            overflowed,
            git_refs,
            "workspace changed"
        );
        let batch = WorkspaceChanged {
            changes: changes.into(),
            overflowed,
            git_refs,
        };
        for s in &self.subscribers {
            s.do_send(batch.clone());
        }
    }
}

/// Why the watcher polls when the kernel refused a watch after `count` directories (of
/// `of`, when known), with the kernel's limit as /proc says it.
fn watch_limit(count: usize, of: Option<usize>) -> String {
    let limit = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into());
    let of = of.map(|n| format!(" of {n}")).unwrap_or_default();
    format!(
        "the kernel refused more watches after {count}{of} directories \
         (fs.inotify.max_user_watches = {limit})"
    )
}

fn describe(c: &FileChange) -> String {
    format!("{} {}", c.kind.name(), c.path)
}

/// The kernel refused a watch after this many directories.
struct WatchLimit(usize);

/// Watches `dirs` one by one, and git's refs ([`watch_git_refs`]).
fn add_watches(kernel: &mut Kernel, root: &Path, dirs: &[PathBuf]) -> Result<(), WatchLimit> {
    for (i, dir) in dirs.iter().enumerate() {
        match kernel.watch(dir) {
            Ok(()) => {}
            Err(WatchError::Limit) => return Err(WatchLimit(i)),
            Err(e) => tracing::debug!(dir = %dir.display(), error = %e, "directory not watched"),
        }
    }
    watch_git_refs(kernel, root);
    Ok(())
}

/// Watches git's refs: `.git` itself and every directory of `.git/refs/heads` (a
/// branch name with a slash is a directory). Watching one again changes nothing.
fn watch_git_refs(kernel: &mut Kernel, root: &Path) {
    let git = root.join(".git");
    if is_dir(&git) {
        let _ = kernel.watch(&git);
        let mut heads = vec![git.join("refs/heads")];
        while let Some(dir) = heads.pop() {
            if kernel.watch(&dir).is_ok() {
                let entries = std::fs::read_dir(&dir).into_iter().flatten().flatten();
                heads.extend(entries.map(|e| e.path()).filter(|p| is_dir(p)));
            }
        }
    }
}

/// A walk of the tree: directories (more than `max_dirs` stops it), known files (at
/// most `max_files`), the ignore rules of the directories found, and whether any entry
/// could not be read.
fn walk(root: &Path, max_dirs: usize, max_files: usize) -> Walked {
    let mut dirs = Vec::new();
    let mut files = HashSet::new();
    let mut too_many = false;
    let mut errors = false;
    for entry in crate::workspace::tree::walker(root, None) {
        let Ok(entry) = entry else {
            errors = true;
            continue;
        };
        match entry.file_type() {
            Some(t) if t.is_dir() => {
                if dirs.len() >= max_dirs {
                    too_many = true;
                    break;
                }
                dirs.push(entry.into_path());
            }
            Some(t) if t.is_file() && files.len() < max_files => {
                if let Ok(rel) = entry.path().strip_prefix(root) {
                    files.insert(rel.to_string_lossy().into_owned());
                }
            }
            _ => {}
        }
    }
    let rules = Rules::new(root, &dirs);
    Walked {
        dirs,
        files,
        rules,
        too_many,
        errors,
    }
}

/// Directories (the starts included) and files below new directories (the walker's
/// way), bounded; a start that is not a real directory any more (gone, or swapped for
/// a symlink) is skipped, so nothing outside the workspace is ever watched.
fn walk_below(starts: &[PathBuf], max: usize) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    for start in starts.iter().filter(|s| is_dir(s)) {
        for entry in crate::workspace::tree::walker(start, None).flatten() {
            if dirs.len() + files.len() >= max * 4 {
                break;
            }
            match entry.file_type() {
                Some(t) if t.is_dir() => dirs.push(entry.into_path()),
                Some(t) if t.is_file() => files.push(entry.into_path()),
                _ => {}
            }
        }
    }
    (dirs, files)
}

/// The directories and files directly in each of `dirs` (symlinks are neither), at
/// most `max` entries, as `walk_below` counts them.
fn list_in(dirs: &[PathBuf], max: usize) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut subdirs = Vec::new();
    let mut files = Vec::new();
    let entries = dirs
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .flatten();
    for entry in entries.take(max * 4) {
        match entry.file_type() {
            Ok(t) if t.is_dir() => subdirs.push(entry.path()),
            Ok(t) if t.is_file() => files.push(entry.path()),
            _ => {}
        }
    }
    (subdirs, files)
}

/// A real directory, not a symlink to one.
fn is_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

impl Actor for Watcher {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.begin(ctx);
    }
}

impl Supervised for Watcher {
    fn restarting(&mut self, _: &mut Context<Self>) {
        // The context's streams, timers and scans are gone: start over.
        if let Some(kernel) = self.kernel.take() {
            kernel.close();
        }
        self.events = None;
        self.moved_from = None;
        self.early.clear();
        self.dirs.clear();
        self.mode = Mode::Starting;
        self.reason = None;
        self.snapshot = None;
        self.scanning = false;
        self.flush_timer = None;
        self.first_pending = None;
        self.new_dirs.clear();
        self.walking_new = false;
        self.resyncing = false;
        self.resync_wanted = false;
        restarted(
            NAME,
            &self.metrics,
            &self.activity.clone().recipient(),
            "the workspace is watched again from scratch",
        );
    }
}

impl StreamHandler<KernelEvent> for Watcher {
    fn handle(&mut self, event: KernelEvent, ctx: &mut Context<Self>) {
        let _ = guard(NAME, self, ctx, |act, ctx| act.on_kernel(event, ctx));
    }

    fn finished(&mut self, _: &mut Context<Self>) {
        // The kernel's stream was cancelled (polling instead, or a restart).
    }
}

impl Handler<GetWatchStatus> for Watcher {
    type Result = MessageResult<GetWatchStatus>;
    fn handle(&mut self, _: GetWatchStatus, _: &mut Context<Self>) -> Self::Result {
        MessageResult(WatchStatus {
            mode: self.mode,
            reason: self.reason.clone(),
            directories: self.dirs.len(),
            files_polled: self.snapshot.as_ref().map_or(0, Snapshot::len),
            poll_truncated: self.snapshot.as_ref().is_some_and(|s| s.truncated),
            batches: self.batches,
            changes_reported: self.changes_reported,
            changes_overflowed: self.changes_overflowed,
            kernel_overflows: self.kernel_overflows,
            last_batch_at: self.last_batch_at.clone(),
            recent: self.recent.iter().cloned().collect(),
        })
    }
}

#[cfg(feature = "fault-injection")]
crate::actors::fault::fault_handlers!(Watcher, NAME);
