"""Diff review without an editor: an agent's openDiff appears in the page while one is
open; the person accepts (after editing the proposal) or rejects it, and the agent gets
exactly what an editor would answer. Without a page, openDiff is declined at once as
before."""

import asyncio
import time

import pytest

from conftest import ROOT, Agent, text_contains, text_is, wait_for

pytestmark = pytest.mark.anyio


def open_diff(bridge, agent, tab, contents):
    path = str(bridge.workspace / "notes.txt")
    args = {"old_file_path": path, "new_file_path": path, "new_file_contents": contents, "tab_name": tab}
    return asyncio.create_task(agent.call("openDiff", args, timeout=60))


async def test_a_diff_accepted_in_the_page_with_an_edit_gives_the_agent_the_edited_text(bridge, browser):
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#diffs")
    async with Agent(bridge) as agent:
        call = open_diff(bridge, agent, "edit-notes", "first\nsecond, proposed\nthird\n")
        await page.wait_for_selector("#diff-accept")
        assert await page.text_content("#diff-file") == str(bridge.workspace / "notes.txt")
        # Side by side: the changed line on both sides, the new one on the right.
        assert await page.locator("table.diff tr.chg td.old").first.text_content() == "second"
        assert await page.locator("table.diff tr.chg td.new").first.text_content() == "second, proposed"
        assert await page.text_content("#badge-diffs") == "1"
        await browser.shot(page, "diff-waiting")
        await page.click("#diff-edit-toggle")
        await page.fill("#diff-edit", "first\nsecond, edited by me\nthird\n")
        await browser.shot(page, "diff-edited")
        await page.click("#diff-accept")
        result = await asyncio.wait_for(call, 10)
        assert agent.texts(result) == ["FILE_SAVED", "first\nsecond, edited by me\nthird\n"]
        assert not result.isError
        await page.wait_for_selector("#diff-view .empty")
        await browser.shot(page, "diff-accepted")
    # The page decides; the agent (here, as the CLI does) writes the file.
    assert (bridge.workspace / "notes.txt").read_text() == "first\nsecond\n"


async def test_the_page_shows_what_the_language_server_says_a_proposal_adds(make_bridge, browser):
    pylsp = ROOT / ".venv-nvim" / "bin" / "pylsp"
    assert pylsp.exists(), "run tests/nvim/setup.sh (the test command does)"
    bridge = make_bridge("--set", f"lsp.servers.python.command={pylsp}")
    path = bridge.workspace / "shapes.py"
    path.write_text("def area(w, h):\n    return w * h\n")
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#diffs")
    async with Agent(bridge) as agent:
        proposal = "def area(w, h):\n    return w * h\n\n\ntotal = area(2, nope)\n"
        args = {"old_file_path": str(path), "new_file_path": str(path), "new_file_contents": proposal, "tab_name": "checked"}
        call = asyncio.create_task(agent.call("openDiff", args, timeout=60))
        await page.wait_for_selector("#diff-accept")
        # The diff shows at once; the server's verdict follows (pylsp starts first).
        await wait_for(lambda: text_contains(page, "#diff-check", "adds 1 error(s)"), "the check", timeout=60)
        assert "undefined name 'nope'" in await page.get_attribute("#diff-check", "title")
        await browser.shot(page, "diff-checked")
        await page.click("#diff-reject")
        result = await asyncio.wait_for(call, 10)
        assert agent.texts(result) == ["DIFF_REJECTED", "checked"]
    assert path.read_text() == "def area(w, h):\n    return w * h\n"


async def test_a_rejected_diff_answers_diff_rejected_and_several_can_be_decided_in_turn(bridge, browser):
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#diffs")
    async with Agent(bridge) as agent:
        first = open_diff(bridge, agent, "one", "one\n")
        await wait_for(lambda: bridge.status()["page"]["pendingDiffs"] == 1, "the first diff")
        second = open_diff(bridge, agent, "two", "two\n")
        await wait_for(lambda: page.text_content("#diff-pos"), "the diffs to be listed")
        await wait_for(lambda: text_is(page, "#diff-pos", "1 of 2"), "two diffs")
        await browser.shot(page, "two-diffs")
        await page.click("#diff-reject")
        result = await asyncio.wait_for(first, 10)
        assert agent.texts(result) == ["DIFF_REJECTED", "one"]
        await wait_for(lambda: text_is(page, "#diff-pos", "1 of 1"), "one diff left")
        # "Reject all" asks for a second click before it decides anything.
        await page.click("#diff-reject-all")
        await wait_for(lambda: text_contains(page, "#diff-reject-all", "Click again"), "Reject all to ask again")
        assert bridge.status()["page"]["pendingDiffs"] == 1
        await wait_for(lambda: text_is(page, "#diff-reject-all", "Reject all"), "the question to lapse", timeout=8)
        assert bridge.status()["page"]["pendingDiffs"] == 1
        await page.click("#diff-accept-all")
        result = await asyncio.wait_for(second, 10)
        assert agent.texts(result) == ["FILE_SAVED", "two\n"]


async def test_an_agent_that_closes_its_tab_withdraws_the_diff_from_the_page(bridge, browser):
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#diffs")
    async with Agent(bridge) as agent:
        call = open_diff(bridge, agent, "withdrawn", "x\n")
        await page.wait_for_selector("#diff-accept")
        closed = await agent.call("close_tab", {"tab_name": "withdrawn"})
        assert agent.texts(closed) == ["TAB_CLOSED"]
        result = await asyncio.wait_for(call, 10)
        assert agent.texts(result) == ["DIFF_REJECTED", "withdrawn"]
        await page.wait_for_selector("#diff-view .empty")


async def test_without_a_page_open_diff_is_declined_at_once(bridge):
    async with Agent(bridge) as agent:
        started = time.monotonic()
        result = await open_diff(bridge, agent, "nobody", "x\n")
        assert time.monotonic() - started < 5
        assert "No editor is connected" in agent.texts(result)[0]
        assert "terminal" in agent.texts(result)[0]
