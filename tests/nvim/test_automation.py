"""An automation policy hook fires from diagnostics that Neovim pushed (pylsp ->
vim.diagnostic -> extension/diagnosticsChanged), and the task's output reaches
Neovim as bridge/claudeTaskOutput."""

import json

import pytest

from conftest import ROOT, make_world, wait_for


@pytest.fixture
def auto_world(tmp_path):
    def args(tmp, workspace):
        policy = tmp / "automation.json"
        policy.write_text(
            json.dumps(
                {
                    "onDiagnosticsStateChange": {
                        "state": "error",
                        "minSeverity": "error",
                        "cooldownMs": 5000,
                        "prompt": "mode:echo please fix {{file}}",
                    }
                }
            )
        )
        return [
            "--automation-policy",
            str(policy),
            "--set",
            f"orchestrator.claude_binary={ROOT / 'tests' / 'fixtures' / 'fake-claude'}",
        ]

    with make_world(tmp_path, args) as w:
        yield w


@pytest.fixture
def notify_world(tmp_path):
    def args(tmp, workspace):
        policy = tmp / "notify.json"
        policy.write_text(
            json.dumps({"onFileSave": {"patterns": ["*.txt"], "action": "notify", "message": "saved {{file}}"}})
        )
        return ["--automation-policy", str(policy)]

    with make_world(tmp_path, args) as w:
        yield w


def test_a_notify_hook_reaches_neovim(notify_world):
    # Saving in Neovim fires the hook; its notice comes back as bridge/automationNotice:
    # shown, and handed to User IdeBridgeAutomationNotice autocommands.
    w = notify_world
    w.editor.lua(
        "_G.notices = {} vim.api.nvim_create_autocmd('User', {pattern = 'IdeBridgeAutomationNotice',"
        " callback = function(a) table.insert(_G.notices, a.data) end}) return true"
    )
    f = w.workspace / "notes.txt"
    f.write_text("one\n")
    w.editor.edit(f)
    w.editor.cmd("normal! Gotwo")
    w.editor.cmd("write")
    notice = wait_for(
        lambda: w.editor.lua("return _G.notices[1]"), timeout=15, interval=0.1, what="the notice in Neovim"
    )
    assert notice["hook"] == "onFileSave" and notice["message"] == "saved notes.txt", notice
    wait_for(
        lambda: "automation (onFileSave)" in w.editor.lua("return vim.fn.execute('messages')"),
        timeout=5,
        what="the notice among Neovim's messages",
    )


def test_diagnostics_hook_fires(auto_world):
    w = auto_world
    f = w.workspace / "broken.py"
    f.write_text("print(undefined_name)\n")
    w.editor.edit(f)

    def fired():
        a = w.bridge.status().get("automation") or {}
        return a if a.get("fired", 0) >= 1 else None

    wait_for(fired, timeout=30, interval=0.3, what="the diagnostics hook to fire")
    # The task's output arrives in Neovim's task buffer.
    wait_for(
        lambda: w.editor.lua(
            "for _, t in pairs(require('ide_bridge.tasks').tasks) do"
            "  for _, c in ipairs(t.chunks) do if c:find('please fix \"broken.py\"', 1, true) then return true end end "
            "end return false"
        ),
        timeout=30,
        interval=0.3,
        what="the task output in Neovim",
    )
    w.editor.cmd("IdeBridgeTasks")
    text = "\n".join(w.editor.nv.current.buffer[:])
    assert 'please fix "broken.py"' in text  # {{file}} is workspace-relative, quoted as data
