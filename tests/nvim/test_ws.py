"""The plugin's WebSocket client: SHA-1/accept key, frame parsing (7/16/64-bit
lengths, fragmentation, ping -> pong, close), and large messages both ways through
the real bridge."""

import json
import threading

from conftest import wait_for

PARSE = r"""
local ws = require("ide_bridge.ws")
local got, sent, closed = {}, {}, nil
local c = setmetatable({ state = "open", buf = "", opts = {
  on_message = function(m) table.insert(got, m) end,
  on_close = function(code, reason) closed = { code, reason } end,
} }, ws._Conn)
c._send_raw = function(_, data) table.insert(sent, data) end
local function frame(fin, op, payload)
  local len = #payload
  local head = string.char((fin and 0x80 or 0) + op)
  if len < 126 then
    head = head .. string.char(len)
  elseif len < 65536 then
    head = head .. string.char(126, math.floor(len / 256), len % 256)
  else
    head = head .. string.char(127, 0, 0, 0, 0, math.floor(len / 16777216) % 256, math.floor(len / 65536) % 256, math.floor(len / 256) % 256, len % 256)
  end
  return head .. payload
end
local big16 = string.rep("a", 300)
local big64 = string.rep("b", 70000)
local stream = frame(true, 1, "short")
  .. frame(true, 1, big16)
  .. frame(true, 1, big64)
  .. frame(false, 1, "frag-") .. frame(true, 9, "hi") .. frame(false, 0, "ment") .. frame(true, 0, "ed")
  .. frame(true, 8, string.char(3, 232) .. "bye")
-- Delivered in awkward pieces, like TCP may.
for i = 1, #stream, 997 do
  c.buf = c.buf .. stream:sub(i, i + 996)
  c:_process()
end
local lens = {}
for _, m in ipairs(got) do table.insert(lens, #m) end
-- Client frames are masked: byte 2 has the mask bit.
local pong = sent[1]
return {
  lens = lens, frag = got[4], closed = closed,
  pong_op = pong:byte(1), pong_masked = pong:byte(2) >= 128,
  accept = ws.accept_key("dGhlIHNhbXBsZSBub25jZQ=="),
  sha_abc = require("ide_bridge.sha1").hex("abc"),
  enc16 = { ws.encode_frame(1, big16):byte(2, 4) },
  enc64 = { ws.encode_frame(1, big64):byte(2, 10) },
}
"""


def test_frame_parsing_and_encoding(world):
    r = world.editor.lua(PARSE)
    assert r["sha_abc"] == "a9993e364706816aba3e25717850c26c9cd0d89d"
    assert r["accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    assert r["lens"] == [5, 300, 70000, 11]
    assert r["frag"] == "frag-mented"
    assert r["pong_op"] == 0x8A and r["pong_masked"] is True
    assert r["closed"] == [1000, "bye"]
    assert r["enc16"] == [0x80 + 126, 1, 44]
    assert r["enc64"] == [0x80 + 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70]


def test_large_messages_both_ways(world):
    agent = world.agent()
    big = "".join(f"line {i:05d} " + "x" * 60 + "\n" for i in range(1200))  # ~84 kB
    f = world.workspace / "big.txt"
    f.write_text("small\n")
    world.editor.edit(f)
    world.editor.lua("vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.split(..., '\\n', {plain=true}))", big.rstrip("\n"))
    # Editor -> bridge: an 84 kB answer with unsaved content.
    r = agent.call_json("getFileContent", {"file": str(f)})
    assert r["content"] == big and r["isDirty"] is True
    # Bridge -> editor: an 84 kB openDiff request.
    box = {}
    t = threading.Thread(
        target=lambda: box.update(
            r=agent.call("openDiff", {"old_file_path": str(f), "new_file_path": str(f), "new_file_contents": big + "end\n", "tab_name": "big"}, timeout=30)
        ),
        daemon=True,
    )
    t.start()
    wait_for(lambda: world.editor.lua("return vim.b.ide_bridge_diff == 'big'"), what="the big diff")
    world.editor.input(":w<CR>")
    t.join(15)
    assert box["r"]["content"][1]["text"] == big + "end\n"


def test_fragmented_sends_accepted_by_bridge(world):
    # Reconnect with outgoing messages split into 1000-byte fragments.
    world.editor.lua("require('ide_bridge').config.fragment_size = 1000")
    world.bridge.restart()
    wait_for(world.bridge.editor_connected, what="reconnect")
    agent = world.agent()
    f = world.workspace / "frag.txt"
    text = "y" * 5000 + "\n"
    f.write_text(text)
    r = agent.call_json("getFileContent", {"file": str(f)})
    assert r["content"] == text
