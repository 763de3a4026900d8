//! The file that keeps signed-in browsers across restarts, written by one task, one
//! write at a time: of the snapshots queued meanwhile only the newest is written, so an
//! older one can never land after a newer one.

use std::path::PathBuf;

use tokio::sync::{mpsc, oneshot};

use super::logins::SavedSession;

type Job = (Vec<SavedSession>, Option<oneshot::Sender<()>>);

/// Hands snapshots to the writing task.
pub struct SessionFile {
    jobs: mpsc::UnboundedSender<Job>,
}

impl SessionFile {
    /// Starts the writing task for `path` on the current runtime.
    pub fn start(path: PathBuf) -> Self {
        let (jobs, mut rx) = mpsc::unbounded_channel::<Job>();
        actix_rt::spawn(async move {
            while let Some((mut sessions, ack)) = rx.recv().await {
                let mut acks: Vec<oneshot::Sender<()>> = ack.into_iter().collect();
                while let Ok((newer, ack)) = rx.try_recv() {
                    sessions = newer;
                    acks.extend(ack);
                }
                let path = path.clone();
                let body = serde_json::to_vec(&sessions).unwrap_or_default();
                let written = tokio::task::spawn_blocking(move || {
                    crate::lockfile::write_atomic(&path, &body)
                })
                .await;
                if let Ok(Err(e)) = written {
                    tracing::warn!(%e, "could not keep the signed-in browsers for the next start");
                }
                for ack in acks {
                    let _ = ack.send(());
                }
            }
        });
        Self { jobs }
    }

    /// Queues `sessions` to be written.
    pub fn save(&self, sessions: Vec<SavedSession>) {
        let _ = self.jobs.send((sessions, None));
    }

    /// Queues `sessions`; the receiver fires once they (or newer ones) are on disk.
    pub fn save_and_wait(&self, sessions: Vec<SavedSession>) -> oneshot::Receiver<()> {
        let (ack, done) = oneshot::channel();
        let _ = self.jobs.send((sessions, Some(ack)));
        done
    }
}
