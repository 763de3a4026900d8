//! Diagnostics without an editor: real linters through the real binary.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

const CARGO_TOML: &str =
    "[package]\nname = \"fixture\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";
const BROKEN: &str = "fn main() {\n    let x: u32 = \"not a number\";\n    println!(\"{x}\");\n}\n";

fn rust_fixture() -> Options {
    Options::default()
        .file("Cargo.toml", CARGO_TOML)
        .file("src/main.rs", BROKEN)
}

fn uri(bridge: &Bridge, rel: &str) -> String {
    format!("file://{}", bridge.workspace.join(rel).display())
}

#[tokio::test]
async fn a_rust_compile_error_comes_back_with_file_range_and_severity() {
    let bridge = Bridge::launch(rust_fixture()).await;
    let mut agent = bridge.ready_agent().await;
    let main = uri(&bridge, "src/main.rs");
    let result = agent.call("getDiagnostics", json!({"uri": main})).await;
    assert!(!is_error(&result), "{result}");
    let files = json_text(&result);
    assert_eq!(files.as_array().unwrap().len(), 1, "{files}");
    assert_eq!(
        files[0]["uri"],
        main.as_str(),
        "the uri asked for is echoed"
    );
    let error = files[0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "E0308")
        .unwrap_or_else(|| panic!("no E0308 in {files}"));
    assert_eq!(error["severity"], "Error");
    assert_eq!(error["source"], "rustc");
    assert!(error["message"]
        .as_str()
        .unwrap()
        .contains("mismatched types"));
    assert_eq!(error["range"]["start"], json!({"line": 1, "character": 17}));
    assert_eq!(error["range"]["end"], json!({"line": 1, "character": 31}));

    // All files, and a file with nothing known.
    let all = json_text(&agent.call("getDiagnostics", json!({})).await);
    assert!(all
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["uri"] == main.as_str()));
    let readme = agent
        .call("getDiagnostics", json!({"uri": uri(&bridge, "README.md")}))
        .await;
    assert_eq!(text(&readme), "[]");
    // … and says that nothing checked it, so that "[]" is not read as "no errors".
    let note = readme["content"][1]["text"].as_str().unwrap_or_default();
    assert!(
        note.starts_with("Nothing checked README.md: the linters here (cargo) do not cover it"),
        "{readme}"
    );
    assert_eq!(
        text(
            &agent
                .call("getDiagnostics", json!({"uri": "file:///etc/passwd"}))
                .await
        ),
        "[]"
    );

    // Fixing the file through the bridge invalidates the cached result.
    agent.call("replaceBlock", json!({"filePath": "src/main.rs", "oldContent": "\"not a number\"", "newContent": "42"})).await;
    let after = json_text(&agent.call("getDiagnostics", json!({"uri": main})).await);
    let errors: Vec<&Value> = after
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["diagnostics"].as_array().unwrap())
        .filter(|d| d["severity"] == "Error")
        .collect();
    assert!(errors.is_empty(), "{after}");
    // A file a linter covers: its empty list needs no word.
    let clean = agent.call("getDiagnostics", json!({"uri": main})).await;
    assert_eq!(
        clean["content"].as_array().map(Vec::len),
        Some(1),
        "{clean}"
    );
}

#[tokio::test]
async fn a_linter_whose_output_cannot_be_parsed_is_reported_by_name() {
    let garbage = "#!/bin/sh\necho 'this is not json'\n";
    let slow = "#!/bin/sh\nsleep 30\n";
    // A linter that cannot check at all (its configuration unreadable, a toolchain
    // missing): it fails and finds nothing.
    let broken = "#!/bin/sh\necho \"error TS5083: Cannot read file 'tsconfig.json'.\"\nexit 1\n";
    let bridge = Bridge::launch(
        rust_fixture()
            .file("tsconfig.json", "{\n")
            .file("node_modules/.bin/tsc", broken)
            .file("eslint.config.js", "export default [];\n")
            .file("node_modules/.bin/eslint", garbage)
            .file("biome.json", "{}\n")
            .file("node_modules/.bin/biome", slow)
            // Long enough for cargo's first check of the fixture on a loaded machine
            // (the other linters run beside it), short of the slow one's 30 s.
            .set("diagnostics.timeout_ms", 8000),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    // The answer comes when the last linter ends (the slow one at its 8 s timeout): a
    // loaded machine may take longer than the harness's usual wait.
    let id = agent.id();
    agent
        .send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "getDiagnostics", "arguments": {"uri": uri(&bridge, "src/main.rs")}}}),
        )
        .await;
    let result = agent
        .response_within(&json!(id), Duration::from_secs(40))
        .await["result"]
        .clone();
    assert!(!is_error(&result), "{result}");
    assert!(
        text(&result).contains("E0308"),
        "cargo still answers: {result}"
    );
    let notes = result["content"][1]["text"].as_str().unwrap_or_default();
    assert!(notes.contains("eslint: failed to parse output"), "{notes}");
    assert!(notes.contains("biome: timed out after 8000 ms"), "{notes}");
    assert!(
        notes.contains(
            "tsc: exited 1 without a finding: error TS5083: Cannot read file 'tsconfig.json'."
        ),
        "{notes}"
    );
    // The timed-out linter's process group is gone.
    let linter = format!("{}/node_modules/.bin/biome", bridge.workspace.display());
    wait_for_blocking(
        "the timed-out linter's process group is gone",
        Duration::from_secs(3),
        move || {
            let ps = std::process::Command::new("pgrep")
                .args(["-f", &linter])
                .output()
                .unwrap();
            ps.stdout.is_empty().then_some(())
        },
    )
    .await;
}

#[tokio::test]
async fn ruff_findings_come_back_as_warnings() {
    let venv_bin = concat!(env!("CARGO_MANIFEST_DIR"), "/.venv-test/bin");
    if !std::path::Path::new(venv_bin).join("ruff").exists() {
        assert!(
            std::env::var_os("REQUIRE_RUFF").is_none(),
            "ruff is required: run ./scripts/test.sh"
        );
        eprintln!("skipping: ruff is not installed (./scripts/test.sh installs it)");
        return;
    }
    let mut opts = Options::default().file("tool.py", "import os\n\nprint('hi')\n");
    opts.env.push((
        "PATH".into(),
        format!("{venv_bin}:{}", std::env::var("PATH").unwrap_or_default()),
    ));
    let bridge = Bridge::launch(opts).await;
    let mut agent = bridge.ready_agent().await;
    let files = json_text(
        &agent
            .call("getDiagnostics", json!({"uri": uri(&bridge, "tool.py")}))
            .await,
    );
    let d = &files[0]["diagnostics"][0];
    assert_eq!(
        (
            d["code"].as_str(),
            d["severity"].as_str(),
            d["source"].as_str()
        ),
        (Some("F401"), Some("Warning"), Some("ruff")),
        "{files}"
    );
    assert_eq!(d["range"]["start"], json!({"line": 0, "character": 7}));
}

/// `watchDiagnostics` without an editor: the linters re-run when a file changes on
/// disk, and the call returns the files whose diagnostics changed (cleared: empty).
#[tokio::test]
async fn watch_diagnostics_without_an_editor_follows_edits_on_disk() {
    let bridge = Bridge::launch(
        Options::default()
            .file("Cargo.toml", CARGO_TOML)
            .file("src/main.rs", "fn main() {}\n")
            .file(".gitignore", "target/\n")
            .set("diagnostics.rerun_debounce_ms", 200),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    let watch = |agent: &mut Agent| {
        let id = agent.id();
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "watchDiagnostics", "arguments": {"timeoutMs": 50000}}});
        (id, msg)
    };
    let (id, msg) = watch(&mut agent);
    agent.send(&msg).await;
    std::fs::write(bridge.workspace.join("src/main.rs"), BROKEN).unwrap();
    let resp = agent.response_to(&json!(id)).await;
    let files = json_text(&resp["result"]);
    assert_eq!(files[0]["uri"], uri(&bridge, "src/main.rs"), "{files}");
    let message = files[0]["diagnostics"][0]["message"].as_str().unwrap();
    assert!(message.contains("mismatched types"), "{message}");
    let (id, msg) = watch(&mut agent);
    agent.send(&msg).await;
    std::fs::write(bridge.workspace.join("src/main.rs"), "fn main() {}\n").unwrap();
    let resp = agent.response_to(&json!(id)).await;
    let files = json_text(&resp["result"]);
    assert_eq!(
        files,
        json!([{"uri": uri(&bridge, "src/main.rs"), "diagnostics": []}]),
        "cleared"
    );
}

/// Issue 31, item 4: a `build.rs` an agent writes is not run by the live re-run that
/// its creation sets off (cargo pauses, the log says why); a `getDiagnostics` call runs
/// it, inside the command sandbox: it writes in the workspace, not outside.
#[tokio::test]
async fn an_agent_written_build_script_runs_only_when_asked_and_confined() {
    let outside = tempfile::tempdir().unwrap();
    let sentinel = outside.path().join("ran-outside");
    let bridge = Bridge::launch(
        Options::default()
            .file("Cargo.toml", CARGO_TOML)
            .file("src/main.rs", "fn main() {}\n"),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    // The first run (asked) has nothing to execute but the crate.
    assert!(!is_error(&agent.call("getDiagnostics", json!({})).await));
    let build = format!(
        "fn main() {{\n    let _ = std::fs::write({:?}, \"x\");\n    std::fs::write(std::path::Path::new(env!(\"CARGO_MANIFEST_DIR\")).join(\"ran-inside\"), \"x\").unwrap();\n}}\n",
        sentinel.display().to_string()
    );
    let r = agent
        .call(
            "createFile",
            json!({"filePath": "build.rs", "content": build}),
        )
        .await;
    assert!(!is_error(&r), "{r}");
    wait_for("cargo paused in the log", Duration::from_secs(20), || {
        bridge
            .log()
            .contains("makes this linter execute workspace code")
            .then_some(())
    });
    // The live re-run that the change set off ran without cargo.
    wait_for("the live re-run", Duration::from_secs(20), || {
        bridge
            .log()
            .lines()
            .any(|l| l.contains("linters ran") && l.contains("asked=false"))
            .then_some(())
    });
    assert!(
        !bridge.workspace.join("ran-inside").exists(),
        "a live run ran build.rs"
    );
    let asked = agent.call("getDiagnostics", json!({})).await;
    assert!(!is_error(&asked), "{asked}");
    assert!(
        bridge.workspace.join("ran-inside").exists(),
        "asked, cargo ran build.rs"
    );
    assert!(!sentinel.exists(), "build.rs wrote outside the workspace");
}
