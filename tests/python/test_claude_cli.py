"""Interop: the real Claude Code CLI (npm @anthropic-ai/claude-code, the pinned and the
newest version, installed by scripts/test.sh) connects to the bridge in interactive
mode, as a developer's `claude --ide` would, and completes the MCP handshake.

No prompt is typed, so the model (a stand-in on loopback: with an unreachable API the
CLI connects to the IDE only after ~20 s) is asked nothing; the test pre-accepts the
CLI's onboarding, folder trust and the (dummy) API key in its own config dir, runs it
under a pseudo-terminal with CLAUDE_CODE_SSE_PORT pointing at the bridge, and watches
the bridge's /status and /metrics. Both versions open the IDE WebSocket with `initialize`
(2025-11-25) straight away: the newest probes `server/discover` only on the servers it
registers (see test_claude_cli_tools.py)."""

import json
import re
import subprocess

from claude_pty import Claude, environment, trust, wait_until
from conftest import http, running_bridge
from fake_model import FakeModel

API_KEY = "sk-ant-ide-bridge-interop-test-key"
DEADLINE = 60


def claude_session(bridge):
    status = json.loads(http(bridge, "/status"))
    for s in status["sessions"]:
        if (s.get("client") or "").startswith("claude-code "):
            return s
    return None


def counter(metrics, name):
    """A metric's value (0 when it has not been counted)."""
    found = re.search(rf"^ide_bridge_{re.escape(name)} (\d+)$", metrics, re.MULTILINE)
    return int(found.group(1)) if found else 0


def test_the_real_claude_code_cli_connects_and_completes_the_handshake(tmp_path, cli):
    version = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout.split()[0]
    with running_bridge() as bridge, FakeModel() as model:
        trust(bridge["config_dir"], bridge["workspace"], API_KEY)
        env = environment(home=tmp_path, config_dir=bridge["config_dir"], port=bridge["port"], api_key=API_KEY, model_url=model.url)
        claude = Claude(cli, bridge["workspace"], env)
        try:
            # Connected, initialized, and `ide_connected` (with the CLI's pid) received;
            # the notification follows the handshake, so wait for all three.
            session = wait_until(
                lambda: (s := claude_session(bridge)) and s["initialized"] and s["connected"] and s.get("clientPid") == claude.pid and s,
                "the CLI connects, initializes and sends ide_connected",
                DEADLINE,
                claude,
            )
            assert session["client"] == f"claude-code {version}", session
            assert session["protocolVersion"] == "2025-11-25", session
            assert [c["kind"] for c in session["connections"]] == ["ide"], session
            # …and asked for the tool list, which it gets without error.
            metrics = wait_until(
                lambda: (m := http(bridge, "/metrics")) and counter(m, 'mcp_requests_total{method="tools/list"}') and m,
                "tools/list from the CLI",
                DEADLINE,
                claude,
            )
            assert counter(metrics, 'mcp_requests_total{method="initialize"}') == 1, metrics
            assert counter(metrics, "rejected_connections_total") == 0, metrics
        finally:
            claude.kill()
        # The CLI is gone: its session waits in its grace period for a reconnect.
        gone = wait_until(
            lambda: (s := claude_session(bridge)) and not s["connected"] and s["inGrace"] and s,
            "the session enters its grace period",
            DEADLINE,
            claude,
        )
        assert gone["id"] == session["id"]
        events = [e.get("event") for e in json.loads(http(bridge, "/status"))["recentActivity"]]
        assert "agent_connected" in events and "agent_disconnected" in events, events
