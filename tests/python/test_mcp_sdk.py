"""Interop: the official MCP Python SDK (mcp 1.x ClientSession) drives the bridge."""

import json

import anyio
import pytest
from mcp import ClientSession
from mcp.shared.exceptions import McpError

from ws_transport import authenticated_websocket

pytestmark = pytest.mark.anyio


def url(bridge):
    return f"ws://127.0.0.1:{bridge['port']}/"


async def test_initialize_list_tools_and_call_a_tool(bridge):
    async with authenticated_websocket(url(bridge), bridge["token"]) as (
        read,
        write,
        ws,
    ):
        assert ws.response.headers["sec-websocket-protocol"] == "mcp"
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.serverInfo.name == "ide-bridge"
            assert init.capabilities.tools.listChanged is True
            assert init.capabilities.logging is not None

            tools = await session.list_tools()
            names = {t.name for t in tools.tools}
            assert {
                "openFile",
                "getDiagnostics",
                "openDiff",
                "getWorkspaceFolders",
            } <= names

            result = await session.call_tool("getWorkspaceFolders", {})
            assert not result.isError
            body = json.loads(result.content[0].text)
            assert body["rootPath"] == str(bridge["workspace"])

            opened = await session.call_tool(
                "openFile", {"filePath": "src/main.rs", "makeFrontmost": False}
            )
            assert json.loads(opened.content[0].text)["lineCount"] == 1

            await session.send_ping()
            await session.set_logging_level("debug")


async def test_tool_failures_and_refused_arguments_are_results_and_protocol_errors_raise(bridge):
    async with authenticated_websocket(url(bridge), bridge["token"]) as (
        read,
        write,
        _,
    ):
        async with ClientSession(read, write) as session:
            await session.initialize()
            failed = await session.call_tool("openFile", {"filePath": "../outside"})
            assert failed.isError
            assert "Path escapes workspace" in failed.content[0].text
            with pytest.raises(McpError) as unknown:
                await session.call_tool("noSuchTool", {})
            assert unknown.value.error.code == -32003
            # Arguments the schema refuses are a tool error the model can read
            # (MCP 2025-11-25, SEP-1303), not a protocol error.
            invalid = await session.call_tool("openFile", {"filePath": 42})
            assert invalid.isError
            assert "filePath" in invalid.content[0].text, invalid


async def test_prompts_through_the_sdk(bridge):
    async with authenticated_websocket(url(bridge), bridge["token"]) as (
        read,
        write,
        _,
    ):
        async with ClientSession(read, write) as session:
            await session.initialize()
            prompts = await session.list_prompts()
            assert any(p.name == "review_file" for p in prompts.prompts)
            got = await session.get_prompt("review_file", {"file": "src/main.rs"})
            assert "src/main.rs" in got.messages[0].content.text


async def test_two_sdk_clients_share_one_bridge(bridge):
    async def one_client(results, i):
        async with authenticated_websocket(url(bridge), bridge["token"]) as (
            read,
            write,
            _,
        ):
            async with ClientSession(read, write) as session:
                await session.initialize()
                status = await session.call_tool("getBridgeStatus", {})
                results[i] = json.loads(status.content[0].text)["yourSessionId"]

    results = {}
    async with anyio.create_task_group() as tg:
        tg.start_soon(one_client, results, 0)
        tg.start_soon(one_client, results, 1)
    assert len(set(results.values())) == 2


async def test_a_wrong_token_is_refused_before_the_upgrade(bridge):
    from websockets.exceptions import InvalidStatus

    with pytest.raises(InvalidStatus) as refused:
        async with authenticated_websocket(url(bridge), "wrong-token"):
            pass
    assert refused.value.response.status_code == 401


async def test_a_claude_task_streams_progress_to_the_sdk():
    import pathlib

    from conftest import running_bridge

    fake = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "fake-claude"
    with running_bridge("--set", f"orchestrator.claude_binary={fake}") as bridge:
        async with authenticated_websocket(url(bridge), bridge["token"]) as (
            read,
            write,
            _,
        ):
            async with ClientSession(read, write) as session:
                await session.initialize()
                progress = []

                async def on_progress(value, total, message):
                    progress.append((value, message))

                result = await session.call_tool(
                    "runClaudeTask",
                    {"prompt": "mode:slow count the steps", "wait": True},
                    progress_callback=on_progress,
                )
                assert not result.isError, result
                task = json.loads(result.content[0].text)
                assert task["status"] == "done", task
                assert "step 2" in task["output"]
                # Each streamed chunk arrived as an MCP progress notification, in order.
                messages = [m for _, m in progress if m]
                assert any("step 0" in m for m in messages), progress
                values = [v for v, _ in progress]
                assert values == sorted(values), progress
                listed = await session.call_tool("listClaudeTasks", {})
                assert (
                    json.loads(listed.content[0].text)["tasks"][0]["taskId"]
                    == task["taskId"]
                )
