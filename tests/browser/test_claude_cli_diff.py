"""The whole journey with the real Claude Code CLI and no editor: the scripted model asks
for an edit, the CLI (connected with --ide) calls openDiff, the diff waits in the page,
the person edits the proposal and accepts it there, and the CLI writes the file with the
person's text.

Needs CLAUDE_CLI (scripts/test.sh installs it into .npm-test) and the fake model of
tests/python; skipped when the CLI is missing."""

import json
import os
import pty
import re
import signal
import threading

import pytest

from conftest import ROOT, wait_for
from fake_model import FakeModel, text, tool_use

pytestmark = pytest.mark.anyio

CLAUDE = os.environ.get("CLAUDE_CLI") or str(ROOT / ".npm-test" / "node_modules" / ".bin" / "claude")
API_KEY = "sk-ant-ide-bridge-browser-test-key-01"


def screen_text(screen):
    return re.sub(rb"\x1b\[[0-9;?<>=]*[a-zA-Z]", b"", b"".join(screen)).decode("utf8", "replace")


@pytest.mark.skipif(not os.access(CLAUDE, os.X_OK), reason="the Claude Code CLI is not installed (scripts/test.sh installs it)")
async def test_the_cli_writes_what_the_person_accepted_in_the_page(bridge, browser):
    notes = bridge.workspace / "notes.txt"
    (bridge.config_dir / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "theme": "dark",
                "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
                "projects": {str(bridge.workspace): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}},
            }
        )
    )
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#diffs")
    script = [
        {"on": "prompt", "contains": "fix the notes", "reply": tool_use("Read", {"file_path": str(notes)})},
        {"on": "tool_result", "reply": tool_use("Edit", {"file_path": str(notes), "old_string": "second", "new_string": "second, by the model"})},
        {"on": "tool_result", "reply": text("All done.")},
    ]
    with FakeModel(script) as model:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("IDE_BRIDGE_", "CLAUDE", "ANTHROPIC"))}
        env.update(
            {
                "HOME": str(bridge.home),
                "CLAUDE_CONFIG_DIR": str(bridge.config_dir),
                "CLAUDE_CODE_SSE_PORT": str(bridge.port),
                "ANTHROPIC_API_KEY": API_KEY,
                "ANTHROPIC_BASE_URL": model.url,
                "TERM": "xterm-256color",
                "DISABLE_AUTOUPDATER": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
            }
        )
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(bridge.workspace)
            os.execve(CLAUDE, [CLAUDE, "--ide"], env)
        screen = []

        def drain():
            while True:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    return
                if not data:
                    return
                screen.append(data)

        threading.Thread(target=drain, daemon=True).start()
        try:

            def cli_ready():
                return any(
                    (s.get("client") or "").startswith("claude-code") and s["initialized"]
                    for s in bridge.status()["sessions"]
                )

            await wait_for(cli_ready, "the CLI to connect", timeout=60)
            # The prompt is typed once the CLI shows its input box; keys sent before the
            # box settles are lost, so type again until the text shows.
            await wait_for(lambda: "shortcuts" in screen_text(screen), "the input box", timeout=60)
            for attempt in range(5):
                os.write(fd, b"please fix the notes")
                try:
                    # The screen moves the cursor instead of printing spaces.
                    await wait_for(lambda: "fixthenotes" in screen_text(screen).replace(" ", ""), "the typed prompt", timeout=3)
                    break
                except AssertionError:
                    os.write(fd, b"\x15")  # ^U: clear whatever half-arrived
            os.write(fd, b"\r")
            try:
                await page.wait_for_selector("#diff-accept", timeout=60_000)
            except Exception:
                raise AssertionError("no diff in the page; the CLI showed:\n" + screen_text(screen)[-3000:])
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
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
