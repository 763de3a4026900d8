"""The full loop with the real Claude Code CLI and a scripted model: the model asks
for an edit, the CLI (connected with --ide) calls openDiff, Neovim shows the diff, the
user accepts with :w, and the CLI writes the file.

Needs CLAUDE_CLI (scripts/test.sh installs it into .npm-test) and the fake model of
tests/python; skipped when the CLI is missing."""

import os
import sys
import time

import pytest

from conftest import ROOT, wait_for

sys.path.insert(0, str(ROOT / "tests" / "python"))
from claude_pty import Claude, environment, trust  # noqa: E402
from fake_model import FakeModel, text, tool_use  # noqa: E402

CLAUDE = os.environ.get("CLAUDE_CLI") or str(ROOT / ".npm-test" / "node_modules" / ".bin" / "claude")
API_KEY = "sk-ant-ide-bridge-nvim-test-key-0001"


@pytest.mark.skipif(not os.access(CLAUDE, os.X_OK), reason="the Claude Code CLI is not installed (scripts/test.sh installs it)")
def test_claude_cli_edit_accepted_in_neovim(world):
    w = world
    f = w.workspace / "app.py"
    f.write_text("def answer():\n    return 41\n")
    config_dir = w.bridge.config_dir
    trust(config_dir, w.workspace, API_KEY)
    script = [
        {"on": "prompt", "contains": "fix the answer", "reply": tool_use("Read", {"file_path": str(f)})},
        {
            "on": "tool_result",
            "reply": tool_use("Edit", {"file_path": str(f), "old_string": "return 41", "new_string": "return 42"}),
        },
        {"on": "tool_result", "reply": text("All done.")},
    ]
    with FakeModel(script) as model:
        env = environment(
            base=w.env, home=w.env["HOME"], config_dir=config_dir, port=w.bridge.port, api_key=API_KEY, model_url=model.url
        )
        claude = Claude(CLAUDE, w.workspace, env)
        try:

            def cli_ready():
                for s in w.bridge.status()["sessions"]:
                    if (s.get("client") or "").startswith("claude-code") and s["initialized"]:
                        return s
                return None

            wait_for(cli_ready, timeout=60, what="the CLI to connect")
            time.sleep(2)  # let the prompt render
            claude.type("please fix the answer in app.py")
            time.sleep(0.5)
            claude.type("\r")
            try:
                wait_for(
                    lambda: w.editor.lua("return vim.b.ide_bridge_diff ~= nil and vim.wo.diff"),
                    timeout=60,
                    interval=0.2,
                    what="the CLI's diff in Neovim",
                )
            except AssertionError:
                raise AssertionError("no diff; the CLI showed:\n" + claude.text()[-3000:])
            proposed = w.editor.lua("return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n')")
            assert "return 42" in proposed
            # The user accepts with :w; the CLI writes the file.
            w.editor.input(":w<CR>")
            wait_for(lambda: "return 42" in f.read_text(), timeout=30, what="the CLI to write the file")
            wait_for(lambda: model.script_done(), timeout=30, what="the model's script to finish")
        finally:
            claude.kill()
