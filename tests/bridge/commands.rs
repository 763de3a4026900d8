//! runCommand / runInTerminal / getTerminalOutput through the real binary.

use serde_json::json;

use crate::harness::*;

fn with_allow(list: &str) -> Options {
    let mut opts = Options::default();
    opts.env
        .push(("IDE_BRIDGE_COMMANDS__ALLOW".into(), list.into()));
    opts
}

#[tokio::test]
async fn runs_allowlisted_commands_without_a_shell() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    let ok = json_text(
        &agent
            .call(
                "runCommand",
                json!({"command": "git", "args": ["--version"]}),
            )
            .await,
    );
    assert_eq!(ok["exitCode"], 0);
    assert!(ok["stdout"].as_str().unwrap().starts_with("git version"));
    assert_eq!(ok["command"], "git --version");
    let failing = agent
        .call(
            "runCommand",
            // Not a repository: git exits 128. (An unknown subcommand is refused by
            // the policy now, since it could be an alias.)
            json!({"command": "git", "args": ["rev-parse", "--verify", "HEAD"]}),
        )
        .await;
    assert!(
        !is_error(&failing),
        "a non-zero exit is a result, not a tool error"
    );
    assert_ne!(json_text(&failing)["exitCode"], 0);
    let refused = agent
        .call("runCommand", json!({"command": "rm", "args": ["-rf", "."]}))
        .await;
    assert!(
        is_error(&refused) && text(&refused).starts_with("Command not in allowlist"),
        "{refused}"
    );
    assert!(bridge.workspace.join("src/main.rs").exists());
    let missing = agent.call_raw("runCommand", json!({"args": ["x"]})).await;
    assert!(arguments_refused(&missing).contains("command"), "{missing}");
    arguments_refused(
        &agent
            .call_raw("runCommand", json!({"command": "git", "args": "status"}))
            .await,
    );
}

#[tokio::test]
async fn interpreters_are_refused_even_when_configured() {
    let bridge = Bridge::launch(with_allow("git,bash,python3,node")).await;
    assert!(
        bridge
            .log()
            .contains("commands.allow lists a program that is never allowed"),
        "start-up warns about the allowlist"
    );
    let mut agent = bridge.ready_agent().await;
    for program in ["bash", "python3", "node"] {
        let r = agent
            .call(
                "runCommand",
                json!({"command": program, "args": ["--version"]}),
            )
            .await;
        assert!(is_error(&r), "{program}");
        let said = text(&r);
        assert!(
            said.starts_with(&format!(
                "Command not allowed: {program:?} is never allowed: shells, interpreters"
            )) && said.ends_with("whatever commands.allow says"),
            "{said}"
        );
    }
}

#[tokio::test]
async fn argument_limits_at_and_past_the_edge() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;
    let args = |n: usize| vec!["--version".to_string(); n];
    let at = agent
        .call("runCommand", json!({"command": "git", "args": args(64)}))
        .await;
    assert!(!is_error(&at), "{at}");
    let past = agent
        .call("runCommand", json!({"command": "git", "args": args(65)}))
        .await;
    assert_eq!(text(&past), "Too many arguments: 65 (max 64)");
    let long = |n: usize| vec!["--version".to_string(), "x".repeat(n)];
    let at = agent
        .call("runCommand", json!({"command": "git", "args": long(4096)}))
        .await;
    assert!(!text(&at).contains("bytes (max"), "{at}");
    let past = agent
        .call("runCommand", json!({"command": "git", "args": long(4097)}))
        .await;
    assert_eq!(text(&past), "Argument 1 is 4097 bytes (max 4096)");
}

#[tokio::test]
async fn timeouts_kill_the_process_group_and_keep_partial_output() {
    let marker = "7.3137";
    let bridge = Bridge::launch(with_allow("sleep,seq").set("commands.timeout_ms", 400)).await;
    let mut agent = bridge.ready_agent().await;
    let r = agent
        .call("runCommand", json!({"command": "sleep", "args": [marker]}))
        .await;
    assert!(is_error(&r), "{r}");
    let body = json_text(&r);
    assert_eq!(body["timedOut"], true);
    assert!(body["stderr"]
        .as_str()
        .unwrap()
        .contains("timed out after 400 ms"));
    // Asking for longer than the bridge allows: the answer says why it ended sooner.
    let r = agent
        .call(
            "runCommand",
            json!({"command": "sleep", "args": ["5"], "timeoutMs": 90000}),
        )
        .await;
    let stderr = json_text(&r)["stderr"].as_str().unwrap().to_string();
    assert!(
        stderr.contains("timed out after 400 ms")
            && stderr.contains(
                "[timeoutMs 90000 was more than the bridge allows: commands.timeout_ms is 400 ms]"
            ),
        "{stderr}"
    );
    let orphans = tokio::process::Command::new("pgrep")
        .args(["-f", &format!("sleep {marker}")])
        .output()
        .await
        .unwrap();
    assert!(
        orphans.stdout.is_empty(),
        "no orphan left: {}",
        String::from_utf8_lossy(&orphans.stdout)
    );

    let big = json_text(
        &agent
            .call(
                "runCommand",
                json!({"command": "seq", "args": ["1", "100000"]}),
            )
            .await,
    );
    assert_eq!(big["truncated"], true);
    let out = big["stdout"].as_str().unwrap();
    // The first and the last 32 KiB: where a build or a test run says how it ended.
    assert!(
        out.starts_with("1\n2\n3\n")
            && out.contains(
                "[… 523359 bytes left out: the first 32768 and the last 32768 of 588895 bytes"
            )
            && out.ends_with("99999\n100000\n"),
        "{}",
        &out[out.len() - 120..]
    );
}

#[tokio::test]
async fn commands_get_a_minimal_environment_without_secrets() {
    let mut opts = with_allow("printenv");
    opts.env.push(("MY_API_TOKEN".into(), "hunter2".into()));
    opts.env
        .push(("AWS_SECRET_ACCESS_KEY".into(), "hunter3".into()));
    let bridge = Bridge::launch(opts).await;
    let mut agent = bridge.ready_agent().await;
    let env = json_text(
        &agent
            .call("runCommand", json!({"command": "printenv"}))
            .await,
    );
    let out = env["stdout"].as_str().unwrap();
    assert!(out.contains("PATH=") && out.contains("TERM=dumb"), "{out}");
    assert!(
        !out.contains("hunter") && !out.contains("CLAUDE_CONFIG_DIR"),
        "{out}"
    );
}

#[tokio::test]
async fn terminals_keep_the_last_output_per_session() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut a = bridge.ready_agent().await;
    let mut b = bridge.ready_agent().await;
    let run = json_text(
        &a.call(
            "runInTerminal",
            json!({"command": "git", "args": ["--version"], "name": "build"}),
        )
        .await,
    );
    let name = run["terminalName"].as_str().unwrap().to_string();
    assert!(
        name.ends_with("-build") && name.len() == 8 + 1 + 5,
        "{name}"
    );
    let out = json_text(&a.call("getTerminalOutput", json!({"name": "build"})).await);
    assert_eq!(
        (out["available"].clone(), out["terminalName"].clone()),
        (json!(true), json!(name))
    );
    assert!(out["lines"].as_str().unwrap().starts_with("git version"));
    let latest = json_text(&a.call("getTerminalOutput", json!({})).await);
    assert_eq!(latest["terminalName"], name.as_str());
    let other = json_text(&b.call("getTerminalOutput", json!({"name": "build"})).await);
    assert_eq!(
        other["available"], false,
        "another session's terminal is not visible"
    );
    arguments_refused(&a.call_raw("getTerminalOutput", json!({"lines": 0})).await);
    arguments_refused(
        &a.call_raw("runInTerminal", json!({"command": "git", "name": ""}))
            .await,
    );
}

#[tokio::test]
async fn git_bypasses_of_the_allowlist_are_refused_and_run_nothing() {
    let bridge = Bridge::launch(Options::default()).await;
    let ws = &bridge.workspace;
    let sentinel_dir = tempfile::tempdir().unwrap();
    let sentinel = sentinel_dir.path().join("ran");
    let touch = format!("touch {}", sentinel.display());
    let mut agent = bridge.ready_agent().await;
    let init = agent
        .call(
            "runCommand",
            json!({"command": "git", "args": ["init", "-q"]}),
        )
        .await;
    assert_eq!(json_text(&init)["exitCode"], 0, "{init}");
    for args in [
        json!(["--namespace", "x", "config", "core.fsmonitor", touch]),
        json!(["--no-pager", "config", "alias.st", format!("!{touch}")]),
        json!(["st"]),
        json!(["grep", format!("--open-files-in-pager={touch}"), "x"]),
        json!(["grep", "-Otouch", "x"]),
        json!(["clone", "-u", touch, ".", "copy"]),
        json!(["log", "--output=out.txt"]),
        json!(["-p", "log"]),
    ] {
        let r = agent
            .call("runCommand", json!({"command": "git", "args": args}))
            .await;
        assert!(is_error(&r), "{args}: {r}");
        assert!(text(&r).contains("blocked"), "{args}: {r}");
    }
    // Configuration written as a file (createFile can reach .git/config) is not obeyed.
    let config = ws.join(".git/config");
    let mut text_config = std::fs::read_to_string(&config).unwrap();
    text_config.push_str(&format!(
        "[core]\n\tfsmonitor = {touch}\n\thooksPath = hooks\n[alias]\n\tst = !{touch}\n"
    ));
    std::fs::write(&config, text_config).unwrap();
    let status = agent
        .call("runCommand", json!({"command": "git", "args": ["status"]}))
        .await;
    assert!(!is_error(&status), "{status}");
    let tool = agent.call("gitStatus", json!({})).await;
    assert!(!is_error(&tool), "{tool}");
    assert!(
        !sentinel.exists(),
        "git ran a program from the repository config"
    );
    assert!(!ws.join("out.txt").exists() && !ws.join("copy").exists());
}

/// Runs an agent-written `npm run evil` script that writes outside the workspace,
/// inside it, in its temp dir, and connects to a local listener; returns its report,
/// whether the sentinel outside exists and whether the listener was reached.
async fn npm_run_evil(bridge: &Bridge) -> (String, bool, bool) {
    let outside = tempfile::tempdir().unwrap();
    let sentinel = outside.path().join("sentinel.txt");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!(
        r#"const fs = require("fs"), net = require("net"), os = require("os");
let out = [];
try {{ fs.writeFileSync({sentinel:?}, "x"); out.push("outside-write:ok"); }}
catch (e) {{ out.push("outside-write:" + e.code); }}
try {{ fs.writeFileSync("inside.txt", "x"); out.push("inside-write:ok"); }}
catch (e) {{ out.push("inside-write:" + e.code); }}
try {{ fs.writeFileSync(os.tmpdir() + "/t", "x"); out.push("tmp-write:ok"); }}
catch (e) {{ out.push("tmp-write:" + e.code); }}
const s = net.connect({port}, "127.0.0.1");
const done = () => {{ console.log(out.join(" ")); process.exit(0); }};
s.on("connect", () => {{ out.push("connect:ok"); s.destroy(); done(); }});
s.on("error", (e) => {{ out.push("connect:" + e.code); done(); }});
"#
    );
    let mut agent = bridge.ready_agent().await;
    for (path, content) in [
        (
            "package.json",
            r#"{"name": "x", "version": "1.0.0", "scripts": {"evil": "node evil.js"}}"#.to_string(),
        ),
        ("evil.js", script),
    ] {
        let r = agent
            .call(
                "createFile",
                json!({"filePath": path, "content": content, "overwrite": true}),
            )
            .await;
        assert!(!is_error(&r), "{r}");
    }
    let r = agent
        .call(
            "runCommand",
            json!({"command": "npm", "args": ["run", "evil"]}),
        )
        .await;
    let stdout = json_text(&r)["stdout"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    eprintln!("npm run evil: {stdout}");
    let connected = listener.accept().is_ok();
    (stdout, sentinel.exists(), connected)
}

/// Issue 17, item 5: `npm run` of a script the agent wrote runs under Landlock. The
/// script tries to write outside the workspace and to connect to a local TCP
/// listener: both fail, the sentinel outside does not exist, nothing connects; a
/// write inside the workspace and one in its temp dir still work.
#[tokio::test]
async fn npm_run_of_an_agent_script_cannot_write_outside_or_connect() {
    if !npm_installed() {
        return;
    }
    let bridge = Bridge::launch(with_allow("npm")).await;
    // This kernel has Landlock with network rules (ABI >= 4): said in /status and the log.
    let status = bridge.status().await;
    assert_eq!(status["commandSandbox"]["enforced"], true, "{status}");
    assert_eq!(status["commandSandbox"]["networkRules"], true, "{status}");
    assert!(bridge.log().contains("commands run under Landlock"));
    let (stdout, sentinel, connected) = npm_run_evil(&bridge).await;
    // Refused by the read-only mount (EROFS), or by Landlock where there is none (EACCES).
    assert!(
        stdout.contains("outside-write:EROFS") || stdout.contains("outside-write:EACCES"),
        "{stdout}"
    );
    assert!(stdout.contains("inside-write:ok"), "{stdout}");
    assert!(stdout.contains("tmp-write:ok"), "{stdout}");
    assert!(stdout.contains("connect:EACCES"), "{stdout}");
    assert!(!sentinel, "written outside the workspace");
    assert!(bridge.workspace.join("inside.txt").exists());
    assert!(!connected, "something connected to the listener");
}

/// `commands.network` lets a program's commands use TCP; writes stay confined.
#[tokio::test]
async fn commands_network_allows_tcp_for_the_programs_it_names() {
    if !npm_installed() {
        return;
    }
    let mut opts = with_allow("npm");
    opts.env
        .push(("IDE_BRIDGE_COMMANDS__NETWORK".into(), "npm".into()));
    let bridge = Bridge::launch(opts).await;
    let (stdout, sentinel, connected) = npm_run_evil(&bridge).await;
    assert!(stdout.contains("connect:ok"), "{stdout}");
    assert!(connected, "the listener saw no connection");
    // Refused by the read-only mount (EROFS), or by Landlock where there is none (EACCES).
    assert!(
        stdout.contains("outside-write:EROFS") || stdout.contains("outside-write:EACCES"),
        "{stdout}"
    );
    assert!(!sentinel, "written outside the workspace");
}

/// Without Landlock (simulated: fault-injection builds read
/// `BRIDGE_TEST_NO_LANDLOCK`) commands are refused, the log and /status say so;
/// `commands.run_unsandboxed` runs them anyway, unconfined, and says that too.
#[tokio::test]
async fn without_landlock_commands_are_refused_unless_opted_in() {
    let mut opts = with_allow("seq");
    opts.env
        .push(("BRIDGE_TEST_NO_LANDLOCK".into(), "1".into()));
    let bridge = Bridge::launch(opts).await;
    let status = bridge.status().await;
    assert_eq!(status["commandSandbox"]["landlockAbi"], 0, "{status}");
    assert_eq!(status["commandSandbox"]["enforced"], false, "{status}");
    assert!(bridge.log().contains("no Landlock in this kernel"));
    let mut agent = bridge.ready_agent().await;
    for (tool, args) in [
        ("runCommand", json!({"command": "seq", "args": ["2"]})),
        (
            "runInTerminal",
            json!({"command": "seq", "args": ["2"], "name": "t"}),
        ),
    ] {
        let r = agent.call(tool, args).await;
        assert!(is_error(&r), "{r}");
        assert!(text(&r).contains("no Landlock"), "{r}");
    }
    drop(agent);
    drop(bridge);

    let mut opts = with_allow("seq").set("commands.run_unsandboxed", true);
    opts.env
        .push(("BRIDGE_TEST_NO_LANDLOCK".into(), "1".into()));
    let bridge = Bridge::launch(opts).await;
    assert_eq!(
        bridge.status().await["commandSandbox"]["runUnsandboxed"],
        true
    );
    assert!(bridge.log().contains("UNCONFINED"));
    let mut agent = bridge.ready_agent().await;
    let r = agent
        .call("runCommand", json!({"command": "seq", "args": ["2"]}))
        .await;
    assert!(!is_error(&r), "{r}");
    assert_eq!(json_text(&r)["stdout"], "1\n2\n", "{r}");
}

/// Issue 17, item 7: the remaining bypasses of the allowlist's intent — a shell through
/// `npm exec`, and `cargo install --root` through a symlink that leaves the workspace —
/// create nothing outside the workspace (refused by the policy, or confined by the
/// sandbox).
#[tokio::test]
async fn npm_exec_and_cargo_install_root_create_nothing_outside() {
    if !npm_installed() {
        return;
    }
    let bridge = Bridge::launch(with_allow("npm,cargo")).await;
    let outside = tempfile::tempdir().unwrap();
    let sentinel = outside.path().join("ran");
    let mut agent = bridge.ready_agent().await;
    let shell = format!("touch {}", sentinel.display());
    let exec = agent
        .call(
            "runCommand",
            json!({"command": "npm", "args": ["--loglevel", "silent", "exec", "--", "sh", "-c", shell]}),
        )
        .await;
    // Without a shell flag the policy lets it run: the sandbox stops the write.
    let touch = agent
        .call(
            "runCommand",
            json!({"command": "npm", "args": ["--loglevel", "silent", "exec", "--", "touch", sentinel.display().to_string()]}),
        )
        .await;
    eprintln!("npm exec touch: {touch}");
    std::os::unix::fs::symlink(outside.path(), bridge.workspace.join("out")).unwrap();
    let install = agent
        .call(
            "runCommand",
            json!({"command": "cargo", "args": ["install", "--root", "out", "--path", "."]}),
        )
        .await;
    eprintln!("npm exec: {exec}\ncargo install: {install}");
    let left: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        left.is_empty(),
        "created outside: {left:?}\nnpm exec: {exec}\ncargo install: {install}"
    );
}
