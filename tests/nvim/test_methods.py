"""Every method of the editor extension protocol, called through the bridge's agent
tools: each is answered by Neovim, or refused at once with the documented
"not supported in Neovim" (or "disabled") error. openDiff is in test_diff.py;
getDiagnostics is served from what the editor pushed (test_core.py)."""

import json
import re
import time

import pytest

from conftest import wait_for

SOURCE = '''import sys
import os


def greet(name):
    """Say hello."""
    return "hi " + name  # AI: make this friendlier


class Base:
    pass


class Child(Base):
    pass


greet("a")
'''


@pytest.fixture(scope="module")
def w(module_world):
    world = module_world
    f = world.workspace / "code.py"
    f.write_text(SOURCE)
    (world.workspace / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    world.file = f
    world.main_agent = world.agent("methods")
    world.editor.edit(f)
    wait_for(
        lambda: world.editor.lua("local c = vim.lsp.get_clients({bufnr = 0})[1]; return c ~= nil and c.initialized"),
        timeout=20,
        what="pylsp",
    )
    return world


def call(w, tool, args=None, timeout=30):
    res = w.main_agent.call(tool, args or {}, timeout=timeout)
    text = res["content"][0].get("text", "") if res["content"] else ""
    return res.get("isError", False), text


def ok_json(w, tool, args=None, timeout=30):
    err, text = call(w, tool, args, timeout)
    assert not err, f"{tool}: {text}"
    return json.loads(text) if text[:1] in "[{" else text


def refused(w, tool, args, pattern):
    start = time.monotonic()
    err, text = call(w, tool, args)
    assert err, f"{tool} should be refused, got {text}"
    assert re.search(pattern, text), text
    # Refused at once, not after the bridge's request timeout.
    assert time.monotonic() - start < 3


def path(w, name="code.py"):
    return str(w.workspace / name)


# ------------------------------------------------------------------ LSP


def test_goToDefinition(w):
    assert ok_json(w, "goToDefinition", {"file": path(w), "line": 18, "column": 1})[0]["line"] == 5


def test_findReferences(w):
    assert ok_json(w, "findReferences", {"file": path(w), "line": 5, "column": 5})["count"] == 2


def test_getHover(w):
    assert "Say hello." in "\n".join(ok_json(w, "getHover", {"file": path(w), "line": 18, "column": 2})["contents"])


def test_getCodeActions(w):
    r = ok_json(w, "getCodeActions", {"file": path(w), "startLine": 1, "startColumn": 1, "endLine": 2, "endColumn": 1})
    assert isinstance(r["actions"], list)


def test_applyCodeAction(w):
    r = ok_json(w, "applyCodeAction", {"file": path(w), "startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 5, "actionTitle": "No such action"})
    assert r["applied"] is False and "no code action titled" in r["error"]


def test_renameSymbol(w):
    other = w.workspace / "rename_me.py"
    other.write_text("value = 1\nprint(value)\n")
    r = ok_json(w, "renameSymbol", {"file": str(other), "line": 1, "column": 1, "newName": "amount"})
    assert r["success"] is True


def test_searchSymbols(w):
    r = ok_json(w, "searchSymbols", {"query": "Chi"})
    assert any(s["name"] == "Child" for s in r["symbols"])


def test_getDocumentSymbols(w):
    names = [s["name"] for s in ok_json(w, "getDocumentSymbols", {"file": path(w)})["symbols"]]
    assert {"greet", "Base", "Child"} <= set(names)


def test_getCallHierarchy(w):
    # pylsp has no call hierarchy: a clear, immediate error naming the method.
    refused(w, "getCallHierarchy", {"file": path(w), "line": 5, "column": 5}, r"do not support textDocument/prepareCallHierarchy")


# ------------------------------------------------------------------ Terminal


def test_createTerminal(w):
    r = ok_json(w, "createTerminal", {"name": "build"})
    assert r["success"] is True and r["name"].endswith("build")
    w.term = r["name"]


def test_listTerminals(w):
    r = ok_json(w, "listTerminals")
    assert w.term in [t["name"] for t in r["terminals"]]


def test_sendTerminalCommand(w):
    assert ok_json(w, "sendTerminalCommand", {"name": "build", "text": "echo sent-$((40+2))"})["success"] is True


def test_waitForTerminalOutput(w):
    time.sleep(0.5)  # the output is printed before the wait starts: still found
    r = ok_json(w, "waitForTerminalOutput", {"name": "build", "pattern": "sent-\\d+", "timeoutMs": 10000})
    # The typed line itself does not match (it holds `$((40+2))`); the output does.
    assert r["matched"] is True and "sent-42" in r["matchedLine"]


def test_waitForTerminalOutput_capped(w):
    # Waits longer than max_wait_ms are cut to it and answered (matched: false).
    w.editor.lua("require('ide_bridge').config.max_wait_ms = 1500")
    try:
        start = time.monotonic()
        r = ok_json(w, "waitForTerminalOutput", {"name": "build", "pattern": "never-printed", "timeoutMs": 60000})
        assert r["matched"] is False and r["timedOut"] is True
        assert time.monotonic() - start < 5
    finally:
        w.editor.lua("require('ide_bridge').config.max_wait_ms = require('ide_bridge').defaults.max_wait_ms")


def test_getTerminalOutput(w):
    r = ok_json(w, "getTerminalOutput", {"name": "build", "lines": 50})
    assert any("sent-42" in line for line in r["lines"])


def test_executeInTerminal(w):
    r = ok_json(w, "executeInTerminal", {"name": "build", "command": "echo out-1; echo out-2; false", "timeoutMs": 10000})
    assert r["exitCode"] == 1 and r["success"] is False
    assert r["output"].splitlines() == ["out-1", "out-2"]
    r = ok_json(w, "executeInTerminal", {"name": "build", "command": "true", "timeoutMs": 10000})
    assert r["exitCode"] == 0


def test_executeInTerminal_waits_as_long_as_its_timeout_says(w):
    # Past the plugin's 9 s default and near the bridge's 10 s request timeout: the
    # agent's timeoutMs holds on both sides (the plugin cut it at 9 s: timedOut).
    r = ok_json(w, "executeInTerminal", {"name": "build", "command": "sleep 9.5; echo late", "timeoutMs": 20000})
    assert r.get("timedOut") is not True and r["exitCode"] == 0, r
    assert r["output"].splitlines() == ["late"], r


def test_disposeTerminal(w):
    assert ok_json(w, "disposeTerminal", {"name": "build"})["success"] is True
    assert w.term not in [t["name"] for t in ok_json(w, "listTerminals")["terminals"]]


# ------------------------------------------------------------------ Debug (no nvim-dap installed)


@pytest.mark.parametrize(
    "tool,args",
    [
        ("getDebugState", {}),
        ("evaluateInDebugger", {"expression": "1+1"}),
        ("setDebugBreakpoints", {"file": "code.py", "breakpoints": [{"line": 6}]}),
        ("startDebugging", {}),
        ("stopDebugging", {}),
    ],
)
def test_debug_without_dap(w, tool, args):
    if "file" in args:
        args = dict(args, file=path(w))
    refused(w, tool, args, r"not supported in Neovim.*nvim-dap")


# ------------------------------------------------------------------ Files


def test_getOpenFiles(w):
    tabs = ok_json(w, "getOpenEditors")["tabs"]
    assert any(t["fileName"] == path(w) and t["isActive"] for t in tabs)


def test_isDirty(w):
    assert ok_json(w, "checkDocumentDirty", {"filePath": path(w)})["isDirty"] is False


def test_openFile(w):
    assert ok_json(w, "openFile", {"filePath": path(w, "notes.txt"), "startLine": 2}).startswith("Opened file")
    assert w.editor.lua("return vim.api.nvim_buf_get_name(0)") == path(w, "notes.txt")
    assert w.editor.lua("return vim.api.nvim_win_get_cursor(0)[1]") == 2
    # The CLI's selection arguments select the text they name (notes.txt holds
    # alpha, beta, gamma): from "et" in beta to the end of "gam".
    ok_json(w, "openFile", {"filePath": path(w, "notes.txt"), "startText": "et", "endText": "gam"})
    assert w.editor.mode() == "v"
    start = w.editor.lua("local p = vim.fn.getpos('v'); return {p[2], p[3]}")
    end = w.editor.lua("return vim.api.nvim_win_get_cursor(0)")
    assert (start, end) == ([2, 2], [3, 2]), (start, end)
    w.editor.input("<Esc>")
    # In the background: opened, the person's window keeps its file.
    other = w.workspace / "elsewhere.txt"
    other.write_text("x\n")
    ok_json(w, "openFile", {"filePath": str(other), "makeFrontmost": False})
    assert w.editor.lua("return vim.api.nvim_buf_get_name(0)") == path(w, "notes.txt")
    assert w.editor.lua(f"return vim.fn.bufloaded({json.dumps(str(other))})") == 1


def test_getFileContent(w):
    w.editor.input("ggAX<Esc>")  # an unsaved change in notes.txt
    r = ok_json(w, "getFileContent", {"file": path(w, "notes.txt")})
    assert r["content"] == "alphaX\nbeta\ngamma\n" and r["isDirty"] is True


def test_saveFile(w):
    r = ok_json(w, "saveDocument", {"filePath": path(w, "notes.txt")})
    assert r["saved"] is True
    assert (w.workspace / "notes.txt").read_text() == "alphaX\nbeta\ngamma\n"


def test_closeTab(w):
    r = ok_json(w, "closeTab", {"file": path(w, "notes.txt")})
    assert r["success"] is True
    assert w.editor.lua(f"return vim.fn.bufloaded('{path(w, 'notes.txt')}')") == 0


def test_createFile(w):
    r = ok_json(w, "createFile", {"filePath": path(w, "made/new.txt"), "content": "made\n"})
    assert r["source"] == "editor" and r["created"] is True
    assert (w.workspace / "made/new.txt").read_text() == "made\n"
    # Overwritten, it was not created.
    r = ok_json(w, "createFile", {"filePath": path(w, "made/new.txt"), "content": "made\n", "overwrite": True})
    assert r["source"] == "editor" and r["created"] is False, r


def test_renameFile(w):
    r = ok_json(w, "renameFile", {"oldPath": path(w, "made/new.txt"), "newPath": path(w, "made/renamed.txt")})
    assert r["source"] == "editor" and r["renamed"] is True
    assert (w.workspace / "made/renamed.txt").exists()


def test_deleteFile(w):
    r = ok_json(w, "deleteFile", {"filePath": path(w, "made/renamed.txt")})
    assert r["source"] == "editor" and r["deleted"] is True
    assert not (w.workspace / "made/renamed.txt").exists()


def test_getWorkspaceFolders(w):
    r = ok_json(w, "getWorkspaceFolders")
    assert r["folders"][0]["path"] == str(w.workspace)


# ------------------------------------------------------------------ Text


def test_editText(w):
    f = w.workspace / "edit.txt"
    f.write_text("one two three\nfour\n")
    r = ok_json(
        w,
        "editText",
        {
            "filePath": str(f),
            "edits": [
                {"type": "replace", "line": 1, "column": 5, "endLine": 1, "endColumn": 8, "text": "TWO"},
                {"type": "insert", "line": 2, "column": 1, "text": ">> "},
                {"type": "delete", "line": 1, "column": 9, "endLine": 1, "endColumn": 14},
            ],
        },
    )
    assert r["source"] == "editor" and r["editCount"] == 3 and r["saved"] is True
    assert f.read_text() == "one TWO \n>> four\n"


def test_replaceBlock(w):
    f = w.workspace / "edit.txt"
    r = ok_json(w, "replaceBlock", {"filePath": str(f), "oldContent": "TWO \n>> four", "newContent": "2\n4"})
    assert r["source"] == "editor" and r["saved"] is True
    assert f.read_text() == "one 2\n4\n"


# ------------------------------------------------------------------ Code actions


def test_formatDocument(w):
    # pylsp formats only with autopep8/yapf installed; either answer is immediate.
    err, text = call(w, "formatDocument", {"file": path(w)})
    assert (not err and json.loads(text)["success"]) or "do not support textDocument/formatting" in text


def test_fixAllLintErrors(w):
    assert ok_json(w, "fixAllLintErrors", {"file": path(w)})["success"] is True


def test_organizeImports(w):
    assert ok_json(w, "organizeImports", {"file": path(w)})["success"] is True


# ------------------------------------------------------------------ Other


def test_getSelection(w):
    w.editor.edit(path(w))
    w.editor.input("<Esc>5GwveE")
    wait_for(lambda: w.editor.mode() == "v")
    sel = ok_json(w, "getSelection")
    w.editor.input("<Esc>")
    assert sel["file"] == path(w) and sel["selectedText"] == "greet(name):"
    assert (sel["startLine"], sel["startColumn"], sel["endLine"], sel["endColumn"]) == (5, 5, 5, 17)


def test_getDiagnostics(w):
    """The plugin's own handler (the bridge answers agents from what it pushed): the
    file's diagnostics, as pushed."""
    w.editor.edit(path(w))
    w.editor.lua(
        "local ns = vim.api.nvim_create_namespace('test-diag');"
        "vim.diagnostic.set(ns, vim.fn.bufnr(...), {{lnum = 1, col = 0, message = 'from the test', severity = 1}})",
        path(w),
    )
    answer = w.editor.lua("return require('ide_bridge.client').handlers()['getDiagnostics']({file = ...})", path(w))
    assert answer[0]["file"] == path(w), answer
    assert [d["message"] for d in answer[0]["diagnostics"]] == ["from the test"], answer
    assert answer[0]["diagnostics"][0]["severity"] == "error"


def test_getAIComments(w):
    comments = ok_json(w, "getAIComments")
    c = [c for c in comments if c["file"] == path(w)][0]
    assert c["line"] == 7 and c["comment"] == "make this friendlier" and c["syntax"] == "#"


def test_watchFiles_and_unwatch(w):
    w.editor.lua("vim.g.seen_changes = {}")
    r = ok_json(w, "watchFiles", {"id": "py", "pattern": "**/*.py"})
    assert r["watching"] is True
    (w.workspace / "watched.py").write_text("x = 1\n")
    time.sleep(0.5)
    r = ok_json(w, "unwatchFiles", {"id": "py"})
    assert r["unwatched"] is True


def test_setDecorations(w):
    r = ok_json(w, "setDecorations", {"id": "review", "file": path(w), "decorations": [{"startLine": 5, "endLine": 6, "style": "warning", "message": "look here"}]})
    assert r["applied"] == 1
    marks = w.editor.lua(
        "local ns = vim.api.nvim_get_namespaces()['ide_bridge_deco_review'];"
        "return #vim.api.nvim_buf_get_extmarks(vim.fn.bufnr(...), ns, 0, -1, {})",
        path(w),
    )
    assert marks == 2


def test_clearDecorations(w):
    assert ok_json(w, "clearDecorations", {"id": "review"})["cleared"] == 1


def test_writeClipboard(w):
    assert ok_json(w, "writeClipboard", {"text": "from the agent"})["written"] is True
    assert w.editor.lua("return vim.fn.getreg('\"')") == "from the agent"


def test_readClipboard(w):
    w.editor.lua("vim.fn.setreg('\"', 'from the user')")
    assert ok_json(w, "readClipboard")["text"] == "from the user"


def test_getInlayHints(w):
    refused(w, "getInlayHints", {"file": path(w), "startLine": 1, "endLine": 10}, r"do not support textDocument/inlayHint")


def test_getTypeHierarchy(w):
    refused(w, "getTypeHierarchy", {"file": path(w), "line": 14, "column": 7}, r"do not support textDocument/prepareTypeHierarchy")


def test_getWorkspaceSettings(w):
    r = ok_json(w, "getWorkspaceSettings", {"section": "tabstop"})
    assert r["settings"]["tabstop"] == w.editor.lua("return vim.o.tabstop")


def test_setWorkspaceSetting(w):
    assert ok_json(w, "setWorkspaceSetting", {"key": "tabstop", "value": 4})["set"] is True
    assert w.editor.lua("return vim.o.tabstop") == 4
    # Options that evaluate code are refused unless the user allows them.
    refused(w, "setWorkspaceSetting", {"key": "foldexpr", "value": "system('touch /tmp/pwned')"}, r"not allowed for agents")


def test_executeVSCodeCommand(w):
    refused(w, "executeVSCodeCommand", {"command": "lua vim.g.pwned = 1"}, r"disabled in Neovim")
    assert w.editor.lua("return vim.g.pwned") is None


def test_listVSCodeCommands(w):
    r = ok_json(w, "listVSCodeCommands", {"filter": "IdeBridge"})
    assert "IdeBridgeStatus" in r["commands"]


def test_captureScreenshot(w):
    refused(w, "captureScreenshot", {}, r"captureScreenshot is not supported in Neovim")
