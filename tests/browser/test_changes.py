"""Change review in the page (Changes): what each agent wrote, grouped by agent and
file, hunk by hunk with a side-by-side diff. The person undoes one hunk with a reason
(exactly its lines come back, the agent's next call carries the notice), an undo over
lines the person edited since is declined with a toast saying why (the file is left as
it is), and Keep (one hunk, or all of an agent) takes hunks off the list."""

import asyncio
import json
from contextlib import AsyncExitStack

import pytest
from conftest import DEADLINE, LIB_RS, Agent, count_is, text_contains, text_is, wait_for

pytestmark = pytest.mark.anyio

REASON = "keep the tail as it was"


class HttpAgent:
    """A model-facing agent: the official MCP Python SDK 1.x over streamable HTTP
    (`/mcp`), where the bridge's notices ride on the next tool result as an extra text
    item (the IDE WebSocket of conftest's Agent never carries them)."""

    def __init__(self, bridge, name="http-agent"):
        self.bridge = bridge
        self.name = name

    async def __aenter__(self):
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client
        from mcp.types import Implementation

        self._stack = AsyncExitStack()
        http = await self._stack.enter_async_context(
            create_mcp_http_client(headers={"Authorization": f"Bearer {self.bridge.token}"})
        )
        read, write, _ = await self._stack.enter_async_context(
            streamable_http_client(f"{self.bridge.origin}/mcp", http_client=http)
        )
        self.session = await self._stack.enter_async_context(
            ClientSession(read, write, client_info=Implementation(name=self.name, version="1.0"))
        )
        await self.session.initialize()
        return self

    async def __aexit__(self, *exc):
        await self._stack.aclose()

    async def call(self, tool, arguments, timeout=DEADLINE):
        return await asyncio.wait_for(self.session.call_tool(tool, arguments), timeout)

    def texts(self, result):
        return [c.text for c in result.content]


async def replace(agent, path, old, new):
    result = await agent.call("replaceBlock", {"filePath": path, "oldContent": old, "newContent": new})
    assert not result.isError, agent.texts(result)


def notices(agent, result):
    """The texts riding on a tool result after its answer."""
    return agent.texts(result)[1:]


async def table_rows(hunk):
    """The hunk's side-by-side diff: (old line no, old text, new line no, new text) per row."""
    rows = []
    for row in await hunk.locator("table.diff tr").all():
        rows.append(tuple(t.rstrip("\n") for t in await row.locator("td").all_text_contents()))
    return rows


async def test_the_person_undoes_one_hunk_with_a_reason_is_refused_over_an_own_edit_and_keeps_the_rest(bridge, browser):
    lib = bridge.workspace / "src" / "lib.rs"
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#changes")
    await page.locator("#view-changes #change-list p.empty").wait_for()
    assert await page.text_content("#badge-changes") == ""
    async with HttpAgent(bridge) as writer, Agent(bridge) as other:
        # The writer changes two places of src/lib.rs (two changes); another agent
        # changes notes.txt.
        await replace(writer, "src/lib.rs", "// line 1", "// first line")
        await replace(writer, "src/lib.rs", "// tail 4", "// last tail\n// one more")
        await replace(other, "notes.txt", "second", "2nd")
        listed = json.loads(writer.texts(await writer.call("listChanges", {"file": "src/lib.rs"}))[0])["changes"]
        assert [len(c["hunks"]) for c in listed] == [1, 1], listed
        first, second = listed
        session, label = first["session"], first["agent"]
        assert second["session"] == session and label.startswith("http-agent "), listed
        assert second["hunks"][0]["new"] == ["// last tail\n", "// one more\n"], second

        # The page lists both hunks under the writer, in src/lib.rs, and the other
        # agent's apart.
        mine = page.locator(f'#change-list section.change-agent[data-session="{session}"]')
        lib_hunks = mine.locator('div.change-file[data-file="src/lib.rs"] article.change-hunk')
        await wait_for(lambda: count_is(page, f'#change-list section.change-agent[data-session="{session}"] article.change-hunk', 2), "the writer's two hunks in the page")
        await wait_for(lambda: text_is(page, "#badge-changes", "3"), "the badge to count 3 open hunks")
        assert await page.locator("#change-list section.change-agent").count() == 2
        assert await mine.locator("strong").first.text_content() == label
        assert await mine.locator("div.change-file").count() == 1
        theirs = page.locator(f'#change-list section.change-agent:not([data-session="{session}"])')
        assert await theirs.locator('div.change-file[data-file="notes.txt"] article.change-hunk').count() == 1
        hunk1 = lib_hunks.and_(page.locator(f'[data-change="{first["id"]}"][data-hunk="0"]'))
        hunk2 = lib_hunks.and_(page.locator(f'[data-change="{second["id"]}"][data-hunk="0"]'))
        assert await hunk1.count() == 1 and await hunk2.count() == 1
        assert "lines 10–11" in await hunk2.locator(".row").first.text_content()
        assert await table_rows(hunk1) == [("1", "// line 1", "1", "// first line")]
        assert await table_rows(hunk2) == [("10", "// tail 4", "10", "// last tail"), ("", "", "11", "// one more")]
        await browser.shot(page, "changes")

        # Undo the second hunk, with a reason: exactly its lines come back.
        await page.fill("#change-reason", REASON)
        await hunk2.get_by_role("button", name="Undo", exact=True).click()
        await wait_for(lambda: text_contains(page, "#toast", "Undone: 1 hunk;"), "the undo's toast")
        # The reason went with that undo: the next one does not send it unsaid.
        assert await page.input_value("#change-reason") == ""
        await wait_for(lambda: count_is(page, f'#change-list section.change-agent[data-session="{session}"] article.change-hunk', 1), "the undone hunk to leave the page")
        assert await hunk1.count() == 1
        await wait_for(lambda: text_is(page, "#badge-changes", "2"), "the badge to count 2")
        assert lib.read_text() == LIB_RS.replace("// line 1", "// first line")
        # The writer's next call carries the notice with the reason, once.
        told = notices(writer, await writer.call("listClaims", {}))
        assert any(
            "the person undid your change to lines 10–11 of src/lib.rs" in t and REASON in t for t in told
        ), told
        assert not any("undid" in t for t in notices(writer, await writer.call("listClaims", {})))

        # The person edits the first hunk's line by hand; undoing it now is declined,
        # saying why, and leaves the file as it is.
        by_hand = LIB_RS.replace("// line 1", "// first line, by hand")
        lib.write_text(by_hand)
        await hunk1.get_by_role("button", name="Undo", exact=True).click()
        await wait_for(lambda: text_contains(page, "#toast", "Not undone"), "a toast saying the undo was declined")
        toast = await page.text_content("#toast")
        assert "src/lib.rs" in toast and "the person changed these lines since" in toast, toast
        assert "error" in (await page.get_attribute("#toast", "class")).split()
        assert lib.read_text() == by_hand
        assert await hunk1.count() == 1
        assert await page.text_content("#badge-changes") == "2"
        await browser.shot(page, "changes-declined")
        # Nothing was undone: the writer is told nothing.
        assert not any("undid" in t for t in notices(writer, await writer.call("listClaims", {})))

        # Keep the remaining hunk: it leaves the list; the writer's section goes.
        await hunk1.get_by_role("button", name="Keep", exact=True).click()
        await wait_for(lambda: count_is(page, f'#change-list section.change-agent[data-session="{session}"]', 0), "the writer's section to go")
        await wait_for(lambda: text_is(page, "#badge-changes", "1"), "the badge to count 1")
        states = [
            h["state"]
            for c in json.loads(writer.texts(await writer.call("listChanges", {"file": "src/lib.rs"}))[0])["changes"]
            for h in c["hunks"]
        ]
        assert states == ["kept", "undone"], states
        assert lib.read_text() == by_hand

        # "Keep all" of the other agent empties the list; notes.txt stays as written.
        await theirs.get_by_role("button", name="Keep all").click()
        await page.locator("#change-list p.empty").wait_for(timeout=DEADLINE * 1000)
        await wait_for(lambda: text_is(page, "#badge-changes", ""), "the badge to clear")
        assert (bridge.workspace / "notes.txt").read_text() == "first\n2nd\n"
        assert bridge.status()["changes"]["openHunks"] == 0
        await browser.shot(page, "changes-empty")


async def test_two_nearby_hunks_of_one_change_are_undone_one_after_the_other(bridge, browser):
    notes = bridge.workspace / "notes.txt"
    before = "a\nb\nc\nd\ne\nf\ng\nh\n"
    notes.write_text(before)
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#changes")
    async with Agent(bridge) as agent:
        # One write, two hunks (lines 2 and 5), three lines apart.
        written = await agent.call("createFile", {"filePath": "notes.txt", "content": "a\nB\nc\nd\nE\nf\ng\nh\n", "overwrite": True})
        assert not written.isError, agent.texts(written)
        hunks = page.locator("#change-list article.change-hunk")
        await wait_for(lambda: count_is(page, "#change-list article.change-hunk", 2), "the change's two hunks")
        await hunks.first.get_by_role("button", name="Undo", exact=True).click()
        await wait_for(lambda: count_is(page, "#change-list article.change-hunk", 1), "the first hunk to go")
        assert notes.read_text() == "a\nb\nc\nd\nE\nf\ng\nh\n"
        await hunks.first.get_by_role("button", name="Undo", exact=True).click()

        async def settled():
            return await count_is(page, "#change-list article.change-hunk", 0) or await text_contains(page, "#toast", "Not undone")

        await wait_for(settled, "the second undo to be done or declined")
        assert await hunks.count() == 0, await page.text_content("#toast")
        assert notes.read_text() == before
