//! Workspace file tools without an editor: happy paths, bad arguments, and agents
//! editing the same file concurrently.

use serde_json::{json, Value};

use crate::harness::*;

fn read(bridge: &Bridge, rel: &str) -> String {
    std::fs::read_to_string(bridge.workspace.join(rel)).unwrap()
}

#[tokio::test]
async fn read_file_ranges_caps_and_errors() {
    let bridge = Bridge::launch(Options::default()).await;
    std::fs::write(bridge.workspace.join("five.txt"), "1\n2\n3\n4\n5\n").unwrap();
    std::fs::write(bridge.workspace.join("bin.dat"), b"\0\x01\x02").unwrap();
    let mut agent = bridge.ready_agent().await;
    let all = json_text(
        &agent
            .call("readFile", json!({"filePath": "five.txt"}))
            .await,
    );
    assert_eq!(
        (all["content"].as_str().unwrap(), all["totalLines"].as_u64()),
        ("1\n2\n3\n4\n5\n", Some(5))
    );
    assert_eq!(all["source"], "workspace");
    let mid = json_text(
        &agent
            .call(
                "readFile",
                json!({"filePath": "five.txt", "startLine": 2, "endLine": 3}),
            )
            .await,
    );
    assert_eq!(
        (mid["content"].as_str().unwrap(), mid["endLine"].as_u64()),
        ("2\n3\n", Some(3))
    );
    let cut = json_text(
        &agent
            .call("readFile", json!({"filePath": "five.txt", "maxBytes": 4}))
            .await,
    );
    assert_eq!(cut["truncated"], true);
    assert!(
        cut["content"]
            .as_str()
            .unwrap()
            .contains("read on with startLine=3"),
        "{cut}"
    );
    // A range that shows nothing is an error saying why, not an empty success.
    for (range, says) in [
        (
            json!({"startLine": 9}),
            "startLine 9 is past the end of the file, which has 5 lines",
        ),
        (
            json!({"startLine": 3, "endLine": 2}),
            "endLine 2 is before startLine 3",
        ),
    ] {
        let mut args = range.clone();
        args["filePath"] = json!("five.txt");
        let r = agent.call("readFile", args).await;
        assert!(is_error(&r) && text(&r).contains(says), "{range}: {r}");
    }

    for (path, message) in [
        ("nope.txt", "File not found: "),
        ("src", "Is a directory: "),
        ("bin.dat", "Not a text file"),
    ] {
        let r = agent.call("readFile", json!({"filePath": path})).await;
        assert!(is_error(&r) && text(&r).starts_with(message), "{path}: {r}");
    }
    for bad in [
        json!({}),
        json!({"filePath": "a", "startLine": 0}),
        json!({"filePath": "a", "extra": 1}),
        json!({"filePath": ["a"]}),
    ] {
        arguments_refused(&agent.call_raw("readFile", bad.clone()).await);
    }
}

#[tokio::test]
async fn create_delete_and_rename() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    let r = json_text(
        &agent
            .call(
                "createFile",
                json!({"filePath": "new/deep/a.txt", "content": "hello"}),
            )
            .await,
    );
    assert_eq!(
        (r["success"].clone(), r["created"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(read(&bridge, "new/deep/a.txt"), "hello");
    let again = agent
        .call(
            "createFile",
            json!({"filePath": "new/deep/a.txt", "content": "x"}),
        )
        .await;
    assert!(
        is_error(&again) && text(&again).starts_with("Already exists"),
        "{again}"
    );
    // A directory where a file is asked for (overwrite or not), content for a
    // directory, and a directory asked for again.
    let dir = agent
        .call(
            "createFile",
            json!({"filePath": "new/deep", "content": "x", "overwrite": true}),
        )
        .await;
    assert!(
        is_error(&dir) && text(&dir).ends_with("new/deep is a directory: overwrite replaces files only; delete it first to make it a file"),
        "{dir}"
    );
    let both = agent
        .call(
            "createFile",
            json!({"filePath": "d2", "content": "x", "isDirectory": true}),
        )
        .await;
    assert!(
        is_error(&both) && text(&both).contains("has none"),
        "{both}"
    );
    let existed = json_text(
        &agent
            .call(
                "createFile",
                json!({"filePath": "new/deep", "isDirectory": true}),
            )
            .await,
    );
    assert_eq!(existed["created"], false, "{existed}");
    let overwritten = json_text(
        &agent
            .call(
                "createFile",
                json!({"filePath": "new/deep/a.txt", "content": "bye", "overwrite": true}),
            )
            .await,
    );
    assert_eq!(read(&bridge, "new/deep/a.txt"), "bye");
    assert_eq!(
        (
            overwritten["created"].clone(),
            overwritten["detail"].clone()
        ),
        (json!(false), json!("file overwritten")),
        "{overwritten}"
    );
    agent
        .call(
            "createFile",
            json!({"filePath": "emptydir", "isDirectory": true}),
        )
        .await;
    assert!(bridge.workspace.join("emptydir").is_dir());

    let moved = json_text(
        &agent
            .call(
                "renameFile",
                json!({"oldPath": "new/deep/a.txt", "newPath": "b.txt"}),
            )
            .await,
    );
    assert_eq!(moved["renamed"], true);
    assert_eq!(read(&bridge, "b.txt"), "bye");
    let clash = agent
        .call(
            "renameFile",
            json!({"oldPath": "b.txt", "newPath": "README.md"}),
        )
        .await;
    assert!(is_error(&clash) && text(&clash).starts_with("Already exists"));
    assert_eq!(read(&bridge, "README.md"), "# fixture\n");

    let full = agent.call("deleteFile", json!({"filePath": "new"})).await;
    assert!(
        is_error(&full) && text(&full).starts_with("Directory not empty"),
        "{full}"
    );
    agent
        .call("deleteFile", json!({"filePath": "new", "recursive": true}))
        .await;
    assert!(!bridge.workspace.join("new").exists());
    agent.call("deleteFile", json!({"filePath": "b.txt"})).await;
    assert!(!bridge.workspace.join("b.txt").exists());
    let root = agent
        .call("deleteFile", json!({"filePath": ".", "recursive": true}))
        .await;
    assert_eq!(text(&root), "Refusing to delete the workspace root");
    // A repository's own files are git's to change: neither deleted, written nor
    // renamed into or out of, however the path is spelt, in the workspace's repository
    // or one nested in it.
    std::fs::create_dir_all(bridge.workspace.join(".git/hooks")).unwrap();
    std::fs::write(bridge.workspace.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(bridge.workspace.join("vendor/lib/.git")).unwrap();
    for (tool, args) in [
        ("deleteFile", json!({"filePath": ".git", "recursive": true})),
        ("deleteFile", json!({"filePath": "src/../.git/config"})),
        (
            "editText",
            json!({"filePath": ".git/config", "edits": [{"type": "insert", "line": 1, "column": 1, "text": "[core]\n\tfsmonitor = x\n"}]}),
        ),
        (
            "createFile",
            json!({"filePath": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}),
        ),
        (
            "createFile",
            json!({"filePath": "vendor/lib/.git/config", "content": "x"}),
        ),
        (
            "renameFile",
            json!({"oldPath": "src/main.rs", "newPath": ".git/main.rs"}),
        ),
    ] {
        let refused = agent.call(tool, args.clone()).await;
        assert!(
            is_error(&refused)
                && (text(&refused).starts_with("Refusing to change .git")
                    || text(&refused).starts_with("Refusing to change vendor/lib/.git")),
            "{tool} {args}: {refused}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(bridge.workspace.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!bridge.workspace.join(".git/hooks/pre-commit").exists());
    assert!(bridge.workspace.join("src/main.rs").exists());
    // A name that only starts with .git is an ordinary file.
    let ignore = agent
        .call(
            "createFile",
            json!({"filePath": ".gitignore", "content": "target/\n", "overwrite": true}),
        )
        .await;
    assert!(!is_error(&ignore), "{ignore}");
    let gone = agent.call("deleteFile", json!({"filePath": "b.txt"})).await;
    assert!(text(&gone).starts_with("File not found"));
    assert!(bridge.workspace.join("src/main.rs").exists());

    arguments_refused(&agent.call_raw("createFile", json!({"content": "x"})).await);
    arguments_refused(
        &agent
            .call_raw("deleteFile", json!({"filePath": "x", "recursive": "yes"}))
            .await,
    );
    arguments_refused(&agent.call_raw("renameFile", json!({"oldPath": "x"})).await);
}

#[tokio::test]
async fn edit_text_and_replace_block() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    let r = json_text(
        &agent
            .call("editText", json!({"filePath": "src/main.rs", "edits": [
                {"type": "replace", "line": 2, "column": 5, "endLine": 2, "endColumn": 13, "text": "eprintln!"},
                {"type": "insert", "line": 1, "column": 1, "text": "// edited\n"}
            ]}))
            .await,
    );
    assert_eq!(
        (r["success"].clone(), r["editCount"].clone()),
        (json!(true), json!(2))
    );
    assert_eq!(
        read(&bridge, "src/main.rs"),
        "// edited\nfn main() {\n    eprintln!(\"hi\");\n}\n"
    );

    let bad = agent
        .call("editText", json!({"filePath": "src/main.rs", "edits": [{"type": "insert", "line": 99, "column": 1, "text": "x"}]}))
        .await;
    assert!(
        is_error(&bad) && text(&bad).contains("outside the file"),
        "{bad}"
    );
    assert!(
        read(&bridge, "src/main.rs").starts_with("// edited"),
        "unchanged after a refused edit"
    );

    let r = agent
        .call(
            "replaceBlock",
            json!({"filePath": "src/main.rs", "oldContent": "eprintln!", "newContent": "println!"}),
        )
        .await;
    assert_eq!(json_text(&r)["success"], true);
    let absent = agent
        .call(
            "replaceBlock",
            json!({"filePath": "src/main.rs", "oldContent": "nothing like this", "newContent": ""}),
        )
        .await;
    assert!(text(&absent).starts_with("Block not found"));
    let ambiguous = agent
        .call(
            "replaceBlock",
            json!({"filePath": "src/main.rs", "oldContent": "n", "newContent": ""}),
        )
        .await;
    assert!(
        text(&ambiguous).starts_with("Ambiguous block"),
        "{ambiguous}"
    );
    arguments_refused(
        &agent
            .call_raw(
                "replaceBlock",
                json!({"filePath": "src/main.rs", "oldContent": "", "newContent": "x"}),
            )
            .await,
    );
    arguments_refused(
        &agent
            .call_raw("editText", json!({"filePath": "src/main.rs", "edits": []}))
            .await,
    );
    arguments_refused(&agent.call_raw("editText", json!({"filePath": "src/main.rs", "edits": [{"type": "move", "line": 1, "column": 1}]})).await);
}

#[tokio::test]
async fn one_thousand_edits_pass_and_one_thousand_and_one_are_refused() {
    let bridge = Bridge::launch(Options::default()).await;
    std::fs::write(bridge.workspace.join("wide.txt"), "x".repeat(1000) + "\n").unwrap();
    let mut agent = bridge.ready_agent().await;
    let edits = |n: usize| -> Vec<Value> {
        (0..n)
            .map(|i| json!({"type": "insert", "line": 1, "column": i + 1, "text": "y"}))
            .collect()
    };
    let ok = agent
        .call(
            "editText",
            json!({"filePath": "wide.txt", "edits": edits(1000)}),
        )
        .await;
    assert_eq!(json_text(&ok)["editCount"], 1000, "{ok}");
    assert_eq!(read(&bridge, "wide.txt").matches('y').count(), 1000);
    let over = agent
        .call_raw(
            "editText",
            json!({"filePath": "wide.txt", "edits": edits(1001)}),
        )
        .await;
    // Refused naming the limit, without quoting the thousand edits back.
    let why = arguments_refused(&over);
    assert!(why.contains("more than 1000 items (at /edits)"), "{why}");
    assert!(why.len() < 400, "{why}");
}

#[tokio::test]
async fn tree_find_and_search_honour_gitignore() {
    let bridge = Bridge::launch(Options::default()).await;
    let ws = &bridge.workspace;
    std::fs::write(ws.join(".gitignore"), "build/\n").unwrap();
    std::fs::create_dir_all(ws.join("build")).unwrap();
    std::fs::write(ws.join("build/out.rs"), "fn main() { println!(\"hi\"); }").unwrap();
    std::fs::write(ws.join("src/lib.rs"), "pub fn answer() -> u32 { 42 }\n").unwrap();
    let mut agent = bridge.ready_agent().await;
    // A path that is not there is said to be missing, not searched and found empty.
    for (tool, args) in [
        ("searchWorkspace", json!({"query": "x", "path": "nope"})),
        ("findFiles", json!({"pattern": "*.rs", "path": "nope"})),
        ("getFileTree", json!({"path": "nope"})),
    ] {
        let r = agent.call(tool, args).await;
        assert!(
            is_error(&r) && text(&r).starts_with("File not found: ") && text(&r).ends_with("/nope"),
            "{tool}: {r}"
        );
    }
    let tree = json_text(&agent.call("getFileTree", json!({})).await);
    let paths: Vec<&str> = tree["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, vec!["README.md", "src", "src/lib.rs", "src/main.rs"]);
    let shallow = json_text(
        &agent
            .call("getFileTree", json!({"maxDepth": 1, "maxEntries": 1}))
            .await,
    );
    assert_eq!(
        (
            shallow["entries"].as_array().unwrap().len(),
            shallow["truncated"].clone()
        ),
        (1, json!(true))
    );

    let found = json_text(&agent.call("findFiles", json!({"pattern": "*.rs"})).await);
    assert_eq!(found["entries"].as_array().unwrap().len(), 2);
    let bad_glob = agent.call("findFiles", json!({"pattern": "src/[a"})).await;
    assert!(text(&bad_glob).starts_with("Invalid glob"));

    let hits = json_text(
        &agent
            .call("searchWorkspace", json!({"query": "println!(\"hi\")"}))
            .await,
    );
    assert_eq!(hits["matches"].as_array().unwrap().len(), 1);
    assert_eq!(hits["matches"][0]["path"], "src/main.rs");
    assert_eq!(hits["matches"][0]["line"], 2);
    let re = json_text(
        &agent
            .call(
                "searchWorkspace",
                json!({"query": r"fn \w+\(\) -> u32", "regex": true}),
            )
            .await,
    );
    assert_eq!(re["matches"][0]["path"], "src/lib.rs");
    let bad_re = agent
        .call("searchWorkspace", json!({"query": "(", "regex": true}))
        .await;
    assert!(text(&bad_re).starts_with("Invalid pattern"));
    arguments_refused(
        &agent
            .call_raw("searchWorkspace", json!({"query": ""}))
            .await,
    );
    arguments_refused(&agent.call_raw("getFileTree", json!({"maxDepth": 0})).await);
}

/// Hidden files (a committed .github/) are skipped as ripgrep skips them, and found
/// with includeHidden; .git never shows.
#[tokio::test]
async fn hidden_files_are_found_when_asked_for_and_git_never() {
    let bridge = Bridge::launch(Options::default()).await;
    let ws = &bridge.workspace;
    std::fs::create_dir_all(ws.join(".github/workflows")).unwrap();
    std::fs::write(ws.join(".github/workflows/ci.yml"), "name: ci\n").unwrap();
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".git/ci.yml"), "name: ci\n").unwrap();
    let mut agent = bridge.ready_agent().await;
    let paths = |listing: &Value, key: &str| -> Vec<String> {
        listing[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["path"].as_str().unwrap().to_string())
            .collect()
    };
    for hidden in [false, true] {
        let found = json_text(
            &agent
                .call(
                    "findFiles",
                    json!({"pattern": "*.yml", "includeHidden": hidden}),
                )
                .await,
        );
        let hits = json_text(
            &agent
                .call(
                    "searchWorkspace",
                    json!({"query": "name: ci", "includeHidden": hidden}),
                )
                .await,
        );
        let tree = json_text(
            &agent
                .call(
                    "getFileTree",
                    json!({"maxDepth": 1, "includeHidden": hidden}),
                )
                .await,
        );
        let want: Vec<String> = if hidden {
            vec![".github/workflows/ci.yml".into()]
        } else {
            Vec::new()
        };
        assert_eq!(paths(&found, "entries"), want, "findFiles, hidden {hidden}");
        assert_eq!(
            paths(&hits, "matches"),
            want,
            "searchWorkspace, hidden {hidden}"
        );
        let top = paths(&tree, "entries");
        assert_eq!(top.contains(&".github".to_string()), hidden, "{top:?}");
        assert!(
            !top.iter().any(|p| p.starts_with(".git/") || p == ".git"),
            "{top:?}"
        );
    }
}

#[tokio::test]
async fn a_stale_session_gets_concurrent_modification_and_nothing_changes() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut a = bridge.ready_agent().await;
    let mut b = bridge.ready_agent().await;
    a.call("readFile", json!({"filePath": "src/main.rs"})).await;
    b.call("readFile", json!({"filePath": "src/main.rs"})).await;
    let won = a
        .call(
            "replaceBlock",
            json!({"filePath": "src/main.rs", "oldContent": "\"hi\"", "newContent": "\"from a\""}),
        )
        .await;
    assert!(!is_error(&won), "{won}");
    let lost = b
        .call(
            "replaceBlock",
            json!({"filePath": "src/main.rs", "oldContent": "fn main", "newContent": "fn start"}),
        )
        .await;
    assert!(is_error(&lost));
    assert!(
        text(&lost).starts_with("File was modified concurrently"),
        "{lost}"
    );
    assert!(read(&bridge, "src/main.rs").contains("fn main() {\n    println!(\"from a\")"));
    // After reading again, b can edit.
    b.call("readFile", json!({"filePath": "src/main.rs"})).await;
    let ok = b
        .call(
            "replaceBlock",
            json!({"filePath": "src/main.rs", "oldContent": "fn main", "newContent": "fn start"}),
        )
        .await;
    assert!(!is_error(&ok), "{ok}");
    // Every edit is attributed to its session in the timeline.
    let status = bridge.status().await;
    let edits: Vec<&Value> = status["recentActivity"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["tool"] == "replaceBlock")
        .collect();
    let sessions: std::collections::HashSet<&str> = edits
        .iter()
        .map(|e| e["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!((edits.len(), sessions.len()), (3, 2));
}

#[tokio::test]
async fn two_agents_racing_on_one_file_one_wins_and_the_file_is_never_torn() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut a = bridge.ready_agent().await;
    let mut b = bridge.ready_agent().await;
    let base = "shared line\n".repeat(2000);
    for round in 0..15 {
        std::fs::write(bridge.workspace.join("race.txt"), &base).unwrap();
        a.call("readFile", json!({"filePath": "race.txt", "maxBytes": 16}))
            .await;
        b.call("readFile", json!({"filePath": "race.txt", "maxBytes": 16}))
            .await;
        let edit = |who: &str| json!({"filePath": "race.txt", "edits": [{"type": "insert", "line": 1, "column": 1, "text": format!("{who}\n")}]});
        let (ra, rb) = tokio::join!(a.call("editText", edit("A")), b.call("editText", edit("B")));
        let winners = [&ra, &rb].iter().filter(|r| !is_error(r)).count();
        assert_eq!(winners, 1, "round {round}: {ra} {rb}");
        let loser = if is_error(&ra) { &ra } else { &rb };
        assert!(
            text(loser).starts_with("File was modified concurrently"),
            "{loser}"
        );
        let content = read(&bridge, "race.txt");
        assert!(
            content == format!("A\n{base}") || content == format!("B\n{base}"),
            "round {round}: torn file"
        );
    }
}

#[tokio::test]
async fn reading_a_fifo_is_refused_at_once_and_keeps_no_thread() {
    let bridge = Bridge::launch(
        Options::default()
            .set("rate_limit.requests", 1000)
            .set("tools.timeout_ms", 2000),
    )
    .await;
    mkfifo(&bridge.workspace.join("pipe"));
    let mut agent = bridge.ready_agent().await;
    let pid = bridge.pid();
    // Warm the blocking pool up with as many concurrent normal reads as a batch.
    let batch = |agent: &mut Agent, path: &str| {
        let ids: Vec<i64> = (0..10).map(|_| agent.id()).collect();
        let msgs: Vec<serde_json::Value> = ids
            .iter()
            .map(|id| {
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "readFile", "arguments": {"filePath": path}}})
            })
            .collect();
        (ids, msgs)
    };
    let (ids, msgs) = batch(&mut agent, "README.md");
    for m in &msgs {
        agent.send(m).await;
    }
    for id in ids {
        let resp = agent.response_to(&json!(id)).await;
        assert!(!is_error(&resp["result"]), "{resp}");
    }
    let threads_before = proc_status(pid, "Threads");
    let started = std::time::Instant::now();
    for _ in 0..30 {
        let (ids, msgs) = batch(&mut agent, "pipe");
        let sent = std::time::Instant::now();
        for m in &msgs {
            agent.send(m).await;
        }
        for id in ids {
            let resp = agent.response_to(&json!(id)).await;
            let result = &resp["result"];
            assert!(is_error(result), "{resp}");
            assert!(
                text(result).contains("Not a regular file") && text(result).contains("FIFO"),
                "{resp}"
            );
        }
        assert!(sent.elapsed() < std::time::Duration::from_secs(1));
    }
    let threads_after = proc_status(pid, "Threads");
    assert!(
        // The blocking pool may still grow to one batch's concurrency; a stuck read
        // would keep one thread per call (300).
        threads_after <= threads_before + 10,
        "threads {threads_before} -> {threads_after} after 300 FIFO reads in {:?}",
        started.elapsed()
    );
    // Normal reads are unaffected.
    let ok = agent
        .call("readFile", json!({"filePath": "README.md"}))
        .await;
    assert!(text(&ok).contains("# fixture"), "{ok}");
}

/// Exchanges two names atomically (`renameat2(RENAME_EXCHANGE)`).
fn exchange(a: &std::path::Path, b: &std::path::Path) {
    let a = std::ffi::CString::new(a.as_os_str().as_encoded_bytes()).unwrap();
    let b = std::ffi::CString::new(b.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: valid NUL-terminated paths.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
}

/// Issue 17, item 4: a local process swapping a symlink out of the workspace in and
/// out, as fast as it can, while an agent reads and creates through it. Confinement
/// is checked on the path, then the file is opened beneath the root's directory
/// handle (`openat2` `RESOLVE_BENEATH`), so whichever way a call lands, nothing
/// outside is read or created. Up to 10 000 tries (one `readFile` of a swapped file,
/// one of a file in a swapped directory and one `createFile` in a swapped directory
/// each, and a `searchWorkspace` for the outside file's text every 24 tries),
/// bounded at 20 s.
#[tokio::test]
async fn swapping_symlinks_never_leads_reads_or_creates_outside() {
    const TRIES: usize = 10_000;
    const BUDGET: std::time::Duration = std::time::Duration::from_secs(20);
    let bridge = Bridge::launch(Options::default().set("rate_limit.requests", 100_000)).await;
    let outside = tempfile::tempdir().unwrap();
    let out = outside.path().canonicalize().unwrap();
    std::fs::write(out.join("secret.txt"), "OUTSIDE-SENTINEL\n").unwrap();
    let ws = bridge.workspace.canonicalize().unwrap();
    // `d` and `f` are a real directory and file; `d.alt` and `f.alt` symlinks out.
    std::fs::create_dir(ws.join("d")).unwrap();
    std::fs::write(ws.join("d/secret.txt"), "inside\n").unwrap();
    std::fs::write(ws.join("f"), "inside\n").unwrap();
    std::os::unix::fs::symlink(&out, ws.join("d.alt")).unwrap();
    std::os::unix::fs::symlink(out.join("secret.txt"), ws.join("f.alt")).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swaps = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let swapper = {
        let (stop, swaps, ws) = (stop.clone(), swaps.clone(), ws.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                exchange(&ws.join("d"), &ws.join("d.alt"));
                exchange(&ws.join("f"), &ws.join("f.alt"));
                swaps.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        })
    };
    let mut agent = bridge.ready_agent().await;
    let started = std::time::Instant::now();
    let (mut tries, mut read_ok, mut refused, mut created) = (0usize, 0usize, 0usize, 0usize);
    let mut searches = 0usize;
    while tries < TRIES && started.elapsed() < BUDGET {
        // Three calls per try, three tries per batch (within 10 concurrent calls).
        let mut ids = Vec::new();
        for k in 0..3 {
            let n = tries + k;
            for (name, args) in [
                ("readFile", json!({"filePath": "f"})),
                ("readFile", json!({"filePath": "d/secret.txt"})),
                (
                    "createFile",
                    json!({"filePath": format!("d/sub{}/new{n}.txt", n % 7), "content": "x"}),
                ),
            ] {
                let id = agent.id();
                agent
                    .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": {"name": name, "arguments": args}}))
                    .await;
                ids.push((id, name));
            }
        }
        // Every eighth batch, a search for the sentinel's text too: the walker lists
        // `f`, which may be the outward symlink by the time it is opened.
        let search_id = if tries % 24 == 0 {
            let id = agent.id();
            agent
                .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "searchWorkspace", "arguments": {"query": "OUTSIDE-SENTINEL"}}}))
                .await;
            Some(id)
        } else {
            None
        };
        for (id, name) in ids {
            let resp = agent.response_to(&json!(id)).await;
            let result = &resp["result"];
            let body = text(result);
            assert!(!body.contains("OUTSIDE-SENTINEL"), "read outside: {resp}");
            if is_error(result) {
                refused += 1;
            } else if name == "readFile" {
                assert!(body.contains("inside"), "{resp}");
                read_ok += 1;
            } else {
                created += 1;
            }
        }
        if let Some(id) = search_id {
            let search = agent.response_to(&json!(id)).await;
            assert!(!is_error(&search["result"]), "{search}");
            let hits = json_text(&search["result"]);
            assert_eq!(hits["matches"], json!([]), "found outside: {search}");
            searches += 1;
        }
        tries += 3;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    let elapsed = started.elapsed();
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    eprintln!(
        "{tries} tries in {elapsed:?}: {read_ok} reads inside, {created} creates inside, \
         {refused} refused, {searches} searches found nothing, {} swaps",
        swaps.load(std::sync::atomic::Ordering::Relaxed)
    );
    assert_eq!(
        left,
        ["secret.txt"],
        "created outside the workspace: {left:?}"
    );
    assert!(tries >= 1_000, "only {tries} tries in {elapsed:?}");
    assert!(
        read_ok > 0 && created > 0,
        "the race never let a call through"
    );
    // The swap did land between check and use on some calls: refused, never outside.
    assert!(refused > 0, "the race was never hit");
    // Both sides of the race are still inside the workspace and readable as usual.
    let ok = agent
        .call("readFile", json!({"filePath": "README.md"}))
        .await;
    assert!(text(&ok).contains("# fixture"), "{ok}");
}
