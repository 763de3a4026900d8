"""A permission dialog of the real Claude Code CLI (interactive, after `ide-bridge init`
installed its hooks) also waits in the page: Allow there answers the CLI, which runs
the command. With the page closed the terminal asks at once, as without the bridge.
Both the pinned and the newest CLI (see claude_pty.claude_cli)."""

import time

import anyio
import claude_pty
import pytest
from claude_pty import Claude, environment, manual_mode, submit, trust
from conftest import BRIDGE_BIN, wait_for
from fake_model import FakeModel, text, tool_use
from playwright.async_api import TimeoutError as PlaywrightTimeout

pytestmark = pytest.mark.anyio

API_KEY = "sk-ant-ide-bridge-browser-test-key-02"
cli = claude_pty.cli  # the fixture: the pinned and the newest CLI in turn


async def test_a_permission_dialog_waits_in_the_page_and_allow_there_runs_the_command(bridge, browser, cli):
    ws = bridge.workspace
    trust(bridge.config_dir, ws, API_KEY)
    manual_mode(bridge.config_dir, allow=["mcp__ide-bridge"])
    with anyio.fail_after(30):
        init = await anyio.run_process([BRIDGE_BIN, "init"], env=bridge.env, check=False)
    assert init.returncode == 0, init.stderr.decode()
    page = await browser.sign_in(bridge)
    await page.goto(f"{bridge.origin}/ui/#approvals")
    script = [
        {"on": "prompt", "contains": "make the file", "reply": tool_use("Bash", {"command": "touch made-in-page.txt", "description": "create a file"}, id="toolu_bash_1")},
        {"on": "tool_result", "reply": text("made it")},
        {"on": "prompt", "contains": "make a third", "reply": tool_use("Bash", {"command": "touch answered-in-terminal.txt", "description": "create a third file"}, id="toolu_bash_3")},
        {"on": "tool_result", "reply": text("made a third")},
        {"on": "prompt", "contains": "make another", "reply": tool_use("Bash", {"command": "touch made-in-terminal.txt", "description": "create another file"}, id="toolu_bash_2")},
        {"on": "tool_result", "reply": text("made another")},
    ]
    with FakeModel(script) as model:
        env = environment(home=bridge.home, config_dir=bridge.config_dir, port=bridge.port, api_key=API_KEY, model_url=model.url)
        claude = Claude(cli, ws, env)
        try:
            await wait_for(
                lambda: any((s.get("client") or "").startswith("claude-code") and s["initialized"] for s in bridge.status()["sessions"]),
                "the CLI to connect", timeout=90,
            )
            submit(claude, "make the file")
            card = page.locator("article.approval", has_text="touch made-in-page.txt")
            try:
                await card.wait_for(timeout=60_000)
            except PlaywrightTimeout as e:
                raise AssertionError("no permission request in the page; the CLI showed:\n" + claude.text()[-3000:]) from e
            shown = await card.text_content()
            assert "Bash" in shown and "claude-code" in shown and "terminal asks too" in shown, shown
            await browser.shot(page, f"cli-permission-{cli.which}")
            await card.get_by_role("button", name="Allow").click()
            await wait_for(lambda: (ws / "made-in-page.txt").exists(), "the CLI to run the allowed command", timeout=60)
            await wait_for(lambda: [r for r in model.tool_results() if r["tool_use_id"] == "toolu_bash_1"], "the command's result", timeout=60)
            result = next(r for r in model.tool_results() if r["tool_use_id"] == "toolu_bash_1")
            assert not result.get("is_error"), result
            await page.locator("#approval-list .empty").wait_for()
            log = [e for e in bridge.status()["recentActivity"] if e.get("event") == "permission_answered"]
            assert log and "allowed in the page" in log[-1]["detail"], log

            # Answered in the terminal while the page shows it: the card goes.
            submit(claude, "make a third")
            third = page.locator("article.approval", has_text="touch answered-in-terminal.txt")
            await third.wait_for(timeout=60_000)
            await press_enter_until(claude, ws / "answered-in-terminal.txt")
            await third.wait_for(state="detached", timeout=30_000)
            await page.locator("#approval-list .empty").wait_for()
            assert bridge.status()["page"]["pendingApprovals"] == 0

            # The page closed: the terminal asks at once, nothing waits in the bridge.
            await page.close()
            await wait_for(lambda: bridge.status()["page"]["watching"] == 0, "the page to be gone", timeout=30)
            before = claude.text().count("proceed")
            asked = time.monotonic()
            submit(claude, "make another")
            await wait_for(lambda: claude.text().count("proceed") > before, "the terminal's permission dialog", timeout=60)
            assert time.monotonic() - asked < 30
            assert bridge.status()["page"]["pendingApprovals"] == 0
            await press_enter_until(claude, ws / "made-in-terminal.txt")
        finally:
            claude.kill()


async def press_enter_until(claude, made):
    """Answers the terminal's permission dialog with its first choice (yes) until the
    command ran. The newest CLI ignores keys that arrive right after a dialog opens (so
    that typing cannot answer it by accident): press Enter until it takes."""
    for _ in range(30):
        claude.type("\r")
        try:
            await wait_for(made.exists, "the CLI to run what the terminal allowed", timeout=1)
            return
        except AssertionError:
            pass
    raise AssertionError("the terminal's answer did not run the command; the CLI showed:\n" + claude.text()[-3000:])
