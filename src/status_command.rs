//! `ide-bridge status`, `stop` and `open`: find the bridge serving this workspace and
//! print its status, stop it, or open its browser page.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{http_client, lockfile};

/// No lock file names a live bridge for the workspace.
#[derive(Debug, thiserror::Error)]
#[error("No running ide-bridge serves {} (looked for lock files in {}).", workspace.display(), ide_dir.display())]
struct NoBridge {
    /// The workspace asked about, canonicalised when it exists.
    workspace: PathBuf,
    /// Where lock files were looked for.
    ide_dir: PathBuf,
}

/// The live bridge serving `workspace` (or the current directory).
fn find(workspace: Option<&Path>) -> Result<(u16, lockfile::LockFile), NoBridge> {
    let dir = workspace
        .map(Path::to_path_buf)
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
    let dir = dir.canonicalize().unwrap_or(dir);
    let ide_dir = lockfile::ide_dir();
    lockfile::find_bridge_for(&ide_dir, &dir).ok_or(NoBridge {
        workspace: dir,
        ide_dir,
    })
}

/// `ide-bridge stop`: SIGTERM to the bridge serving this workspace, then waits (up to
/// 5 s) for it to finish shutting down (its lock file gone).
pub fn stop(workspace: Option<&Path>) -> u8 {
    let (port, lock) = match find(workspace) {
        Ok(found) => found,
        Err(e) => {
            eprintln!("{e}");
            return 1;
        }
    };
    let Ok(pid) = libc::pid_t::try_from(lock.pid) else {
        return 1;
    };
    // A lock file left by a killed bridge may name a pid reused by another process:
    // signal only a bridge that really holds the workspace.
    let served = lock
        .workspace_folders
        .iter()
        .any(|w| crate::state::is_served(std::path::Path::new(w)));
    if !served {
        eprintln!(
            "The lock file for port {port} names pid {pid}, but no bridge holds that workspace              any more (it was killed); not signalling that pid. The next bridge removes the stale lock."
        );
        return 1;
    }
    // SAFETY: kill with a pid read from a lock file we own; SIGTERM asks for a clean stop.
    if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
        eprintln!(
            "Could not signal the bridge (pid {pid}): {}",
            std::io::Error::last_os_error()
        );
        return 1;
    }
    // The bridge removes its lock file last, once its state is written.
    let lock_path = lockfile::lock_path(&lockfile::ide_dir(), port);
    let running = || lock_path.exists() && lockfile::pid_alive(lock.pid);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while running() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    if running() {
        eprintln!("The bridge (pid {pid}, port {port}) is still running after 5 s.");
        return 1;
    }
    println!(
        "Stopped the bridge serving {} (pid {pid}, port {port}).",
        lock.workspace_folders.join(", ")
    );
    0
}

/// Sends `request` (`http_client::get` or `post`) for `path` to the bridge serving the
/// workspace, with its token: port, HTTP status and body; `None` (said on stderr) when
/// no bridge serves it or it does not answer.
fn ask(
    workspace: Option<&Path>,
    request: fn(u16, &str, &str) -> std::io::Result<(u16, String)>,
    path: &str,
) -> Option<(u16, u16, String)> {
    let (port, lock) = find(workspace).map_err(|e| eprintln!("{e}")).ok()?;
    match request(port, path, &lock.auth_token) {
        Ok((code, body)) => Some((port, code, body)),
        Err(e) => {
            eprintln!(
                "The bridge on port {port} (pid {}) did not answer: {e}",
                lock.pid
            );
            None
        }
    }
}

/// `ide-bridge open`: a one-time sign-in link to the browser page, printed and (unless
/// `no_browser`) opened in the system browser.
pub fn open(workspace: Option<&Path>, no_browser: bool) -> u8 {
    let Some((port, code, body)) = ask(workspace, http_client::post, "/ui/login-code") else {
        return 1;
    };
    let answer: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    if code != 200 {
        let why = answer["error"].as_str().unwrap_or(&body);
        eprintln!("The bridge on port {port} refused a sign-in link (HTTP {code}): {why}");
        return 1;
    }
    let Some(url) = answer["url"].as_str() else {
        eprintln!("Unreadable answer from the bridge: {body}");
        return 1;
    };
    let minutes = answer["expiresInMs"].as_u64().unwrap_or(0) / 60_000;
    println!("{url}");
    eprintln!("This link signs one browser in; it works once, within {minutes} min.");
    if !no_browser {
        match open_in_browser(url) {
            Some(program) => eprintln!("Opened it with {program}."),
            None => eprintln!("No browser to open it with here: paste it into one."),
        }
    }
    0
}

/// Starts the system browser on `url`: `$BROWSER`, else `xdg-open` (with a display) or
/// `open` (macOS). The program's name when one started.
fn open_in_browser(url: &str) -> Option<String> {
    let mut candidates: Vec<String> = std::env::var("BROWSER")
        .ok()
        .map(|b| b.split(':').map(str::to_string).collect())
        .unwrap_or_default();
    if cfg!(target_os = "macos") {
        candidates.push("open".into());
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        candidates.push("xdg-open".into());
    }
    candidates
        .into_iter()
        .filter(|c| !c.trim().is_empty())
        .find(|program| {
            std::process::Command::new(program)
                .arg(url)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .is_ok()
        })
}

/// Runs the subcommand; returns the process exit code.
pub fn run(workspace: Option<&Path>, raw_json: bool) -> u8 {
    let Some((port, code, body)) = ask(workspace, http_client::get, "/status") else {
        return 1;
    };
    if code != 200 {
        eprintln!("The bridge on port {port} answered HTTP {code}: {body}");
        return 1;
    }
    if raw_json {
        crate::cli::print_stdout(&format!("{body}\n"));
        return 0;
    }
    match serde_json::from_str::<Value>(&body) {
        Ok(status) => {
            crate::cli::print_stdout(&render(&status));
            0
        }
        Err(e) => {
            eprintln!("Unreadable status from the bridge: {e}");
            1
        }
    }
}

/// Latest calls listed under each agent.
const RECENT_CALLS_SHOWN: usize = 3;

/// Human-readable summary of a `/status` document.
pub fn render(s: &Value) -> String {
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
    if let Some(idle) = s.get("idleStop") {
        out.push_str(&format!(
            "started on demand: stops by itself after {} without an agent, editor, page or task (unused for {} now)\n",
            humantime::format_duration(std::time::Duration::from_secs(
                idle["afterSeconds"].as_u64().unwrap_or(0)
            )),
            humantime::format_duration(std::time::Duration::from_secs(
                idle["idleSeconds"].as_u64().unwrap_or(0)
            )),
        ));
    }
    let sessions = s["sessions"].as_array().cloned().unwrap_or_default();
    out.push_str(&format!(
        "agents: {} of {} sessions\n",
        sessions.len(),
        s["maxSessions"]
    ));
    let recent = s["recentActivity"].as_array().cloned().unwrap_or_default();
    for session in &sessions {
        let state = if session["connected"].as_bool() == Some(true) {
            "connected"
        } else if session["inGrace"].as_bool() == Some(true) {
            "in grace"
        } else {
            "idle"
        };
        let mut via: Vec<&str> = session["connections"]
            .as_array()
            .map(|c| c.iter().filter_map(|c| c["kind"].as_str()).collect())
            .unwrap_or_default();
        // The IDE connection first, as the README names them.
        via.sort_by_key(|k| ["ide", "relay", "http"].iter().position(|x| x == k));
        let pid = session["clientPid"]
            .as_u64()
            .map(|p| format!("pid {p}  "))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {}  {:<9}  {} opened files  {} running calls  {}{}{}\n",
            str_of(&session["id"]),
            state,
            session["openedFiles"],
            session["activeToolCalls"],
            pid,
            session["client"].as_str().unwrap_or(""),
            if via.is_empty() {
                String::new()
            } else {
                format!("  via {}", via.join(" + "))
            }
        ));
        // Its latest calls, its own tools (seen through hooks) beside the bridge's.
        let calls: Vec<&Value> = recent
            .iter()
            .filter(|e| e["kind"] == "toolCall" && e["sessionId"] == session["id"])
            .collect();
        for call in calls.iter().rev().take(RECENT_CALLS_SHOWN).rev() {
            out.push_str(&format!(
                "      {} {} {} ({}, {} ms)\n",
                if call["native"] == true {
                    "own   "
                } else {
                    "bridge"
                },
                str_of(&call["tool"]),
                call["summary"].as_str().unwrap_or(""),
                str_of(&call["status"]),
                call["durationMs"],
            ));
        }
    }
    let claims = s["claims"]["held"].as_array().cloned().unwrap_or_default();
    out.push_str(&format!(
        "claims: {} held, {} writes refused\n",
        claims.len(),
        s["claims"]["refusedWrites"]
    ));
    for c in &claims {
        let patterns: Vec<&str> = c["patterns"]
            .as_array()
            .map(|p| p.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        out.push_str(&format!(
            "  {} by {}{} (ends in {})\n",
            patterns.join(", "),
            str_of(&c["holder"]),
            c["reason"]
                .as_str()
                .filter(|r| !r.is_empty())
                .map(|r| format!(": {r}"))
                .unwrap_or_default(),
            humantime::format_duration(std::time::Duration::from_secs(
                c["expiresInSeconds"].as_u64().unwrap_or(0)
            )),
        ));
    }
    let t = &s["tasks"];
    if t["recent"].as_array().is_some_and(|r| !r.is_empty()) {
        out.push_str(&format!(
            "claude tasks: {} running (at most {}), {} waiting, {} done, {} failed, {} cancelled{}\n",
            t["running"],
            t["maxConcurrent"],
            t["pending"],
            t["done"],
            t["failed"],
            t["cancelled"],
            match t["interrupted"].as_u64() {
                Some(n) if n > 0 => format!(", {n} interrupted by a restart"),
                _ => String::new(),
            }
        ));
        for task in t["recent"].as_array().into_iter().flatten() {
            out.push_str(&format!(
                "  {} {} ({}): {}\n",
                str_of(&task["id"]),
                str_of(&task["status"]),
                str_of(&task["origin"]),
                str_of(&task["prompt"]),
            ));
        }
    }
    if let Some(open) = s["changes"]["openHunks"].as_u64().filter(|n| *n > 0) {
        out.push_str(&format!(
            "changes: {open} hunks agents wrote wait for you (the page's Changes, or keepChanges/undoChanges)\n"
        ));
    }
    let h = &s["hooks"];
    out.push_str(&format!(
        "hooks: {} answered ({} writes refused, {} notes and notices, {} stops held){}\n",
        h["answered"],
        h["denied"],
        h["context"],
        h["held"],
        h["ignored"]
            .as_object()
            .filter(|m| !m.is_empty())
            .map(|m| {
                let parts: Vec<String> = m.iter().map(|(k, n)| format!("{n} {k}")).collect();
                format!("; ignored: {}", parts.join(", "))
            })
            .unwrap_or_default(),
    ));
    let refused: Vec<String> = s["refusedConnections"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(_, n)| n.as_u64().unwrap_or(0) > 0)
                .map(|(k, n)| format!("{n} {k}"))
                .collect()
        })
        .unwrap_or_default();
    out.push_str(&format!(
        "refused connections: {}\n",
        if refused.is_empty() {
            "none".to_string()
        } else {
            refused.join(", ")
        }
    ));
    out.push_str(&format!(
        "tool calls: {} ({} the agents' own, {} failed, {} declined), rate-limited requests: {}, actor restarts: {}\n",
        s["activity"]["toolCalls"],
        s["activity"]["nativeCalls"],
        s["activity"]["toolErrors"],
        s["activity"]["toolDeclined"],
        s["rateLimitRejections"],
        s["activity"]["actorRestarts"],
    ));
    let p = &s["page"];
    out.push_str(&format!(
        "page: {} browsers signed in, {} watching; {} diffs and {} tool requests wait there, {} reviews (`ide-bridge open`)\n",
        p["signedIn"], p["watching"], p["pendingDiffs"], p["pendingApprovals"], p["reviews"],
    ));
    let w = &s["watch"];
    out.push_str(&format!(
        "watch: {}{}, {} batches ({} changes, {} beyond the batch bound), last {}\n",
        str_of(&w["mode"]),
        w["reason"]
            .as_str()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default(),
        w["batches"],
        w["changesReported"],
        w["changesOverflowed"],
        str_of(&w["lastBatchAt"]),
    ));
    if let Some(a) = s.get("automation") {
        out.push_str(&format!(
            "automation: {}, {} fired ({} started in the last hour, cap {}), {} skipped{}\n",
            str_of(&a["policy"]),
            a["fired"],
            a["firedLastHour"],
            a["maxTasksPerHour"],
            a["skipped"],
            if a["quiet"] == true {
                ", quiet (an automation task or command is in flight)"
            } else {
                ""
            },
        ));
        for h in a["hooks"].as_array().into_iter().flatten() {
            out.push_str(&hook_line(h));
        }
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

/// A string field, or `-`.
fn str_of(v: &Value) -> String {
    v.as_str().unwrap_or("-").to_string()
}

/// One hook of `ide-bridge status`: its action, counts, last firing and last skip.
fn hook_line(h: &Value) -> String {
    let mut line = format!(
        "  {} ({}): fired {}, skipped {}",
        str_of(&h["name"]),
        str_of(&h["action"]),
        h["fired"],
        h["skipped"],
    );
    if let Some(f) = h.get("lastFired") {
        line.push_str(&format!(
            "; last fired {} for {} → {}{}",
            str_of(&f["at"]),
            str_of(&f["subject"]),
            str_of(&f["result"]),
            f["task"]
                .as_str()
                .map(|t| format!(" (task {t})"))
                .unwrap_or_default(),
        ));
    }
    if let Some(k) = h.get("lastSkip") {
        line.push_str(&format!(
            "; last skipped {} for {}: {}",
            str_of(&k["at"]),
            str_of(&k["subject"]),
            str_of(&k["reason"]),
        ));
    }
    line.push('\n');
    line
}
