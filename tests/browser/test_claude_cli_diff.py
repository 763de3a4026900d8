"""The whole journey with the real Claude Code CLI and no editor: the scripted model asks
for an edit, the CLI (connected with --ide) calls openDiff, the diff waits in the page,
the person edits the proposal and accepts it there, and the CLI writes the file with the
person's text.

Needs CLAUDE_CLI (scripts/test.sh installs it into .npm-test) and the fake model of
tests/python; skipped when the CLI is missing."""

import os

import pytest

from claude_pty import Claude, environment, trust
from conftest import ROOT, wait_for
from fake_model import FakeModel, text, tool_use

pytestmark = pytest.mark.anyio

CLAUDE = os.environ.get("CLAUDE_CLI") or str(ROOT / ".npm-test" / "node_modules" / ".bin" / "claude")
API_KEY = "sk-ant-ide-bridge-browser-test-key-01"


@pytest.mark.skipif(not os.access(CLAUDE, os.X_OK), reason="the Claude Code CLI is not installed (scripts/test.sh installs it)")
async def test_the_cli_writes_what_the_person_accepted_in_the_page(bridge, browser):
    notes = bridge.workspace / "notes.txt"
    trust(bridge.config_dir, bridge.workspace, API_KEY)
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#diffs")
    script = [
        {"on": "prompt", "contains": "fix the notes", "reply": tool_use("Read", {"file_path": str(notes)})},
        {"on": "tool_result", "reply": tool_use("Edit", {"file_path": str(notes), "old_string": "second", "new_string": "second, by the model"})},
        {"on": "tool_result", "reply": text("All done.")},
    ]
    with FakeModel(script) as model:
        env = environment(home=bridge.home, config_dir=bridge.config_dir, port=bridge.port, api_key=API_KEY, model_url=model.url)
        claude = Claude(CLAUDE, bridge.workspace, env)
        try:

            def cli_ready():
                return any(
                    (s.get("client") or "").startswith("claude-code") and s["initialized"]
                    for s in bridge.status()["sessions"]
                )

            await wait_for(cli_ready, "the CLI to connect", timeout=60)
            # The prompt is typed once the CLI shows its input box; keys sent before the
            # box settles are lost, so type again until the text shows.
            await wait_for(lambda: "shortcuts" in claude.text(), "the input box", timeout=60)
            for attempt in range(5):
                claude.type("please fix the notes")
                try:
                    await wait_for(lambda: "fixthenotes" in claude.text().replace(" ", ""), "the typed prompt", timeout=3)
                    break
                except AssertionError:
                    claude.type("\x15")  # ^U: clear whatever half-arrived
            claude.type("\r")
            try:
                await page.wait_for_selector("#diff-accept", timeout=60_000)
            except Exception:
                raise AssertionError("no diff in the page; the CLI showed:\n" + claude.text()[-3000:])
            proposed = " ".join(await page.locator("table.diff td.new").all_text_contents())
            assert "second, by the model" in proposed, proposed
            await browser.shot(page, "cli-diff")
            await page.click("#diff-edit-toggle")
            await page.fill("#diff-edit", "first\nsecond, as the person wants it\n")
            await page.click("#diff-accept")
            await wait_for(lambda: "as the person wants it" in notes.read_text(), "the CLI to write the file", timeout=30)
            assert notes.read_text() == "first\nsecond, as the person wants it\n"
            await wait_for(model.script_done, "the model's script to finish", timeout=30)
        finally:
            claude.kill()
