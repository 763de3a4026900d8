//! The Watcher actor: watches the workspace (kernel events, or polling when the tree
//! cannot be covered), honours the walker's ignore rules, coalesces changes over a
//! debounce window and sends each window's [`WorkspaceChanged`] to its subscribers.
//!
//! SKELETON: the watching itself is being written (issue 18).

use std::sync::Arc;

use actix::prelude::*;
use serde::Serialize;

use super::activity_log::ActivityLog;
use super::messages::watch::WorkspaceChanged;
use super::supervise::restarted;
use crate::config::WatchSettings;
use crate::metrics::Metrics;
use crate::workspace::Workspace;

/// Actor name used in logs, metrics and faults.
pub const NAME: &str = "watcher";

/// What `/status` shows about the watcher.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WatchStatus {
    /// `events`, `polling` or `off`.
    pub mode: &'static str,
}

/// Ask for [`WatchStatus`].
#[derive(Debug, Message)]
#[rtype(result = "WatchStatus")]
pub struct GetWatchStatus;

/// Watches the workspace (one per bridge).
pub struct Watcher {
    #[allow(dead_code)]
    settings: WatchSettings,
    #[allow(dead_code)]
    workspace: Workspace,
    #[allow(dead_code)]
    subscribers: Vec<Recipient<WorkspaceChanged>>,
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
        Self {
            settings,
            workspace,
            subscribers,
            activity,
            metrics,
        }
    }
}

impl Actor for Watcher {
    type Context = Context<Self>;
}

impl Supervised for Watcher {
    fn restarting(&mut self, _: &mut Context<Self>) {
        restarted(
            NAME,
            &self.metrics,
            &self.activity.clone().recipient(),
            "the workspace is watched again from scratch",
        );
    }
}

impl Handler<GetWatchStatus> for Watcher {
    type Result = MessageResult<GetWatchStatus>;
    fn handle(&mut self, _: GetWatchStatus, _: &mut Context<Self>) -> Self::Result {
        MessageResult(WatchStatus { mode: "off" })
    }
}
