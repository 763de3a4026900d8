"""The whole journey with the real Claude Code CLI (the pinned and the newest version)
and no editor: the scripted model asks for an edit, the CLI (connected with --ide) calls
openDiff, the diff waits in the page, the person edits the proposal and accepts it
there, and the CLI writes the file with the person's text.

Needs the CLIs (scripts/test.sh installs them into .npm-test and .npm-test-latest and
names them in CLAUDE_CLI and CLAUDE_CLI_LATEST; see claude_pty.claude_cli) and the fake
model of tests/python."""

import claude_pty
import pytest
from claude_pty import Claude, environment, manual_mode, submit, trust
from conftest import wait_for
from fake_model import FakeModel, text, tool_use
from playwright.async_api import TimeoutError as PlaywrightTimeout

pytestmark = pytest.mark.anyio
cli = claude_pty.cli  # the fixture: the pinned and the newest CLI in turn

API_KEY = "sk-ant-ide-bridge-browser-test-key-01"


async def test_the_cli_writes_what_the_person_accepted_in_the_page(bridge, browser, cli):
    notes = bridge.workspace / "notes.txt"
    trust(bridge.config_dir, bridge.workspace, API_KEY)
    # The Edit asks (the newest CLI would start in auto mode), so the diff is shown.
    manual_mode(bridge.config_dir)
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#diffs")
    script = [
        {"on": "prompt", "contains": "fix the notes", "reply": tool_use("Read", {"file_path": str(notes)})},
        {"on": "tool_result", "reply": tool_use("Edit", {"file_path": str(notes), "old_string": "second", "new_string": "second, by the model"}, id="toolu_edit_1")},
        {"on": "tool_result", "reply": text("All done.")},
    ]
    with FakeModel(script) as model:
        env = environment(home=bridge.home, config_dir=bridge.config_dir, port=bridge.port, api_key=API_KEY, model_url=model.url)
        claude = Claude(cli, bridge.workspace, env)
        try:

            def cli_ready():
                return any(
                    (s.get("client") or "").startswith("claude-code") and s["initialized"] and s.get("clientPid") == claude.pid
                    for s in bridge.status()["sessions"]
                )

            await wait_for(cli_ready, "the CLI to connect", timeout=60)
            submit(claude, "please fix the notes")
            try:
                await page.wait_for_selector("#diff-accept", timeout=60_000)
            except PlaywrightTimeout as e:
                raise AssertionError("no diff in the page; the CLI showed:\n" + claude.text()[-3000:]) from e
            proposed = " ".join(await page.locator("table.diff td.new").all_text_contents())
            assert "second, by the model" in proposed, proposed
            await browser.shot(page, f"cli-diff-{cli.which}")
            await page.click("#diff-edit-toggle")
            await page.fill("#diff-edit", "first\nsecond, as the person wants it\n")
            await page.click("#diff-accept")
            await wait_for(lambda: "as the person wants it" in notes.read_text(), "the CLI to write the file", timeout=30)
            assert notes.read_text() == "first\nsecond, as the person wants it\n"
            await wait_for(model.script_done, "the model's script to finish", timeout=30)
            edited = next(r for r in model.tool_results() if r["tool_use_id"] == "toolu_edit_1")
            assert not edited.get("is_error"), edited
            # The model learns that the person changed its proposal.
            assert "user modified your proposed changes" in FakeModel.result_text(edited), edited
        finally:
            claude.kill()
