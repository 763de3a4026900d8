"""The VS Code extension (editors/vscode) inside the real VS Code workbench: code-server
(npm, cached in .vscode-test by tests/vscode/run.sh) serves the workbench, headless
Chromium (Playwright, the system browser) opens it, and the extension host runs the
extension under development together with the tests of tests/vscode/suite, which drive
the real bridge binary (they start, restart and stop it themselves) as an agent would.

The VSIX built by `npm run package` must install into code-server too."""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))

from processes import isolated_dirs  # noqa: E402

CODE_SERVER = ROOT / ".vscode-test" / "node_modules" / ".bin" / "code-server"
EXTENSION = ROOT / "editors" / "vscode"
SUITE = ROOT / "tests" / "vscode" / "suite"
VSIX = EXTENSION / "dist" / "ide-bridge.vsix"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
BRIDGE_BIN = os.environ.get("BRIDGE_BIN", str(ROOT / "target" / "debug" / "ide-bridge"))
SHOTS = ROOT / "target" / "vscode-screenshots"
SUITE_DEADLINE = 600

pytestmark = pytest.mark.skipif(not CODE_SERVER.exists(), reason="code-server is not installed (tests/vscode/run.sh installs it)")

WORKSPACE = {
    "src/shapes.ts": """export interface Shape {
  area(): number;
}

/** A circle of the given radius. */
export class Circle implements Shape {
  constructor(readonly radius: number) {}
  area(): number {
    return Math.PI * this.radius * this.radius;
  }
}

export function describe(shape: Shape): string {
  return `area ${shape.area()}`;
}
""",
    "src/main.ts": """import { Circle, describe } from './shapes';

const c = new Circle(2);
console.log(describe(c)); // AI: print the radius too
""",
    "src/broken.ts": """const count: number = "three";
export { count };
""",
    "tsconfig.json": json.dumps({"compilerOptions": {"strict": True, "target": "ES2022", "module": "commonjs"}, "include": ["src"]}),
    "debug/prog.js": """let total = 0;
for (let i = 1; i <= 3; i++) {
  total += i;
}
console.log('total', total);
""",
    ".vscode/launch.json": json.dumps(
        {
            "version": "0.2.0",
            "configurations": [
                {"name": "Run prog", "type": "node", "request": "launch", "program": "${workspaceFolder}/debug/prog.js", "console": "internalConsole"}
            ],
        }
    ),
    ".vscode/settings.json": json.dumps(
        {
            "telemetry.telemetryLevel": "off",
            "workbench.startupEditor": "none",
            "terminal.integrated.shellIntegration.enabled": True,
            "terminal.integrated.defaultProfile.linux": "bash",
            "git.enabled": False,
            "extensions.autoCheckUpdates": False,
            "extensions.autoUpdate": False,
            "typescript.tsserver.log": "off",
            "typescript.inlayHints.parameterNames.enabled": "all",
        }
    ),
    "notes.txt": "alpha\nbeta\ngamma\n",
}


def isolated_env(base):
    """Every editor state in the test's own directories."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IDE_BRIDGE_", "CLAUDE", "VSCODE"))}
    env.update({**isolated_dirs(base), "SHELL": "/bin/bash"})
    return env


def code_server(base, *args):
    return [str(CODE_SERVER), "--extensions-dir", str(base / "extensions"), "--user-data-dir", str(base / "user-data"), *args]


def test_the_vsix_builds_and_installs_into_code_server():
    assert VSIX.exists(), "npm run package (tests/vscode/run.sh runs it) makes editors/vscode/dist/ide-bridge.vsix"
    with tempfile.TemporaryDirectory(prefix="ide-bridge-vsix-") as tmp:
        base = pathlib.Path(tmp)
        env = isolated_env(base)
        out = subprocess.run(code_server(base, "--install-extension", str(VSIX)), env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr
        listed = subprocess.run(code_server(base, "--list-extensions", "--show-versions"), env=env, capture_output=True, text=True, timeout=60)
        version = json.loads((EXTENSION / "package.json").read_text())["version"]
        assert f"ide-bridge.ide-bridge@{version}" in listed.stdout, listed.stdout + listed.stderr


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_the_extension_inside_the_vs_code_workbench():
    from playwright.async_api import async_playwright

    with tempfile.TemporaryDirectory(prefix="ide-bridge-vscode-") as tmp:
        base = pathlib.Path(tmp).resolve()
        ws = base / "ws"
        for rel, text in WORKSPACE.items():
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_text(text)
        env = isolated_env(base)
        results = base / "results.json"
        env.update(
            {
                "BRIDGE_BIN": BRIDGE_BIN,
                "SUITE_WORKSPACE": str(ws),
                "SUITE_RESULTS": str(results),
                "SUITE_WS_MODULE": str(EXTENSION / "node_modules" / "ws"),
            }
        )
        if os.environ.get("SUITE_ONLY"):
            env["SUITE_ONLY"] = os.environ["SUITE_ONLY"]
        log = open(base / "code-server.log", "w+")
        server = subprocess.Popen(
            code_server(
                base,
                "--auth",
                "none",
                "--bind-addr",
                "127.0.0.1:0",
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                "--disable-getting-started-override",
                str(ws),
            ),
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            port = None
            deadline = time.monotonic() + 60
            while port is None:
                assert server.poll() is None, (base / "code-server.log").read_text()
                assert time.monotonic() < deadline, "code-server did not start: " + (base / "code-server.log").read_text()
                m = re.search(r"HTTP server listening on http://127\.0\.0\.1:(\d+)", (base / "code-server.log").read_text())
                port = int(m.group(1)) if m else None
                time.sleep(0.1)
            remote = f"vscode-remote://127.0.0.1:{port}"
            payload = json.dumps([["extensionDevelopmentPath", f"{remote}{EXTENSION}"], ["extensionTestsPath", f"{remote}{SUITE / 'index.js'}"]])
            url = f"http://127.0.0.1:{port}/?folder={urllib.parse.quote(str(ws))}&payload={urllib.parse.quote(payload)}"
            lines = []
            exit_code = None
            async with async_playwright() as p:
                browser = await p.chromium.launch(
                    executable_path=CHROMIUM,
                    args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
                )
                context = await browser.new_context(viewport={"width": 1400, "height": 900})
                await context.grant_permissions(["clipboard-read", "clipboard-write"])
                page = await context.new_page()

                def on_exit(code):
                    nonlocal exit_code
                    exit_code = code

                await page.expose_function("codeAutomationLog", lambda *args: lines.append(" ".join(str(x) for x in args)))
                await page.expose_function("codeAutomationExit", on_exit)
                await page.goto(url)
                started = time.monotonic()
                shot_at = 0.0
                while exit_code is None:
                    assert time.monotonic() - started < SUITE_DEADLINE, "the suite did not finish:\n" + "\n".join(lines[-200:])
                    if time.monotonic() - shot_at > 30:
                        SHOTS.mkdir(parents=True, exist_ok=True)
                        await page.screenshot(path=str(SHOTS / "workbench.png"))
                        shot_at = time.monotonic()
                    await page.wait_for_timeout(200)
                SHOTS.mkdir(parents=True, exist_ok=True)
                await page.screenshot(path=str(SHOTS / "workbench-end.png"))
                await browser.close()
            report = json.loads(results.read_text()) if results.exists() else []
            for r in report:
                print(("ok     " if r["ok"] else "FAILED ") + f"{r['name']} ({r['ms']} ms)" + ("" if r["ok"] else "\n" + r["error"]))
            failed = [r for r in report if not r["ok"]]
            assert report, "the suite wrote no results:\n" + "\n".join(lines[-300:])
            assert exit_code == 0 and not failed, f"{len(failed)} of {len(report)} failed; extension host log:\n" + "\n".join(lines[-300:])
        finally:
            os.killpg(server.pid, 15)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, 9)
            log.close()
            shutil.rmtree(base, ignore_errors=True)
