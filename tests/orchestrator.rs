//! The Orchestrator actor in process: no bridge binary, the fake Claude in
//! tests/fixtures runs the tasks. Where a timeout matters, tokio's paused clock stands
//! in for time: it jumps to the next timer whenever the actors wait, so a ten-minute
//! timeout is reached at once and exactly.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use tokio::sync::mpsc::UnboundedReceiver;

use ide_bridge::actors::activity_log::ActivityLog;
use ide_bridge::actors::messages::editor::NotifyEditor;
use ide_bridge::actors::orchestrator::{
    CancelTask, Enqueue, EnqueueFollowed, Follow, GetTask, Limits, Orchestrator, TaskError,
};
use ide_bridge::metrics::Metrics;
use ide_bridge::orchestrator::driver::DriverConfig;
use ide_bridge::orchestrator::permissions::Policy;
use ide_bridge::orchestrator::{Task, TaskOrigin, TaskStatus};

/// Real time allowed for anything the actor should do promptly.
const DEADLINE: Duration = Duration::from_secs(10);

fn fake_claude() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fake-claude").to_string()
}

/// Stands in for the editor: task notifications find nobody connected.
struct NoEditor;

impl Actor for NoEditor {
    type Context = Context<Self>;
}

impl Handler<NotifyEditor> for NoEditor {
    type Result = bool;
    fn handle(&mut self, _: NotifyEditor, _: &mut Context<Self>) -> bool {
        false
    }
}

/// An orchestrator with the actors it reports to, tasks run in `workspace`; supervised,
/// as the bridge starts it.
fn orchestrator(workspace: &Path, max_concurrent: usize, max_queue: usize) -> Addr<Orchestrator> {
    let metrics = Arc::new(Metrics::new());
    let activity = ActivityLog::new(100, Arc::clone(&metrics)).start();
    let editor = NoEditor.start().recipient();
    let limits = Limits {
        max_concurrent,
        max_queue,
        max_history: 10,
    };
    let driver = DriverConfig {
        program: fake_claude(),
        workspace: workspace.to_path_buf(),
        policy: Arc::new(Policy::default()),
        approver: None,
        approval_timeout: std::time::Duration::from_secs(1),
    };
    Supervisor::start(move |_| Orchestrator::new(limits, driver, None, editor, activity, metrics))
}

fn enqueue(prompt: &str, timeout_ms: u64) -> Enqueue {
    Enqueue {
        origin: TaskOrigin::Session {
            session_id: "s1".into(),
        },
        prompt: prompt.into(),
        timeout_ms,
    }
}

/// Queues a task with its follower registered in the same step.
async fn followed(
    orchestrator: &Addr<Orchestrator>,
    prompt: &str,
    timeout_ms: u64,
) -> Result<(Task, UnboundedReceiver<String>), TaskError> {
    orchestrator
        .send(EnqueueFollowed(enqueue(prompt, timeout_ms)))
        .await
        .unwrap()
}

async fn task(orchestrator: &Addr<Orchestrator>, id: &str) -> Task {
    orchestrator
        .send(GetTask {
            task_id: id.into(),
            session: None,
        })
        .await
        .unwrap()
        .unwrap()
}

/// Polls (in real time) until the task is final.
async fn finished(orchestrator: &Addr<Orchestrator>, id: &str) -> Task {
    let end = Instant::now() + DEADLINE;
    loop {
        let t = task(orchestrator, id).await;
        if t.status.is_final() {
            return t;
        }
        assert!(Instant::now() < end, "task {id} never finished: {t:?}");
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Everything a follower received, once its channel closes.
async fn drain(mut rx: UnboundedReceiver<String>) -> Vec<String> {
    let mut lines = Vec::new();
    while let Some(line) = tokio::time::timeout(DEADLINE, rx.recv())
        .await
        .expect("the channel closes when the task ends")
    {
        lines.push(line);
    }
    lines
}

/// True while a process whose command line contains `needle` exists.
async fn running(needle: String) -> bool {
    tokio::task::spawn_blocking(move || {
        let ps = std::process::Command::new("pgrep")
            .args(["-f", &needle])
            .output()
            .unwrap();
        !ps.stdout.is_empty()
    })
    .await
    .unwrap()
}

/// Waits (in real time) until a `sleep <marker>` started by a fake task exists, or with
/// `alive: false` until none does.
async fn child(marker: &str, alive: bool) {
    let end = Instant::now() + DEADLINE;
    while running(format!("sleep {marker}")).await != alive {
        assert!(
            Instant::now() < end,
            "sleep {marker} still {}",
            if alive { "absent" } else { "running" }
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}

#[actix_rt::test]
async fn a_follower_registered_with_the_task_gets_its_first_line_even_when_read_late() {
    let dir = tempfile::tempdir().unwrap();
    let orchestrator = orchestrator(dir.path(), 1, 1);
    let (t, rx) = followed(&orchestrator, "say hi", 60_000).await.unwrap();
    assert_eq!(
        t.status,
        TaskStatus::Running,
        "a free slot starts it at once"
    );
    // Nothing is read until the task is over: every line waited in the channel.
    let done = finished(&orchestrator, &t.id).await;
    assert_eq!(done.status, TaskStatus::Done, "{done:?}");
    let lines = drain(rx).await;
    assert_eq!(
        lines.first().map(String::as_str),
        Some("working on: say hi")
    );
    // Following after the fact, as Enqueue then Follow did, can miss all of it.
    let late = orchestrator
        .send(enqueue("say hi", 60_000))
        .await
        .unwrap()
        .unwrap();
    finished(&orchestrator, &late.id).await;
    assert!(orchestrator.send(Follow(late.id)).await.unwrap().is_none());
}

#[actix_rt::test]
async fn a_follower_gets_the_result_line_before_its_channel_closes_and_the_task_is_final() {
    let dir = tempfile::tempdir().unwrap();
    let orchestrator = orchestrator(dir.path(), 1, 5);
    // The result is the driver's last event, sent just before it returns: its end must
    // not overtake it. Several runs, since a lost line depends on scheduling.
    for n in 0..5 {
        let prompt = format!("run {n}");
        let (t, rx) = followed(&orchestrator, &prompt, 60_000).await.unwrap();
        let lines = drain(rx).await;
        assert_eq!(
            lines,
            [format!("working on: {prompt}"), format!("done: {prompt}")],
            "run {n}"
        );
        let done = task(&orchestrator, &t.id).await;
        assert_eq!(done.status, TaskStatus::Done, "{done:?}");
        assert!(
            done.output.ends_with(&format!("done: {prompt}")),
            "the stored output has the result once the task is final: {:?}",
            done.output
        );
    }
}

#[actix_rt::test]
async fn a_task_that_never_ends_times_out_on_the_clock_and_loses_its_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let orchestrator = orchestrator(dir.path(), 1, 1);
    let started = Instant::now();
    tokio::time::pause();
    let (t, rx) = followed(&orchestrator, "mode:forever marker:9393", 600_000)
        .await
        .unwrap();
    let clock = tokio::time::Instant::now();
    // No timer of the test's own here: the paused clock would reach it first.
    let mut rx = rx;
    while rx.recv().await.is_some() {}
    let done = task(&orchestrator, &t.id).await;
    assert_eq!(done.status, TaskStatus::Error, "{done:?}");
    assert_eq!(
        done.error.as_deref(),
        Some("timed out after 600000 ms; the process group was killed")
    );
    assert!(
        tokio::time::Instant::now() - clock >= Duration::from_millis(600_000),
        "the timeout is measured on the task's clock"
    );
    assert!(
        started.elapsed() < DEADLINE,
        "ten minutes of task time took {:?}",
        started.elapsed()
    );
    tokio::time::resume();
    child("9393", false).await;
}

#[actix_rt::test]
async fn the_queue_holds_max_queue_and_refuses_more_naming_the_counts() {
    let dir = tempfile::tempdir().unwrap();
    let orchestrator = orchestrator(dir.path(), 1, 1);
    let first = orchestrator
        .send(enqueue("mode:forever marker:9494", 600_000))
        .await
        .unwrap()
        .unwrap();
    let second = orchestrator
        .send(enqueue("mode:forever marker:9595", 600_000))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (first.status, second.status),
        (TaskStatus::Running, TaskStatus::Pending)
    );
    let refused = followed(&orchestrator, "x", 60_000).await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        "Task queue is full: 1 tasks running and 1 waiting (max 1); try again when one finishes"
    );
    for t in [&second, &first] {
        let cancelled = orchestrator
            .send(CancelTask {
                task_id: t.id.clone(),
                session: Some("s1".into()),
            })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(cancelled.status, TaskStatus::Cancelled);
    }
    child("9494", false).await;
    assert!(
        !running("sleep 9595".into()).await,
        "the pending one never ran"
    );
}

#[cfg(feature = "fault-injection")]
#[actix_rt::test]
async fn a_panic_interrupts_the_running_task_ends_its_followers_and_the_queue_serves_on() {
    use ide_bridge::actors::fault::Crash;
    let dir = tempfile::tempdir().unwrap();
    let orchestrator = orchestrator(dir.path(), 1, 1);
    let (t, rx) = followed(&orchestrator, "mode:forever marker:9696", 600_000)
        .await
        .unwrap();
    child("9696", true).await;
    let fault = orchestrator.send(Crash).await.unwrap().unwrap_err();
    assert!(fault.to_string().contains("orchestrator"), "{fault}");
    drain(rx).await;
    let interrupted = task(&orchestrator, &t.id).await;
    assert_eq!(
        interrupted.status,
        TaskStatus::Interrupted,
        "{interrupted:?}"
    );
    assert_eq!(
        interrupted.error.as_deref(),
        Some("the orchestrator restarted during the run")
    );
    child("9696", false).await;
    let (next, rx) = followed(&orchestrator, "after", 60_000).await.unwrap();
    assert_eq!(next.status, TaskStatus::Running);
    assert_eq!(
        drain(rx).await.first().map(String::as_str),
        Some("working on: after")
    );
}
