//! What each agent changed, through the real binary: change sets from the bridge's write
//! tools and from native edits (hooks and transcript), who changed a line, undo of one
//! hunk (the agent told at its next call, with the reason), an undo declined where a
//! later edit overlaps, the editor told, and change sets kept across a restart.

use std::io::Write;

use serde_json::{json, Value};

use crate::editor_sim::{handler, EditorSim};
use crate::harness::*;
use crate::hooks::{hook, relay_agent, result_line, stop, tool_event};

const BASE: &str =
    "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\ng = 7\nh = 8\ni = 9\nj = 10\nk = 11\nl = 12\n";

fn changes(listed: &Value) -> Vec<Value> {
    listed["changes"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn change_sets_name_their_agent_undo_one_hunk_exactly_and_decline_over_a_later_edit() {
    let place = Place::new();
    let opts = || place.options().file("a.py", BASE).file("b.py", "x = 1\n");
    let bridge = Bridge::launch(opts()).await;
    let mut a = relay_agent(&bridge, 97001, 880).await;
    let mut b = relay_agent(&bridge, 97002, 880).await;

    // A edits two places of a.py with the bridge's tools.
    for (old, new) in [("b = 2", "b = 20"), ("k = 11", "k = 110\nk2 = 1")] {
        let r = a
            .call(
                "replaceBlock",
                json!({"filePath": "a.py", "oldContent": old, "newContent": new}),
            )
            .await;
        assert!(!is_error(&r), "{r}");
    }
    // B edits b.py with the CLI's own Edit: the hook before it, the file written, the
    // transcript's result, the end of its turn.
    let projects = bridge.config_dir.join("projects").join("-w");
    std::fs::create_dir_all(&projects).unwrap();
    let transcript = projects.join("b.jsonl");
    std::fs::write(&transcript, "").unwrap();
    let mut pre = tool_event(
        &bridge,
        "PreToolUse",
        "Edit",
        json!({"file_path": bridge.workspace.join("b.py"), "old_string": "x = 1", "new_string": "x = 2"}),
    );
    pre["transcript_path"] = json!(transcript);
    pre["tool_use_id"] = json!("toolu_b_edit");
    let (status, _) = hook(&bridge, 97002, pre).await;
    assert_eq!(status, 200);
    std::fs::write(bridge.workspace.join("b.py"), "x = 2\n").unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    writeln!(f, "{}", result_line("toolu_b_edit", false, "updated")).unwrap();
    let mut end = stop(&bridge, false);
    end["transcript_path"] = json!(transcript);
    hook(&bridge, 97002, end).await;

    let listed = {
        let mut listed = Value::Null;
        for _ in 0..100 {
            listed = json_text(&b.call("listChanges", json!({})).await);
            if changes(&listed).len() == 3 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        listed
    };
    let all = changes(&listed);
    assert_eq!(all.len(), 3, "{listed}");
    let a_label = all[0]["agent"].as_str().unwrap().to_string();
    assert!(a_label.starts_with("claude-code "), "{a_label}");
    assert_eq!(all[0]["file"], "a.py");
    assert_eq!(all[1]["hunks"][0]["new"], json!(["k = 110\n", "k2 = 1\n"]));
    assert_eq!(all[2]["file"], "b.py");
    assert_ne!(
        all[2]["session"], all[0]["session"],
        "B's native edit is B's"
    );
    assert_eq!(all[2]["tool"], "Edit");

    // Who changed which line of a.py: A for its lines, nobody for the others.
    let who = json_text(
        &b.call("whoChanged", json!({"file": "a.py", "line": 2}))
            .await,
    );
    assert_eq!(who["lines"][0]["by"], a_label, "{who}");
    let who = json_text(
        &b.call("whoChanged", json!({"file": "a.py", "line": 1}))
            .await,
    );
    assert_eq!(who["lines"][0]["by"], Value::Null, "{who}");

    // An editor is told which lines agents changed.
    let editor = EditorSim::connect(&bridge, handler(|_, _| None)).await;
    // Undo A's second hunk, with a reason: exactly its lines come back.
    let second = all[1]["id"].as_u64().unwrap();
    let report = json_text(
        &b.call(
            "undoChanges",
            json!({"change": second, "hunk": 0, "reason": "keep k as it was"}),
        )
        .await,
    );
    assert_eq!(report["undone"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(report["declined"], json!([]));
    assert_eq!(
        std::fs::read_to_string(bridge.workspace.join("a.py")).unwrap(),
        BASE.replace("b = 2", "b = 20")
    );
    let file = bridge.workspace.join("a.py").display().to_string();
    let told = editor
        .wait_notification("bridge/agentChanges", |p| p["file"] == file)
        .await;
    assert_eq!(
        told["changes"],
        json!([{"startLine": 2, "endLine": 2, "agent": a_label, "session": all[0]["session"]}]),
        "{told}"
    );
    // A's next call carries the notice, with the reason.
    let next = a.call("listClaims", json!({})).await;
    let notice = next["content"][1]["text"].as_str().unwrap_or_default();
    // B undid it, not the person: A is told who, and the lines put back are B's.
    let b_label = all[2]["agent"].as_str().unwrap();
    assert!(
        notice.contains(&format!(
            "{b_label} undid your change to lines 11–12 of a.py"
        )) && notice.contains("keep k as it was"),
        "{next}"
    );
    let who = json_text(
        &b.call("whoChanged", json!({"file": "a.py", "line": 11}))
            .await,
    );
    assert_eq!(who["lines"][0]["by"], b_label, "{who}");
    assert_eq!(who["lines"][0]["session"], all[2]["session"], "{who}");

    // The person edits A's remaining line by hand: undoing it now declines, naming
    // the person, and leaves the file as it is.
    let by_hand = BASE.replace("b = 2", "b = 21");
    std::fs::write(bridge.workspace.join("a.py"), &by_hand).unwrap();
    let first = all[0]["id"].as_u64().unwrap();
    let report = json_text(&b.call("undoChanges", json!({"change": first})).await);
    assert_eq!(report["undone"], json!([]), "{report}");
    assert!(
        report["declined"][0]["why"]
            .as_str()
            .unwrap()
            .contains("the person changed these lines since"),
        "{report}"
    );
    assert_eq!(
        std::fs::read_to_string(bridge.workspace.join("a.py")).unwrap(),
        by_hand
    );
    let who = json_text(
        &b.call("whoChanged", json!({"file": "a.py", "line": 2}))
            .await,
    );
    assert_eq!(who["lines"][0]["by"], "the person", "{who}");

    // Kept across a restart; keeping B's change clears it from the open ones.
    bridge.stop_async().await;
    drop((a, b, editor));
    let bridge = Bridge::launch(opts()).await;
    let mut c = relay_agent(&bridge, 97003, 881).await;
    let again = changes(&json_text(&c.call("listChanges", json!({})).await));
    assert_eq!(again.len(), 3);
    assert_eq!(again[1]["hunks"][0]["state"], "undone");
    let kept = json_text(&c.call("keepChanges", json!({"file": "b.py"})).await);
    assert_eq!(kept["kept"], 1);
    let refused = c.call("undoChanges", json!({})).await;
    assert!(is_error(&refused), "an undo of nothing named is refused");
    bridge.stop_async().await;
}

#[tokio::test]
async fn a_write_after_a_failed_one_is_recorded_as_the_agents_own() {
    let place = Place::new();
    let bridge = Bridge::launch(place.options().file("a.py", BASE)).await;
    let mut agent = bridge.ready_agent().await;
    agent.call("readFile", json!({"filePath": "a.py"})).await;
    // Refused (no such block): nothing written, so nothing to record.
    let missed = agent
        .call(
            "replaceBlock",
            json!({"filePath": "a.py", "oldContent": "z = 26", "newContent": "z = 0"}),
        )
        .await;
    assert!(is_error(&missed), "{missed}");
    // An edit outside the file, with another tool: refused too.
    let missed = agent
        .call(
            "editText",
            json!({"filePath": "a.py", "edits": [{"type": "replace", "line": 999, "column": 1,
                   "endLine": 999, "endColumn": 1, "text": "x"}]}),
        )
        .await;
    assert!(is_error(&missed), "{missed}");
    for (old, new) in [("b = 2", "b = 20"), ("c = 3", "c = 30")] {
        let r = agent
            .call(
                "replaceBlock",
                json!({"filePath": "a.py", "oldContent": old, "newContent": new}),
            )
            .await;
        assert!(!is_error(&r), "{r}");
    }
    let listed = json_text(&agent.call("listChanges", json!({"file": "a.py"})).await);
    let all = changes(&listed);
    assert_eq!(all.len(), 2, "each write its own change: {listed}");
    assert_eq!(all[0]["hunks"][0]["new"], json!(["b = 20\n"]), "{listed}");
    assert_eq!(all[1]["hunks"][0]["new"], json!(["c = 30\n"]), "{listed}");
    // The file named absolutely selects the same (it selected nothing, silently).
    let absolute = bridge.workspace.join("a.py").display().to_string();
    let by_path = json_text(&agent.call("listChanges", json!({"file": absolute})).await);
    assert_eq!(changes(&by_path), all, "{by_path}");
    let outside = agent
        .call("listChanges", json!({"file": "/etc/passwd"}))
        .await;
    assert!(is_error(&outside), "{outside}");
    let who = json_text(
        &agent
            .call("whoChanged", json!({"file": "a.py", "line": 3}))
            .await,
    );
    assert_eq!(who["lines"][0]["session"], all[1]["session"], "{who}");
    assert_ne!(who["lines"][0]["by"], "the person", "{who}");
}

/// An agent whose native writes never report back (256 `PreToolUse` without a result)
/// loses only its own oldest records: another agent's writes are still recorded.
#[tokio::test]
async fn writes_of_one_agent_that_never_end_do_not_stop_the_others_being_recorded() {
    let place = Place::new();
    let bridge = Bridge::launch(place.options().file("a.py", BASE).file("b.py", "x = 1\n")).await;
    let _flooder = relay_agent(&bridge, 97101, 890).await;
    let mut other = relay_agent(&bridge, 97102, 890).await;
    let projects = bridge.config_dir.join("projects").join("-w");
    std::fs::create_dir_all(&projects).unwrap();
    let transcript = projects.join("flood.jsonl");
    std::fs::write(&transcript, "").unwrap();
    for n in 0..256 {
        let mut pre = tool_event(
            &bridge,
            "PreToolUse",
            "Write",
            json!({"file_path": bridge.workspace.join(format!("f{n}.txt")), "content": "x"}),
        );
        pre["transcript_path"] = json!(transcript);
        pre["tool_use_id"] = json!(format!("toolu_flood_{n}"));
        let (status, _) = hook(&bridge, 97101, pre).await;
        assert_eq!(status, 200);
    }
    for (old, new) in [("b = 2", "b = 20"), ("c = 3", "c = 30")] {
        let r = other
            .call(
                "replaceBlock",
                json!({"filePath": "a.py", "oldContent": old, "newContent": new}),
            )
            .await;
        assert!(!is_error(&r), "{r}");
    }
    let listed = json_text(&other.call("listChanges", json!({"file": "a.py"})).await);
    assert_eq!(changes(&listed).len(), 2, "{listed}");
    let log = bridge.log();
    let warned = log.matches("too many writes under way").count();
    assert!(
        (1..=3).contains(&warned),
        "one line now and then, not one per write: {warned}"
    );
}
