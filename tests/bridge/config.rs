//! Configuration layers and start-up errors, through the binary.

use crate::harness::*;

fn run(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = command(tmp.path());
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    cmd.output().unwrap()
}

#[test]
fn help_documents_every_flag() {
    let out = run(&["--help"], &[]);
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--workspace",
        "--config",
        "--bind",
        "--port",
        "--ide-name",
        "--max-sessions",
        "--grace-period-ms",
        "--tool-timeout-ms",
        "--log-level",
        "--log-format",
        "--set",
        "--automation-policy",
        "status",
        "config",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}:\n{help}");
    }
}

#[test]
fn unknown_keys_and_bad_values_stop_start_up_naming_the_key() {
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a [&'a str]);
    let cases: &[Case] = &[
        (&["--set", "sessions.max_session=3"], &[], &["max_session"]),
        (
            &["--max-sessions", "0"],
            &[],
            &["sessions.max_sessions", "1–100", "from the command line"],
        ),
        (
            &["--tool-timeout-ms", "5"],
            &[],
            &["tools.timeout_ms", "100 ms–1 h"],
        ),
        (&["--log-format", "xml"], &[], &["log.format", "text, json"]),
        (&["--bind", "not-an-ip"], &[], &["server.bind"]),
        (&[], &[("IDE_BRIDGE_NONSENSE", "1")], &["nonsense"]),
        (
            &[],
            &[("IDE_BRIDGE_RATE_LIMIT__REQUESTS", "zero")],
            &["requests"],
        ),
        (&["--set", "oops"], &[], &["KEY=VALUE"]),
        // A deeper key, a wrong type, an enumeration: each names the key, what it
        // allows and where the value came from.
        (
            &[],
            &[("IDE_BRIDGE_SESSIONS__MAX_SESIONS", "3")],
            &["max_sesions", "IDE_BRIDGE_SESSIONS__MAX_SESIONS"],
        ),
        (
            &["--set", "server.port=70000"],
            &[],
            &["server.port", "0–65535", "from the command line"],
        ),
        (
            &["--set", "watch.mode=x"],
            &[],
            &["watch.mode", "auto, poll, off", "from the command line"],
        ),
        (
            &[],
            &[("IDE_BRIDGE_WATCH__MODE", "1")],
            &["watch.mode", "auto, poll, off", "IDE_BRIDGE_WATCH__MODE"],
        ),
        // An item of a list came from where its list did.
        (
            &["--set", "diagnostics.linters=cargo,mypy"],
            &[],
            &["diagnostics.linters[1]", "mypy", "from the command line"],
        ),
        (
            &[],
            &[("IDE_BRIDGE_DIAGNOSTICS__LINTERS", "cargo,mypy")],
            &[
                "mypy",
                "from the environment variable IDE_BRIDGE_DIAGNOSTICS__LINTERS",
            ],
        ),
        // A default out of the range another key's value sets: that key is named, and
        // where its value came from.
        (
            &["--set", "claims.max_ttl_minutes=10"],
            &[],
            &[
                "`claims.default_ttl_minutes` = 30",
                "1–10, within `claims.max_ttl_minutes`",
                "`claims.max_ttl_minutes` came from the command line",
            ],
        ),
        // A language server of a language without a default serves no file without
        // extensions: refused, naming where its entry came from.
        (
            &["--set", "lsp.servers.zig.command=zls"],
            &[],
            &[
                "`lsp.servers.zig.extensions` = []",
                "`lsp.servers.zig` came from the command line",
            ],
        ),
        (
            &[],
            &[("IDE_BRIDGE_LSP__SERVERS__ZIG__COMMAND", "zls")],
            &["`lsp.servers.zig` came from the environment variable IDE_BRIDGE_LSP__SERVERS__ZIG__COMMAND"],
        ),
        // A name the tool catalogue does not know.
        (
            &["--set", "tools.expose.exclude=nosuchtool"],
            &[],
            &[
                "tools.expose.exclude",
                "nosuchtool",
                "from the command line",
            ],
        ),
    ];
    for (args, env, needles) in cases {
        let out = run(args, env);
        assert_eq!(out.status.code(), Some(2), "{args:?} {env:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        for needle in *needles {
            assert!(err.contains(needle), "{args:?} {env:?}: {err}");
        }
    }
}

/// A file's value of the wrong type is refused, naming the key and the file, not
/// converted (`"3"`, `3.7` → 4, `true` → 1 for a number; `"yes"`, `1` for a switch).
#[test]
fn a_file_value_of_the_wrong_type_is_refused_not_converted() {
    let tmp = tempfile::tempdir().unwrap();
    for (toml, key) in [
        (
            "[sessions]\nmax_sessions = \"3\"\n",
            "sessions.max_sessions",
        ),
        ("[sessions]\nmax_sessions = 3.7\n", "sessions.max_sessions"),
        ("[server]\nport = true\n", "server.port"),
        ("[server]\non_demand = \"yes\"\n", "server.on_demand"),
        ("[server]\non_demand = 1\n", "server.on_demand"),
        ("[commands]\nallow = \"git\"\n", "commands.allow"),
    ] {
        let file = tmp.path().join("bad.toml");
        std::fs::write(&file, toml).unwrap();
        let out = run(&["config", "--config", file.to_str().unwrap()], &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{toml}: {err}");
        assert!(
            err.contains(&format!("`{key}`")) && err.contains("bad.toml"),
            "{toml}: {err}"
        );
    }
    // The same values as text from the environment are converted, as documented.
    let out = run(&["config"], &[("IDE_BRIDGE_SESSIONS__MAX_SESSIONS", "3")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn layers_apply_in_order_file_env_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bridge.toml");
    std::fs::write(
        &file,
        "ide_name = \"from-file\"\n[sessions]\nmax_sessions = 7\n[tools]\ntimeout_ms = 1234\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let effective = |args: &[&str], env: &[(&str, &str)]| -> serde_json::Value {
        let mut all = vec!["config", "--config", f];
        all.extend_from_slice(args);
        let out = run(&all, env);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let c = effective(&[], &[]);
    // The prefix's variables that are not settings (the task id every Claude task the
    // bridge starts carries, the hook's debug switch, the build's) are not read as
    // unknown settings: the task's own `ide-bridge mcp` and hooks load the
    // configuration too.
    for name in [
        "IDE_BRIDGE_TASK",
        "IDE_BRIDGE_HOOK_DEBUG",
        "IDE_BRIDGE_NO_RELR",
    ] {
        assert_eq!(effective(&[], &[(name, "1")]), c, "{name}");
    }
    // An empty list is empty from the environment as from --set (not `[""]`), and a
    // flag still wins over the environment.
    let empty = serde_json::json!([]);
    assert_eq!(
        effective(&[], &[("IDE_BRIDGE_COMMANDS__ALLOW", "")])["commands"]["allow"],
        empty
    );
    assert_eq!(
        effective(&["--set", "commands.allow="], &[])["commands"]["allow"],
        empty
    );
    assert_eq!(
        effective(
            &["--set", "commands.allow=git"],
            &[("IDE_BRIDGE_COMMANDS__ALLOW", "")]
        )["commands"]["allow"],
        serde_json::json!(["git"])
    );
    assert_eq!(
        (
            c["ide_name"].as_str(),
            c["sessions"]["max_sessions"].as_u64()
        ),
        (Some("from-file"), Some(7))
    );
    assert_eq!(c["server"]["bind"], "127.0.0.1", "defaults fill the rest");
    let c = effective(
        &[],
        &[
            ("IDE_BRIDGE_IDE_NAME", "from-env"),
            ("IDE_BRIDGE_SESSIONS__MAX_SESSIONS", "3"),
        ],
    );
    assert_eq!(
        (
            c["ide_name"].as_str(),
            c["sessions"]["max_sessions"].as_u64()
        ),
        (Some("from-env"), Some(3))
    );
    assert_eq!(c["tools"]["timeout_ms"], 1234);
    let c = effective(
        &["--ide-name", "from-flag"],
        &[("IDE_BRIDGE_IDE_NAME", "from-env")],
    );
    assert_eq!(c["ide_name"], "from-flag");
}

#[test]
fn a_missing_workspace_is_a_clear_configuration_error() {
    let out = run(&["--workspace", "/definitely/not/here"], &[]);
    assert_eq!(out.status.code(), Some(2), "a bad configuration exits 2");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/definitely/not/here (it does not exist)")
            && err.contains("from the command line"),
        "{err}"
    );
    let out = run(
        &["config"],
        &[("IDE_BRIDGE_WORKSPACE", "/definitely/not/here")],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("IDE_BRIDGE_WORKSPACE"), "{err}");
}

#[test]
fn ide_name_from_config_reaches_the_lock_file() {
    let bridge = Bridge::start_with(Options::default().arg("--ide-name").arg("Team Bridge"));
    assert_eq!(bridge.lock["ideName"], "Team Bridge");
}

#[test]
fn non_loopback_bind_warns_loudly() {
    let bridge = Bridge::start_with(Options::default().arg("--bind").arg("0.0.0.0"));
    assert!(
        bridge.log().contains("LISTENING BEYOND LOOPBACK"),
        "{}",
        bridge.log()
    );
}

/// A Claude binary that is not there is said at start-up, not first when a task fails.
#[test]
fn a_missing_claude_binary_is_warned_about_at_start_up() {
    let bridge = Bridge::start_with(
        Options::default().set("orchestrator.claude_binary", "/nonexistent/claude"),
    );
    assert!(
        bridge
            .log()
            .contains("orchestrator.claude_binary is not found: Claude tasks"),
        "{}",
        bridge.log()
    );
    let found = Bridge::start_with(Options::default().set("orchestrator.claude_binary", "sh"));
    assert!(
        !found.log().contains("claude_binary is not found"),
        "{}",
        found.log()
    );
}

/// Bound to an address that does not take 127.0.0.1's connections (IPv6 loopback
/// here), the bridge listens on 127.0.0.1 at the same port too: Claude Code,
/// `ide-bridge mcp` and `status` connect there (the lock file names only the port).
#[tokio::test]
async fn a_bridge_bound_to_another_address_is_reached_at_127_0_0_1_too() {
    let bridge = Bridge::launch(Options::default().arg("--bind").arg("::1")).await;
    let mut agent = bridge.ready_agent().await;
    let folders = agent
        .call("getWorkspaceFolders", serde_json::json!({}))
        .await;
    assert!(text(&folders).contains("\"folders\""), "{folders}");
    let out = async_command(&bridge.config_dir)
        .args(["status", "--json", "--workspace"])
        .arg(&bridge.workspace)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The configured address answers as well, and the log writes it as a URL can.
    let v6 = std::net::TcpStream::connect(("::1", bridge.port));
    assert!(v6.is_ok(), "{v6:?}");
    assert!(
        bridge
            .log()
            .contains(&format!("ws://[::1]:{}/", bridge.port)),
        "{}",
        bridge.log()
    );
}

#[test]
fn each_subcommand_takes_only_its_own_flags() {
    let status_help = String::from_utf8_lossy(&run(&["status", "--help"], &[]).stdout).into_owned();
    assert!(
        status_help.contains("--workspace") && status_help.contains("--json"),
        "{status_help}"
    );
    for server_flag in ["--port", "--max-sessions", "--set", "--bind"] {
        assert!(
            !status_help.contains(server_flag),
            "status --help lists {server_flag}"
        );
    }
    let out = run(&["status", "--port", "1"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unexpected argument '--port'"));
    // `config` takes the settings' flags, not the run's actions.
    let out = run(&["config", "--rotate-token"], &[]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "config --rotate-token did nothing before"
    );
    let out = run(&["--port", "1", "status"], &[]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "server flags are not taken before a subcommand either"
    );
}

#[test]
fn configuration_errors_name_where_the_value_came_from() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bridge.toml");
    std::fs::write(&file, "[sessions]\nmax_sessions = 0\n").unwrap();
    let f = file.to_str().unwrap();
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: &[Case] = &[
        (&["config", "--config", f], &[], f),
        (
            &["config"],
            &[("IDE_BRIDGE_SESSIONS__MAX_SESSIONS", "0")],
            "the environment variable IDE_BRIDGE_SESSIONS__MAX_SESSIONS",
        ),
        (&["config", "--max-sessions", "0"], &[], "the command line"),
        (
            &["config"],
            &[("IDE_BRIDGE_RATE_LIMIT__REQUESTS", "zero")],
            "the environment variable IDE_BRIDGE_RATE_LIMIT__REQUESTS",
        ),
    ];
    for (args, env, origin) in cases {
        let out = run(args, env);
        assert_eq!(out.status.code(), Some(2), "{args:?} {env:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("from {origin}")),
            "{args:?} {env:?}: {err}"
        );
    }
}

#[test]
fn a_bad_tools_expose_is_refused_by_config_and_at_start_before_any_file_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let config_dir = tmp.path().join("claude");
    let workspace = tmp.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let ws = workspace.to_str().unwrap();
    for args in [
        vec!["config", "--set", "tools.expose.include=filez"],
        vec!["--workspace", ws, "--set", "tools.expose.include=filez"],
    ] {
        let out = command(&config_dir).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("\"filez\" is neither a tool nor a group"),
            "{args:?}: {err}"
        );
    }
    assert!(
        !config_dir.exists(),
        "nothing was written: no lock dir, no state, no token"
    );
}
