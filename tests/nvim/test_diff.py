"""openDiff: shown in Neovim, accepted with :w (user edits included), rejected with
:q, closed when the bridge says so."""

import threading

from conftest import wait_for

ORIGINAL = "def f():\n    return 1\n\nprint(f())\n"
PROPOSED = "def f():\n    return 2\n\nprint(f())\n"


def start_diff(agent, path, contents=PROPOSED, tab="proposed-edit"):
    box = {}

    def run():
        try:
            box["result"] = agent.call(
                "openDiff",
                {
                    "old_file_path": str(path),
                    "new_file_path": str(path),
                    "new_file_contents": contents,
                    "tab_name": tab,
                },
                timeout=60,
            )
        except Exception as exc:  # noqa: BLE001
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, box


def diff_shown(editor):
    return editor.lua(
        "local b = vim.api.nvim_get_current_buf();"
        "return vim.b[b].ide_bridge_diff ~= nil and vim.wo.diff and vim.bo[b].buftype == 'acwrite'"
    )


def texts(result):
    return [c["text"] for c in result["content"]]


def test_accept_with_user_edit(world):
    f = world.workspace / "mod.py"
    f.write_text(ORIGINAL)
    agent = world.agent()
    world.editor.edit(f)
    t, box = start_diff(agent, f)
    wait_for(lambda: diff_shown(world.editor), what="the diff view")
    assert world.editor.lua("return #vim.api.nvim_list_tabpages()") == 2
    # The proposal is focused: the user changes the last line and saves.
    world.editor.input("Gccprint(f() + 40)<Esc>:w<CR>")
    t.join(15)
    assert "result" in box, box
    assert texts(box["result"]) == ["FILE_SAVED", "def f():\n    return 2\n\nprint(f() + 40)\n"]
    # The diff is closed; the editor did not write the file (the agent does).
    wait_for(lambda: world.editor.lua("return #vim.api.nvim_list_tabpages()") == 1, what="the diff tab to close")
    assert f.read_text() == ORIGINAL
    # Like the Claude Code CLI, the agent writes the file: the open buffer reloads.
    f.write_text(texts(box["result"])[1])
    wait_for(
        lambda: world.editor.lua(f"return vim.fn.getbufline(vim.fn.bufnr('{f}'), 4)[1]") == "print(f() + 40)",
        what="the buffer to reload",
    )


def test_accept_with_mapping(world):
    f = world.workspace / "m2.py"
    f.write_text(ORIGINAL)
    agent = world.agent()
    t, box = start_diff(agent, f, tab="mapping")
    wait_for(lambda: diff_shown(world.editor), what="the diff view")
    world.editor.input(" da")
    t.join(15)
    assert texts(box["result"]) == ["FILE_SAVED", PROPOSED]


def test_reject_with_quit(world):
    f = world.workspace / "mod.py"
    f.write_text(ORIGINAL)
    agent = world.agent()
    t, box = start_diff(agent, f)
    wait_for(lambda: diff_shown(world.editor), what="the diff view")
    world.editor.input(":q<CR>")
    t.join(15)
    assert texts(box["result"]) == ["DIFF_REJECTED", "proposed-edit"]
    assert f.read_text() == ORIGINAL
    wait_for(lambda: world.editor.lua("return #vim.api.nvim_list_tabpages()") == 1, what="the diff tab to close")


def test_reject_edited_needs_bang(world):
    f = world.workspace / "mod.py"
    f.write_text(ORIGINAL)
    agent = world.agent()
    t, box = start_diff(agent, f)
    wait_for(lambda: diff_shown(world.editor), what="the diff view")
    world.editor.input("ggdd")
    # :q on a changed proposal is refused like any changed buffer; :q! rejects.
    world.editor.input(":q<CR>")
    t.join(1)
    assert "result" not in box
    world.editor.input("<Esc>:q!<CR>")
    t.join(15)
    assert texts(box["result"])[0] == "DIFF_REJECTED"


def test_editing_another_file_in_the_proposal_window_keeps_the_diff_pending(world):
    """`:e` of another file in the proposal window (to look at a caller) wiped the
    proposal and rejected the change; the window keeps its buffer, the diff stays
    pending, and the file opens in a split."""
    f = world.workspace / "mod.py"
    f.write_text(ORIGINAL)
    other = world.workspace / "use.py"
    other.write_text("import mod\n")
    agent = world.agent()
    t, box = start_diff(agent, f)
    wait_for(lambda: diff_shown(world.editor), what="the diff view")
    refused = world.editor.lua(
        "local ok, err = pcall(vim.cmd, 'edit ' .. ...); return ok and '' or tostring(err)", str(other)
    )
    assert "E1513" in refused, refused
    world.editor.lua("vim.cmd('split ' .. ...)", str(other))
    t.join(1)
    assert "result" not in box, box
    assert diff_shown(world.editor) is False  # the split shows use.py
    world.editor.input(":q<CR>")  # the split, not the proposal
    wait_for(lambda: diff_shown(world.editor), what="back in the proposal")
    world.editor.input(":w<CR>")
    t.join(15)
    assert texts(box["result"]) == ["FILE_SAVED", PROPOSED]


def test_a_diff_in_the_only_tab_page_closes_cleanly(world):
    """With the diff's tab page the only one left (`:tabonly`), settling it puts the
    file back in the window its proposal had: the window that kept its buffer
    ('winfixbuf') lets it go, and the proposal's buffers are deleted."""
    f = world.workspace / "mod.py"
    f.write_text(ORIGINAL)
    agent = world.agent()
    world.editor.edit(f)
    t, box = start_diff(agent, f)
    wait_for(lambda: diff_shown(world.editor), what="the diff view")
    world.editor.input(":tabonly<CR>")
    wait_for(lambda: world.editor.lua("return #vim.api.nvim_list_tabpages()") == 1, what="one tab page")
    world.editor.input(":q<CR>")
    t.join(15)
    assert texts(box["result"])[0] == "DIFF_REJECTED"
    wait_for(
        lambda: world.editor.lua(
            "for _, b in ipairs(vim.api.nvim_list_bufs()) do"
            "  if vim.api.nvim_buf_get_name(b):find('ide%-bridge://') then return false end "
            "end return #vim.api.nvim_list_wins() == 1 and not vim.wo.winfixbuf"
        ),
        what="the proposal's buffers deleted and the window free again",
    )


def test_reject_with_mapping(world):
    f = world.workspace / "mod.py"
    f.write_text(ORIGINAL)
    agent = world.agent()
    t, box = start_diff(agent, f)
    wait_for(lambda: diff_shown(world.editor), what="the diff view")
    world.editor.input(" dr")
    t.join(15)
    assert texts(box["result"])[0] == "DIFF_REJECTED"


def test_new_file_diff(world):
    f = world.workspace / "brand_new.py"
    agent = world.agent()
    t, box = start_diff(agent, f, contents="x = 1\n", tab="new")
    wait_for(lambda: diff_shown(world.editor), what="the diff view")
    world.editor.input(":w<CR>")
    t.join(15)
    assert texts(box["result"]) == ["FILE_SAVED", "x = 1\n"]


def test_closed_by_agent_close_tab(world):
    f = world.workspace / "mod.py"
    f.write_text(ORIGINAL)
    agent = world.agent()
    t, box = start_diff(agent, f, tab="to-close")
    wait_for(lambda: diff_shown(world.editor), what="the diff view")
    other = world.agent("second")
    # closeAllDiffTabs from the owning agent rejects and closes its diffs.
    agent2_result = other.call("closeAllDiffTabs", {})
    assert not agent2_result.get("isError")
    # The other agent's closeAllDiffTabs does not close this one.
    assert "result" not in box
    agent.request("tools/call", {"name": "closeAllDiffTabs", "arguments": {}}, timeout=10)
    t.join(15)
    assert texts(box["result"])[0] == "DIFF_REJECTED"
    wait_for(lambda: world.editor.lua("return #vim.api.nvim_list_tabpages()") == 1, what="bridge/closeDiff to close the view")


def test_closed_when_agent_disconnects(world):
    f = world.workspace / "mod.py"
    f.write_text(ORIGINAL)
    agent = world.agent()
    start_diff(agent, f, tab="gone")
    wait_for(lambda: diff_shown(world.editor), what="the diff view")
    agent.close()
    wait_for(
        lambda: world.editor.lua("return #vim.api.nvim_list_tabpages()") == 1,
        timeout=10,
        what="the diff to close after the agent left",
    )
