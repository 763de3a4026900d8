//! The workspace watcher through the real binary: what `/status` says it saw, for
//! writes made by the bridge's tools and by anything else, with kernel events and when
//! it polls (configured, or because the tree has too many directories), and a window
//! with more changes than the batch bound.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

/// Waits until the watcher's `recent` list holds `change` (`created src/a.rs`).
async fn wait_change(bridge: &Bridge, change: &str) -> Value {
    bridge
        .wait_status(&format!("the watcher reports {change:?}"), |s| {
            let w = &s["watch"];
            w["recent"]
                .as_array()
                .is_some_and(|r| r.iter().any(|c| c == change))
                .then(|| w.clone())
        })
        .await
}

fn count(w: &Value, change: &str) -> usize {
    w["recent"]
        .as_array()
        .map_or(0, |r| r.iter().filter(|c| *c == change).count())
}

#[tokio::test]
async fn tool_writes_and_other_writes_are_each_reported_once() {
    let bridge = Bridge::launch(Options::default().file(".gitignore", "*.log\nbuild/\n")).await;
    let s = bridge
        .wait_status("kernel events", |s| {
            (s["watch"]["mode"] == "events").then(|| s["watch"].clone())
        })
        .await;
    assert!(s["directories"].as_u64().unwrap() >= 2, "{s}");
    let mut agent = bridge.ready_agent().await;
    let created = agent
        .call(
            "createFile",
            json!({"filePath": "src/by_tool.rs", "content": "pub fn t() {}\n"}),
        )
        .await;
    assert!(!is_error(&created), "{created}");
    let w = wait_change(&bridge, "created src/by_tool.rs").await;
    assert_eq!(count(&w, "created src/by_tool.rs"), 1, "{w}");
    // Written by something else; ignored files and directories never appear.
    std::fs::write(bridge.workspace.join("debug.log"), "x").unwrap();
    std::fs::create_dir_all(bridge.workspace.join("build/out")).unwrap();
    std::fs::write(bridge.workspace.join("build/out/a.rs"), "x").unwrap();
    std::fs::write(bridge.workspace.join("src/main.rs"), "fn main() {}\n").unwrap();
    let w = wait_change(&bridge, "modified src/main.rs").await;
    let recent = w["recent"].to_string();
    assert!(
        !recent.contains("debug.log") && !recent.contains("build/"),
        "{recent}"
    );
    // A new directory is watched at once: a file written into it right away is seen.
    std::fs::create_dir_all(bridge.workspace.join("lib/deep")).unwrap();
    std::fs::write(bridge.workspace.join("lib/deep/x.rs"), "x").unwrap();
    wait_change(&bridge, "created lib/deep/x.rs").await;
    // And so is every file of a burst of new directories, each written the moment its
    // directory exists (whether the walk or the kernel sees it first). Eight: each file
    // may show as created and then modified (two batches on a busy machine), and
    // `recent` keeps the last RECENT (20) changes, so twelve could push the first out.
    const BURST: usize = 8;
    for i in 0..BURST {
        let dir = bridge.workspace.join(format!("burst/d{i}/e"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f.rs"), "x").unwrap();
    }
    bridge
        .wait_status("every file of the burst", |s| {
            let recent = s["watch"]["recent"].as_array()?;
            (0..BURST)
                .all(|i| {
                    recent
                        .iter()
                        .any(|c| c == &format!("created burst/d{i}/e/f.rs"))
                })
                .then_some(())
        })
        .await;
    // Renamed through the tool: one rename, not a removal and a creation.
    agent
        .call(
            "renameFile",
            json!({"oldPath": "src/by_tool.rs", "newPath": "src/moved.rs"}),
        )
        .await;
    wait_change(&bridge, "renamed src/moved.rs").await;
    // A directory moved into an ignored one is no longer watched under its old name:
    // what is written there afterwards is not reported.
    std::fs::rename(
        bridge.workspace.join("lib/deep"),
        bridge.workspace.join("build/deep"),
    )
    .unwrap();
    std::fs::write(bridge.workspace.join("build/deep/y.rs"), "y").unwrap();
    std::fs::write(bridge.workspace.join("src/after.rs"), "z").unwrap();
    let w = wait_change(&bridge, "created src/after.rs").await;
    let recent = w["recent"].to_string();
    assert!(!recent.contains("y.rs"), "{recent}");
    let shown = bridge.status_text().await;
    assert!(shown.contains("watch: events, "), "{shown}");
}

#[tokio::test]
async fn polling_reports_changes_and_says_why_it_polls() {
    let bridge = Bridge::launch(
        Options::default()
            .set("watch.mode", "poll")
            .set("watch.poll_interval_ms", 200),
    )
    .await;
    let w = bridge
        .wait_status("polling", |s| {
            (s["watch"]["mode"] == "polling" && s["watch"]["filesPolled"].as_u64() > Some(0))
                .then(|| s["watch"].clone())
        })
        .await;
    assert!(w["reason"].as_str().unwrap().contains("configured"), "{w}");
    std::fs::write(bridge.workspace.join("new.txt"), "x").unwrap();
    wait_change(&bridge, "created new.txt").await;
    std::fs::remove_file(bridge.workspace.join("README.md")).unwrap();
    wait_change(&bridge, "removed README.md").await;
}

#[tokio::test]
async fn a_tree_beyond_max_directories_is_polled_and_the_reason_shown() {
    let bridge = Bridge::launch(
        Options::default()
            .file("a/x.txt", "x")
            .file("b/y.txt", "y")
            .set("watch.max_directories", 2)
            .set("watch.poll_interval_ms", 200),
    )
    .await;
    let w = bridge
        .wait_status("the fallback", |s| {
            (s["watch"]["mode"] == "polling").then(|| s["watch"].clone())
        })
        .await;
    let reason = w["reason"].as_str().unwrap();
    assert!(
        reason.contains("more than 2 directories (watch.max_directories)"),
        "{reason}"
    );
    assert!(
        bridge.log().contains("polling it instead"),
        "a warning is logged"
    );
    bridge
        .wait_status("a baseline scan", |s| {
            (s["watch"]["filesPolled"].as_u64() > Some(0)).then_some(())
        })
        .await;
    std::fs::write(bridge.workspace.join("a/x.txt"), "changed").unwrap();
    wait_change(&bridge, "modified a/x.txt").await;
}

#[tokio::test]
async fn a_window_lists_at_most_max_batch_paths_and_counts_the_rest() {
    let bridge = Bridge::launch(
        Options::default()
            .set("watch.max_batch", 10)
            .set("watch.debounce_ms", 500),
    )
    .await;
    bridge
        .wait_status("kernel events", |s| {
            (s["watch"]["mode"] == "events").then_some(())
        })
        .await;
    let dir = bridge.workspace.join("many");
    std::fs::create_dir_all(&dir).unwrap();
    // Let the new directory be watched before the burst.
    wait_for_async("the directory watched", Duration::from_secs(20), || async {
        let s = bridge.status().await;
        (s["watch"]["directories"].as_u64() >= Some(3)).then_some(())
    })
    .await;
    for i in 0..25 {
        std::fs::write(dir.join(format!("f{i:02}.txt")), "x").unwrap();
    }
    let w = bridge
        .wait_status("the burst", |s| {
            let w = &s["watch"];
            let seen = w["changesReported"].as_u64().unwrap_or(0)
                + w["changesOverflowed"].as_u64().unwrap_or(0);
            (seen >= 25).then(|| w.clone())
        })
        .await;
    assert!(w["changesOverflowed"].as_u64().unwrap() >= 15, "{w}");
    assert!(bridge
        .log()
        .contains("more workspace changes in one window than watch.max_batch"));
}

/// The kernel's own queue overflows while the watcher is busy (its thread blocked by
/// fault injection, more events queued than `fs.inotify.max_queued_events`): the tree
/// is walked again, so a directory created meanwhile is watched from then on (its
/// creation was among the lost events) and the files that appeared or went meanwhile
/// are reported.
#[tokio::test]
async fn after_the_kernel_loses_events_the_tree_is_walked_again() {
    let queue: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .expect("inotify's queue length")
        .trim()
        .parse()
        .unwrap();
    assert!(
        queue <= 1 << 20,
        "a queue of {queue} events is too long to flood here"
    );
    let bridge = Bridge::launch(
        Options::default()
            .file("flood/a.txt", "a")
            .file("flood/b.txt", "b")
            .file("old.txt", "x")
            .file(".git/refs/heads/main", "0"),
    )
    .await;
    bridge
        .wait_status("kernel events", |s| {
            (s["watch"]["mode"] == "events" && s["watch"]["directories"].as_u64() >= Some(3))
                .then_some(())
        })
        .await;
    let mut agent = bridge.ready_agent().await;
    let id = agent.id();
    let blocked_for = Duration::from_secs(5);
    let ms = blocked_for.as_millis() as u64;
    agent
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": "debug_stall_actor",
                                  "arguments": {"actor": "watcher", "ms": ms, "block": true}}}))
        .await;
    wait_for(
        "the watcher's thread blocked",
        Duration::from_secs(20),
        || {
            bridge
                .log()
                .contains("fault injection: blocking the actor's thread")
                .then_some(())
        },
    );
    let blocked_at = std::time::Instant::now();
    // More attribute changes than the kernel queues (alternating between two files, so
    // the kernel cannot merge them), then, with events being lost, a new directory with
    // a file in it, and a file removed.
    use std::os::unix::fs::PermissionsExt;
    let flood = bridge.workspace.join("flood");
    for i in 0..queue + 1000 {
        let file = flood.join(if i % 2 == 0 { "a.txt" } else { "b.txt" });
        let mode = if i % 4 < 2 { 0o600 } else { 0o644 };
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    std::fs::create_dir_all(bridge.workspace.join("late/deep")).unwrap();
    std::fs::write(bridge.workspace.join("late/deep/early.rs"), "x").unwrap();
    std::fs::remove_file(bridge.workspace.join("old.txt")).unwrap();
    // A branch name with a slash: a directory of git's refs.
    std::fs::create_dir(bridge.workspace.join(".git/refs/heads/topic")).unwrap();
    // All of it while the watcher was deaf (else this test would not lose events).
    assert!(
        blocked_at.elapsed() < blocked_for,
        "the flood and the changes took {:?}, longer than the watcher was blocked",
        blocked_at.elapsed()
    );
    let blocked = agent.response_to(&json!(id)).await;
    assert!(!is_error(&blocked["result"]), "{blocked}");

    let w = bridge
        .wait_status("the walk after the overflow", |s| {
            let w = &s["watch"];
            let recent = w["recent"].as_array()?;
            let seen = |c: &str| recent.iter().any(|r| r == c);
            (seen("created late/deep/early.rs") && seen("removed old.txt")).then(|| w.clone())
        })
        .await;
    assert!(w["kernelOverflows"].as_u64().unwrap() >= 1, "{w}");
    assert!(bridge.log().contains("the kernel's event queue overflowed"));
    // The new directories are watched now.
    std::fs::write(bridge.workspace.join("late/deep/after.rs"), "y").unwrap();
    wait_change(&bridge, "created late/deep/after.rs").await;
    std::fs::write(bridge.workspace.join("late/top.rs"), "z").unwrap();
    wait_change(&bridge, "created late/top.rs").await;
    // So is the directory of branches: a commit on `topic/x` is a batch of its own,
    // one that lists no file (only git's refs changed).
    let count = |w: &Value| {
        let n = |k: &str| w[k].as_u64().unwrap();
        (n("batches"), n("changesReported"), n("changesOverflowed"))
    };
    let before = count(&bridge.status().await["watch"]);
    std::fs::write(bridge.workspace.join(".git/refs/heads/topic/x"), "1").unwrap();
    let after = bridge
        .wait_status("a batch for the new branch's ref", |s| {
            let now = count(&s["watch"]);
            (now.0 > before.0).then_some(now)
        })
        .await;
    assert_eq!(
        (after.1, after.2),
        (before.1, before.2),
        "{before:?} {after:?}"
    );
}
