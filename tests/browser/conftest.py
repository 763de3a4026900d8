"""Browser tests of the bridge's page (/ui/): the real binary, headless Chromium driven by
Playwright (the system browser, CHROMIUM or /usr/bin/chromium), agents that are the
official MCP Python SDK 1.x over the bridge's WebSocket, a small editor simulator for
what needs an editor, and the fake `claude` for tasks.

Each test gets its own bridge (port 0, its own CLAUDE_CONFIG_DIR, HOME and workspace)
and its own browser. Screenshots of each page state go to target/browser-screenshots/
(not committed). Every request a page makes is recorded; a test fails if one goes to
another origin.
"""

import asyncio
import http.client
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import pytest
from websockets.asyncio.client import connect

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))

from processes import isolated_dirs, stop_process  # noqa: E402
from ws_transport import authenticated_websocket  # noqa: E402

BRIDGE_BIN = os.environ.get("BRIDGE_BIN", str(ROOT / "target" / "debug" / "ide-bridge"))
FAKE_CLAUDE = str(ROOT / "tests" / "fixtures" / "fake-claude")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SHOTS = ROOT / "target" / "browser-screenshots"
DEADLINE = 15

LIB_RS = "".join(f"// line {n}\n" for n in range(1, 4)) + "pub fn answer() -> u32 {\n    42\n}\n" + "".join(
    f"// tail {n}\n" for n in range(1, 5)
)


@pytest.fixture
def anyio_backend():
    return "asyncio"


def git(cwd, *args):
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


class Bridge:
    """The real bridge on a fresh workspace (a git repository with src/lib.rs)."""

    def __init__(self, *args, config=None):
        self._tmp = tempfile.TemporaryDirectory(prefix="ide-bridge-browser-")
        base = pathlib.Path(self._tmp.name).resolve()
        self.workspace = base / "ws"
        (self.workspace / "src").mkdir(parents=True)
        dirs = isolated_dirs(base)
        self.config_dir = pathlib.Path(dirs["CLAUDE_CONFIG_DIR"])
        self.home = pathlib.Path(dirs["HOME"])
        (self.workspace / "src" / "lib.rs").write_text(LIB_RS)
        (self.workspace / "notes.txt").write_text("first\nsecond\n")
        git(self.workspace, "init", "-q", "-b", "main")
        # Who commits: the user's own identity, as in a real repository.
        git(self.workspace, "config", "user.name", "Page Tester")
        git(self.workspace, "config", "user.email", "page@example.com")
        git(self.workspace, "add", "-A")
        git(self.workspace, "commit", "-qm", "start")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("IDE_BRIDGE_", "CLAUDE"))}
        self.env.update({**dirs, "RUST_LOG": "info"})
        argv = [BRIDGE_BIN, "--workspace", str(self.workspace), "--set", f"orchestrator.claude_binary={FAKE_CLAUDE}", *args]
        if config is not None:
            path = base / "bridge.toml"
            path.write_text(config)
            argv += ["--config", str(path)]
        self.log_path = base / "bridge.log"
        self._log = open(self.log_path, "ab")
        self.argv = argv
        self._spawn()

    def _spawn(self):
        self.proc = subprocess.Popen(self.argv, env=self.env, stdout=subprocess.DEVNULL, stderr=self._log)
        deadline = time.monotonic() + DEADLINE
        self.port = None
        while self.port is None:
            assert self.proc.poll() is None, self.log()
            assert time.monotonic() < deadline, "no lock file"
            for path in (self.config_dir / "ide").glob("*.lock"):
                try:
                    lock = json.loads(path.read_text())
                except (OSError, ValueError):
                    continue
                if lock.get("pid") == self.proc.pid:
                    self.port, self.token = int(path.stem), lock["authToken"]
            time.sleep(0.02)
        self.origin = f"http://127.0.0.1:{self.port}"

    def restart(self):
        """Stops the bridge (SIGTERM) and starts it again on the same workspace and
        state, as a user restarting it would."""
        stop_process(self.proc)
        self._spawn()

    def log(self):
        return self.log_path.read_text(errors="replace")

    def open_link(self):
        """What a user gets from `ide-bridge open` in the workspace."""
        out = subprocess.run(
            [BRIDGE_BIN, "open", "--no-browser"],
            cwd=self.workspace,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=10,
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    def http(self, method, path, headers=None, body=None):
        """A raw request (any Host, Origin, Cookie): (status, headers, text)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        data = None if body is None else (body if isinstance(body, (bytes, str)) else json.dumps(body))
        conn.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
        resp = conn.getresponse()
        text = resp.read().decode(errors="replace")
        conn.close()
        return resp.status, resp.headers, text

    def status(self):
        code, _, text = self.http("GET", "/status", {"Authorization": f"Bearer {self.token}"})
        assert code == 200, text
        return json.loads(text)

    def stop(self):
        stop_process(self.proc)
        self._log.close()
        self._tmp.cleanup()


@pytest.fixture
def make_bridge():
    bridges = []

    def make(*args, config=None):
        b = Bridge(*args, config=config)
        bridges.append(b)
        return b

    yield make
    for b in bridges:
        b.stop()


@pytest.fixture
def bridge(make_bridge):
    return make_bridge()


class Browser:
    """Headless Chromium with one context; records every request its pages make."""

    def __init__(self, playwright, name):
        self.playwright = playwright
        self.name = name
        self.requests = []
        self.shots = 0

    async def start(self):
        self.browser = await self.playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        self.context = await self.new_context()
        return self

    async def new_context(self):
        context = await self.browser.new_context(viewport={"width": 1440, "height": 900})
        context.on("request", lambda r: self.requests.append(r.url))
        return context

    async def page(self):
        page = await self.context.new_page()
        self.errors = []
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        return page

    async def sign_in(self, bridge, page=None):
        page = page or await self.page()
        await page.goto(bridge.open_link())
        await page.wait_for_url(f"{bridge.origin}/ui/")
        await page.wait_for_selector("body.ready", timeout=DEADLINE * 1000)
        return page

    async def shot(self, page, what):
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.shots += 1
        await page.screenshot(path=str(SHOTS / f"{self.name}-{self.shots:02d}-{what}.png"), full_page=False)

    async def close(self):
        await self.browser.close()


@pytest.fixture
async def browser(request):
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        b = await Browser(p, request.node.name).start()
        try:
            yield b
        finally:
            await b.close()
        # The page is self-contained: nothing it loads comes from another origin.
        foreign = [u for u in b.requests if not u.startswith(("http://127.0.0.1:", "data:"))]
        assert not foreign, f"requests to other origins: {foreign}"
        assert not getattr(b, "errors", []), f"script errors in the page: {b.errors}"


class Agent:
    """An agent: the official MCP Python SDK 1.x ClientSession on the IDE WebSocket,
    recording the notifications it gets (at_mentioned, logs)."""

    def __init__(self, bridge):
        self.bridge = bridge
        self.notifications = []

    async def __aenter__(self):
        from contextlib import AsyncExitStack

        import anyio
        from mcp import ClientSession

        self._stack = AsyncExitStack()
        read, write, _ = await self._stack.enter_async_context(
            authenticated_websocket(f"ws://127.0.0.1:{self.bridge.port}/", self.bridge.token)
        )
        # The SDK drops notifications it has no type for (at_mentioned): record every
        # notification on the way in, before it sees them.
        tap_send, tap_recv = anyio.create_memory_object_stream(0)

        async def tap():
            async with tap_send:
                async for item in read:
                    root = getattr(getattr(item, "message", None), "root", None)
                    if getattr(root, "method", None) and getattr(root, "id", None) is None:
                        self.notifications.append((root.method, root.params))
                    await tap_send.send(item)

        self._tap = asyncio.create_task(tap())
        self.session = await self._stack.enter_async_context(ClientSession(tap_recv, write))
        await self.session.initialize()
        return self

    async def __aexit__(self, *exc):
        self._tap.cancel()
        await self._stack.aclose()

    async def call(self, tool, arguments, timeout=DEADLINE):
        return await asyncio.wait_for(self.session.call_tool(tool, arguments), timeout)

    def texts(self, result):
        return [c.text for c in result.content]


class EditorSim:
    """A minimal editor extension: says hello, answers every request with `{}` (or what
    `answers` says) and records them."""

    def __init__(self, bridge, answers=None):
        self.bridge = bridge
        self.answers = answers or {}
        self.requests = []

    async def __aenter__(self):
        self.ws = await connect(
            f"ws://127.0.0.1:{self.bridge.port}/",
            additional_headers={"x-claude-ide-extension": self.bridge.token},
        )
        await self.ws.send(
            json.dumps({"jsonrpc": "2.0", "method": "extension/hello", "params": {"extensionVersion": "sim", "packageVersion": "sim"}})
        )
        self.task = asyncio.create_task(self._serve())
        await wait_for(lambda: self.bridge.status()["extension"]["connected"], "the editor to connect")
        return self

    async def _serve(self):
        async for raw in self.ws:
            msg = json.loads(raw)
            if "id" in msg and "method" in msg:
                self.requests.append((msg["method"], msg.get("params")))
                result = self.answers.get(msg["method"], {})
                await self.ws.send(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}))

    async def __aexit__(self, *exc):
        self.task.cancel()
        await self.ws.close()


async def wait_for(check, what, timeout=DEADLINE, interval=0.05):
    """Polls `check` (sync or async) until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(interval)


async def text_is(page, selector, text):
    """The element's text is exactly `text` (a check for `wait_for`)."""
    return (await page.text_content(selector)) == text


async def text_contains(page, selector, text):
    """The element's text contains `text` (a check for `wait_for`)."""
    return text in ((await page.text_content(selector)) or "")


async def count_is(page, selector, n):
    """Exactly `n` elements match (a check for `wait_for`)."""
    return await page.locator(selector).count() == n
