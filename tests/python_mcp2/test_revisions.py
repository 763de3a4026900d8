"""Interop: the official MCP Python SDK 2.x's high-level `Client` against `/mcp` in both
revisions it speaks: 2026-07-28 (stateless: server/discover, per-request _meta) and
2025-11-25 (the handshake). In each: every tool listed across all pages, a typed
tool's structuredContent valid against its outputSchema, a workspace file read as a
resource, and a change on disk notified (a listen stream in the new revision,
resources/subscribe in the old)."""

import warnings

import anyio
import httpx2
import jsonschema
import mcp
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.anyio


def connect(bridge, http, mode, **kwargs):
    url = f"http://127.0.0.1:{bridge['port']}/mcp"
    return Client(streamable_http_client(url, http_client=http), mode=mode, **kwargs)


async def every_tool(client):
    tools, cursor = [], None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            return tools


@pytest.mark.parametrize("mode, version", [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_both_revisions_list_call_read_and_notify(bridge, mode, version):
    watched = bridge["workspace"] / "watched.txt"
    watched.write_text("one\n")
    uri = f"file://{bridge['workspace']}/watched.txt"
    headers = {"Authorization": f"Bearer {bridge['token']}"}
    updates = []

    async def on_message(message):
        if isinstance(message, mcp.types.ResourceUpdatedNotification):
            updates.append(message.params.uri)

    async with httpx2.AsyncClient(headers=headers) as http:
        async with connect(bridge, http, mode, message_handler=on_message) as client:
            assert client.protocol_version == version

            tools = await every_tool(client)
            names = [t.name for t in tools]
            assert len(names) == len(set(names)) and len(names) > 70, names
            typed = {t.name: t for t in tools if t.output_schema}
            assert "listClaims" in typed, sorted(typed)

            claims = await client.call_tool("listClaims", {})
            assert not claims.is_error
            jsonschema.validate(claims.structured_content, typed["listClaims"].output_schema)

            read = await client.read_resource(uri)
            assert read.contents[0].text == "one\n"

            if version == "2026-07-28":
                async with client.listen(resource_subscriptions=[uri]) as sub:
                    assert uri in (sub.honored.resource_subscriptions or []), sub.honored
                    watched.write_text("two\n")
                    with anyio.fail_after(15):
                        async for event in sub:
                            assert event.uri == uri, event
                            break
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    await client.subscribe_resource(uri)
                watched.write_text("two\n")
                with anyio.fail_after(15):
                    while uri not in updates:
                        await anyio.sleep(0.05)


async def test_a_pinned_client_of_the_new_revision_needs_no_discovery(bridge):
    headers = {"Authorization": f"Bearer {bridge['token']}"}
    async with httpx2.AsyncClient(headers=headers) as http:
        async with connect(bridge, http, "2026-07-28") as client:
            assert client.protocol_version == "2026-07-28"
            found = await client.call_tool("getWorkspaceFolders", {})
            assert not found.is_error
            assert str(bridge["workspace"]) in found.content[0].text
