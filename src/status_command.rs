//! `ide-bridge status`: finds the bridge serving this workspace and prints its status.

use std::path::PathBuf;

use serde_json::Value;

use crate::config::Settings;
use crate::{http_client, lockfile};

/// Runs the subcommand; returns the process exit code.
pub fn run(settings: &Settings, raw_json: bool) -> u8 {
    let dir = settings
        .workspace
        .clone()
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
    let dir = dir.canonicalize().unwrap_or(dir);
    let ide_dir = lockfile::ide_dir();
    let Some((port, lock)) = lockfile::find_bridge_for(&ide_dir, &dir) else {
        eprintln!(
            "No running ide-bridge serves {} (looked for lock files in {}).",
            dir.display(),
            ide_dir.display()
        );
        return 1;
    };
    let (code, body) = match http_client::get(port, "/status", &lock.auth_token) {
        Ok(r) => r,
        Err(e) => {
            eprintln!(
                "The bridge on port {port} (pid {}) did not answer: {e}",
                lock.pid
            );
            return 1;
        }
    };
    if code != 200 {
        eprintln!("The bridge on port {port} answered HTTP {code}: {body}");
        return 1;
    }
    if raw_json {
        println!("{body}");
        return 0;
    }
    match serde_json::from_str::<Value>(&body) {
        Ok(status) => {
            print!("{}", render(&status));
            0
        }
        Err(e) => {
            eprintln!("Unreadable status from the bridge: {e}");
            1
        }
    }
}

/// Human-readable summary of a `/status` document.
pub fn render(s: &Value) -> String {
    let str_of = |v: &Value| v.as_str().unwrap_or("-").to_string();
    let mut out = format!(
        "ide-bridge {} on 127.0.0.1:{} (pid {}, up {})\nworkspace: {}\neditor: {}\n",
        str_of(&s["version"]),
        s["port"],
        s["pid"],
        humantime::format_duration(std::time::Duration::from_secs(
            s["uptimeSeconds"].as_u64().unwrap_or(0)
        )),
        str_of(&s["workspace"]),
        if s["extension"]["connected"].as_bool() == Some(true) {
            "connected"
        } else {
            "not connected"
        },
    );
    let sessions = s["sessions"].as_array().cloned().unwrap_or_default();
    out.push_str(&format!(
        "agents: {} of {} sessions\n",
        sessions.len(),
        s["maxSessions"]
    ));
    for session in &sessions {
        let state = if session["connected"].as_bool() == Some(true) {
            "connected"
        } else if session["inGrace"].as_bool() == Some(true) {
            "in grace"
        } else {
            "idle"
        };
        out.push_str(&format!(
            "  {}  {:<9}  {} opened files  {} running calls  {}\n",
            str_of(&session["id"]),
            state,
            session["openedFiles"],
            session["activeToolCalls"],
            session["client"].as_str().unwrap_or("")
        ));
    }
    out.push_str(&format!(
        "tool calls: {} ({} failed), rate-limited requests: {}, actor restarts: {}\n",
        s["activity"]["toolCalls"],
        s["activity"]["toolErrors"],
        s["rateLimitRejections"],
        s["activity"]["actorRestarts"],
    ));
    if let Some(a) = s.get("automation") {
        let hooks: Vec<String> = a["hooks"]
            .as_array()
            .map(|h| h.iter().map(str_of).collect())
            .unwrap_or_default();
        out.push_str(&format!(
            "automation: {} [{}], {} tasks started ({} in the last hour, cap {}), {} skipped\n",
            str_of(&a["policy"]),
            hooks.join(", "),
            a["fired"],
            a["firedLastHour"],
            a["maxTasksPerHour"],
            a["skipped"],
        ));
        if let Some(e) = a["lastReloadError"].as_str() {
            out.push_str(&format!("  last policy edit refused: {e}\n"));
        }
    }
    out.push_str(&format!(
        "last connect: {}, last disconnect: {}\n",
        str_of(&s["lastConnectAt"]),
        str_of(&s["lastDisconnectAt"])
    ));
    out
}
