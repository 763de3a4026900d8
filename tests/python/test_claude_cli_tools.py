"""Interop: with `ide-bridge init`, the real Claude Code CLI (interactive, under a pty;
the pinned and the newest version) shows its model every bridge tool, and a scripted
model call of the bridge's `searchWorkspace` comes back to the model with the match. The
CLI's IDE connection and its `ide-bridge mcp` relay are one agent in /status.

The pinned CLI offers the model every bridge tool with its schema; the newest defers
them: it names them all in a system-reminder, and the model loads one with ToolSearch
before calling it (fake_model.mcp). The newest also probes the relay with
`server/discover` (MCP 2026-07-28) and, answered -32601, falls back to `initialize`.

The model API is a scripted stand-in (tests/python/fake_model.py) on loopback."""

import json
import os
import re
import subprocess
import time

from claude_pty import Claude, environment, manual_mode, submit, trust, wait_until
from conftest import agent_with, http, running_bridge, settled
from fake_model import FakeModel, deferred_tools, mcp, mcp_calls, offered_tools, text

BRIDGE = os.environ.get("BRIDGE_BIN", "target/debug/ide-bridge")
API_KEY = "sk-ant-ide-bridge-tools-test-key-00001"
PROMPT = "find the needle in this workspace"
NEEDLE = "needle-7391"
PREFIX = "mcp__ide-bridge__"


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


def of_the_bridge(names):
    return {n.removeprefix(PREFIX) for n in names if n.startswith(PREFIX)}


def requests_total(metrics, method):
    found = re.search(rf'^ide_bridge_mcp_requests_total{{method="{re.escape(method)}"}} (\d+)$', metrics, re.MULTILINE)
    return int(found.group(1)) if found else 0


def test_every_bridge_tool_reaches_the_model_through_init(tmp_path, cli):
    with running_bridge() as bridge:
        ws, config_dir = bridge["workspace"], bridge["config_dir"]
        (ws / "notes.txt").write_text(f"the {NEEDLE} is here\n")
        trust(config_dir, ws, API_KEY)
        manual_mode(config_dir, allow=["mcp__ide-bridge"])
        env = bridge_env(bridge, tmp_path)
        init = subprocess.run([BRIDGE, "init"], env=env, capture_output=True, text=True, check=False)
        assert init.returncode == 0, init.stderr
        assert "Registered the MCP server ide-bridge" in init.stdout, init.stdout
        again = subprocess.run([BRIDGE, "init"], env=env, capture_output=True, text=True, check=False)
        assert "nothing changed" in again.stdout, again.stdout
        config = json.loads((config_dir / ".claude.json").read_text())
        assert config["hasCompletedOnboarding"] is True, "init keeps every other key"
        assert config["mcpServers"]["ide-bridge"]["args"] == ["mcp"]

        expected = tools_through_the_relay(bridge, tmp_path)
        assert len(expected) > 70 and "searchWorkspace" in expected
        # The relay of that listing was one initialize; the CLI's two connections add theirs.
        initialized_before = requests_total(http(bridge, "/metrics"), "initialize")
        listed_before = requests_total(http(bridge, "/metrics"), "tools/list")

        script = [
            {"on": "prompt", "contains": PROMPT, "reply": mcp("searchWorkspace", {"query": NEEDLE}, id="toolu_search_1")},
            {"on": "tool_result", "tool": PREFIX + "searchWorkspace", "reply": text("found-7391")},
        ]
        with FakeModel(script) as model:
            home = tmp_path / "home"
            home.mkdir()
            claude = Claude(cli, ws, environment(home=home, config_dir=config_dir, port=bridge["port"], api_key=API_KEY, model_url=model.url))
            try:
                # One agent, two connections: the IDE WebSocket (the handshake
                # revision) and the relay (the newest CLI asks server/discover and
                # speaks MCP 2026-07-28 there; the pinned one knows only the handshake).
                agent = wait_until(lambda: agent_with(bridge, {"ide", "relay"}), "the CLI's IDE connection and its relay to be one agent", 90, claude)
                assert agent["clientPid"] == claude.pid, agent
                relay_version = "2025-11-25" if cli.which == "pinned" else "2026-07-28"
                for conn in agent["connections"]:
                    assert conn["client"].startswith("claude-code "), agent
                    expected_version = relay_version if conn["kind"] == "relay" else "2025-11-25"
                    assert conn["protocolVersion"] == expected_version, agent
                metrics = http(bridge, "/metrics")
                handshakes = 2 if cli.which == "pinned" else 1
                assert requests_total(metrics, "initialize") == initialized_before + handshakes, metrics
                if cli.which != "pinned":
                    assert requests_total(metrics, "server/discover") >= 1, metrics

                # The CLI lists the tools of both connections after connecting (the
                # relay's, in the new revision, after discover and listen): a prompt
                # typed before that goes without them.
                wait_until(lambda: requests_total(http(bridge, "/metrics"), "tools/list") >= listed_before + 2, "the CLI's tools/list on both connections", 60, claude)
                # The count rises when the bridge gets the request; the CLI registers
                # the tools after the answer reaches it. Its MCP traffic settling is
                # the sign that it did (a prompt typed earlier went without the tools
                # once in CI).
                wait_until(settled(bridge), "the CLI's MCP requests to settle", 60, claude)
                submit(claude, PROMPT)
                first = model.wait_for(model.conversation, timeout=90)[0]
                offered, deferred = of_the_bridge(offered_tools(first)), of_the_bridge(deferred_tools(first))
                if cli.which == "pinned":
                    # Every tool with its schema.
                    assert offered == expected, sorted(expected ^ offered)
                    assert not deferred, deferred
                else:
                    # Every tool by name, behind ToolSearch.
                    assert deferred == expected, (sorted(expected ^ deferred), sorted(offered))
                    assert not offered, offered

                results = model.wait_for(lambda: [r for r in model.tool_results() if r["tool_use_id"] == "toolu_search_1"], timeout=60)
                said = FakeModel.result_text(results[0])
                assert not results[0].get("is_error"), said
                assert "notes.txt" in said and NEEDLE in said, said
                called = next(b for b in model.conversation() if "toolu_search_1" in json.dumps(b["messages"]))
                schema = next(t for t in called["tools"] if t["name"] == PREFIX + "searchWorkspace")
                assert "query" in schema["input_schema"]["properties"], schema
                wait_until(lambda: "found-7391" in claude.text(), "the model's answer", 60, claude)
                # Still one agent, and the call is attributed to it.
                agent = agent_with(bridge, {"ide", "relay"})
                assert agent is not None
                status = json.loads(http(bridge, "/status"))
                searches = [e for e in status["recentActivity"] if e.get("tool") == "searchWorkspace"]
                assert searches and searches[-1]["sessionId"] == agent["id"], searches
            finally:
                claude.kill()
        removed = subprocess.run([BRIDGE, "init", "--remove"], env=env, capture_output=True, text=True, check=False)
        assert "Removed" in removed.stdout, removed.stdout
        config = json.loads((config_dir / ".claude.json").read_text())
        assert "ide-bridge" not in config.get("mcpServers", {})


def test_the_cli_runs_the_bridges_read_only_tools_side_by_side(tmp_path, cli):
    """The model asks for two calls of a read-only bridge tool in one turn (a
    fault-injection build's `debug_sleep`, 1.5 s each): the CLI runs them at the same
    time, because `tools/list` marks the tool read-only (`annotations.readOnlyHint`).
    Without the annotation it ran them one after the other: the second began when the
    first ended."""
    sleep_ms = 1500
    with running_bridge() as bridge:
        ws, config_dir = bridge["workspace"], bridge["config_dir"]
        trust(config_dir, ws, API_KEY)
        manual_mode(config_dir, allow=["mcp__ide-bridge"])
        env = bridge_env(bridge, tmp_path)
        init = subprocess.run([BRIDGE, "init"], env=env, capture_output=True, text=True, check=False)
        assert init.returncode == 0, init.stderr
        calls = [("toolu_sleep_a", {"ms": sleep_ms}), ("toolu_sleep_b", {"ms": sleep_ms})]
        script = [
            {"on": "prompt", "contains": "sleep twice", "reply": mcp_calls("debug_sleep", calls)},
            {"on": "tool_result", "tool": PREFIX + "debug_sleep", "reply": text("slept-2")},
        ]
        with FakeModel(script) as model:
            home = tmp_path / "home"
            home.mkdir()
            claude = Claude(cli, ws, environment(home=home, config_dir=config_dir, port=bridge["port"], api_key=API_KEY, model_url=model.url))
            try:
                wait_until(lambda: agent_with(bridge, {"ide", "relay"}), "the CLI's IDE connection and its relay", 90, claude)
                wait_until(settled(bridge), "the CLI's MCP requests to settle", 60, claude)
                submit(claude, "sleep twice")
                wait_until(lambda: "slept-2" in claude.text(), "the model's answer after both calls", 90, claude)
                results = [r for r in model.tool_results() if r["tool_use_id"] in ("toolu_sleep_a", "toolu_sleep_b")]
                assert len(results) == 2, results
                assert all(not r.get("is_error") for r in results), results
                status = json.loads(http(bridge, "/status"))
                sleeps = [e for e in status["recentActivity"] if e.get("tool") == "debug_sleep"]
                assert len(sleeps) == 2, sleeps
                # An entry's timestamp is when the call ended; it began durationMs before.
                first, second = sorted(sleeps, key=lambda e: e["timestamp"])
                began = second["timestamp"] - second["durationMs"]
                assert began < first["timestamp"] - sleep_ms // 2, (
                    f"the second call began {began - first['timestamp']} ms after the first ended", sleeps)
            finally:
                claude.kill()
