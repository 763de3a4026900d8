"""The hooks with the real Claude Code CLI, the pinned and the newest version: after
`ide-bridge init`, two interactive CLIs (under a pty, each with its own scripted model)
share one bridge. A claims src/a.py; B's own Edit of it does not happen and B's model is
told who holds it and why; after A releases it, B's Edit goes through. B's native Read
and Edit are in the timeline under B's session (the session of B's IDE connection).
B reads b.py, A edits it, and B's next request carries the notice once. A done-gate
whose check fails keeps B working once with the failure as the reason; after the fix B
stops, with no loop."""

import json
import os
import subprocess
import urllib.request

from claude_pty import Claude, environment, submit, trust, wait_until
from conftest import running_bridge
from fake_model import FakeModel, mcp, text, tool_use

BRIDGE = os.environ.get("BRIDGE_BIN", "target/debug/ide-bridge")
API_KEY = "sk-ant-ide-bridge-hooks-test-key-00001"


def status(bridge):
    req = urllib.request.Request(
        f"http://127.0.0.1:{bridge['port']}/status",
        headers={"Authorization": f"Bearer {bridge['token']}"},
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        return json.loads(resp.read())


def git(cwd, *args):
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"},
    )


def results_of(model, tool_use_id):
    return [r for r in model.tool_results() if r.get("tool_use_id") == tool_use_id]


def all_text(body):
    return json.dumps(body.get("messages") or [])


def test_two_agents_claims_notices_and_the_done_gate(tmp_path, cli):
    policy = tmp_path / "automation.json"
    policy.write_text(json.dumps({
        "onAgentStop": {
            "action": "command", "command": "git",
            "args": ["rev-parse", "--verify", "-q", "refs/tags/ok"], "maxHolds": 2,
        }
    }))
    with running_bridge("--set", f"automation.policy={policy}") as bridge:
        ws = bridge["workspace"]
        (ws / "src" / "a.py").write_text("def parse():\n    return 1\n")
        (ws / "b.py").write_text("B = 1\n")
        (ws / "c.py").write_text("C = 1\n")
        git(ws, "init", "-q", "-b", "main")
        git(ws, "add", "-A")
        git(ws, "commit", "-q", "-m", "start")
        git(ws, "tag", "ok")
        config = bridge["config_dir"]
        (config / "settings.json").write_text(json.dumps({"permissions": {
            "allow": ["mcp__ide-bridge", "Read", "Edit", "Write"], "defaultMode": "default",
            # The newest CLI offers to switch to auto mode, which hides the input box.
            "disableAutoMode": "disable"}}))
        trust(config, ws, API_KEY)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("IDE_BRIDGE_", "CLAUDE"))}
        env.update({"CLAUDE_CONFIG_DIR": str(config), "HOME": str(tmp_path)})
        init = subprocess.run([BRIDGE, "init"], env=env, capture_output=True, text=True, check=False)
        assert init.returncode == 0, init.stderr
        assert "Installed hooks" in init.stdout, init.stdout
        settings = json.loads((config / "settings.json").read_text())
        assert settings["permissions"]["defaultMode"] == "default", "init keeps the other settings"
        assert "PreToolUse" in settings["hooks"]

        a_py = str(ws / "src" / "a.py")
        edit_a = {"file_path": a_py, "old_string": "return 1", "new_string": "return 2"}
        script_a = [
            {"on": "prompt", "contains": "claim the parser", "reply": mcp("claimFiles", {"paths": ["src/a.py"], "reason": "refactoring the parser"})},
            {"on": "tool_result", "reply": text("claimed")},
            {"on": "prompt", "contains": "release it", "reply": mcp("releaseFiles", {})},
            {"on": "tool_result", "reply": text("released")},
            {"on": "prompt", "contains": "change b", "reply": tool_use("Read", {"file_path": str(ws / "b.py")})},
            {"on": "tool_result", "reply": tool_use("Edit", {"file_path": str(ws / "b.py"), "old_string": "B = 1", "new_string": "B = 2"}, id="toolu_a_edit_b")},
            {"on": "tool_result", "reply": text("changed")},
        ]

        def fix_and_say_so(body):
            git(ws, "tag", "ok")
            return text("fixed the check")

        script_b = [
            {"on": "prompt", "contains": "edit the parser", "reply": tool_use("Read", {"file_path": a_py})},
            {"on": "tool_result", "reply": tool_use("Edit", edit_a, id="toolu_b_edit_1")},
            {"on": "tool_result", "reply": text("blocked")},
            {"on": "prompt", "contains": "try again", "reply": tool_use("Edit", edit_a, id="toolu_b_edit_2")},
            {"on": "tool_result", "reply": text("edited")},
            {"on": "prompt", "contains": "read b", "reply": tool_use("Read", {"file_path": str(ws / "b.py")})},
            {"on": "tool_result", "reply": text("read")},
            {"on": "prompt", "contains": "carry on", "reply": tool_use("Read", {"file_path": str(ws / "c.py")}, id="toolu_b_read_c")},
            {"on": "tool_result", "reply": text("carried on")},
            {"on": "prompt", "contains": "finish up", "reply": text("finished")},
            {"on": lambda body: "done-gate" in all_text(body)[-4000:], "reply": fix_and_say_so},
        ]
        with FakeModel(script_a) as model_a, FakeModel(script_b) as model_b:
            home_a, home_b = tmp_path / "home-a", tmp_path / "home-b"
            home_a.mkdir()
            home_b.mkdir()
            a = Claude(cli, ws, environment(home=home_a, config_dir=config, port=bridge["port"], api_key=API_KEY, model_url=model_a.url))
            b = Claude(cli, ws, environment(home=home_b, config_dir=config, port=bridge["port"], api_key=API_KEY, model_url=model_b.url))
            try:
                def session_of(claude):
                    for s in status(bridge)["sessions"]:
                        kinds = {c["kind"] for c in s["connections"]}
                        if s.get("clientPid") == claude.pid and {"ide", "relay"} <= kinds:
                            return s
                    return None

                sa = wait_until(lambda: session_of(a), "A's IDE connection and relay", 90, a)
                sb = wait_until(lambda: session_of(b), "B's IDE connection and relay", 90, b)
                a_label = f"claude-code {sa['id']}"

                # A claims src/a.py.
                submit(a, "claim the parser")
                claims = wait_until(lambda: status(bridge)["claims"]["held"], "A's claim", 90, a)
                assert [c["patterns"] for c in claims] == [["src/a.py"]], claims
                assert claims[0]["session"] == sa["id"]

                # B's own Edit of it does not happen; B's model reads who holds it and why.
                submit(b, "edit the parser")
                refused = wait_until(lambda: results_of(model_b, "toolu_b_edit_1"), "B's Edit result", 90, b)[0]
                said = FakeModel.result_text(refused)
                assert "refactoring the parser" in said and a_label in said, said
                assert (ws / "src" / "a.py").read_text() == "def parse():\n    return 1\n"

                # A releases; B's Edit goes through.
                submit(a, "release it")
                wait_until(lambda: not status(bridge)["claims"]["held"], "A's release", 90, a)
                submit(b, "try again")
                wait_until(lambda: "return 2" in (ws / "src" / "a.py").read_text(), "B's edit on disk", 90, b)

                # B's native calls are in the timeline under B's session (with its IDE connection).
                def native_of(session, call):
                    entries = status(bridge)["recentActivity"]
                    calls = [(e["tool"], e["summary"]) for e in entries if e.get("native") and e["sessionId"] == session]
                    return calls if call in calls else None

                # Each entry is kept when the call ends (read from the CLI's transcript), so the
                # Read may land after the Edit's refusal: wait for both.
                calls = wait_until(
                    lambda: (c := native_of(sb["id"], ("Edit", "src/a.py"))) and ("Read", "src/a.py") in c and c,
                    lambda: "B's native Read and Edit in the timeline; native calls seen: "
                    + repr([(e["sessionId"], e["tool"], e["summary"]) for e in status(bridge)["recentActivity"] if e.get("native")]),
                    30, b)

                # B reads b.py, A edits it: B's next request carries the notice, once.
                submit(b, "read b")
                wait_until(lambda: native_of(sb["id"], ("Read", "b.py")), "B's read of b.py", 90, b)
                submit(a, "change b")
                wait_until(lambda: results_of(model_a, "toolu_a_edit_b"), "A's edit of b.py", 90, a)
                wait_until(lambda: "B = 2" in (ws / "b.py").read_text(), "A's edit on disk", 30, a)
                # The bridge learns how A's Edit ended from A's next hook (the end of its
                # turn) and its transcript.
                wait_until(lambda: native_of(sa["id"], ("Edit", "b.py")), "A's edit in the timeline", 90, a)
                def stops_of(session):
                    return [e for e in status(bridge)["recentActivity"] if e.get("event") == "agent_stopped" and e.get("sessionId") == session]

                stopped = len(stops_of(sb["id"]))
                submit(b, "carry on")
                wait_until(lambda: results_of(model_b, "toolu_b_read_c"), "B's next call", 90, b)
                wait_until(lambda: len(stops_of(sb["id"])) > stopped, "the end of B's turn", 90, b)
                after = [body for body in model_b.conversation() if "toolu_b_read_c" in all_text(body)]
                assert after, "the request carrying B's Read of c.py"
                notice = all_text(after[0])
                assert "b.py (by " + a_label in notice, notice[-3000:]
                assert notice.count("another agent changed") == 1, notice[-3000:]

                # The done-gate: the check fails, B is kept working once with the reason;
                # the model "fixes" it, B stops; no loop.
                git(ws, "tag", "-d", "ok")
                submit(b, "finish up")
                wait_until(model_b.script_done, "B's held stop and its fix", 90, b)
                held = [body for body in model_b.conversation() if "done-gate" in all_text(body)[-4000:]]
                assert held and "git rev-parse --verify -q refs/tags/ok" in all_text(held[0]), held
                record = wait_until(
                    lambda: next((h for h in (status(bridge)["automation"] or {}).get("hooks", []) if h["name"] == "onAgentStop" and (h.get("lastFired") or {}).get("result") == "passed"), None),
                    "B's second stop passing the gate", 30, b,
                )
                assert record["fired"] >= 2, record
                stops = stops_of(sb["id"])
                assert sum("kept working" in e["detail"] for e in stops) == 1, [(e["id"], e["detail"]) for e in stops]
            finally:
                a.kill()
                b.kill()


def test_where_no_bridge_runs_the_installed_hooks_change_nothing(tmp_path, cli):
    """`claude -p` in a directory no bridge serves (and that is no project, so none is
    started), with the hooks installed: every tool call runs as without them, and nothing
    about hooks shows."""
    ws = tmp_path / "scratch"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    config = tmp_path / "claude"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Read", "Edit", "Bash(true)"]}}))
    trust(config, ws, API_KEY)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IDE_BRIDGE_", "CLAUDE", "ANTHROPIC"))}
    env.update({"CLAUDE_CONFIG_DIR": str(config), "HOME": str(tmp_path)})
    init = subprocess.run([BRIDGE, "init"], env=env, capture_output=True, text=True, check=False)
    assert init.returncode == 0 and "Installed hooks" in init.stdout, init
    script = [
        {"on": "prompt", "reply": tool_use("Read", {"file_path": str(ws / "a.txt")}, id="toolu_read")},
        {"on": "tool_result", "reply": tool_use("Edit", {"file_path": str(ws / "a.txt"), "old_string": "one", "new_string": "two"}, id="toolu_edit")},
        {"on": "tool_result", "reply": tool_use("Bash", {"command": "true", "description": "nothing"}, id="toolu_bash")},
        {"on": "tool_result", "reply": text("all done")},
    ]
    with FakeModel(script) as model:
        env.update({"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": model.url, "DISABLE_AUTOUPDATER": "1",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
        out = subprocess.run([cli, "-p", "go"], cwd=ws, env=env, capture_output=True, text=True, timeout=120, check=False)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == "all done", out.stdout
        assert "hook" not in (out.stdout + out.stderr).lower(), out
        results = {r["tool_use_id"]: r for r in model.tool_results()}
        assert set(results) == {"toolu_read", "toolu_edit", "toolu_bash"}, results
        assert not any(r.get("is_error") for r in results.values()), results
        said = json.dumps(model.conversation()[-1]["messages"]).lower()
        for trace in ("hook error", "hook additional context", "hook feedback", "blocking error"):
            assert trace not in said, trace
    assert (ws / "a.txt").read_text() == "two\n"
    assert not list((config / "ide").glob("*.lock")), "no bridge was started"
