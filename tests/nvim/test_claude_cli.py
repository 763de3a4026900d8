"""The full loop with the real Claude Code CLI and a scripted model: the model asks
for an edit, the CLI (connected with --ide) calls openDiff, Neovim shows the diff, the
user accepts with :w, and the CLI writes the file.

Needs CLAUDE_CLI (scripts/test.sh installs it into .npm-test) and the fake model of
tests/python; skipped when the CLI is missing."""

import json
import os
import pty
import re
import signal
import sys
import threading
import time

import pytest

from conftest import ROOT, wait_for

sys.path.insert(0, str(ROOT / "tests" / "python"))
from fake_model import FakeModel, text, tool_use  # noqa: E402

CLAUDE = os.environ.get("CLAUDE_CLI") or str(ROOT / ".npm-test" / "node_modules" / ".bin" / "claude")
API_KEY = "sk-ant-ide-bridge-nvim-test-key-0001"


def screen_text(screen):
    return re.sub(rb"\x1b\[[0-9;?<>=]*[a-zA-Z]", b"", b"".join(screen)).decode("utf8", "replace")


@pytest.mark.skipif(not os.access(CLAUDE, os.X_OK), reason="the Claude Code CLI is not installed (scripts/test.sh installs it)")
def test_claude_cli_edit_accepted_in_neovim(world):
    w = world
    f = w.workspace / "app.py"
    f.write_text("def answer():\n    return 41\n")
    config_dir = w.bridge.config_dir
    (config_dir / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "theme": "dark",
                "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
                "projects": {str(w.workspace): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}},
            }
        )
    )
    script = [
        {"on": "prompt", "contains": "fix the answer", "reply": tool_use("Read", {"file_path": str(f)})},
        {
            "on": "tool_result",
            "reply": tool_use("Edit", {"file_path": str(f), "old_string": "return 41", "new_string": "return 42"}),
        },
        {"on": "tool_result", "reply": text("All done.")},
    ]
    with FakeModel(script) as model:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("IDE_BRIDGE_", "CLAUDE"))}
        env.update(w.env)
        env.update(
            {
                "CLAUDE_CONFIG_DIR": str(config_dir),
                "CLAUDE_CODE_SSE_PORT": str(w.bridge.port),
                "ANTHROPIC_API_KEY": API_KEY,
                "ANTHROPIC_BASE_URL": model.url,
                "DISABLE_AUTOUPDATER": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            }
        )
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(w.workspace)
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
                for s in w.bridge.status()["sessions"]:
                    if (s.get("client") or "").startswith("claude-code") and s["initialized"]:
                        return s
                return None

            wait_for(cli_ready, timeout=60, what="the CLI to connect")
            time.sleep(2)  # let the prompt render
            os.write(fd, b"please fix the answer in app.py")
            time.sleep(0.5)
            os.write(fd, b"\r")
            try:
                wait_for(
                    lambda: w.editor.lua("return vim.b.ide_bridge_diff ~= nil and vim.wo.diff"),
                    timeout=60,
                    interval=0.2,
                    what="the CLI's diff in Neovim",
                )
            except AssertionError:
                raise AssertionError("no diff; the CLI showed:\n" + screen_text(screen)[-3000:])
            proposed = w.editor.lua("return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n')")
            assert "return 42" in proposed
            # The user accepts with :w; the CLI writes the file.
            w.editor.input(":w<CR>")
            wait_for(lambda: "return 42" in f.read_text(), timeout=30, what="the CLI to write the file")
            wait_for(lambda: model.script_done(), timeout=30, what="the model's script to finish")
        finally:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
