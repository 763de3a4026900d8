"""Interop: with `ide-bridge init`, the real Claude Code CLI (interactive, under a pty)
shows its model every bridge tool, and a scripted model call of the bridge's
`searchWorkspace` comes back to the model with the match. The CLI's IDE connection and
its `ide-bridge mcp` relay are one agent in /status.

The model API is a scripted stand-in (tests/python/fake_model.py) on loopback."""

import json
import os
import signal
import subprocess
import time

from conftest import running_bridge
from fake_model import FakeModel, text, tool_use
from test_claude_cli import (
    CLAUDE,
    http,
    prepare_config,
    screen_text,
    start_claude,
    wait_for,
)

BRIDGE = os.environ.get("BRIDGE_BIN", "target/debug/ide-bridge")
PROMPT = "find the needle in this workspace"
NEEDLE = "needle-7391"


def bridge_env(bridge, home):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IDE_BRIDGE_", "CLAUDE"))}
    env.update({"CLAUDE_CONFIG_DIR": str(bridge["config_dir"]), "HOME": str(home)})
    return env


def tools_through_the_relay(bridge, home):
    """Every tool a model-facing connection lists, asked through `ide-bridge mcp`."""
    relay = subprocess.Popen(
        [BRIDGE, "mcp", "--no-start"],
        cwd=bridge["workspace"],
        env=bridge_env(bridge, home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:

        def ask(msg):
            relay.stdin.write(json.dumps(msg) + "\n")
            relay.stdin.flush()
            return json.loads(relay.stdout.readline())

        ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}})
        names, cursor, i = [], None, 1
        while True:
            params = {"cursor": cursor} if cursor else {}
            page = ask({"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": params})
            names += [t["name"] for t in page["result"]["tools"]]
            cursor, i = page["result"].get("nextCursor"), i + 1
            if not cursor:
                return set(names)
    finally:
        relay.stdin.close()
        relay.wait(10)


def agent_with(bridge, kinds):
    status = json.loads(http(bridge, "/status"))
    for s in status["sessions"]:
        if {c["kind"] for c in s["connections"]} >= kinds:
            return s
    return None


def test_every_bridge_tool_reaches_the_model_through_init(tmp_path):
    assert CLAUDE and os.access(CLAUDE, os.X_OK), "scripts/test.sh installs the CLI"
    with running_bridge() as bridge:
        (bridge["workspace"] / "notes.txt").write_text(f"the {NEEDLE} is here\n")
        prepare_config(bridge)
        (bridge["config_dir"] / "settings.json").write_text(
            json.dumps({"permissions": {"allow": ["mcp__ide-bridge"]}})
        )
        env = bridge_env(bridge, tmp_path)
        init = subprocess.run([BRIDGE, "init"], env=env, capture_output=True, text=True)
        assert init.returncode == 0, init.stderr
        assert "Registered the MCP server ide-bridge" in init.stdout, init.stdout
        again = subprocess.run([BRIDGE, "init"], env=env, capture_output=True, text=True)
        assert "nothing changed" in again.stdout, again.stdout
        config = json.loads((bridge["config_dir"] / ".claude.json").read_text())
        assert config["hasCompletedOnboarding"] is True, "init keeps every other key"
        assert config["mcpServers"]["ide-bridge"]["args"] == ["mcp"]

        expected = tools_through_the_relay(bridge, tmp_path)
        assert len(expected) > 70 and "searchWorkspace" in expected

        script = [
            {
                "on": "prompt",
                "contains": PROMPT,
                "reply": tool_use(
                    "mcp__ide-bridge__searchWorkspace", {"query": NEEDLE}, id="toolu_search_1"
                ),
            },
            {"on": "tool_result", "reply": text("found-7391")},
        ]
        with FakeModel(script) as model:
            pid, screen, fd = start_claude(
                bridge, tmp_path, {"ANTHROPIC_BASE_URL": model.url}
            )
            try:
                # One agent, two connections: the IDE WebSocket and the relay.
                agent = wait_for(
                    "the CLI's IDE connection and its relay to be one agent",
                    lambda: agent_with(bridge, {"ide", "relay"}),
                    screen,
                )
                assert agent["clientPid"] == pid, agent
                wait_for("the input box", lambda: "shortcuts" in screen_text(screen), screen)
                time.sleep(1.0)  # the prompt box takes keys once the first frame settled
                os.write(fd, PROMPT.encode())
                time.sleep(0.5)
                os.write(fd, b"\r")
                first = model.wait_for(lambda: model.conversation(), timeout=90)[0]
                offered = {t["name"] for t in first["tools"]}
                from_bridge = {
                    n.removeprefix("mcp__ide-bridge__")
                    for n in offered
                    if n.startswith("mcp__ide-bridge__")
                }
                assert from_bridge == expected, sorted(expected ^ from_bridge)
                results = model.wait_for(lambda: model.tool_results(), timeout=60)
                result = results[0]
                assert result["tool_use_id"] == "toolu_search_1"
                body = FakeModel.result_text(result)
                assert "notes.txt" in body and NEEDLE in body, body
                wait_for("the model's answer", lambda: "found-7391" in screen_text(screen), screen)
                # Still one agent, and the call is attributed to it.
                agent = agent_with(bridge, {"ide", "relay"})
                assert agent is not None
                status = json.loads(http(bridge, "/status"))
                searches = [
                    e
                    for e in status["recentActivity"]
                    if e.get("tool") == "searchWorkspace"
                ]
                assert searches and searches[-1]["sessionId"] == agent["id"], searches
            finally:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        removed = subprocess.run([BRIDGE, "init", "--remove"], env=env, capture_output=True, text=True)
        assert "Removed" in removed.stdout, removed.stdout
        config = json.loads((bridge["config_dir"] / ".claude.json").read_text())
        assert "ide-bridge" not in config.get("mcpServers", {})
