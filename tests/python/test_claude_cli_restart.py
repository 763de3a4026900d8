"""Interop: the real Claude Code CLI stays connected through a workstation day: a bridge
restarted under it (SIGTERM, then SIGKILL) comes back on the same port with the same
token, the CLI's own retries succeed with no input, and it gets its session back (same
id, same opened files) through its pid; several CLIs starting at once all connect."""

import json
import os
import pathlib
import signal
import tempfile
import time

from conftest import start_bridge
from fake_model import FakeModel, text, tool_use
from test_claude_cli import CLAUDE, API_KEY, screen_text, start_claude, wait_for
import urllib.request

BRIDGE = os.environ.get("BRIDGE_BIN", "target/debug/ide-bridge")


class Place:
    """A workspace, a config dir and the bridge currently serving them."""

    def __init__(self, tmp):
        self.tmp = pathlib.Path(tmp)
        self.workspace = (self.tmp / "workspace").resolve()
        (self.workspace / ".git").mkdir(parents=True)
        (self.workspace / "notes.txt").write_text("notes\n")
        self.config_dir = self.tmp / "claude"
        self.log = open(self.tmp / "bridge.log", "ab")
        self.proc = None
        self.start()

    def start(self):
        self.proc, self.port, self.token = start_bridge(self.workspace, self.config_dir, self.log)

    def stop(self, sig):
        self.proc.send_signal(sig)
        self.proc.wait(10)

    def status(self):
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/status",
            headers={"Authorization": f"Bearer {self.token}"},
        )
        with urllib.request.urlopen(req, timeout=5) as resp:
            return json.loads(resp.read())

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(10)
        self.log.close()

    # What test_claude_cli's helpers expect of a bridge.
    def __getitem__(self, key):
        return {"port": self.port, "token": self.token, "workspace": self.workspace,
                "config_dir": self.config_dir}[key]


def call_over_http(place, tool, args):
    """One tool call over /mcp (a fresh HTTP MCP session)."""
    url = f"http://127.0.0.1:{place.port}/mcp"
    headers = {"Authorization": f"Bearer {place.token}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}

    def post(body, extra=None):
        req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={**headers, **(extra or {})})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.headers.get("mcp-session-id"), resp.read()

    sid, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}})
    _, body = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": tool, "arguments": args}}, {"Mcp-Session-Id": sid})
    text = body.decode()
    if text.startswith("event:"):
        text = text.split("data: ", 1)[1]
    return json.loads(text)


def prepare(place):
    config = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {str(place.workspace): {"hasTrustDialogAccepted": True,
                                            "hasCompletedProjectOnboarding": True}},
    }
    (place.config_dir / ".claude.json").write_text(json.dumps(config))
    (place.config_dir / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["mcp__ide-bridge"]}})
    )


def cli_session(place, pid):
    try:
        status = place.status()
    except OSError:
        return None
    for s in status["sessions"]:
        kinds = {c["kind"] for c in s["connections"]}
        if s.get("clientPid") == pid and s["connected"] and "ide" in kinds:
            return s
    return None


def test_the_cli_gets_its_session_back_after_a_restart_and_a_crash():
    assert CLAUDE and os.access(CLAUDE, os.X_OK)
    with tempfile.TemporaryDirectory() as tmp:
        place = Place(tmp)
        try:
            prepare(place)
            env = {k: v for k, v in os.environ.items() if not k.startswith(("IDE_BRIDGE_", "CLAUDE"))}
            env.update({"CLAUDE_CONFIG_DIR": str(place.config_dir), "HOME": tmp})
            assert os.system(f"env CLAUDE_CONFIG_DIR={place.config_dir} {BRIDGE} init >/dev/null") == 0
            script = [
                {"on": "prompt", "contains": "open the notes",
                 "reply": tool_use("mcp__ide-bridge__openFile",
                                   {"filePath": "notes.txt", "makeFrontmost": False})},
                {"on": "tool_result", "reply": text("opened-4242")},
            ]
            with FakeModel(script) as model:
                pid, screen, fd = start_claude(place, pathlib.Path(tmp), {"ANTHROPIC_BASE_URL": model.url})
                try:
                    first = wait_for("the CLI connects", lambda: cli_session(place, pid), screen)
                    wait_for("the input box", lambda: "shortcuts" in screen_text(screen), screen)
                    time.sleep(1.0)
                    os.write(fd, b"open the notes")
                    time.sleep(0.5)
                    os.write(fd, b"\r")
                    wait_for("the file opened by the agent", lambda: (
                        (s := cli_session(place, pid)) and s["openedFiles"] == 1 and s), screen)
                    port, token = place.port, place.token
                    for how in (signal.SIGTERM, signal.SIGKILL):
                        place.stop(how)
                        place.start()
                        assert (place.port, place.token) == (port, token), "same port and token"
                        began = time.monotonic()
                        back = wait_for(
                            f"the CLI reconnects by itself after {how.name}",
                            lambda: (s := cli_session(place, pid))
                            and {"ide", "relay"} <= {c["kind"] for c in s["connections"]}
                            and s,
                            screen,
                        )
                        assert time.monotonic() - began < 15, "back within 15 s"
                        assert back["id"] == first["id"], (how, back, first)
                        assert back["openedFiles"] == 1, back
                        assert len(place.status()["sessions"]) == 1, place.status()["sessions"]
                    # A cut from the bridge's side: both connections closed (1001); the
                    # CLI and its relay reconnect by themselves into the same session.
                    def disconnects():
                        return sum(1 for e in place.status()["recentActivity"]
                                   if e.get("event") == "agent_disconnected"
                                   and e.get("sessionId") == first["id"])

                    before = disconnects()
                    cut = call_over_http(place, "debug_cut_connections", {"sessionId": first["id"]})
                    assert cut["result"]["content"][0]["text"] == "cut", cut
                    wait_for("the cut to close the agent's connections",
                             lambda: disconnects() > before, screen)
                    back = wait_for(
                        "the CLI reconnects by itself after a cut",
                        lambda: (s := cli_session(place, pid))
                        and {"ide", "relay"} <= {c["kind"] for c in s["connections"]}
                        and s,
                        screen,
                    )
                    assert back["id"] == first["id"] and back["openedFiles"] == 1, back

                finally:
                    os.killpg(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
        finally:
            place.close()


def test_three_clis_starting_at_once_all_connect():
    assert CLAUDE and os.access(CLAUDE, os.X_OK)
    with tempfile.TemporaryDirectory() as tmp:
        place = Place(tmp)
        clis = []
        try:
            prepare(place)
            for i in range(3):
                home = pathlib.Path(tmp) / f"home{i}"
                home.mkdir()
                clis.append(start_claude(place, home))
            for pid, screen, _ in clis:
                wait_for(f"CLI {pid} connects", lambda: cli_session(place, pid), screen)
            sessions = place.status()["sessions"]
            assert len({s["clientPid"] for s in sessions if s.get("clientPid")}) == 3, sessions
            assert place.status()["refusedConnections"]["burst"] == 0
        finally:
            for pid, _, _ in clis:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            place.close()
