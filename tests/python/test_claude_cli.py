"""Interop: the real Claude Code CLI (npm @anthropic-ai/claude-code, installed by
scripts/test.sh) connects to the bridge in interactive mode, as a developer's
`claude --ide` would, and completes the MCP handshake.

There is no network here, so the CLI never reaches a model; the test pre-accepts its
onboarding, folder trust and the (dummy) API key in its own config dir, runs it under a
pseudo-terminal with CLAUDE_CODE_SSE_PORT pointing at the bridge, and watches the
bridge's /status and /metrics."""

import json
import os
import pty
import re
import signal
import threading
import time
import urllib.request

from conftest import running_bridge

CLAUDE = os.environ.get("CLAUDE_CLI")
API_KEY = "sk-ant-ide-bridge-interop-test-key"
DEADLINE = 60


def http(bridge, path):
    req = urllib.request.Request(
        f"http://127.0.0.1:{bridge['port']}{path}",
        headers={"Authorization": f"Bearer {bridge['token']}"},
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        return resp.read().decode()


def prepare_config(bridge):
    """What a developer's ~/.claude.json holds after first use: onboarding done, this
    folder trusted, the API key approved (the CLI stores its last 20 characters)."""
    workspace = str(bridge["workspace"])
    config = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {
            workspace: {
                "hasTrustDialogAccepted": True,
                "hasCompletedProjectOnboarding": True,
            }
        },
    }
    (bridge["config_dir"] / ".claude.json").write_text(json.dumps(config))


def start_claude(bridge, home, extra_env=None):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("IDE_BRIDGE_", "CLAUDE", "ANTHROPIC"))
    }
    env.update(
        {
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(bridge["config_dir"]),
            "CLAUDE_CODE_SSE_PORT": str(bridge["port"]),
            "ANTHROPIC_API_KEY": API_KEY,
            "TERM": "xterm-256color",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            # Or the CLI starts cloning its plugin marketplace at start-up.
            "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
            **(extra_env or {}),
        }
    )
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(bridge["workspace"])
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
    return pid, screen, fd


def screen_text(screen):
    return re.sub(rb"\x1b\[[0-9;?<>=]*[a-zA-Z]", b"", b"".join(screen)).decode(
        "utf8", "replace"
    )


def wait_for(what, pred, screen):
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(
        f"{what} within {DEADLINE}s; the CLI showed:\n{screen_text(screen)[-2000:]}"
    )


def claude_session(bridge):
    status = json.loads(http(bridge, "/status"))
    for s in status["sessions"]:
        if (s.get("client") or "").startswith("claude-code "):
            return s
    return None


def test_the_real_claude_code_cli_connects_and_completes_the_handshake(tmp_path):
    assert CLAUDE and os.access(CLAUDE, os.X_OK), (
        "CLAUDE_CLI must name the Claude Code CLI; scripts/test.sh installs it"
    )
    with running_bridge() as bridge:
        prepare_config(bridge)
        pid, screen, _ = start_claude(bridge, tmp_path)
        try:
            # Connected, initialized, and `ide_connected` (with the CLI's pid) received;
            # the notification follows the handshake, so wait for all three.
            session = wait_for(
                "the CLI connects, initializes and sends ide_connected",
                lambda: (
                    (s := claude_session(bridge))
                    and s["initialized"]
                    and s["connected"]
                    and isinstance(s.get("clientPid"), int)
                    and s
                ),
                screen,
            )
            assert session["protocolVersion"]
            # …and asked for the tool list, which it gets without error.
            metrics = wait_for(
                "tools/list from the CLI",
                lambda: (
                    (m := http(bridge, "/metrics"))
                    and 'mcp_requests_total{method="tools/list"}' in m
                    and m
                ),
                screen,
            )
            assert 'ide_bridge_mcp_requests_total{method="initialize"} 1' in metrics, (
                metrics
            )
            assert "ide_bridge_rejected_connections_total 0" in metrics, metrics
        finally:
            os.killpg(pid, signal.SIGKILL)  # pty.fork made it a session leader
            os.waitpid(pid, 0)
        # The CLI is gone: its session waits in its grace period for a reconnect.
        gone = wait_for(
            "the session enters its grace period",
            lambda: (
                (s := claude_session(bridge))
                and not s["connected"]
                and s["inGrace"]
                and s
            ),
            screen,
        )
        assert gone["id"] == session["id"]
        timeline = http(bridge, "/status")
        assert "agent_connected" in timeline and "agent_disconnected" in timeline
