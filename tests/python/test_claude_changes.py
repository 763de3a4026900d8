"""Change review with the real Claude Code CLI, the pinned and the newest version: an
agent's own Edits (auto-accepted by a permission rule) land in its change set hunk by
hunk; undoing its second hunk restores exactly those lines, and the agent's next model
request carries the notice with the reason; a later edit over the first hunk makes its
undo decline and leaves the file as it is."""

import json
import os
import subprocess

from claude_pty import Claude, environment, submit, trust, wait_until
from conftest import call_over_mcp, http, running_bridge
from fake_model import FakeModel, text, tool_use

BRIDGE = os.environ.get("BRIDGE_BIN", "target/debug/ide-bridge")
API_KEY = "sk-ant-ide-bridge-changes-test-key-001"
BASE = "".join(f"{c} = {i}\n" for i, c in enumerate("abcdefghijkl", start=1))


def all_text(body):
    return json.dumps(body.get("messages") or [], ensure_ascii=False)


def tool_json(response):
    assert "result" in response, response
    return json.loads(response["result"]["content"][0]["text"])


def test_an_agents_own_edits_are_undone_hunk_by_hunk_and_it_is_told_why(tmp_path, cli):
    with running_bridge() as bridge:
        ws = bridge["workspace"]
        a_py = ws / "a.py"
        a_py.write_text(BASE)
        config = bridge["config_dir"]
        (config / "settings.json").write_text(json.dumps({"permissions": {
            "allow": ["mcp__ide-bridge", "Read", "Edit"], "defaultMode": "default",
            "disableAutoMode": "disable"}}))
        trust(config, ws, API_KEY)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("IDE_BRIDGE_", "CLAUDE"))}
        env.update({"CLAUDE_CONFIG_DIR": str(config), "HOME": str(tmp_path)})
        init = subprocess.run([BRIDGE, "init"], env=env, capture_output=True, text=True, check=False)
        assert init.returncode == 0, init.stderr

        script = [
            {"on": "prompt", "contains": "change a", "reply": tool_use("Read", {"file_path": str(a_py)})},
            {"on": "tool_result", "reply": tool_use("Edit", {"file_path": str(a_py), "old_string": "b = 2", "new_string": "b = 20"}, id="toolu_edit_1")},
            {"on": "tool_result", "reply": tool_use("Edit", {"file_path": str(a_py), "old_string": "k = 11", "new_string": "k = 110\nk2 = 1"}, id="toolu_edit_2")},
            {"on": "tool_result", "reply": text("changed a")},
            {"on": "prompt", "contains": "carry on", "reply": tool_use("Read", {"file_path": str(a_py)}, id="toolu_read_again")},
            {"on": "tool_result", "reply": text("carried on")},
        ]
        with FakeModel(script) as model:
            home = tmp_path / "home"
            home.mkdir()
            a = Claude(cli, ws, environment(home=home, config_dir=config, port=bridge["port"], api_key=API_KEY, model_url=model.url))
            try:
                def session():
                    for s in json.loads(http(bridge, "/status"))["sessions"]:
                        if s.get("clientPid") == a.pid and {"ide", "relay"} <= {c["kind"] for c in s["connections"]}:
                            return s
                    return None

                me = wait_until(session, "the CLI's IDE connection and relay", 90, a)
                submit(a, "change a")
                wait_until(lambda: "k2 = 1" in a_py.read_text(), "both Edits on disk", 90, a)

                def changes():
                    listed = tool_json(call_over_mcp(bridge["port"], bridge["token"], "listChanges", {"session": me["id"]}))["changes"]
                    return listed if len(listed) == 2 else None

                # Each Edit's change is learnt from the agent's next hook and its transcript.
                listed = wait_until(changes, "both Edits in the agent's change set", 90, a)
                assert [c["tool"] for c in listed] == ["Edit", "Edit"], listed
                assert listed[0]["hunks"][0]["old"] == ["b = 2\n"] and listed[0]["hunks"][0]["new"] == ["b = 20\n"], listed
                assert listed[1]["hunks"][0]["new"] == ["k = 110\n", "k2 = 1\n"], listed
                who = tool_json(call_over_mcp(bridge["port"], bridge["token"], "whoChanged", {"file": "a.py", "line": 2}))
                assert who["lines"][0]["session"] == me["id"], who

                # Undo the second hunk, with a reason: exactly its lines come back.
                report = tool_json(call_over_mcp(bridge["port"], bridge["token"], "undoChanges",
                                                 {"change": listed[1]["id"], "hunk": 0, "reason": "k stays eleven"}))
                assert len(report["undone"]) == 1 and report["declined"] == [], report
                assert a_py.read_text() == BASE.replace("b = 2\n", "b = 20\n")

                # The agent's next request carries the notice with the reason.
                submit(a, "carry on")
                wait_until(model.script_done, "the agent's next turn", 90, a)
                told = [b for b in model.conversation() if "k stays eleven" in all_text(b)]
                assert told, "no request carried the notice; the last one:\n" + all_text(model.conversation()[-1])[-3000:]
                assert "undid your change to lines 11–12 of a.py" in all_text(told[0])

                # A later edit over the first hunk: its undo declines, the file stays.
                by_hand = BASE.replace("b = 2\n", "b = 21\n")
                a_py.write_text(by_hand)
                report = tool_json(call_over_mcp(bridge["port"], bridge["token"], "undoChanges", {"change": listed[0]["id"]}))
                assert report["undone"] == [] and "changed these lines since" in report["declined"][0]["why"], report
                assert a_py.read_text() == by_hand
            finally:
                a.kill()
