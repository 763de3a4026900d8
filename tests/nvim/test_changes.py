"""What agents changed, in Neovim (bridge/agentChanges, lua/ide_bridge/changes.lua):
the lines each agent wrote are marked in the buffer (a sign and the agent's name at the
end of a run's first line, namespace ide_bridge_changes); an undo on the bridge reloads
the unmodified buffer and takes its marks away; a modified buffer keeps the person's
text; :IdeBridgeChanges lists the marked lines in the quickfix list."""

import json

from conftest import wait_for

TEXT = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"

MARKS = """
local path = ...
local ns = vim.api.nvim_get_namespaces()["ide_bridge_changes"]
local buf = vim.fn.bufnr(path)
if not ns or buf == -1 or vim.fn.bufloaded(buf) == 0 then return {} end
local out = {}
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
  local d = m[4]
  local virt = ""
  if d.virt_text then
    for _, chunk in ipairs(d.virt_text) do virt = virt .. chunk[1] end
  end
  table.insert(out, { row = m[2], sign = vim.trim(d.sign_text or ""), virt = virt })
end
return out
"""


def marks(w, path):
    """The change marks in the buffer of `path`: {line (1-based): agent name or ""}, and
    every mark's sign."""
    found = w.editor.lua(MARKS, str(path))
    return {m["row"] + 1: m["virt"].strip() for m in found}, {m["sign"] for m in found}


def buffer_text(w, path):
    return w.editor.lua(
        "local b = vim.fn.bufnr(...); return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\\n') .. '\\n'",
        str(path),
    )


def changes(agent, **which):
    return agent.call_json("listChanges", which)["changes"]


def test_an_agents_write_is_marked_with_its_name_and_an_undo_reloads_the_buffer(world):
    w = world
    f = w.workspace / "story.txt"
    f.write_text(TEXT)
    w.editor.edit(f)
    a, b = w.agent("writer-a"), w.agent("writer-b")

    # With Neovim connected, replaceBlock is done by the editor: the buffer is edited
    # and saved, and the bridge records it as agent A's change.
    r = a.call_json("replaceBlock", {"filePath": "story.txt", "oldContent": "three\nfour", "newContent": "THREE\nFOUR\nand more"})
    assert r["source"] == "editor" and r["saved"] is True, r
    after_a = TEXT.replace("three\nfour", "THREE\nFOUR\nand more")
    assert f.read_text() == after_a
    listed = wait_for(lambda: changes(b, file="story.txt"), what="A's change set")
    label_a = listed[0]["agent"]
    assert label_a.startswith("writer-a ") and listed[0]["tool"] == "replaceBlock", listed
    wait_for(lambda: marks(w, f)[0] == {3: label_a, 4: "", 5: ""}, what=f"marks on lines 3-5 naming {label_a}")
    assert marks(w, f)[1] == {"▍"}

    # B changes another line (beyond the 3 lines of context around A's): both agents'
    # runs are marked, each with its name.
    b.call_json("replaceBlock", {"filePath": "story.txt", "oldContent": "nine", "newContent": "NINE"})
    label_b = wait_for(lambda: [c["agent"] for c in changes(b, file="story.txt") if c["agent"] != label_a], what="B's change set")[0]
    assert label_b.startswith("writer-b "), label_b
    wait_for(lambda: marks(w, f)[0] == {3: label_a, 4: "", 5: "", 10: label_b}, what="A's and B's marks")
    assert buffer_text(w, f) == f.read_text() == after_a.replace("nine", "NINE")
    assert not w.editor.lua("return vim.bo[vim.fn.bufnr(...)].modified", str(f))

    # The person undoes A's change on the bridge: the file is written there, and the
    # unmodified buffer shows it without a reload by hand; only B's mark is left.
    first = next(c["id"] for c in changes(b, file="story.txt") if c["agent"] == label_a)
    report = b.call_json("undoChanges", {"change": first, "reason": "not those lines"})
    assert [u["from"] for u in report["undone"]] == [3] and report["declined"] == [], report
    undone = TEXT.replace("nine", "NINE")
    assert f.read_text() == undone
    wait_for(lambda: buffer_text(w, f) == undone, what="the buffer to reload the undone text")
    wait_for(lambda: marks(w, f)[0] == {9: label_b}, what="only B's mark, on its line after the undo")
    assert not w.editor.lua("return vim.bo[vim.fn.bufnr(...)].modified", str(f))


def test_a_file_an_agent_creates_is_marked_when_the_person_opens_it(world):
    w = world
    a = w.agent("creator")
    f = w.workspace / "made" / "fresh.txt"
    r = a.call_json("createFile", {"filePath": str(f), "content": "alpha\nbeta\n"})
    assert r["source"] == "editor" and r["created"] is True, r
    listed = wait_for(lambda: changes(a, file="made/fresh.txt"), what="the created file's change set")
    assert listed[0]["created"] is True and listed[0]["hunks"][0]["new"] == ["alpha\n", "beta\n"], listed
    label = listed[0]["agent"]
    # Not open yet: the plugin keeps the runs and marks the buffer once it is read.
    path = str(f)
    wait_for(
        lambda: w.editor.lua("return require('ide_bridge.changes').by_file[...]", path) == [{"startLine": 1, "endLine": 2, "agent": label, "session": listed[0]["session"]}],
        what="the runs of the created file in the plugin",
    )
    w.editor.edit(f)
    wait_for(lambda: marks(w, f)[0] == {1: label, 2: ""}, what="marks on the opened file")


def test_the_plugin_reloads_an_unmodified_buffer_keeps_a_modified_one_and_lists_the_lines(world):
    w = world
    w.editor.lua("_G.notes = {}; vim.notify = function(msg, level) table.insert(_G.notes, { msg = msg, level = level }) end")
    clean = w.workspace / "clean.txt"
    dirty = w.workspace / "dirty.txt"
    clean.write_text("a\nb\nc\nd\n")
    dirty.write_text("1\n2\n3\n4\n")
    w.editor.edit(dirty)
    w.editor.edit(clean)

    # An unmodified buffer: the text written on disk shows without a manual reload,
    # and lines 2-3 are marked with the agent's name on the first.
    clean.write_text("a\nB changed\nC changed\nd\n")
    w.editor.lua(
        "require('ide_bridge.changes').on_changes({ file = ..., changes = { { startLine = 2, endLine = 3, agent = 'agent A', session = 's' } } })",
        str(clean),
    )
    wait_for(lambda: buffer_text(w, clean) == "a\nB changed\nC changed\nd\n", what="the clean buffer to reload")
    wait_for(lambda: marks(w, clean)[0] == {2: "agent A", 3: ""}, what="marks on lines 2-3")
    assert marks(w, clean)[1] == {"▍"}
    assert not w.editor.lua("return vim.bo[vim.fn.bufnr(...)].modified", str(clean))

    # A modified buffer keeps the person's text, and says so.
    w.editor.lua(
        "local b = vim.fn.bufnr(...); vim.api.nvim_buf_set_lines(b, 0, 1, false, { 'mine, unsaved' })",
        str(dirty),
    )
    dirty.write_text("1\nTWO\n3\n4\n")
    w.editor.lua(
        "require('ide_bridge.changes').on_changes({ file = ..., changes = { { startLine = 2, endLine = 2, agent = 'agent B', session = 't' } } })",
        str(dirty),
    )
    wait_for(lambda: marks(w, dirty)[0] == {2: "agent B"}, what="the mark on the modified buffer")
    assert buffer_text(w, dirty) == "mine, unsaved\n2\n3\n4\n"
    assert w.editor.lua("return vim.bo[vim.fn.bufnr(...)].modified", str(dirty))
    warned = w.editor.lua("return _G.notes")
    assert any("dirty.txt" in n["msg"] and "not reloaded" in n["msg"] and n["level"] == 3 for n in warned), warned

    # :IdeBridgeChanges: every marked run in the quickfix list, by file and line.
    w.editor.cmd("IdeBridgeChanges")
    items = w.editor.lua(
        "return vim.tbl_map(function(i) return { file = vim.api.nvim_buf_get_name(i.bufnr), lnum = i.lnum, end_lnum = i.end_lnum, text = i.text } end, vim.fn.getqflist())"
    )
    assert items == [
        {"file": str(clean), "lnum": 2, "end_lnum": 3, "text": "agent A changed lines 2-3"},
        {"file": str(dirty), "lnum": 2, "end_lnum": 2, "text": "agent B changed lines 2-2"},
    ], json.dumps(items)
    assert w.editor.lua("return vim.fn.getqflist({ title = 0 }).title") == "ide-bridge: lines agents changed"

    # Nothing left to mark: the marks go, and the list says so.
    for path in (clean, dirty):
        w.editor.lua("require('ide_bridge.changes').on_changes({ file = ..., changes = {} })", str(path))
    wait_for(lambda: marks(w, clean)[0] == {} and marks(w, dirty)[0] == {}, what="the marks to go")
    w.editor.cmd("IdeBridgeChanges")
    assert w.editor.lua("return #vim.fn.getqflist()") == 0



def test_the_persons_unsaved_lines_are_not_taken_for_the_agents(world):
    """With an editor, a write tool edits the buffer and saves it whole: lines the person
    typed and did not save are the person's, not the agent's, and an undo of the agent's
    change leaves them alone."""
    w = world
    f = w.workspace / "s.txt"
    f.write_text(TEXT)
    w.editor.edit(f)
    w.editor.lua("vim.api.nvim_buf_set_lines(vim.fn.bufnr(...), 0, 1, false, {'PERSON typed this'})", str(f))
    assert w.editor.lua("return vim.bo[vim.fn.bufnr(...)].modified", str(f))
    a = w.agent("writer")
    r = a.call_json("replaceBlock", {"filePath": "s.txt", "oldContent": "eight\nnine", "newContent": "EIGHT\nNINE"})
    assert r["source"] == "editor", r
    written = TEXT.replace("one\n", "PERSON typed this\n").replace("eight\nnine", "EIGHT\nNINE")
    assert f.read_text() == written
    listed = wait_for(lambda: changes(a, file="s.txt"), what="the agent's change")
    hunks = [(h["old"], h["new"]) for c in listed for h in c["hunks"]]
    assert hunks == [(["eight\n", "nine\n"], ["EIGHT\n", "NINE\n"])], hunks
    report = a.call_json("undoChanges", {"change": listed[0]["id"]})
    assert len(report["undone"]) == 1, report
    assert f.read_text() == TEXT.replace("one\n", "PERSON typed this\n")
