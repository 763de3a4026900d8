"""Interop: the newest Claude Code CLI (interactive, under a pty) with `ide-bridge init`,
its model a scripted stand-in, asks "where is greet called?" with one `ideCapability`
program. The newest CLI defers the bridge's tools, so that is one ToolSearch and one
call; the answer (every call site, each as file:line with its line, from the bridge's
pylsp: no editor) reaches the model. Without the tool the same answer takes a ToolSearch
and three calls: a symbol search (which pylsp cannot answer: no workspace symbols), a
file's outline to find the definition, then its references."""

import os
import subprocess

from claude_pty import (
    Claude,
    claude_cli,
    environment,
    manual_mode,
    submit,
    trust,
    wait_until,
)
from conftest import agent_with, running_bridge, settled
from fake_model import FakeModel, mcp, text

BRIDGE = os.environ.get("BRIDGE_BIN", "target/debug/ide-bridge")
API_KEY = "sk-ant-ide-bridge-capability-key-0001"
PROMPT = "where is greet called"
PROGRAM = {"findReferences": {"symbol": {"findSymbol": {"name": "greet"}}}}
PYLSP_DIR = os.path.join(os.path.dirname(__file__), "..", "..", ".venv-nvim", "bin")


def test_one_program_answers_where_a_function_is_called(tmp_path, monkeypatch):
    cli = claude_cli("newest")
    assert os.access(os.path.join(PYLSP_DIR, "pylsp"), os.X_OK), "tests/nvim/setup.sh installs pylsp"
    monkeypatch.setenv("PATH", os.path.abspath(PYLSP_DIR) + os.pathsep + os.environ["PATH"])
    with running_bridge() as bridge:
        ws, config_dir = bridge["workspace"], bridge["config_dir"]
        (ws / "greet.py").write_text('def greet(name):\n    return "hi " + name\n')
        (ws / "app.py").write_text('from greet import greet\n\nprint(greet("a"))\nprint(greet("b"))\n')
        trust(config_dir, ws, API_KEY)
        manual_mode(config_dir, allow=["mcp__ide-bridge"])
        env = {k: v for k, v in os.environ.items() if not k.startswith(("IDE_BRIDGE_", "CLAUDE"))}
        env.update({"CLAUDE_CONFIG_DIR": str(config_dir), "HOME": str(tmp_path)})
        init = subprocess.run([BRIDGE, "init"], env=env, capture_output=True, text=True, check=False)
        assert init.returncode == 0, init.stderr
        script = [
            {"on": "prompt", "contains": PROMPT, "reply": mcp("ideCapability", {"request": PROGRAM}, id="toolu_cap_1")},
            {"on": "tool_result", "tool": "mcp__ide-bridge__ideCapability", "reply": text("answered-4242")},
        ]
        with FakeModel(script) as model:
            home = tmp_path / "home"
            home.mkdir()
            claude = Claude(cli, ws, environment(home=home, config_dir=config_dir, port=bridge["port"], api_key=API_KEY, model_url=model.url))
            try:
                # The CLI's IDE connection and relay are one agent, and its MCP
                # traffic (listing the relay's tools) settled: the model is offered them.
                wait_until(lambda: agent_with(bridge, {"ide", "relay"}), "the CLI's connections", 90, claude)
                wait_until(settled(bridge), "the CLI's MCP requests to settle", 60, claude)
                submit(claude, PROMPT)
                results = model.wait_for(lambda: [r for r in model.tool_results() if r["tool_use_id"] == "toolu_cap_1"], timeout=120)
                said = FakeModel.result_text(results[0])
                assert not results[0].get("is_error"), said
                for site in ('app.py:3: print(greet("a"))', 'app.py:4: print(greet("b"))', "greet.py:1: def greet(name):"):
                    assert site in said, said
                wait_until(lambda: "answered-4242" in claude.text(), "the model's answer", 60, claude)
                # One ToolSearch (the newest CLI defers MCP tools), then the one call.
                uses = {}
                for body in model.conversation():
                    for m in body.get("messages", []):
                        blocks = m.get("content") if m.get("role") == "assistant" else None
                        for b in blocks if isinstance(blocks, list) else []:
                            if b.get("type") == "tool_use":
                                uses.setdefault(b["id"], b["name"])
                names = list(uses.values())
                assert names == ["ToolSearch", "mcp__ide-bridge__ideCapability"], names
            finally:
                claude.kill()
