"""The review panel: presentReview renders in the page with clickable references; a
click shows the right excerpt (and, with an editor, opens the place there); references
follow the code through edits or turn stale; a place goes back to the agent as an
@-mention; "Commit with this message" commits the staged changes."""

import subprocess

import pytest

from conftest import Agent, EditorSim, git, text_contains, text_is, wait_for

pytestmark = pytest.mark.anyio

REVIEW = """# Make the answer configurable

## Summary

The answer is hard-coded in `src/lib.rs:4-6`; see also src/lib.rs:2 and notes.txt:2.

## Details

- <script>alert('x')</script> is shown as text.
- missing.rs:3 is not in the workspace.
"""


async def present(agent, review=REVIEW, **extra):
    result = await agent.call("presentReview", {"review": review, **extra})
    assert not result.isError, agent.texts(result)
    return agent.texts(result)


async def ref_class(page, index):
    return await page.get_attribute(f'#review-body a.ref[data-ref="{index}"]', "class")


async def test_a_review_renders_and_a_reference_click_shows_the_excerpt_and_opens_the_editor(bridge, browser):
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#reviews")
    async with Agent(bridge) as agent, EditorSim(bridge) as editor:
        said = await present(agent)
        assert "3 references to 2 files" in said[0], said
        assert "missing.rs" in said[0]
        await page.wait_for_selector("#review-body a.ref")
        assert await page.text_content("#review-body h1") == "Make the answer configurable"
        assert await page.locator("#review-body a.ref").count() == 3
        # Raw HTML in the review is text, never markup.
        assert "<script>" in await page.text_content("#review-body")
        assert await page.locator("#review-body script").count() == 0
        await browser.shot(page, "review")
        await page.click('#review-body a.ref[data-ref="0"]')
        await page.wait_for_selector("#excerpt .line.hit")
        hits = await page.locator("#excerpt .line.hit .lt").all_text_contents()
        assert hits == ["pub fn answer() -> u32 {", "    42", "}"], hits
        assert await page.text_content("#excerpt-where") == "src/lib.rs:4-6"
        # Nothing absent shows as the text "null" (an unchanged reference has no note).
        assert "null" not in await page.text_content("#excerpt")
        await browser.shot(page, "review-excerpt")
        # The editor was asked to open the file at the reference's first line.
        opened = await wait_for(lambda: [p for m, p in editor.requests if m == "extension/openFile"], "openFile in the editor")
        assert opened[-1] == {"file": str(bridge.workspace / "src" / "lib.rs"), "line": 4}, opened


async def test_references_follow_edits_on_disk_or_turn_stale(bridge, browser):
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#reviews")
    async with Agent(bridge) as agent:
        await present(agent)
        await page.wait_for_selector("#review-body a.ref")
        assert "kept" in await ref_class(page, 0)
        lib = bridge.workspace / "src" / "lib.rs"
        # Two lines added above: the function moves down, unchanged.
        lib.write_text("// new a\n// new b\n" + lib.read_text())
        await wait_for(lambda: _has(page, 0, "moved"), "the reference to move")
        await page.click('#review-body a.ref[data-ref="0"]')
        await wait_for(lambda: text_is(page, "#excerpt-where", "src/lib.rs:6-8"), "the excerpt to follow")
        hits = await page.locator("#excerpt .line.hit .lt").all_text_contents()
        assert hits == ["pub fn answer() -> u32 {", "    42", "}"], hits
        await browser.shot(page, "review-moved")
        # The referenced body changes: the reference is stale, and shows what it saw.
        lib.write_text(lib.read_text().replace("    42", "    43"))
        await wait_for(lambda: _has(page, 0, "stale"), "the reference to turn stale")
        await page.click('#review-body a.ref[data-ref="0"]')
        await page.wait_for_selector("#excerpt .warn")
        assert await page.text_content("#excerpt-where") == "src/lib.rs:4-6"
        assert "    42" in await page.locator("#excerpt .line.hit .lt").all_text_contents()
        await browser.shot(page, "review-stale")
        # The other file's reference was never touched.
        assert "kept" in await ref_class(page, 2)


async def _has(page, index, cls):
    return cls in ((await ref_class(page, index)) or "")


async def test_a_reference_goes_back_to_the_agent_and_the_review_becomes_the_commit(bridge, browser):
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#reviews")
    async with Agent(bridge) as agent:
        await present(agent)
        await page.wait_for_selector("#review-body a.ref")
        await page.click('#review-body a.ref[data-ref="1"]')
        await page.wait_for_selector("#send-ref")
        await page.click("#send-ref")
        mention = await wait_for(lambda: [p for m, p in agent.notifications if m == "at_mentioned"], "the at_mentioned")
        assert mention[-1] == {"filePath": str(bridge.workspace / "src" / "lib.rs"), "lineStart": 1, "lineEnd": 1}, mention
        # The commit message is the review's summary, and it commits what is staged.
        message = await page.input_value("#commit-message")
        assert message.startswith("Make the answer configurable\n\nThe answer is hard-coded"), message
        (bridge.workspace / "notes.txt").write_text("first\nsecond\nthird\n")
        git(bridge.workspace, "add", "notes.txt")
        await page.click("#commit-btn")
        await wait_for(lambda: text_contains(page, "#commit-result", "Committed"), "the commit")
        log = subprocess.run(["git", "log", "-1", "--format=%B"], cwd=bridge.workspace, capture_output=True, text=True).stdout
        assert log.strip() == message.strip(), log
        await browser.shot(page, "review-committed")
        # Nothing staged now: the next commit is refused with git's reason.
        await page.click("#commit-btn")
        await wait_for(lambda: text_contains(page, "#commit-result", "nothing"), "git's refusal")


async def test_a_base_ref_anchors_the_lines_where_they_were_at_that_commit(bridge, browser):
    page = await browser.sign_in(bridge)
    lib = bridge.workspace / "src" / "lib.rs"
    lib.write_text("// inserted\n" + lib.read_text())
    git(bridge.workspace, "commit", "-qam", "insert a line")
    async with Agent(bridge) as agent:
        # Line 4 of the first commit is the function, now at line 5.
        said = await present(agent, review="Look at src/lib.rs:4", baseRef="HEAD~1")
        assert "1 references to 1 files" in said[0], said
        await page.goto(f"{bridge.origin}/ui/#reviews")
        await page.wait_for_selector("#review-body a.ref")
        assert "moved" in await ref_class(page, 0)
        await page.click('#review-body a.ref[data-ref="0"]')
        await wait_for(lambda: text_is(page, "#excerpt-where", "src/lib.rs:5"), "the line at HEAD")
        bad = await agent.call("presentReview", {"review": "x", "baseRef": "--output=/tmp/x"})
        assert bad.isError and "Invalid baseRef" in agent.texts(bad)[0]


async def test_the_reviews_tab_opens_the_newest_review_when_none_is_open(bridge, browser):
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#overview")
    async with Agent(bridge) as agent:
        await present(agent, "# The older one\n\nsrc/lib.rs:2\n")
        await present(agent, "# The newest one\n\nsrc/lib.rs:4\n")
        await page.locator("#badge-reviews", has_text="2").wait_for()
        await page.click('#tabs a[data-view="reviews"]')
        await page.wait_for_selector("#review-body h1")
        assert await page.text_content("#review-body h1") == "The newest one"
        assert "No review yet" not in await page.text_content("#review-body")
