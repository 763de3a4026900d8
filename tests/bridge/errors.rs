//! Every JSON-RPC error code of seed 000's table, through the real socket.

use serde_json::json;

use crate::harness::*;

#[tokio::test]
async fn malformed_frames_get_documented_errors_and_the_connection_survives() {
    let bridge = Bridge::start();
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
    let bridge = Bridge::start();
    let mut agent = bridge.ready_agent().await;

    let resp = agent.call_raw("noSuchTool", json!({})).await;
    assert_eq!(error_code(&resp), -32003);

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
    assert_eq!(error_code(&resp), -32602, "schema: required");
    assert!(
        resp["error"]["message"]
            .as_str()
            .unwrap()
            .contains("filePath"),
        "{resp}"
    );

    let resp = agent.call_raw("openFile", json!({"filePath": 5})).await;
    assert_eq!(error_code(&resp), -32602, "schema: type");

    let resp = agent.request("tools/call", json!({"arguments": {}})).await;
    assert_eq!(error_code(&resp), -32602, "name missing");
}

#[tokio::test]
async fn arguments_of_exactly_one_mebibyte_pass_and_one_byte_more_fail() {
    let bridge = Bridge::start();
    let mut agent = bridge.ready_agent().await;
    const LIMIT: usize = 1024 * 1024;
    let overhead = r#"{"tab_name":""}"#.len();
    let at_limit = json!({"tab_name": "x".repeat(LIMIT - overhead)});
    assert_eq!(at_limit.to_string().len(), LIMIT);
    let result = agent.call("close_tab", at_limit).await;
    assert_eq!(text(&result), "TAB_CLOSED");

    let over = json!({"tab_name": "x".repeat(LIMIT - overhead + 1)});
    let resp = agent.call_raw("close_tab", over).await;
    assert_eq!(error_code(&resp), -32602);
    assert!(
        resp["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1048576"),
        "{resp}"
    );
}

#[tokio::test]
async fn binary_frames_are_refused_with_invalid_request() {
    let bridge = Bridge::start();
    let mut agent = bridge.agent().await;
    agent.send_binary(b"{}".to_vec()).await;
    let resp = agent.recv().await;
    assert_eq!(error_code(&resp), -32600);
}
