"""Which MCP revision the real Claude Code CLI speaks with the bridge, from the CLI's own
debug log: `claude mcp list` connects to every configured server (no model needed).
The newest CLI asks `server/discover` and speaks 2026-07-28 through `ide-bridge mcp` and
over HTTP, without filling in result fields the bridge left out; the pinned one knows
only the handshake (2025-11-25)."""

import json
import os
import pathlib
import re
import subprocess

from claude_pty import environment

BRIDGE_BIN = os.environ.get("BRIDGE_BIN", "target/debug/ide-bridge")


def test_the_cli_connects_in_the_newest_revision_it_speaks(tmp_path, bridge, cli):
    config_dir = bridge["config_dir"]
    (config_dir / ".claude.json").write_text(json.dumps({
        "hasCompletedOnboarding": True,
        "mcpServers": {
            "relay": {"type": "stdio", "command": str(pathlib.Path(BRIDGE_BIN).resolve()), "args": ["mcp"]},
            "http": {"type": "http", "url": f"http://127.0.0.1:{bridge['port']}/mcp",
                     "headers": {"Authorization": f"Bearer {bridge['token']}"}},
        },
    }))
    debug = tmp_path / "debug.txt"
    home = tmp_path / "home"
    home.mkdir()
    env = environment(home=home, config_dir=config_dir, port=bridge["port"], api_key="sk-ant-unused-0000")
    listed = subprocess.run(
        [os.fspath(cli), "--debug-file", str(debug), "mcp", "list"],
        cwd=bridge["workspace"], env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr
    for name in ("relay", "http"):
        assert re.search(rf"^{name}: .*Connected", listed.stdout, re.MULTILINE), listed.stdout
    log = debug.read_text()
    for name in ("relay", "http"):
        established = [line for line in log.splitlines() if f'MCP server "{name}": Connection established' in line]
        assert established, log[-3000:]
        if cli.which == "newest":
            assert '"protocolEra":"modern"' in established[-1], established[-1]
            assert '"negotiatedProtocolVersion":"2026-07-28"' in established[-1], established[-1]
        else:
            assert "protocolEra" not in established[-1], established[-1]
    # The bridge's results carry every field of the revision: nothing filled in.
    assert "omits required fields" not in log, [l for l in log.splitlines() if "omits" in l]
