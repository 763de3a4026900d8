"""Approvals: a permission rule that says `ask` makes a Claude task's tool request wait
for the person in the page; allowing and denying there reach the task, and nobody
deciding in time denies."""

import json

import pytest

from conftest import Agent, wait_for

pytestmark = pytest.mark.anyio

ASK = """
[orchestrator]
permissions = [
  { tool = "Bash", decision = "ask" },
  { tool = "Write", decision = "ask" },
]
approval_timeout_ms = 30000
"""


async def run_task(agent, prompt):
    started = await agent.call("runClaudeTask", {"prompt": prompt, "wait": False})
    return json.loads(agent.texts(started)[0])["taskId"]


async def task_output(agent, task_id):
    status = await agent.call("getClaudeTaskStatus", {"taskId": task_id})
    task = json.loads(agent.texts(status)[0])
    return task["status"] in ("done", "error") and task["output"]


async def test_an_ask_rule_waits_for_the_page_which_allows_one_and_denies_another(make_bridge, browser):
    bridge = make_bridge(config=ASK)
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#approvals")
    async with Agent(bridge) as agent:
        bash = await run_task(agent, "mode:permission:Bash list the files")
        card = page.locator("article.approval", has_text="Bash")
        await card.wait_for()
        assert "ls -la" in await card.text_content()
        assert await page.text_content("#badge-approvals") == "1"
        await browser.shot(page, "approval-waiting")
        await card.get_by_role("button", name="Allow").click()
        output = await wait_for(lambda: task_output(agent, bash), "the allowed task to finish")
        assert "permission allow" in output, output

        write = await run_task(agent, "mode:permission:Write write a file")
        card = page.locator("article.approval", has_text="Write")
        await card.wait_for()
        await card.get_by_role("button", name="Deny").click()
        output = await wait_for(lambda: task_output(agent, write), "the denied task to finish")
        assert "permission deny" in output, output
        await page.locator("#approval-list .empty").wait_for()
        await browser.shot(page, "approvals-decided")
        # The timeline says who decided.
        log = await agent.call("getActivityLog", {"includeLifecycle": True, "limit": 50})
        text = agent.texts(log)[0]
        assert "approved in the browser page" in text and "denied in the browser page" in text, text


async def test_nobody_deciding_in_time_denies(make_bridge):
    bridge = make_bridge(config=ASK.replace("approval_timeout_ms = 30000", "approval_timeout_ms = 1000"))
    async with Agent(bridge) as agent:
        task = await run_task(agent, "mode:permission:Bash list the files")
        output = await wait_for(lambda: task_output(agent, task), "the task to be denied")
        assert "permission deny" in output, output
        log = agent.texts(await agent.call("getActivityLog", {"includeLifecycle": True, "limit": 50}))[0]
        assert "nobody decided within 1 s" in log, log
