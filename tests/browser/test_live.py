"""The page follows the bridge live: the timeline gets an agent's tool call as it
happens (and stays fast with thousands of entries), a Claude task's output streams into
the page and the task can be cancelled there, the overview shows the agents."""

import asyncio
import json
import time

import pytest

from conftest import Agent, count_is, text_contains, wait_for

pytestmark = pytest.mark.anyio


async def test_the_timeline_updates_live_when_an_agent_calls_a_tool(bridge, browser):
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#timeline")
    async with Agent(bridge) as agent:
        await page.wait_for_selector("#live.on")
        result = await agent.call("readFile", {"filePath": "notes.txt"})
        assert not result.isError
        row = page.locator(".trow.call", has_text="readFile")
        await row.first.wait_for(timeout=10_000)
        assert "success" in await row.first.text_content()
        await browser.shot(page, "timeline-live")
        # Filtering by tool keeps only that tool's calls.
        await agent.call("gitStatus", {})
        await page.locator(".trow.call", has_text="gitStatus").first.wait_for()
        await page.select_option("#f-tool", "readFile")
        await wait_for(lambda: count_is(page, ".trow.call", 1), "the filter")
        # The agent shows on the overview with its connection.
        await page.goto(f"{bridge.origin}/ui/#overview")
        await page.wait_for_selector("#agents tbody tr")
        assert "ide" in await page.text_content("#agents tbody tr")
        await browser.shot(page, "overview-agent")


async def test_thousands_of_timeline_entries_keep_the_page_fast(make_bridge, browser):
    bridge = make_bridge("--set", "rate_limit.requests=100000", "--set", "activity.max_entries=10000")
    async with Agent(bridge) as agent:
        for _ in range(500):
            await asyncio.gather(*(agent.call("getWorkspaceFolders", {}) for _ in range(10)))
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#timeline")
    t0 = time.monotonic()
    await page.reload()
    await page.wait_for_selector("body.ready")
    await wait_for(lambda: text_contains(page, "#t-count", "of 50"), "5000 entries listed")
    loaded = time.monotonic() - t0
    count = await page.text_content("#t-count")
    assert int(count.split(" of ")[1].split()[0]) >= 5000, count
    rows = await page.locator(".trow").count()
    assert rows < 200, f"{rows} rows in the DOM: the list is not virtual"
    # Scrolling far down shows the older entries, still with few rows in the DOM.
    await page.evaluate("document.getElementById('timeline').scrollTop = 4000 * 30")
    # Newest first: 4000 rows down are entries from early in the run.
    await wait_for(lambda: _first_row_id_below(page, 1500), "older rows after scrolling")
    assert await page.locator(".trow").count() < 200
    # Filtering 5000 entries answers at once.
    t1 = time.monotonic()
    await page.fill("#f-text", "no such entry anywhere")
    await wait_for(lambda: text_contains(page, "#t-count", "0 of"), "the filter")
    filtered = time.monotonic() - t1
    await browser.shot(page, "timeline-5000")
    print(f"page with 5000 entries ready in {loaded:.2f} s, filtered in {filtered:.3f} s")
    assert loaded < 10 and filtered < 2, (loaded, filtered)


async def _first_row_id_below(page, limit):
    ids = [int(i) for i in await page.locator(".trow").evaluate_all("rows => rows.map(r => r.dataset.id)")]
    return ids and min(ids) < limit


async def test_a_task_streams_its_output_and_is_cancelled_in_the_page(bridge, browser):
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#tasks")
    async with Agent(bridge) as agent:
        started = await agent.call("runClaudeTask", {"prompt": "mode:slow count for me", "wait": False})
        task_id = json.loads(agent.texts(started)[0])["taskId"]
        await page.locator(f'#task-list li[data-task="{task_id}"]').click()
        # Each step appears as the task prints it, before the task is over.
        await page.locator("#task-output", has_text="step 0").wait_for()
        assert "step 2" not in await page.text_content("#task-output")
        await browser.shot(page, "task-streaming")
        await page.locator("#task-output", has_text="step 2").wait_for(timeout=15_000)
        await wait_for(lambda: text_contains(page, "#task-status", "done"), "the task to finish", timeout=15)
        await browser.shot(page, "task-done")
        # Started by the agent, said so (not "bridge"); nothing absent shows as "null".
        head = await page.text_content("#task-detail .row")
        assert "null" not in head and "bridge" not in head, head
        row = await page.text_content(f'#task-list li[data-task="{task_id}"]')
        assert "bridge" not in row, row

        forever = await agent.call("runClaudeTask", {"prompt": "mode:forever marker:4177", "wait": False})
        forever_id = json.loads(agent.texts(forever)[0])["taskId"]
        await page.goto(f"{bridge.origin}/ui/#task-{forever_id}")
        await page.wait_for_selector("#task-cancel")
        await page.click("#task-cancel")
        status = await agent.call("getClaudeTaskStatus", {"taskId": forever_id})
        await wait_for(lambda: text_contains(page, "#task-status", "cancelled"), "the page to show the cancel")
        assert json.loads(agent.texts(status)[0])["status"] in ("cancelled", "running")


async def test_an_open_page_comes_back_by_itself_after_the_bridge_restarts(bridge, browser):
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#timeline")
    await page.wait_for_selector("#live.on")
    port = bridge.port
    bridge.restart()
    assert bridge.port == port, "a restarted bridge keeps its port"
    # The stream reconnects on its own and the browser is still signed in.
    await page.wait_for_selector("#live.on", timeout=20_000)
    async with Agent(bridge) as agent:
        await agent.call("readFile", {"filePath": "notes.txt"})
        await page.locator(".trow.call", has_text="readFile").first.wait_for(timeout=10_000)
    assert page.url == f"{bridge.origin}/ui/#timeline", "never sent to the login page"
    await browser.shot(page, "after-restart")
