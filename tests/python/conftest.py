"""Starts the real ide-bridge binary for the interop tests.

The binary path comes from BRIDGE_BIN (set by scripts/test.sh). Every bridge gets
its own temporary CLAUDE_CONFIG_DIR, workspace and OS-assigned port.
"""

import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager

import pytest

# Also loaded by path from tests/python_mcp2, where this directory is not on sys.path.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from claude_pty import cli  # noqa: F401 (the fixture: each real Claude Code CLI)
from processes import stop_process


@pytest.fixture
def anyio_backend():
    return "asyncio"


def start_bridge(workspace, config_dir, log, *extra_args):
    """Starts the bridge for `workspace` and waits for its lock file: (process, port,
    token)."""
    binary = os.environ.get("BRIDGE_BIN", "target/debug/ide-bridge")
    env = {k: v for k, v in os.environ.items() if not k.startswith("IDE_BRIDGE_")}
    env["CLAUDE_CONFIG_DIR"] = str(config_dir)
    proc = subprocess.Popen(
        [binary, "--workspace", str(workspace), *extra_args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    deadline = time.monotonic() + 10
    while True:
        assert proc.poll() is None, f"the bridge exited with {proc.returncode}"
        assert time.monotonic() < deadline, "no lock file"
        for path in (config_dir / "ide").glob("*.lock"):
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if data.get("pid") == proc.pid:
                return proc, int(path.stem), data["authToken"]
        time.sleep(0.02)


@contextmanager
def running_bridge(*extra_args):
    binary = os.environ.get("BRIDGE_BIN", "target/debug/ide-bridge")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        workspace = tmp / "workspace"
        (workspace / "src").mkdir(parents=True)
        (workspace / "src" / "main.rs").write_text("fn main() {}\n")
        config_dir = tmp / "claude"
        env = {k: v for k, v in os.environ.items() if not k.startswith("IDE_BRIDGE_")}
        env["CLAUDE_CONFIG_DIR"] = str(config_dir)
        with open(tmp / "bridge.log", "wb") as log:
            proc = subprocess.Popen(
                [binary, "--workspace", str(workspace), *extra_args],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
            try:
                deadline = time.monotonic() + 10
                lock = None
                while lock is None:
                    assert proc.poll() is None, (tmp / "bridge.log").read_text()
                    assert time.monotonic() < deadline, "no lock file"
                    for path in (config_dir / "ide").glob("*.lock"):
                        data = json.loads(path.read_text())
                        if data.get("pid") == proc.pid:
                            lock = (int(path.stem), data)
                    time.sleep(0.02)
                yield {
                    "port": lock[0],
                    "token": lock[1]["authToken"],
                    "workspace": workspace.resolve(),
                    "config_dir": config_dir,
                    "log": tmp / "bridge.log",
                }
            finally:
                stop_process(proc)


@pytest.fixture
def bridge():
    with running_bridge() as b:
        yield b


def http(bridge, path):
    """GET `path` from a bridge of `running_bridge` with its token; the body as text."""
    req = urllib.request.Request(
        f"http://127.0.0.1:{bridge['port']}{path}",
        headers={"Authorization": f"Bearer {bridge['token']}"},
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        return resp.read().decode()


class McpOverHttp:
    """An MCP session over streamable HTTP `/mcp`: initialized once, reused for each
    call, ended (DELETE) on close."""

    def __init__(self, port, token):
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream"}
        self.sid, _ = self._post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}})
        self.headers["Mcp-Session-Id"] = self.sid
        self.next_id = 2

    def _post(self, body, method="POST"):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url, data=data, method=method, headers=self.headers)
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.headers.get("mcp-session-id"), resp.read()

    def call(self, tool, args):
        """The JSON-RPC response to one `tools/call`."""
        self.next_id += 1
        _, body = self._post({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                              "params": {"name": tool, "arguments": args}})
        text = body.decode()
        if text.startswith("event:"):
            text = text.split("data: ", 1)[1]
        return json.loads(text)

    def close(self):
        try:
            self._post(None, method="DELETE")
        except OSError:
            pass


def call_over_mcp(port, token, tool, args):
    """One tool call over `/mcp` in a session of its own; the JSON-RPC response."""
    session = McpOverHttp(port, token)
    try:
        return session.call(tool, args)
    finally:
        session.close()


def agent_with(bridge, kinds):
    """The session holding connections of `kinds`, once every one is initialized."""
    status = json.loads(http(bridge, "/status"))
    for s in status["sessions"]:
        if {c["kind"] for c in s["connections"]} >= kinds and all(c["initialized"] for c in s["connections"]):
            return s
    return None


def settled(bridge, quiet=1.5):
    """A predicate for `wait_until`: true once no MCP request (pings aside) reached the
    bridge for `quiet` seconds."""
    seen = {"total": None, "since": time.monotonic()}

    def check():
        metrics = http(bridge, "/metrics")
        counts = re.findall(r'^ide_bridge_mcp_requests_total\{method="([^"]*)"\} (\d+)$', metrics, re.MULTILINE)
        total = sum(int(n) for method, n in counts if method != "ping")
        if total != seen["total"]:
            seen["total"], seen["since"] = total, time.monotonic()
            return False
        return time.monotonic() - seen["since"] >= quiet

    return check
