//! MCP resources and completions through the real binary: workspace files through the
//! template (text, binary, confined, at and past the size limit), the activity log,
//! subscriptions fed by the watcher, and path completions.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::*;

fn file_uri(bridge: &Bridge, rel: &str) -> String {
    format!("file://{}/{rel}", bridge.workspace.display())
}

async fn read(agent: &mut Agent, uri: &str) -> Value {
    agent.request("resources/read", json!({ "uri": uri })).await
}

#[tokio::test]
async fn files_the_activity_log_and_templates_are_resources_confined_to_the_workspace() {
    let bridge = Bridge::launch(
        Options::default()
            .set("files.max_read_bytes", 1024)
            .file("src/a.rs", "fn a() {}\n")
            .file("at_limit.txt", &"x".repeat(1024))
            .file("past_limit.txt", &"x".repeat(1025)),
    )
    .await;
    std::fs::write(
        bridge.workspace.join("logo.png"),
        [0x89, b'P', b'N', b'G', 0, 1, 2],
    )
    .unwrap();
    let mut agent = bridge.agent().await;
    let caps = agent.initialize().await["result"]["capabilities"].clone();
    assert_eq!(caps["resources"]["subscribe"], true, "{caps}");

    let listed = agent.request("resources/list", json!({})).await;
    let uris: Vec<&str> = listed["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["ide-bridge://activity"], "{listed}");
    let templates = agent.request("resources/templates/list", json!({})).await;
    let template = templates["result"]["resourceTemplates"][0]["uriTemplate"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(template, file_uri(&bridge, "{+path}"));
    // Both lists are one page: a cursor names no page of theirs.
    for method in ["resources/list", "resources/templates/list"] {
        let paged = agent.request(method, json!({"cursor": "50"})).await;
        assert_eq!(error_code(&paged), -32602, "{method}: {paged}");
        assert!(
            paged["error"]["message"]
                .as_str()
                .unwrap()
                .contains("Invalid cursor"),
            "{paged}"
        );
    }

    let text = read(&mut agent, &file_uri(&bridge, "src/a.rs")).await;
    let content = &text["result"]["contents"][0];
    assert_eq!(content["text"], "fn a() {}\n", "{text}");
    assert_eq!(content["mimeType"], "text/x-rust");
    assert_eq!(content["uri"], file_uri(&bridge, "src/a.rs"));
    let png = read(&mut agent, &file_uri(&bridge, "logo.png")).await;
    assert_eq!(
        png["result"]["contents"][0]["blob"], "iVBORwABAg==",
        "{png}"
    );
    assert_eq!(png["result"]["contents"][0]["mimeType"], "image/png");

    // files.max_read_bytes: at the limit it is read, one byte past it is refused.
    let at = read(&mut agent, &file_uri(&bridge, "at_limit.txt")).await;
    assert_eq!(
        at["result"]["contents"][0]["text"].as_str().unwrap().len(),
        1024
    );
    let past = read(&mut agent, &file_uri(&bridge, "past_limit.txt")).await;
    assert_eq!(error_code(&past), -32602, "{past}");
    assert!(past["error"]["message"]
        .as_str()
        .unwrap()
        .contains("files.max_read_bytes"));

    let missing = read(&mut agent, &file_uri(&bridge, "nope.txt")).await;
    assert_eq!(error_code(&missing), -32002, "{missing}");
    for outside in [
        "file:///etc/passwd".to_string(),
        file_uri(&bridge, "../outside.txt"),
        "https://example.com/".to_string(),
    ] {
        let refused = read(&mut agent, &outside).await;
        assert_eq!(error_code(&refused), -32602, "{outside}: {refused}");
    }
    let no_uri = agent.request("resources/read", json!({})).await;
    assert_eq!(error_code(&no_uri), -32602);

    let activity = read(&mut agent, "ide-bridge://activity").await;
    let entries: Value =
        serde_json::from_str(activity["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert!(
        entries
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["event"] == "agent_connected" || e["event"] == "bridge_started"),
        "{entries}"
    );
    bridge.stop_async().await;
}

#[tokio::test]
async fn a_subscribed_file_changed_on_disk_is_notified_until_unsubscribed() {
    let bridge = Bridge::launch(
        Options::default()
            .file("watched.txt", "one\n")
            .file("other.txt", "x\n"),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    let uri = file_uri(&bridge, "watched.txt");
    let ok = agent
        .request("resources/subscribe", json!({ "uri": uri }))
        .await;
    assert_eq!(ok["result"], json!({}), "{ok}");
    let not_a_file = agent
        .request(
            "resources/subscribe",
            json!({ "uri": "ide-bridge://activity" }),
        )
        .await;
    assert_eq!(error_code(&not_a_file), -32602);

    std::fs::write(bridge.workspace.join("other.txt"), "y\n").unwrap();
    std::fs::write(bridge.workspace.join("watched.txt"), "two\n").unwrap();
    let updated = agent
        .notification("notifications/resources/updated", DEADLINE)
        .await
        .expect("notified of the change on disk");
    assert_eq!(
        updated["params"]["uri"], uri,
        "only the watched file: {updated}"
    );

    let ok = agent
        .request("resources/unsubscribe", json!({ "uri": uri }))
        .await;
    assert_eq!(ok["result"], json!({}));
    std::fs::write(bridge.workspace.join("watched.txt"), "three\n").unwrap();
    agent
        .assert_no_notification(
            "notifications/resources/updated",
            Duration::from_secs(2),
            "unsubscribed",
        )
        .await;
    bridge.stop_async().await;
}

#[tokio::test]
async fn prompt_file_arguments_and_the_template_path_complete_to_workspace_files() {
    let bridge = Bridge::launch(
        Options::default()
            .file("src/main.rs", "")
            .file("src/lib.rs", "")
            .file("docs/guide.md", ""),
    )
    .await;
    let mut agent = bridge.ready_agent().await;
    let complete = |reference: Value, name: &str, value: &str| json!({ "ref": reference, "argument": { "name": name, "value": value } });
    let by_prompt = agent
        .request(
            "completion/complete",
            complete(
                json!({"type": "ref/prompt", "name": "review_file"}),
                "file",
                "src/",
            ),
        )
        .await;
    assert_eq!(
        by_prompt["result"]["completion"]["values"],
        json!(["src/lib.rs", "src/main.rs"]),
        "{by_prompt}"
    );
    let template = file_uri(&bridge, "{+path}");
    let by_template = agent
        .request(
            "completion/complete",
            complete(
                json!({"type": "ref/resource", "uri": template}),
                "path",
                "docs",
            ),
        )
        .await;
    assert_eq!(
        by_template["result"]["completion"]["values"],
        json!(["docs/guide.md"]),
        "{by_template}"
    );
    let other_argument = agent
        .request(
            "completion/complete",
            complete(
                json!({"type": "ref/prompt", "name": "review_file"}),
                "tone",
                "",
            ),
        )
        .await;
    assert_eq!(other_argument["result"]["completion"]["values"], json!([]));
    let unknown = agent
        .request(
            "completion/complete",
            complete(json!({"type": "ref/prompt", "name": "nope"}), "file", ""),
        )
        .await;
    assert_eq!(error_code(&unknown), -32602);
    bridge.stop_async().await;
}
