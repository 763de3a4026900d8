"""Language features through the bridge's tools, answered by pylsp via vim.lsp."""

import json
import os
import signal

from conftest import wait_for

SOURCE = '''def greet(name):
    """Say hello to someone."""
    return "hi " + name


greet("a")
greet("b")
'''


def setup_file(world):
    f = world.workspace / "hello.py"
    f.write_text(SOURCE)
    agent = world.agent()
    world.editor.edit(f)
    wait_for(
        lambda: world.editor.lua("return #vim.lsp.get_clients({bufnr = 0}) > 0 and vim.lsp.get_clients({bufnr=0})[1].initialized"),
        timeout=20,
        what="pylsp to attach",
    )
    return f, agent


def test_definition_references_hover(world):
    f, agent = setup_file(world)
    # 1-based positions: line 6, column 1 is the call `greet("a")`.
    defs = agent.call_json("goToDefinition", {"file": str(f), "line": 6, "column": 1})
    assert defs[0]["file"] == str(f)
    assert defs[0]["line"] == 1
    assert defs[0]["column"] == 5

    refs = agent.call_json("findReferences", {"file": str(f), "line": 1, "column": 5})
    lines = sorted(r["line"] for r in refs["references"])
    assert refs["count"] == 3
    assert lines == [1, 6, 7]

    hover = agent.call_json("getHover", {"file": str(f), "line": 6, "column": 2})
    text = "\n".join(hover["contents"])
    assert "Say hello to someone." in text
    assert "greet" in text


def test_lsp_on_file_not_open(world):
    f = world.workspace / "other.py"
    f.write_text("def twice(x):\n    return x * 2\n\n\ntwice(3)\n")
    agent = world.agent()
    # The file is not open in Neovim: the plugin loads it and waits for pylsp.
    defs = agent.call_json("goToDefinition", {"file": str(f), "line": 5, "column": 1}, timeout=30)
    assert defs[0]["line"] == 1
    # Loaded, not shown: it stays out of the person's buffer list.
    listed = world.editor.lua("return vim.tbl_map(function(b) return b.name end, vim.fn.getbufinfo({buflisted = 1}))")
    assert not any(name.endswith("/other.py") for name in listed), listed


def test_lsp_on_a_file_a_crashed_vim_left_a_swap_file_of(world):
    from conftest import Editor

    f = world.workspace / "shared.py"
    f.write_text("def thrice(x):\n    return x * 3\n\n\nthrice(3)\n")
    # Another Neovim had it open (the same state directory for swap files).
    other_dir = world.tmp / "other-vim"
    other_dir.mkdir()
    other = Editor(other_dir, world.workspace, {**world.nvim_env, "IDE_BRIDGE_TEST_NO_CONNECT": "1"})
    try:
        # (Headless Neovim starts without swap files; a person's has them.)
        for vim in (other, world.editor):
            vim.lua("vim.o.swapfile = true")
        other.edit(f)
        # Unsaved changes there: its swap file is written.
        other.lua("vim.api.nvim_buf_set_lines(0, 0, 0, false, {'# being edited'})")
        other.cmd("preserve")
        assert other.lua("return vim.fn.filereadable(vim.fn.swapname('%'))") == 1
        # It crashes: the swap file stays, naming a process that is gone.
        os.kill(other.lua("return vim.fn.getpid()"), signal.SIGKILL)
        agent = world.agent()
        defs = agent.call_json("goToDefinition", {"file": str(f), "line": 5, "column": 1}, timeout=30)
        assert defs[0]["line"] == 1
        # Loaded as "edit anyway" would: not read-only.
        assert world.editor.lua(f"return vim.bo[vim.fn.bufnr({json.dumps(str(f))})].readonly") is False
    finally:
        other.close()


def test_symbols_rename_format(world):
    f, agent = setup_file(world)
    syms = agent.call_json("getDocumentSymbols", {"file": str(f)})
    assert "greet" in [s["name"] for s in syms["symbols"]]
    found = agent.call_json("searchSymbols", {"query": "gree"})
    assert any(s["name"] == "greet" for s in found["symbols"])

    renamed = agent.call_json("renameSymbol", {"file": str(f), "line": 1, "column": 5, "newName": "welcome"})
    assert renamed["success"] is True
    # pylsp (jedi) answers with one whole-file edit.
    assert renamed["totalEdits"] >= 1
    assert renamed["affectedFiles"] == [str(f)]
    content = agent.call_json("getFileContent", {"file": str(f)})
    assert content["content"].count("welcome") == 3
    assert content["isDirty"] is True
    assert json.loads(agent.call("checkDocumentDirty", {"filePath": str(f)})["content"][0]["text"])["isDirty"] is True


def test_ide_capability_converts_the_selection_to_a_symbol(world):
    """ideCapability with Neovim connected: the word the person selected becomes the
    symbol whose references are listed (answered by pylsp through vim.lsp)."""
    f, agent = setup_file(world)
    # Select the `greet` of the call on line 6, with keys, like a user.
    world.editor.input("6G0ve")
    agent.wait_notification("selection_changed", lambda p: p["text"] == "greet")
    program = {"findReferences": {"symbol": {"getSelection": {}}}}
    res = agent.call("ideCapability", {"request": program})
    text = res["content"][0]["text"]
    assert not res.get("isError"), text
    for line in ("hello.py:1: def greet(name):", 'hello.py:6: greet("a")', 'hello.py:7: greet("b")'):
        assert line in text, text
    world.editor.input("<Esc>")
