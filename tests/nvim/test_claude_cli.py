"""The full loop with the real Claude Code CLI (the pinned and the newest version) and a
scripted model: the model asks for an edit, the CLI (connected with --ide) calls
openDiff, Neovim shows the diff, the user accepts with :w, and the CLI writes the file.

Needs the CLIs (scripts/test.sh installs them into .npm-test and .npm-test-latest and
names them in CLAUDE_CLI and CLAUDE_CLI_LATEST; see claude_pty.claude_cli) and the fake
model of tests/python."""

import claude_pty  # tests/python, which conftest puts on sys.path
from claude_pty import Claude, environment, manual_mode, submit, trust
from conftest import wait_for
from fake_model import FakeModel, text, tool_use

API_KEY = "sk-ant-ide-bridge-nvim-test-key-0001"
cli = claude_pty.cli  # the fixture: the pinned and the newest CLI in turn


def test_claude_cli_edit_accepted_in_neovim(world, cli):
    w = world
    f = w.workspace / "app.py"
    f.write_text("def answer():\n    return 41\n")
    config_dir = w.bridge.config_dir
    trust(config_dir, w.workspace, API_KEY)
    # The Edit asks (the newest CLI would start in auto mode), so the diff is shown.
    manual_mode(config_dir)
    script = [
        {"on": "prompt", "contains": "fix the answer", "reply": tool_use("Read", {"file_path": str(f)})},
        {
            "on": "tool_result",
            "reply": tool_use("Edit", {"file_path": str(f), "old_string": "return 41", "new_string": "return 42"}, id="toolu_edit_1"),
        },
        {"on": "tool_result", "reply": text("All done.")},
    ]
    with FakeModel(script) as model:
        env = environment(
            base=w.env, home=w.env["HOME"], config_dir=config_dir, port=w.bridge.port, api_key=API_KEY, model_url=model.url
        )
        claude = Claude(cli, w.workspace, env)
        try:

            def cli_ready():
                for s in w.bridge.status()["sessions"]:
                    if (s.get("client") or "").startswith("claude-code") and s["initialized"] and s.get("clientPid") == claude.pid:
                        return s
                return None

            wait_for(cli_ready, timeout=60, what="the CLI to connect")
            submit(claude, "please fix the answer in app.py")
            try:
                wait_for(
                    lambda: w.editor.lua("return vim.b.ide_bridge_diff ~= nil and vim.wo.diff"),
                    timeout=60,
                    interval=0.2,
                    what="the CLI's diff in Neovim",
                )
            except AssertionError as e:
                raise AssertionError("no diff; the CLI showed:\n" + claude.text()[-3000:]) from e
            proposed = w.editor.lua("return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n')")
            assert "return 42" in proposed
            # The user accepts with :w; the CLI writes the file.
            w.editor.input(":w<CR>")
            wait_for(lambda: "return 42" in f.read_text(), timeout=30, what="the CLI to write the file")
            assert f.read_text() == "def answer():\n    return 42\n"
            wait_for(model.script_done, timeout=30, what="the model's script to finish")
            edited = next(r for r in model.tool_results() if r["tool_use_id"] == "toolu_edit_1")
            assert not edited.get("is_error"), edited
            assert "updated" in FakeModel.result_text(edited), edited
        finally:
            claude.kill()
