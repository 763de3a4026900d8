//! `ideCapability` (issue 32): JSON programs over the bridge's capabilities, through
//! the real binary, answered by a real pylsp (no editor): nested calls, an ambiguous
//! answer whose programs each run, errors that teach, plain words, and the limits.

use serde_json::{json, Value};

use crate::harness::*;
use crate::lsp::{on_path, venv_bin};

const GREET: &str = "def greet(name):\n    return \"hi \" + name\n";
const APP: &str = "from greet import greet\n\nprint(greet(\"a\"))\nprint(greet(\"b\"))\n";

fn project(options: Options) -> Options {
    on_path(
        options.file("greet.py", GREET).file("app.py", APP),
        &venv_bin("pylsp"),
    )
}

async fn ask(agent: &mut Agent, request: Value) -> (bool, String) {
    let r = agent
        .call("ideCapability", json!({ "request": request }))
        .await;
    (is_error(&r), text(&r).to_string())
}

/// The programs of an ambiguous answer (one JSON program per line after the first).
fn programs(answer: &str) -> Vec<Value> {
    answer
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[tokio::test]
async fn nested_programs_answer_from_pylsp_and_two_definitions_answer_two_programs() {
    let bridge = Bridge::launch(project(Options::default())).await;
    let mut agent = bridge.ready_agent().await;
    let program = json!({"findReferences": {"symbol": {"findSymbol": {"name": "greet"}}}});
    let (failed, answer) = ask(&mut agent, program.clone()).await;
    assert!(!failed, "{answer}");
    for site in [
        "app.py:3: print(greet(\"a\"))",
        "app.py:4: print(greet(\"b\"))",
        "greet.py:1: def greet(name):",
    ] {
        assert!(answer.contains(site), "{site} in {answer}");
    }
    // The same program as JSON text, and with the symbol as a bare name converted.
    let (_, as_text) = ask(&mut agent, json!(program.to_string())).await;
    assert_eq!(as_text, answer);
    let (_, converted) = ask(&mut agent, json!({"findReferences": "greet"})).await;
    assert_eq!(converted, answer);
    // What the program ran is in the agent's timeline, beside the program itself.
    let timeline = bridge.status().await["recentActivity"].to_string();
    assert!(
        timeline.contains(r#""summary":"via ideCapability: file=greet.py, line=1, column=5""#)
            && timeline.contains(r#""tool":"ideCapability""#),
        "{timeline}"
    );

    // A second definition: the same program is ambiguous, and each of its programs
    // runs to the references of its own definition.
    std::fs::write(
        bridge.workspace.join("other.py"),
        "def greet():\n    pass\n\n\ngreet()\n",
    )
    .unwrap();
    let (failed, answer) = ask(&mut agent, program).await;
    assert!(!failed && answer.starts_with("Ambiguous: "), "{answer}");
    let choices = programs(&answer);
    assert_eq!(choices.len(), 2, "{answer}");
    let mut seen = Vec::new();
    for choice in choices {
        let (failed, refs) = ask(&mut agent, choice.clone()).await;
        assert!(!failed, "{choice}: {refs}");
        seen.push(refs);
    }
    let (first, second) = (&seen[0], &seen[1]);
    assert!(
        first.contains("app.py:3:") && !first.contains("other.py"),
        "{first}"
    );
    assert!(
        second.contains("other.py:5: greet()") && !second.contains("app.py"),
        "{second}"
    );
}

#[tokio::test]
async fn errors_teach_and_plain_words_become_runnable_programs() {
    let bridge = Bridge::launch(project(Options::default())).await;
    let mut agent = bridge.ready_agent().await;
    let (failed, e) = ask(&mut agent, json!({"findRefs": {"symbol": "greet"}})).await;
    assert!(
        failed && e.contains("no function \"findRefs\"") && e.contains("findReferences"),
        "{e}"
    );
    let (failed, e) = ask(&mut agent, json!({"findReferences": {"symbol": 42}})).await;
    assert!(
        failed && e.contains("wants a symbol, got a number") && e.contains("string, selection"),
        "{e}"
    );
    let (failed, e) = ask(&mut agent, json!({"getHover": {"location": "app.py"}})).await;
    assert!(
        failed && e.contains("converting the string") && e.contains("path:line"),
        "{e}"
    );
    let (failed, guide) = ask(&mut agent, json!({"describe": "findReferences"})).await;
    assert!(
        !failed && guide.contains("symbol may also be a string"),
        "{guide}"
    );
    // A hover through a converted "path:line:column".
    let (failed, hover) = ask(&mut agent, json!({"getHover": {"location": "app.py:3:7"}})).await;
    assert!(!failed && hover.contains("greet"), "{hover}");

    let (failed, answer) = ask(&mut agent, json!("where is greet called?")).await;
    assert!(!failed, "{answer}");
    let suggested = programs(&answer);
    assert!(
        suggested
            .contains(&json!({"findReferences": {"symbol": {"findSymbol": {"name": "greet"}}}})),
        "{answer}"
    );
    // Each runs as given: to a value, or to its function's own answer (pylsp has no
    // call hierarchy for `callers`), never to an error of the program.
    for program in suggested {
        let (failed, ran) = ask(&mut agent, program.clone()).await;
        let function = program.as_object().unwrap().keys().next().unwrap().clone();
        assert!(
            !failed || ran.starts_with(&format!("{function}: ")),
            "{program} runs as given: {ran}"
        );
    }
}

#[cfg(feature = "fault-injection")]
#[tokio::test]
async fn deep_wide_and_slow_programs_end_in_clear_errors() {
    let options = project(Options::default())
        .set("tools.timeout_ms", 5000)
        .set("files.max_results", 100_000);
    let bridge = Bridge::launch(options).await;
    let mut agent = bridge.ready_agent().await;
    // 10 000 levels deep, as JSON text (as a JSON-RPC object it could not be sent).
    let deep = format!(
        "{}\"greet\"{}",
        "{\"findReferences\":".repeat(10_000),
        "}".repeat(10_000)
    );
    let (failed, e) = ask(&mut agent, json!(deep)).await;
    assert!(failed && e.contains("levels deep; at most 64"), "{e}");
    // 65 levels as an object: refused before anything runs.
    let mut nested = json!("greet");
    for _ in 0..32 {
        nested = json!({"findSymbol": {"name": nested}});
    }
    let (failed, e) = ask(&mut agent, nested).await;
    assert!(
        failed && e.contains("nests 65 levels deep; at most 64"),
        "{e}"
    );
    // 100 000 matching lines: refused after 1001, without gathering the rest.
    let many = "x\n".repeat(100_000);
    std::fs::write(bridge.workspace.join("many.txt"), many).unwrap();
    let (failed, e) = ask(&mut agent, json!({"searchText": {"query": "x"}})).await;
    assert!(failed && e.contains("more than 1000 results"), "{e}");
    let (failed, e) = ask(&mut agent, json!({"debugSleep": 60_000})).await;
    assert!(failed && e.contains("time limit (4500 ms)"), "{e}");
    // The bridge is unaffected.
    let (failed, answer) = ask(&mut agent, json!({"findSymbol": "greet"})).await;
    assert!(
        !failed && answer.contains("Function greet — greet.py:1"),
        "{answer}"
    );
}

#[tokio::test]
async fn what_tools_expose_hides_stays_hidden_behind_it() {
    let bridge = Bridge::launch(Options::default().set("tools.expose.exclude", "git")).await;
    let mut agent = bridge.ready_agent().await;
    let (failed, e) = ask(&mut agent, json!({"gitBlame": "src/main.rs:1"})).await;
    assert!(
        failed && e.contains("gitBlame is not exposed (tools.expose)"),
        "{e}"
    );
}
