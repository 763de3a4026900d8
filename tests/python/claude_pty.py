"""The real Claude Code CLI in interactive mode under a pseudo-terminal, as a developer
runs it (`claude --ide` in the workspace), for the tests that drive it: its config
(onboarding done, the folder trusted, the test API key approved), its environment, and
its screen."""

import json
import os
import pty
import re
import signal
import threading


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
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.chdir(cwd)
            os.execve(cli, [cli, *args], env)
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
    """Polls `pred` until it is truthy (its value is returned); fails naming `what`
    and showing the end of the CLI's screen."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(0.05)
    shown = f"; the CLI showed:\n{claude.text()[-3000:]}" if claude else ""
    raise AssertionError(f"timed out waiting for {what}{shown}")


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
