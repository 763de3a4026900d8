"""Interop: the official MCP Python SDK 2.x drives the bridge over streamable HTTP
(`/mcp`): initialize, every tool listed, a call, progress from a long call, a
cancelled call, the server-initiated stream, the session's end, and an automation
notice delivered to the SDK's logging callback."""

import json
import time
import urllib.error
import urllib.request

import anyio
import httpx2
import mcp
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.anyio


def mcp_url(bridge):
    return f"http://127.0.0.1:{bridge['port']}/mcp"


def client(bridge):
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {bridge['token']}"})


def status(bridge):
    req = urllib.request.Request(
        f"http://127.0.0.1:{bridge['port']}/status",
        headers={"Authorization": f"Bearer {bridge['token']}"},
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        return json.loads(resp.read())


async def all_tools(session):
    names, cursor = [], None
    while True:
        params = mcp.types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        names += [t.name for t in page.tools]
        cursor = page.next_cursor
        if not cursor:
            return names


def test_the_sdk_is_2x():
    import importlib.metadata

    assert importlib.metadata.version("mcp").startswith("2."), mcp.__file__


async def test_initialize_list_every_tool_call_progress_and_cancel(bridge):
    (bridge["workspace"] / "notes.txt").write_text("the needle is here\n")
    async with client(bridge) as http:
        async with streamable_http_client(mcp_url(bridge), http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.server_info.name == "ide-bridge"
                names = await all_tools(session)
                assert len(names) == len(set(names)) and len(names) > 70, names
                assert {"searchWorkspace", "readFile", "gitStatus", "runClaudeTask"} <= set(names)

                found = await session.call_tool("searchWorkspace", {"query": "needle"})
                assert not found.is_error
                assert json.loads(found.content[0].text)["matches"][0]["path"] == "notes.txt"

                progress = []

                async def on_progress(value, total, message):
                    progress.append(value)

                slow = await session.call_tool(
                    "debug_sleep", {"ms": 1200, "steps": 4}, progress_callback=on_progress
                )
                assert not slow.is_error
                assert len(progress) >= 2 and progress == sorted(progress), progress

                # A call cancelled by the client: the session keeps working after it.
                with anyio.move_on_after(0.5):
                    await session.call_tool("debug_sleep", {"ms": 30000})
                again = await session.call_tool("getWorkspaceFolders", {})
                assert json.loads(again.content[0].text)["rootPath"] == str(bridge["workspace"])

                # The HTTP agent is a session of its own in /status.
                kinds = [
                    [c["kind"] for c in s["connections"]] for s in status(bridge)["sessions"]
                ]
                assert ["http"] in kinds, kinds
                session_id = None
                for s in status(bridge)["sessions"]:
                    session_id = s["id"]
    # The context exit sent DELETE: the bridge ended that session.
    with anyio.fail_after(5):
        while any(s["id"] == session_id for s in status(bridge)["sessions"]):
            await anyio.sleep(0.05)
    # An agent that ended its session disconnected: /status says when.
    assert status(bridge)["lastDisconnectAt"], status(bridge)


async def test_a_second_client_gets_list_changed_on_its_get_stream(bridge):
    changed = anyio.Event()

    async def on_message(message):
        if getattr(getattr(message, "root", message), "method", None) == "notifications/tools/list_changed":
            changed.set()

    async with client(bridge) as http:
        async with streamable_http_client(mcp_url(bridge), http_client=http) as (read, write, *_):
            async with ClientSession(read, write, message_handler=on_message) as session:
                await session.initialize()
                # A test-only tool that makes the bridge announce a tool-list change.
                await session.call_tool("debug_list_changed", {})
                with anyio.fail_after(8):
                    await changed.wait()


def post(bridge, body, headers):
    req = urllib.request.Request(
        mcp_url(bridge), data=body, method="POST", headers={"Content-Type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code


def test_edges_are_refused_with_the_documented_status(bridge):
    auth = {"Authorization": f"Bearer {bridge['token']}", "Accept": "application/json, text/event-stream"}
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    assert post(bridge, ping, {}) == 401
    assert post(bridge, ping, {"Authorization": "Bearer wrong"}) == 401
    assert post(bridge, ping, {**auth, "Origin": "https://evil.example"}) == 403
    assert post(bridge, ping, {**auth, "Mcp-Session-Id": "no-such-session"}) == 404
    assert post(bridge, ping, {**auth, "MCP-Protocol-Version": "1999-01-01", "Mcp-Session-Id": "x"}) == 400
    too_big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * (16 * 1024 * 1024) + b'"}}'
    assert post(bridge, too_big, auth) == 413
    # Nothing of it reached a session.
    assert status(bridge)["sessions"] == []


def initialize(bridge):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}).encode()
    auth = {"Authorization": f"Bearer {bridge['token']}", "Accept": "application/json, text/event-stream"}
    return post(bridge, body, auth)


def test_http_sessions_count_against_max_sessions_until_they_are_abandoned():
    """An HTTP session holds its slot while it is in use; one whose client went away
    without DELETE (no request in flight, no stream) gives it up to a new client."""
    from conftest import running_bridge

    with running_bridge("--max-sessions", "1") as bridge:
        assert initialize(bridge) == 200
        deadline = time.monotonic() + 10
        while (code := initialize(bridge)) != 200:
            assert code == 503, code
            assert time.monotonic() < deadline, "the abandoned session kept its slot"
            time.sleep(0.05)
        assert status(bridge)["evicted"] == 1


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
async def test_an_automation_notice_reaches_the_client_when_a_file_changes_on_disk(
    notifying_bridge,
):
    """Automation without an editor: a file written on disk sets off the policy's
    notify hook, and the SDK's logging callback gets the notice on the session's
    server-initiated stream."""
    notices = []
    arrived = anyio.Event()

    async def on_log(params):
        data = params.data
        if isinstance(data, dict) and data.get("event") == "automation_notice":
            notices.append(data)
            arrived.set()

    async with client(notifying_bridge) as http:
        async with streamable_http_client(mcp_url(notifying_bridge), http_client=http) as (
            read,
            write,
            *_,
        ):
            async with ClientSession(read, write, logging_callback=on_log) as session:
                await session.initialize()
                await session.set_logging_level("notice")
                (notifying_bridge["workspace"] / "src" / "lib.rs").write_text("pub fn x() {}\n")
                with anyio.fail_after(20):
                    await arrived.wait()
    assert notices[0]["message"] == "created src/lib.rs", notices
    assert notices[0]["hook"] == "onFileChange"
    watched = status(notifying_bridge)["watch"]
    assert "created src/lib.rs" in watched["recent"], watched


async def test_a_client_carries_on_in_its_session_across_a_restart_of_the_bridge(
    restartable_bridge,
):
    """The SDK's client keeps its Mcp-Session-Id when the bridge restarts under it
    (nothing tells it to initialize again): its next calls reach the same session, with
    the claim it made before."""
    bridge = restartable_bridge
    (bridge["workspace"] / "a.txt").write_text("a\n")
    async with client(bridge) as http:
        async with streamable_http_client(mcp_url(bridge), http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                before = json.loads(
                    (await session.call_tool("getBridgeStatus", {})).content[0].text
                )["yourSessionId"]
                claimed = await session.call_tool("claimFiles", {"paths": ["a.txt"], "reason": "mine"})
                assert not claimed.is_error, claimed
                port = bridge["port"]
                bridge.restart()
                assert bridge["port"] == port, "the restarted bridge is where it was"
                after = await session.call_tool("getBridgeStatus", {})
                assert not after.is_error, after
                assert json.loads(after.content[0].text)["yourSessionId"] == before
                wrote = await session.call_tool(
                    "createFile", {"filePath": "a.txt", "content": "mine\n", "overwrite": True}
                )
                assert not wrote.is_error, wrote
    assert (bridge["workspace"] / "a.txt").read_text() == "mine\n"
