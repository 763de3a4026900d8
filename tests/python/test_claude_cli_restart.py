"""Interop: the real Claude Code CLI (the pinned and the newest version) stays connected
through a workstation day: a bridge restarted under it (SIGTERM, then SIGKILL) comes
back on the same port with the same token, the CLI's own retries succeed with no input,
and it gets its session back (same id, same opened files) through its pid; several CLIs
starting at once all connect."""

import json
import os
import pathlib
import signal
import subprocess
import tempfile
import time
import urllib.request

from claude_pty import Claude, environment, manual_mode, submit, trust, wait_until
from conftest import call_over_mcp, settled, start_bridge
from fake_model import FakeModel, mcp, text

BRIDGE = os.environ.get("BRIDGE_BIN", "target/debug/ide-bridge")
API_KEY = "sk-ant-ide-bridge-restart-test-key-001"


class Place:
    """A workspace, a config dir and the bridge currently serving them."""

    def __init__(self, tmp):
        self.tmp = pathlib.Path(tmp)
        self.workspace = (self.tmp / "workspace").resolve()
        (self.workspace / ".git").mkdir(parents=True)
        (self.workspace / "notes.txt").write_text("notes\n")
        self.config_dir = self.tmp / "claude"
        self.log = (self.tmp / "bridge.log").open("ab")
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

    def diagnose(self):
        """What the bridge knows of its agents, and the end of its log and of the CLI's
        log of the relay, for a failure message."""
        try:
            sessions = [
                (s["id"], s.get("clientPid"), s["connected"], s["inGrace"], [(c["kind"], c.get("protocolVersion")) for c in s["connections"]])
                for s in self.status()["sessions"]
            ]
        except OSError as e:
            sessions = f"no /status: {e}"
        self.log.flush()
        log = (self.tmp / "bridge.log").read_text(errors="replace").splitlines()[-40:]
        relay = sorted((self.tmp / "home").glob(".cache/claude-cli-nodejs/*/mcp-logs-ide-bridge/*.jsonl"))
        relay_log = relay[-1].read_text(errors="replace").splitlines()[-15:] if relay else []
        return f"sessions {sessions}\nbridge log:\n" + "\n".join(log) + "\nrelay (the CLI's log):\n" + "\n".join(relay_log)

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(10)
        self.log.close()

    def claude(self, cli, home, model_url=None):
        """`claude --ide` in the workspace, with its own HOME."""
        home.mkdir()
        env = environment(home=home, config_dir=self.config_dir, port=self.port, api_key=API_KEY, model_url=model_url)
        return Claude(cli, self.workspace, env)


def call_over_http(place, tool, args):
    """One tool call over /mcp (a fresh HTTP MCP session)."""
    return call_over_mcp(place.port, place.token, tool, args)


def prepare(place):
    trust(place.config_dir, place.workspace, API_KEY)
    manual_mode(place.config_dir, allow=["mcp__ide-bridge"])


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


def with_relay(place, pid):
    """The CLI's session once both its IDE connection and its relay are there and have
    completed their handshake (a bridge killed in the middle of the IDE connection's
    handshake leaves the CLI waiting much longer before it tries again)."""
    s = cli_session(place, pid)
    if not s or not {"ide", "relay"} <= {c["kind"] for c in s["connections"]}:
        return None
    return s if all(c.get("initialized") for c in s["connections"]) else None


def test_the_cli_gets_its_session_back_after_a_restart_and_a_crash(cli):
    with tempfile.TemporaryDirectory() as tmp:
        place = Place(tmp)
        try:
            prepare(place)
            env = {k: v for k, v in os.environ.items() if not k.startswith(("IDE_BRIDGE_", "CLAUDE"))}
            env.update({"CLAUDE_CONFIG_DIR": str(place.config_dir), "HOME": tmp})
            init = subprocess.run([BRIDGE, "init"], env=env, capture_output=True, text=True, timeout=30, check=False)
            assert init.returncode == 0, init.stderr
            script = [
                {"on": "prompt", "contains": "open the notes",
                 "reply": mcp("openFile", {"filePath": "notes.txt", "makeFrontmost": False}, id="toolu_open_1")},
                {"on": "tool_result", "tool": "mcp__ide-bridge__openFile", "reply": text("opened-4242")},
            ]
            with FakeModel(script) as model:
                claude = place.claude(cli, pathlib.Path(tmp) / "home", model.url)
                try:
                    first = wait_until(lambda: with_relay(place, claude.pid), "the CLI and its relay to connect", 90, claude)
                    submit(claude, "open the notes")
                    wait_until(lambda: (s := cli_session(place, claude.pid)) and s["openedFiles"] == 1 and s,
                               "the file opened by the agent", 90, claude)
                    opened = model.wait_for(lambda: [r for r in model.tool_results() if r["tool_use_id"] == "toolu_open_1"])
                    assert not opened[0].get("is_error"), opened
                    port, token = place.port, place.token
                    for how in (signal.SIGTERM, signal.SIGKILL):
                        # Stopped once the CLI's connections are done with their
                        # handshakes' follow-ups (listing tools, resources…): killed in the
                        # middle of them, the CLI waits much longer before it tries again
                        # (CI once: the IDE connection not back within 30 s).
                        wait_until(settled({"port": place.port, "token": place.token}, quiet=1.0),
                                   "the CLI's MCP requests to settle", 30, claude)
                        place.stop(how)
                        place.start()
                        assert (place.port, place.token) == (port, token), "same port and token"
                        began = time.monotonic()
                        back = wait_until(lambda: with_relay(place, claude.pid),
                                          lambda how=how: f"the CLI reconnects by itself after {how.name}; {place.diagnose()}", 30, claude)
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
                    wait_until(lambda: disconnects() > before, "the cut to close the agent's connections", 30, claude)
                    back = wait_until(lambda: with_relay(place, claude.pid), "the CLI reconnects by itself after a cut", 30, claude)
                    assert back["id"] == first["id"] and back["openedFiles"] == 1, back
                finally:
                    claude.kill()
        finally:
            place.close()


def test_three_clis_starting_at_once_all_connect(cli):
    # The model is a stand-in on loopback: with an unreachable API the CLI connects to
    # the IDE only after ~20 s.
    with tempfile.TemporaryDirectory() as tmp, FakeModel() as model:
        place = Place(tmp)
        clis = []
        try:
            prepare(place)
            for i in range(3):
                clis.append(place.claude(cli, pathlib.Path(tmp) / f"home{i}", model.url))
            for claude in clis:
                wait_until(lambda c=claude: cli_session(place, c.pid), f"CLI {claude.pid} connects", 60, claude)
            sessions = place.status()["sessions"]
            assert {s.get("clientPid") for s in sessions} == {c.pid for c in clis}, sessions
            assert place.status()["refusedConnections"]["burst"] == 0
        finally:
            for claude in clis:
                claude.kill()
            place.close()
