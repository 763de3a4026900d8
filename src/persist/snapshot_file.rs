//! A small JSON file that holds the latest state of something (signed-in browsers, file
//! claims), written by one task, one write at a time: of the snapshots queued meanwhile
//! only the newest is written, so an older one can never land after a newer one. Each
//! write is atomic (0600 temp file, fsync, rename).

use std::path::PathBuf;

use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

type Job<T> = (T, Option<oneshot::Sender<()>>);

/// Hands snapshots to the writing task.
pub struct SnapshotFile<T> {
    jobs: mpsc::UnboundedSender<Job<T>>,
}

impl<T: Serialize + Send + 'static> SnapshotFile<T> {
    /// Starts the writing task for `path` on the current runtime; `what` names the
    /// content in the warning logged when a write fails.
    pub fn start(path: PathBuf, what: &'static str) -> Self {
        let (jobs, mut rx) = mpsc::unbounded_channel::<Job<T>>();
        actix_rt::spawn(async move {
            while let Some((mut snapshot, ack)) = rx.recv().await {
                let mut acks: Vec<oneshot::Sender<()>> = ack.into_iter().collect();
                while let Ok((newer, ack)) = rx.try_recv() {
                    snapshot = newer;
                    acks.extend(ack);
                }
                let path = path.clone();
                let body = serde_json::to_vec(&snapshot).unwrap_or_default();
                let written = tokio::task::spawn_blocking(move || {
                    crate::lockfile::write_atomic(&path, &body)
                })
                .await;
                if let Ok(Err(e)) = written {
                    tracing::warn!(%e, "could not keep {what} for the next start");
                }
                for ack in acks {
                    let _ = ack.send(());
                }
            }
        });
        Self { jobs }
    }

    /// Queues `snapshot` to be written.
    pub fn save(&self, snapshot: T) {
        let _ = self.jobs.send((snapshot, None));
    }

    /// Queues `snapshot`; the receiver fires once it (or a newer one) is on disk.
    pub fn save_and_wait(&self, snapshot: T) -> oneshot::Receiver<()> {
        let (ack, done) = oneshot::channel();
        let _ = self.jobs.send((snapshot, Some(ack)));
        done
    }
}
