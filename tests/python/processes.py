"""What every test harness here does with the processes it starts and the directories
it gives them: each test's own HOME, XDG_* dirs, TMPDIR, tmux socket directory and
CLAUDE_CONFIG_DIR, and a
stop that asks first (SIGTERM, as a user's service manager would) and then insists."""

import signal
import subprocess

# The directories `isolated_dirs` makes, by the variable that names each.
_DIRS = {
    "HOME": "home",
    "XDG_CONFIG_HOME": "config",
    "XDG_DATA_HOME": "data",
    "XDG_CACHE_HOME": "cache",
    "XDG_STATE_HOME": "state",
    "TMPDIR": "tmp",
    # tmux's sockets: a tmux server the developer runs is out of reach, so Neovim does
    # not pick it as its clipboard (it does whenever `tmux list-buffers` succeeds, even
    # with $TMUX unset).
    "TMUX_TMPDIR": "tmux",
    "CLAUDE_CONFIG_DIR": "claude",
}


def isolated_dirs(base):
    """Makes HOME, the XDG_* dirs, TMPDIR, TMUX_TMPDIR and CLAUDE_CONFIG_DIR under `base`; returns
    the environment variables that point there."""
    env = {}
    for var, name in _DIRS.items():
        (base / name).mkdir(parents=True, exist_ok=True)
        env[var] = str(base / name)
    return env


def stop_process(proc, timeout=10):
    """SIGTERM, then SIGKILL when `proc` has not exited within `timeout` seconds."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
