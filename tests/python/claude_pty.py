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
