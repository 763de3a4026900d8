//! Every JSON-RPC error code of seed 000's table, through the real socket.

use serde_json::json;

use crate::harness::*;

#[tokio::test]
async fn malformed_frames_get_documented_errors_and_the_connection_survives() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;

    agent.send_text("{not json").await;
    let resp = agent.recv().await;
    assert_eq!(error_code(&resp), -32700);
    assert_eq!(resp["id"], json!(null));

    agent
        .send_text(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)
        .await;
    assert_eq!(error_code(&agent.recv().await), -32600, "batch");

    agent
        .send_text(r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#)
        .await;
    let resp = agent.recv().await;
    assert_eq!((error_code(&resp), resp["id"].clone()), (-32600, json!(7)));

    agent.send_text("\"just a string\"").await;
    assert_eq!(error_code(&agent.recv().await), -32600);

    let resp = agent.request("no/such/method", json!({})).await;
    assert_eq!(error_code(&resp), -32601);

    // Still serving after all of that.
    let resp = agent.request("ping", json!({})).await;
    assert_eq!(resp["result"], json!({}));
}

#[tokio::test]
async fn tools_call_errors() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.ready_agent().await;

    let resp = agent.call_raw("noSuchTool", json!({})).await;
    assert_eq!(error_code(&resp), -32003);
    assert!(
        !resp["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean"),
        "{resp}"
    );
    // A near miss is named.
    let resp = agent.call_raw("readfile", json!({})).await;
    assert_eq!(error_code(&resp), -32003);
    assert!(
        resp["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("did you mean readFile?"),
        "{resp}"
    );

    let resp = agent
        .request(
            "tools/call",
            json!({"name": "openFile", "arguments": "src/main.rs"}),
        )
        .await;
    assert_eq!(error_code(&resp), -32602, "arguments not an object");
    let resp = agent
        .request("tools/call", json!({"name": "openFile", "arguments": [1]}))
        .await;
    assert_eq!(error_code(&resp), -32602, "arguments an array");

    let resp = agent.call_raw("openFile", json!({})).await;
    assert!(arguments_refused(&resp).contains("filePath"), "{resp}");

    let resp = agent.call_raw("openFile", json!({"filePath": 5})).await;
    arguments_refused(&resp);

    let resp = agent.request("tools/call", json!({"arguments": {}})).await;
    assert_eq!(error_code(&resp), -32602, "name missing");

    // A misspelt argument name is refused, naming it, and nothing is written.
    let resp = agent
        .call_raw(
            "createFile",
            json!({"filePath": "new.txt", "contents": "hello"}),
        )
        .await;
    assert!(arguments_refused(&resp).contains("contents"), "{resp}");
    assert!(!bridge.workspace.join("new.txt").exists());
    // The CLI's own tools keep its contract: what a newer CLI adds is not refused.
    let resp = agent
        .call_raw("getWorkspaceFolders", json!({"addedByANewerCli": true}))
        .await;
    assert!(resp.get("result").is_some(), "{resp}");
}

#[tokio::test]
async fn arguments_of_exactly_one_mebibyte_pass_and_one_byte_more_fail() {
    let bridge = Bridge::launch(Options::default()).await;
    // A model-facing connection: tools.max_argument_bytes.
    let mut agent = crate::hooks::relay_agent(&bridge, 93003, 782).await;
    const LIMIT: usize = 1024 * 1024;
    let overhead = r#"{"tab_name":""}"#.len();
    let sized = |n: usize| json!({"tab_name": "x".repeat(n - overhead)});
    assert_eq!(sized(LIMIT).to_string().len(), LIMIT);
    let result = agent.call("close_tab", sized(LIMIT)).await;
    assert_eq!(text(&result), "TAB_CLOSED");
    let resp = agent.call_raw("close_tab", sized(LIMIT + 1)).await;
    assert!(arguments_refused(&resp).contains("1048576"), "{resp}");

    // Claude Code's own IDE tools on its IDE connection carry whole files: half of
    // server.max_outbound_bytes (8 MiB, less than max_message_bytes' 16) is theirs.
    let mut ide = bridge.ready_agent().await;
    const IDE_LIMIT: usize = 4 * 1024 * 1024;
    let result = ide.call("close_tab", sized(IDE_LIMIT)).await;
    assert_eq!(text(&result), "TAB_CLOSED");
    let resp = ide.call_raw("close_tab", sized(IDE_LIMIT + 1)).await;
    assert!(arguments_refused(&resp).contains("4194304"), "{resp}");
}

#[tokio::test]
async fn binary_frames_are_refused_with_invalid_request() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut agent = bridge.agent().await;
    agent.send_binary(b"{}".to_vec()).await;
    let resp = agent.recv().await;
    assert_eq!(error_code(&resp), -32600);
}

#[test]
fn request_ids_come_back_exactly_as_sent() {
    let bridge = Bridge::start();
    let mut ws = RawWs::connect(&bridge);
    for raw in [
        "1e2",
        "-0",
        "18446744073709551616",
        "1.50",
        "-1.5E+3",
        "123456789012345678901234567890",
        "\"\\u0041b\"",
    ] {
        // A success, and an error answered by the session.
        let ping = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#);
        assert!(ws.frame(true, 1, ping.as_bytes()));
        let answer = ws.read_text().expect("an answer");
        let id = if raw.starts_with('"') { "\"Ab\"" } else { raw };
        assert_eq!(
            answer,
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
        );
        let unknown = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"nope/nope"}}"#);
        assert!(ws.frame(true, 1, unknown.as_bytes()));
        let answer = ws.read_text().expect("an answer");
        assert!(
            answer.starts_with(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601"#
            )),
            "{answer}"
        );
    }
}

#[tokio::test]
async fn the_editor_socket_answers_unknown_requests_with_32601() {
    let bridge = Bridge::launch(Options::default()).await;
    let mut editor = Agent::connect_raw(
        bridge.port,
        &[("x-claude-ide-extension", bridge.token.as_str())],
    )
    .await
    .expect("editor connects");
    // Known methods sent as requests are handled and answered with {}.
    let hello = editor
        .request(
            "extension/hello",
            json!({"extensionVersion": "1.2.3", "packageVersion": "1"}),
        )
        .await;
    assert_eq!(hello["result"], json!({}), "{hello}");
    let unknown = editor.request("extension/noSuchThing", json!({})).await;
    assert_eq!(error_code(&unknown), -32601, "{unknown}");
    assert!(unknown["error"]["message"]
        .as_str()
        .unwrap()
        .contains("extension/noSuchThing"));
    let status = bridge.status().await;
    assert_eq!(status["extension"]["hello"]["extensionVersion"], "1.2.3");
}

#[tokio::test]
async fn refused_arguments_are_a_tool_error_from_2025_11_25_and_a_protocol_error_before() {
    let bridge = Bridge::launch(Options::default()).await;
    // MCP 2025-11-25 (SEP-1303): the model reads why, and the call is in the timeline.
    let mut modern = bridge.ready_agent().await;
    let resp = modern
        .call_raw(
            "readFile",
            json!({"filePath": "src/main.rs", "startLine": "one"}),
        )
        .await;
    let why = arguments_refused(&resp);
    assert!(why.contains("/startLine"), "{resp}");
    // 2025-06-18 said invalid arguments are a protocol error: a client of it gets one.
    let mut older = bridge.agent().await;
    older.initialize_as("2025-06-18").await;
    let resp = older
        .call_raw(
            "readFile",
            json!({"filePath": "src/main.rs", "startLine": "one"}),
        )
        .await;
    assert_eq!(error_code(&resp), -32602, "{resp}");
    assert!(resp["error"]["message"]
        .as_str()
        .unwrap()
        .contains("/startLine"));
    // The request's own shape is still the protocol's business in every revision.
    let resp = modern
        .request("tools/call", json!({"name": "readFile", "arguments": [1]}))
        .await;
    assert_eq!(error_code(&resp), -32602, "{resp}");

    let status = bridge.status().await;
    let refused: Vec<_> = status["recentActivity"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "toolCall" && e["tool"] == "readFile")
        .collect();
    assert_eq!(
        refused.len(),
        1,
        "only the call answered as a result: {refused:?}"
    );
    assert_eq!(refused[0]["status"], "rejected", "{refused:?}");
}
