"""Connection, reconnection, commands, and what the editor pushes."""

import json
import time

from conftest import Editor, free_port, wait_for


def test_connect_hello_and_status(world):
    ext = world.bridge.editor_connected()
    assert ext["hello"]["extensionVersion"] == "0.1.0"
    assert ext["hello"]["editor"] == "neovim"
    out = world.editor.nv.command_output("IdeBridgeStatus")
    assert f"connected to the bridge on port {world.bridge.port}" in out
    assert "agents connected: 0" in out


def test_status_shows_agents(world):
    world.agent("agent-one")
    world.agent("agent-two")
    wait_for(
        lambda: world.editor.lua("return require('ide_bridge').status().agents") == 2,
        what="claudeConnectionChanged with 2 agents",
    )
    wait_for(lambda: "agents connected: 2" in world.editor.nv.command_output("IdeBridgeStatus"))
    wait_for(
        lambda: len(world.editor.lua("return require('ide_bridge').status().sessions")) == 2,
        what="sessions from /status",
    )


def test_reconnects_after_bridge_restart(world):
    # The same bridge restarted (it may keep its port and token).
    world.bridge.restart()
    start = time.monotonic()
    wait_for(world.bridge.editor_connected, timeout=5, what="the editor to come back")
    assert time.monotonic() - start < 5
    wait_for(world.editor.connected)
    # A bridge on another port with a new token: the plugin re-reads the lock files.
    old = (world.bridge.port, world.bridge.token)
    world.bridge.restart(port=free_port())
    assert world.bridge.port != old[0]
    start = time.monotonic()
    wait_for(world.bridge.editor_connected, timeout=5, what="the editor to find the new bridge")
    assert time.monotonic() - start < 5
    assert world.editor.lua("return require('ide_bridge').status().port") == world.bridge.port


def test_a_second_neovim_on_the_project_leaves_the_first_standing_by(world):
    first = world.editor
    second_dir = world.tmp / "second"
    second_dir.mkdir()
    second = Editor(second_dir, world.workspace, world.nvim_env)
    try:
        wait_for(second.connected, what="the second Neovim to connect")
        status = lambda: first.lua("return require('ide_bridge').status().status")  # noqa: E731
        wait_for(lambda: status() == "standing by", what="the first to stand by")
        assert "takes the bridge back" in first.nv.command_output("IdeBridgeStatus")
        # It does not take the bridge back by itself: the second keeps its connection
        # over several of the first's polls (every 500 ms here).
        held = world.bridge.editor_connected()["connectedAt"]
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            assert world.bridge.editor_connected()["connectedAt"] == held
            assert second.connected() and status() == "standing by"
            time.sleep(0.1)
    finally:
        second.close()
    # Once the second leaves, the first connects again.
    wait_for(first.connected, what="the first Neovim to come back")
    assert world.bridge.editor_connected()["connectedAt"] != held


def test_checkhealth(world):
    world.editor.cmd("checkhealth ide_bridge")
    text = "\n".join(world.editor.nv.current.buffer[:])
    assert "SHA-1 for the WebSocket handshake works" in text
    assert "bridge serving" in text
    assert "connected (port" in text


def test_visual_selection_reaches_agent(world):
    f = world.workspace / "sel.txt"
    f.write_text("hello world\nsecond line\nthird\n")
    agent = world.agent()
    world.editor.edit(f)
    # Select "world" on the first line with keys, like a user.
    world.editor.input("gg0wve")
    p = agent.wait_notification("selection_changed", lambda p: p["text"] == "world")
    assert p["filePath"] == str(f)
    assert p["selection"]["start"] == {"line": 0, "character": 6}
    assert p["selection"]["end"] == {"line": 0, "character": 11}
    assert p["selection"]["isEmpty"] is False
    # A linewise selection over two lines.
    world.editor.input("<Esc>jVj")
    p = agent.wait_notification("selection_changed", lambda p: p["text"].startswith("second"))
    assert p["text"] == "second line\nthird"
    assert p["selection"]["start"] == {"line": 1, "character": 0}
    assert p["selection"]["end"] == {"line": 2, "character": 5}
    world.editor.input("<Esc>")
    # getSelection (the tool) sees the same through getCurrentSelection's cache.
    sel = agent.call_json("getSelection")
    assert sel["file"] == str(f)


def test_ide_bridge_send_mentions(world):
    f = world.workspace / "mention.py"
    f.write_text("a = 1\nb = 2\nc = 3\nd = 4\n")
    a1 = world.agent("one")
    a2 = world.agent("two")
    world.editor.edit(f)
    # Two agents: the plugin asks which one gets it (or all), in the order /status lists.
    connected = [s for s in world.bridge.status()["sessions"] if s["connected"]]
    ids = [s["id"] for s in connected]
    one = next(s["id"] for s in connected if s.get("client", "").startswith("one "))
    # The choice goes through vim.ui.select (what pickers such as telescope replace);
    # here it answers with the entry naming agent "one" and records what was offered.
    world.editor.lua(
        """
        local wanted = ...
        vim.ui.select = function(items, opts, on_choice)
          local labels = vim.tbl_map(opts.format_item, items)
          _G.ide_bridge_offered = labels
          for i, label in ipairs(labels) do
            if label:find(wanted, 1, true) then return on_choice(items[i], i) end
          end
          on_choice(nil)
        end
        """,
        one,
    )
    world.editor.input("ggjVj:IdeBridgeSend<CR>")
    p = a1.wait_notification("at_mentioned")
    assert p == {"filePath": str(f), "lineStart": 1, "lineEnd": 2}
    offered = world.editor.lua("return _G.ide_bridge_offered")
    assert offered[0] == "all agents" and len(offered) == 3, offered
    assert all(any(i in label for label in offered) for i in ids), offered
    # Only the chosen agent: the other gets nothing (a later mention to all arrives
    # first for it, which proves nothing else was queued before).
    world.editor.input(":IdeBridgeSend all<CR>")
    q = a2.wait_notification("at_mentioned")
    assert q == {"filePath": str(f)}, "the other agent's first mention is the one sent to all"
    assert a1.wait_notification("at_mentioned", lambda p: "lineStart" not in p) == q


def test_active_file_change(world):
    f1 = world.workspace / "one.txt"
    f2 = world.workspace / "two.txt"
    f1.write_text("1\n")
    f2.write_text("2\n")
    agent = world.agent()
    world.editor.edit(f1)
    agent.wait_notification("selection_changed", lambda p: p["filePath"] == str(f1))
    world.editor.edit(f2)
    agent.wait_notification("selection_changed", lambda p: p["filePath"] == str(f2))


def test_pyflakes_diagnostics_reach_get_diagnostics(world):
    f = world.workspace / "bad.py"
    f.write_text("import os\n\nprint(undefined_name)\n")
    agent = world.agent()
    world.editor.edit(f)
    uri = "file://" + str(f)

    def found():
        res = agent.call("getDiagnostics", {"uri": uri})
        files = json.loads(res["content"][0]["text"])
        msgs = [d["message"] for fd in files for d in fd["diagnostics"]]
        return msgs if any("undefined name" in m for m in msgs) else None

    msgs = wait_for(found, timeout=20, interval=0.3, what="pyflakes diagnostics")
    assert any("imported but unused" in m for m in msgs)
    res = agent.call("getDiagnostics", {"uri": uri})
    diag = [d for fd in json.loads(res["content"][0]["text"]) for d in fd["diagnostics"] if "undefined name" in d["message"]][0]
    # 0-based for agents: line 3 of the file is line 2.
    assert diag["range"]["start"]["line"] == 2
    assert diag["severity"] in ("Error", "error", 1)
    # Fixing the file in the editor clears the error.
    world.editor.input("Gddggdd:w<CR>")

    def cleared():
        files = json.loads(agent.call("getDiagnostics", {"uri": uri})["content"][0]["text"])
        return not any("undefined name" in d["message"] for fd in files for d in fd["diagnostics"])

    wait_for(cleared, timeout=20, interval=0.3, what="diagnostics to clear")


def test_claude_connection_changed_shown(world):
    world.editor.lua(
        "vim.g.agents_seen = 0; vim.api.nvim_create_autocmd('User', {pattern='IdeBridgeAgents', callback=function(a) vim.g.agents_seen = a.data.agents end})"
    )
    a = world.agent()
    wait_for(lambda: world.editor.nv.vars["agents_seen"] == 1, what="IdeBridgeAgents 1")
    a.close()
    wait_for(lambda: world.editor.nv.vars["agents_seen"] == 0, what="IdeBridgeAgents 0")
    msgs = world.editor.nv.command_output("messages")
    assert "1 agent connected" in msgs


def test_ide_bridge_start(world):
    import json as _json
    import os
    import signal as _signal

    world.bridge.stop()
    wait_for(lambda: not world.editor.connected(), what="the editor to notice")
    out = world.editor.nv.command_output("IdeBridgeStatus")
    assert "disconnected" in out and ":IdeBridgeStart" in out
    world.editor.input(":IdeBridgeStart<CR>")

    def started():
        for p in (world.bridge.config_dir / "ide").glob("*.lock"):
            try:
                data = _json.loads(p.read_text())
            except ValueError:
                continue
            if data.get("pid") and data.get("pid") != world.bridge.proc.pid:
                return data
        return None

    lock = wait_for(started, what="a bridge started from Neovim")
    try:
        wait_for(world.editor.connected, what="the editor to connect to it")
        assert lock["workspaceFolders"] == [str(world.workspace)]
        # A second :IdeBridgeStart does not start another one.
        world.editor.input(":IdeBridgeStart<CR>")
        time.sleep(0.5)
        pids = {_json.loads(p.read_text())["pid"] for p in (world.bridge.config_dir / "ide").glob("*.lock")}
        assert pids == {lock["pid"]}
    finally:
        os.kill(lock["pid"], _signal.SIGTERM)


def test_file_claims_show_in_the_statusline_and_the_status(world):
    (world.workspace / "claimed.py").write_text("x = 1\n")
    agent = world.agent("holder")
    agent.call("claimFiles", {"paths": ["claimed.py"], "reason": "refactoring x"})

    def statusline():
        return world.editor.lua("return require('ide_bridge').statusline()")

    wait_for(lambda: "1 claim" in statusline(), what="bridge/claimsChanged in the statusline")
    assert "claimed by" not in statusline(), "this buffer is not claimed"
    world.editor.edit(world.workspace / "claimed.py")
    wait_for(lambda: "claimed by agent holder" in statusline(), what="the buffer's claim in the statusline")
    out = world.editor.nv.command_output("IdeBridgeStatus")
    assert "file claims: 1" in out and "claimed.py by agent holder" in out and "refactoring x" in out, out
    agent.call("releaseFiles", {})
    wait_for(lambda: "claim" not in statusline(), what="the release in the statusline")
