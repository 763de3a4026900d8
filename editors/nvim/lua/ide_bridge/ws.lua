-- A small WebSocket client (RFC 6455) on vim.uv TCP: upgrade with custom headers,
-- Sec-WebSocket-Accept check, masked client frames, 7/16/64-bit lengths,
-- fragmentation, ping -> pong, close. Text messages only are surfaced.
--
-- Callbacks run in libuv's fast context; wrap them in vim.schedule when they touch
-- the editor.
local sha1 = require("ide_bridge.sha1")
local uv = vim.uv or vim.loop
local bit = require("bit")

local M = {}

local GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

local function b64(s)
  return vim.base64.encode(s)
end

local function random_bytes(n)
  local t = {}
  for i = 1, n do
    t[i] = string.char(math.random(0, 255))
  end
  return table.concat(t)
end

--- The expected Sec-WebSocket-Accept for a key.
function M.accept_key(key)
  return b64(sha1.binary(key .. GUID))
end

local function be(n, bytes)
  local t = {}
  for i = bytes, 1, -1 do
    t[i] = string.char(n % 256)
    n = math.floor(n / 256)
  end
  return table.concat(t)
end

--- Encodes one masked client frame.
function M.encode_frame(opcode, payload, fin)
  local len = #payload
  local head = string.char((fin == false and 0 or 0x80) + opcode)
  if len < 126 then
    head = head .. string.char(0x80 + len)
  elseif len < 65536 then
    head = head .. string.char(0x80 + 126) .. be(len, 2)
  else
    head = head .. string.char(0x80 + 127) .. be(len, 8)
  end
  local mask = random_bytes(4)
  local m = { mask:byte(1, 4) }
  local out = {}
  local CH = 4096
  for start = 1, len, CH do
    local stop = math.min(start + CH - 1, len)
    local bytes = { payload:byte(start, stop) }
    for i = 1, #bytes do
      bytes[i] = bit.bxor(bytes[i], m[(start + i - 2) % 4 + 1])
    end
    out[#out + 1] = string.char(unpack(bytes))
  end
  return head .. mask .. table.concat(out)
end

local Conn = {}
Conn.__index = Conn

--- Connects. opts: host, port, path, headers (table), on_open(), on_message(text),
--- on_close(code, reason), on_error(msg), timeout_ms.
function M.connect(opts)
  local self = setmetatable({
    opts = opts,
    buf = "",
    state = "connecting",
    fragments = nil,
    frag_opcode = nil,
  }, Conn)
  local tcp = uv.new_tcp()
  self.tcp = tcp
  local key = b64(random_bytes(16))
  self.key = key
  local timer = uv.new_timer()
  self.timer = timer
  timer:start(opts.timeout_ms or 5000, 0, function()
    if self.state == "connecting" then
      self:_fail("timed out connecting")
    end
  end)
  tcp:connect(opts.host or "127.0.0.1", opts.port, function(err)
    if err then
      return self:_fail("connect: " .. err)
    end
    local lines = {
      "GET " .. (opts.path or "/") .. " HTTP/1.1",
      "Host: " .. (opts.host or "127.0.0.1") .. ":" .. opts.port,
      "Upgrade: websocket",
      "Connection: Upgrade",
      "Sec-WebSocket-Key: " .. key,
      "Sec-WebSocket-Version: 13",
    }
    for k, v in pairs(opts.headers or {}) do
      lines[#lines + 1] = k .. ": " .. v
    end
    tcp:write(table.concat(lines, "\r\n") .. "\r\n\r\n")
    tcp:read_start(function(rerr, chunk)
      if rerr then
        return self:_fail("read: " .. rerr)
      end
      if not chunk then
        return self:_closed(1006, "connection lost")
      end
      self.buf = self.buf .. chunk
      local ok, e = pcall(self._process, self)
      if not ok then
        self:_fail("protocol error: " .. tostring(e))
      end
    end)
  end)
  return self
end

function Conn:_process()
  if self.state == "connecting" then
    local stop = self.buf:find("\r\n\r\n", 1, true)
    if not stop then
      return
    end
    local head = self.buf:sub(1, stop - 1)
    self.buf = self.buf:sub(stop + 4)
    local status = tonumber(head:match("^HTTP/1%.1 (%d+)"))
    local headers = {}
    for k, v in head:gmatch("\r\n([^:\r\n]+):%s*([^\r\n]*)") do
      headers[k:lower()] = v
    end
    if status ~= 101 then
      self.http_status = status
      self.retry_after = tonumber(headers["retry-after"])
      return self:_fail("upgrade refused with HTTP " .. tostring(status), status)
    end
    if headers["sec-websocket-accept"] ~= M.accept_key(self.key) then
      return self:_fail("bad Sec-WebSocket-Accept")
    end
    self.state = "open"
    if self.timer then
      self.timer:stop()
    end
    if self.opts.on_open then
      self.opts.on_open()
    end
  end
  while self.state == "open" or self.state == "closing" do
    local buf = self.buf
    if #buf < 2 then
      return
    end
    local b1, b2 = buf:byte(1, 2)
    local fin = bit.band(b1, 0x80) ~= 0
    local opcode = bit.band(b1, 0x0f)
    local masked = bit.band(b2, 0x80) ~= 0
    local len = bit.band(b2, 0x7f)
    local pos = 3
    if len == 126 then
      if #buf < 4 then
        return
      end
      local x, y = buf:byte(3, 4)
      len = x * 256 + y
      pos = 5
    elseif len == 127 then
      if #buf < 10 then
        return
      end
      len = 0
      for i = 3, 10 do
        len = len * 256 + buf:byte(i)
      end
      pos = 11
    end
    local mask
    if masked then
      if #buf < pos + 3 then
        return
      end
      mask = { buf:byte(pos, pos + 3) }
      pos = pos + 4
    end
    if #buf < pos + len - 1 then
      return
    end
    local payload = buf:sub(pos, pos + len - 1)
    self.buf = buf:sub(pos + len)
    if mask then
      local bytes = { payload:byte(1, -1) }
      for i = 1, #bytes do
        bytes[i] = bit.bxor(bytes[i], mask[(i - 1) % 4 + 1])
      end
      payload = string.char(unpack(bytes))
    end
    self:_frame(fin, opcode, payload)
  end
end

function Conn:_frame(fin, opcode, payload)
  if opcode == 0x9 then -- ping
    self:_send_raw(M.encode_frame(0xA, payload))
  elseif opcode == 0xA then -- pong
    return
  elseif opcode == 0x8 then -- close
    local code, reason = 1005, ""
    if #payload >= 2 then
      local x, y = payload:byte(1, 2)
      code = x * 256 + y
      reason = payload:sub(3)
    end
    if self.state == "open" then
      self:_send_raw(M.encode_frame(0x8, payload:sub(1, 2)))
    end
    self:_closed(code, reason)
  elseif opcode == 0x0 then -- continuation
    if not self.fragments then
      error("continuation without a first fragment")
    end
    table.insert(self.fragments, payload)
    if fin then
      local msg = table.concat(self.fragments)
      local op = self.frag_opcode
      self.fragments, self.frag_opcode = nil, nil
      if op == 0x1 and self.opts.on_message then
        self.opts.on_message(msg)
      end
    end
  elseif opcode == 0x1 or opcode == 0x2 then
    if fin then
      if opcode == 0x1 and self.opts.on_message then
        self.opts.on_message(payload)
      end
    else
      self.fragments, self.frag_opcode = { payload }, opcode
    end
  end
end

function Conn:_send_raw(data)
  if self.tcp and not self.tcp:is_closing() then
    self.tcp:write(data)
  end
end

--- Sends a text message (fragmented into `frag` -byte frames when opts.fragment_size is set).
function Conn:send(text)
  if self.state ~= "open" then
    return false
  end
  local size = self.opts.fragment_size
  if size and #text > size then
    local first = true
    for start = 1, #text, size do
      local piece = text:sub(start, start + size - 1)
      local last = start + size > #text
      self:_send_raw(M.encode_frame(first and 0x1 or 0x0, piece, last))
      first = false
    end
  else
    self:_send_raw(M.encode_frame(0x1, text))
  end
  return true
end

function Conn:ping(data)
  self:_send_raw(M.encode_frame(0x9, data or ""))
end

--- Starts the closing handshake (then the socket closes).
function Conn:close(code, reason)
  if self.state == "open" then
    self.state = "closing"
    code = code or 1000
    self:_send_raw(M.encode_frame(0x8, be(code, 2) .. (reason or "")))
    local t = uv.new_timer()
    t:start(1000, 0, function()
      t:close()
      self:_closed(code, reason or "")
    end)
  else
    self:_closed(code or 1000, reason or "")
  end
end

function Conn:_teardown()
  if self.timer and not self.timer:is_closing() then
    self.timer:stop()
    self.timer:close()
  end
  if self.tcp and not self.tcp:is_closing() then
    self.tcp:read_stop()
    self.tcp:close()
  end
end

function Conn:_closed(code, reason)
  if self.state == "closed" then
    return
  end
  self.state = "closed"
  self:_teardown()
  if self.opts.on_close then
    self.opts.on_close(code, reason)
  end
end

function Conn:_fail(msg, status)
  if self.state == "closed" then
    return
  end
  local was_connecting = self.state == "connecting"
  self.state = "closed"
  self:_teardown()
  if self.opts.on_error then
    self.opts.on_error(msg, status, was_connecting)
  end
  if self.opts.on_close then
    self.opts.on_close(1006, msg)
  end
end

function Conn:is_open()
  return self.state == "open"
end

M._Conn = Conn

return M
