"""The real Claude Code CLI in interactive mode under a pseudo-terminal, as a developer
runs it (`claude --ide` in the workspace), for the tests that drive it: which CLI (the
`cli` fixture: the pinned and the newest version), its config (onboarding done, the
folder trusted, the test API key approved, manual permission mode), its environment,
and its screen."""

import dataclasses
import json
import os
import pathlib
import pty
import re
import signal
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Every test that drives the real CLI runs against both: the pinned version catches
# regressions in older installs, the newest is what users run. scripts/test.sh installs
# them and names them in these variables.
CLIS = {
    "pinned": ("CLAUDE_CLI", ROOT / ".npm-test" / "node_modules" / ".bin" / "claude"),
    "newest": ("CLAUDE_CLI_LATEST", ROOT / ".npm-test-latest" / "node_modules" / ".bin" / "claude"),
}


@dataclasses.dataclass(frozen=True)
class Cli:
    """One installed Claude Code CLI; usable wherever a path is (os.fspath)."""

    which: str  # "pinned" or "newest"
    path: str

    def __fspath__(self):
        return self.path

    def __str__(self):
        return f"{self.which} CLI {self.path}"


def claude_cli(which):
    """The CLI `which` names. Named by its variable (as scripts/test.sh does), it must be
    there: the test fails, so a broken install cannot pass as skipped. Without the
    variable, the copy scripts/test.sh installs in the repository is used, and the test
    is skipped when there is none (a quick local run without the CLIs)."""
    var, installed = CLIS[which]
    named = os.environ.get(var)
    if named:
        assert os.access(named, os.X_OK), f"{var}={named} is not an executable Claude Code CLI"
        return Cli(which, os.path.abspath(named))
    if os.access(installed, os.X_OK):
        return Cli(which, str(installed))
    pytest.skip(f"the {which} Claude Code CLI is not installed ({var} is unset; scripts/test.sh installs it)")


@pytest.fixture(params=list(CLIS))
def cli(request):
    """Each CLI in turn (test ids `[pinned]` and `[newest]`); see `claude_cli`.
    tests/python/conftest.py imports it; a test module elsewhere (tests/browser,
    tests/nvim) binds it with `cli = claude_pty.cli`."""
    return claude_cli(request.param)


def manual_mode(config_dir, allow=()):
    """$CLAUDE_CONFIG_DIR/settings.json allowing `allow` without asking, and asking for the
    rest, as in the pinned CLI: the newest starts in auto mode otherwise (and offers to
    switch to it, a dialog in place of the input box)."""
    (config_dir / "settings.json").write_text(
        json.dumps({"permissions": {"allow": list(allow), "defaultMode": "default", "disableAutoMode": "disable"}})
    )


def trust(config_dir, workspace, api_key):
    """What a developer's .claude.json holds after first use: onboarding done, this
    folder trusted, the API key approved (the CLI stores its last 20 characters)."""
    (config_dir / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "theme": "dark",
                "customApiKeyResponses": {"approved": [api_key[-20:]], "rejected": []},
                "projects": {str(workspace): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}},
            }
        )
    )


def environment(*, home, config_dir, port, api_key, model_url=None, base=None, extra=None):
    """The CLI's environment: nothing of an outer Claude session, `base` (a test's own
    HOME, XDG_* …), the bridge's port for its IDE connection, and the scripted model
    when there is one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IDE_BRIDGE_", "CLAUDE", "ANTHROPIC"))}
    env.update(base or {})
    env.update(
        {
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(config_dir),
            "CLAUDE_CODE_SSE_PORT": str(port),
            "ANTHROPIC_API_KEY": api_key,
            "TERM": "xterm-256color",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            # Or the CLI starts cloning its plugin marketplace at start-up.
            "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
            **({"ANTHROPIC_BASE_URL": model_url} if model_url else {}),
            **(extra or {}),
        }
    )
    return env


class Claude:
    """`claude --ide` started in `cwd` under a pty; its output is collected."""

    def __init__(self, cli, cwd, env, args=("--ide",)):
        cli = os.fspath(cli)
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.chdir(cwd)
                os.execve(cli, [cli, *args], env)
            finally:
                os._exit(127)  # never back into the test in the child
        self.screen = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                return
            if not data:
                return
            self.screen.append(data)

    def text(self):
        """The screen so far without escape sequences. The CLI moves the cursor rather
        than printing spaces, so compare words with spaces removed."""
        return re.sub(rb"\x1b\[[0-9;?<>=]*[a-zA-Z]", b"", b"".join(self.screen)).decode("utf8", "replace")

    def type(self, keys):
        os.write(self.fd, keys.encode() if isinstance(keys, str) else keys)

    def kill(self):
        os.killpg(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)


def wait_until(pred, what, timeout=60, claude=None):
    """Polls `pred` until it is truthy (its value is returned); fails naming `what` (a
    string, or a function giving one when it fails) and showing the end of the CLI's
    screen."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(0.05)
    shown = f"; the CLI showed:\n{claude.text()[-3000:]}" if claude else ""
    raise AssertionError(f"timed out waiting for {what() if callable(what) else what}{shown}")


def submit(claude, prompt, timeout=60):
    """Types `prompt` into the CLI's input box and submits it. Keys sent before the box
    settles are lost, so the text is typed again until it shows."""
    squeezed = prompt.replace(" ", "")
    wait_until(lambda: "shortcuts" in claude.text() or "for help" in claude.text(), "the input box", timeout, claude)
    before = claude.text().replace(" ", "").count(squeezed)
    for _ in range(8):
        claude.type(prompt)
        try:
            wait_until(lambda: claude.text().replace(" ", "").count(squeezed) > before, "the typed prompt", 3, claude)
            break
        except AssertionError:
            claude.type("\x15")  # ^U: clear whatever half-arrived
    claude.type("\r")
