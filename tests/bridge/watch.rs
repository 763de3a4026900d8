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
    // directory exists (whether the walk or the kernel sees it first).
    for i in 0..12 {
        let dir = bridge.workspace.join(format!("burst/d{i}/e"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f.rs"), "x").unwrap();
    }
    bridge
        .wait_status("every file of the burst", |s| {
            let recent = s["watch"]["recent"].as_array()?;
            (0..12)
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
