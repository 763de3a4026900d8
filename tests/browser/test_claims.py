"""File claims in the page: the person claims a file and an agent's write to it is
refused with "the person" and the reason; an agent's claim shows with its holder; the
person releases either, and the agent's write goes through."""

import json

import pytest

from conftest import Agent, count_is, wait_for

pytestmark = pytest.mark.anyio


async def test_the_person_claims_and_releases_files_and_agents_are_held_off_meanwhile(bridge, browser):
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#overview")
    await page.locator("#claims-empty").wait_for()
    async with Agent(bridge) as agent:
        # The person claims notes.txt.
        await page.fill("#claim-paths", "notes.txt")
        await page.fill("#claim-reason", "rewriting the notes by hand")
        await page.click("#claim-form button[type=submit]")
        row = page.locator("#claims tbody tr", has_text="notes.txt")
        await row.wait_for()
        assert "the person" in await row.text_content()
        write = await agent.call("replaceBlock", {"filePath": "notes.txt", "oldContent": "second", "newContent": "2nd"})
        said = agent.texts(write)[0]
        assert write.isError and "the person" in said and "rewriting the notes by hand" in said, said
        assert (bridge.workspace / "notes.txt").read_text() == "first\nsecond\n"

        # An agent's claim shows with its holder.
        claimed = await agent.call("claimFiles", {"paths": ["src/lib.rs"], "reason": "answer changes"})
        assert not claimed.isError, agent.texts(claimed)
        holder = json.loads(agent.texts(claimed)[0])["claimed"]["holder"]
        agent_row = page.locator("#claims tbody tr", has_text="src/lib.rs")
        await agent_row.wait_for(timeout=10_000)
        assert holder in await agent_row.text_content()
        await browser.shot(page, "claims")

        # The person releases both; the agent's write goes through.
        await row.get_by_role("button", name="Release").click()
        await agent_row.get_by_role("button", name="Release").click()
        await wait_for(lambda: count_is(page, "#claims tbody tr", 0), "the claims to go from the page")
        assert bridge.status()["claims"]["held"] == []
        write = await agent.call("replaceBlock", {"filePath": "notes.txt", "oldContent": "second", "newContent": "2nd"})
        assert not write.isError, agent.texts(write)
        assert (bridge.workspace / "notes.txt").read_text() == "first\n2nd\n"
        released = [e for e in bridge.status()["recentActivity"] if e.get("event") == "claim_ended"]
        assert len(released) == 2 and all("released by the person" in e["detail"] for e in released), released


async def test_a_claim_the_page_cannot_make_says_why(bridge, browser):
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#overview")
    async with Agent(bridge) as agent:
        claimed = await agent.call("claimFiles", {"paths": ["src"], "reason": "mine"})
        assert not claimed.isError
        await page.locator("#claims tbody tr", has_text="src").wait_for(timeout=10_000)
        await page.fill("#claim-paths", "src/lib.rs")
        await page.click("#claim-form button[type=submit]")
        await wait_for(lambda: page.locator("#toast").text_content(), "a toast")
        toast = await page.locator("#toast").text_content()
        assert "already claimed by agent" in toast and "mine" in toast, toast
        assert len(bridge.status()["claims"]["held"]) == 1
