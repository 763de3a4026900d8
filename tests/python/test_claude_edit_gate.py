"""The edit gate with the real Claude Code CLI, the pinned and the newest version: after
`ide-bridge init`, with an automation policy whose `onEditProposed` hook checks edits,
the CLI's own Edit that would add an error (by the bridge's pylsp) does not happen, and
the model reads the error; the corrected Edit goes through."""

import json
import os
import pathlib
import subprocess

from claude_pty import Claude, environment, submit, trust, wait_until
from conftest import running_bridge
from fake_model import FakeModel, text, tool_use

BRIDGE = os.environ.get("BRIDGE_BIN", "target/debug/ide-bridge")
API_KEY = "sk-ant-ide-bridge-gate-test-key-000001"
PYLSP = pathlib.Path(__file__).resolve().parents[2] / ".venv-nvim" / "bin" / "pylsp"
SHAPES = "def area(w, h):\n    return w * h\n\n\ntotal = area(2, 3)\n"


def test_an_edit_that_adds_an_error_is_refused_with_the_error_as_the_reason(tmp_path, cli):
    assert PYLSP.exists(), "run tests/nvim/setup.sh (the test command does)"
    policy = tmp_path / "automation.json"
    policy.write_text(json.dumps({"onEditProposed": {"action": "check", "patterns": ["*.py"]}}))
    with running_bridge(
        "--set", f"automation.policy={policy}", "--set", f"lsp.servers.python.command={PYLSP}"
    ) as bridge:
        ws = bridge["workspace"]
        shapes = ws / "shapes.py"
        shapes.write_text(SHAPES)
        config = bridge["config_dir"]
        (config / "settings.json").write_text(json.dumps({"permissions": {
            "allow": ["mcp__ide-bridge", "Read", "Edit"], "defaultMode": "default",
            "disableAutoMode": "disable"}}))
        trust(config, ws, API_KEY)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("IDE_BRIDGE_", "CLAUDE"))}
        env.update({"CLAUDE_CONFIG_DIR": str(config), "HOME": str(tmp_path)})
        init = subprocess.run([BRIDGE, "init"], env=env, capture_output=True, text=True, check=False)
        assert init.returncode == 0, init.stderr

        bad = {"file_path": str(shapes), "old_string": "area(2, 3)", "new_string": "area(2, nope)"}
        good = {"file_path": str(shapes), "old_string": "area(2, 3)", "new_string": "area(2, 4)"}
        script = [
            {"on": "prompt", "contains": "change the total", "reply": tool_use("Read", {"file_path": str(shapes)})},
            {"on": "tool_result", "reply": tool_use("Edit", bad, id="toolu_gate_bad")},
            {"on": "tool_result", "reply": tool_use("Edit", good, id="toolu_gate_good")},
            {"on": "tool_result", "reply": text("changed")},
        ]
        with FakeModel(script) as model:
            home = tmp_path / "home"
            home.mkdir()
            claude = Claude(cli, ws, environment(home=home, config_dir=config, port=bridge["port"], api_key=API_KEY, model_url=model.url))
            try:
                submit(claude, "change the total")
                refused = wait_until(
                    lambda: [r for r in model.tool_results() if r.get("tool_use_id") == "toolu_gate_bad"],
                    "the refused Edit's result", 120, claude)[0]
                said = FakeModel.result_text(refused)
                assert "onEditProposed" in said and "undefined name 'nope'" in said, said
                wait_until(lambda: "area(2, 4)" in shapes.read_text(), "the corrected Edit on disk", 90, claude)
                assert "nope" not in shapes.read_text()
            finally:
                claude.kill()
