-- The connection to the bridge: discovery, WebSocket, extension/hello, JSON-RPC
-- dispatch of bridge requests to handlers, and reconnection with backoff.
local ws = require("ide_bridge.ws")
local discovery = require("ide_bridge.discovery")
local uv = vim.uv or vim.loop

local M = {}

M.VERSION = "0.1.0"
--- Returned by a handler that answers later through its `done` callback.
M.ASYNC = setmetatable({}, { __tostring = function() return "ASYNC" end })

M.state = {
  status = "disconnected", -- disconnected | connecting | connected
  standby = false, -- another editor holds the bridge: wait for it to leave
  bridge = nil, -- { port, token, pid, workspace, folders }
  conn = nil,
  agents = nil, -- last bridge/claudeConnectionChanged params
  claims = {}, -- file claims held now (bridge/claimsChanged, or /status)
  attempts = 0,
  last_error = nil,
  connected_at = nil,
  enabled = false,
}

local handlers = {} -- method (without "extension/") -> fn(params, done)
local notification_handlers = {} -- method -> fn(params)
local on_connect_hooks = {}
local on_disconnect_hooks = {}
local retry_timer = nil
local generation = 0
local REPLACED, stand_by

function M.config()
  return require("ide_bridge").config
end

local function log(level, msg)
  local cfg = M.config()
  if cfg.log_level and level >= cfg.log_level then
    vim.notify("[ide-bridge] " .. msg, level)
  end
end
M.log = log

function M.register(method, fn)
  handlers[method] = fn
end

function M.handlers()
  return handlers
end

function M.on_notification(method, fn)
  notification_handlers[method] = fn
end

function M.on_connect(fn)
  table.insert(on_connect_hooks, fn)
end

function M.on_disconnect(fn)
  table.insert(on_disconnect_hooks, fn)
end

function M.is_connected()
  return M.state.status == "connected"
end

local function encode(msg)
  return vim.json.encode(msg)
end

function M.send(msg)
  local conn = M.state.conn
  if not conn or M.state.status ~= "connected" then
    return false
  end
  return conn:send(encode(msg))
end

--- Sends a notification to the bridge (dropped when not connected).
function M.notify(method, params)
  return M.send({ jsonrpc = "2.0", method = method, params = params or vim.empty_dict() })
end

local function respond(gen, id, ok, result)
  if gen ~= generation then
    return -- the connection that asked is gone
  end
  if ok then
    if result == nil then
      result = vim.NIL
    end
    M.send({ jsonrpc = "2.0", id = id, result = result })
  else
    M.send({ jsonrpc = "2.0", id = id, error = { code = -32000, message = tostring(result) } })
  end
end

local function err_text(e)
  if type(e) == "table" and e.message then
    return e.message
  end
  return tostring(e)
end

local function dispatch_request(msg)
  local gen = generation
  local method = msg.method:gsub("^extension/", "")
  local h = handlers[method]
  if not h then
    return respond(gen, msg.id, false, method .. " is not supported in Neovim (unknown method)")
  end
  local answered = false
  local function done(result, err)
    if answered then
      return
    end
    answered = true
    vim.schedule(function()
      if err ~= nil then
        respond(gen, msg.id, false, err_text(err))
      else
        respond(gen, msg.id, true, result)
      end
    end)
  end
  local ok, res = xpcall(h, function(e)
    if type(e) == "table" and e.ide_bridge then
      return e
    end
    return { message = tostring(e) .. "\n" .. debug.traceback("", 2) }
  end, msg.params or {}, done)
  if not ok then
    local text = err_text(res)
    if not (type(res) == "table" and res.ide_bridge) then
      log(vim.log.levels.DEBUG, method .. " failed: " .. text)
      text = text:gsub("\n.*", "")
    end
    answered = true
    return respond(gen, msg.id, false, text)
  end
  if res ~= M.ASYNC and not answered then
    answered = true
    respond(gen, msg.id, true, res)
  end
end

local function on_message(text)
  local ok, msg = pcall(vim.json.decode, text, { luanil = { object = true, array = true } })
  if not ok or type(msg) ~= "table" then
    return
  end
  if msg.method and msg.id ~= nil then
    dispatch_request(msg)
  elseif msg.method then
    local h = notification_handlers[msg.method]
    if h then
      local hok, e = pcall(h, msg.params or {})
      if not hok then
        log(vim.log.levels.WARN, msg.method .. ": " .. tostring(e))
      end
    end
  end
  -- Responses: the plugin sends no requests that need answers.
end

local function backoff_ms()
  local cfg = M.config().reconnect
  local n = M.state.attempts
  local ms = math.min(cfg.min_ms * 2 ^ math.max(n - 1, 0), cfg.max_ms)
  return math.floor(ms * (0.8 + 0.4 * math.random()))
end

local function schedule_retry(ms)
  if not M.state.enabled then
    return
  end
  if retry_timer then
    retry_timer:stop()
  else
    retry_timer = uv.new_timer()
  end
  retry_timer:start(ms or backoff_ms(), 0, vim.schedule_wrap(function()
    if M.state.enabled and M.state.status == "disconnected" then
      M.connect()
    end
  end))
end

local function set_disconnected(reason)
  local was = M.state.status
  M.state.status = "disconnected"
  M.state.conn = nil
  M.state.last_error = reason
  generation = generation + 1
  if was == "connected" then
    log(vim.log.levels.INFO, "disconnected from the bridge" .. (reason and (": " .. reason) or ""))
    for _, fn in ipairs(on_disconnect_hooks) do
      pcall(fn, reason)
    end
  end
end

--- The bridge's close reason when a newer editor connection replaced this one.
REPLACED = "replaced by a newer editor connection"

--- Standing by: asks the bridge (its /status, which takes nothing from the other
--- editor) every poll_ms whether an editor is connected, and connects once none is.
function stand_by()
  M.state.standby = true
  if retry_timer then
    retry_timer:stop()
  else
    retry_timer = uv.new_timer()
  end
  retry_timer:start(M.config().reconnect.poll_ms, 0, vim.schedule_wrap(function()
    if not (M.state.enabled and M.state.standby and M.state.status == "disconnected") then
      return
    end
    M.http_get("/status", function(status)
      if not (M.state.enabled and M.state.standby and M.state.status == "disconnected") then
        return
      end
      local ext = type(status) == "table" and status.extension or nil
      local left = type(ext) == "table" and ext.connected == false
      if not left then
        -- No answer (busy, restarting): the same bridge still holds the other editor;
        -- a bridge that changed (or went) is looked for again.
        local cfg = M.config()
        local now = discovery.find(cfg.workspace or uv.cwd())
        local was = M.state.bridge
        if now and was and now.port == was.port and now.pid == was.pid then
          return stand_by()
        end
      end
      M.state.standby = false
      M.connect()
    end)
  end))
end

--- Finds the bridge for the cwd and connects (re-reading lock files every time).
--- Called by the person (:IdeBridgeConnect), it also ends a stand-by: this editor
--- takes the bridge back.
function M.connect()
  M.state.enabled = true
  M.state.standby = false
  if M.state.status ~= "disconnected" then
    return
  end
  local cfg = M.config()
  local bridge = discovery.find(cfg.workspace or uv.cwd())
  if not bridge then
    M.state.last_error = "no bridge serves " .. (cfg.workspace or uv.cwd())
    M.state.attempts = M.state.attempts + 1
    return schedule_retry(math.min(backoff_ms(), cfg.reconnect.poll_ms))
  end
  M.state.status = "connecting"
  M.state.bridge = bridge
  generation = generation + 1
  local gen = generation
  local conn
  conn = ws.connect({
    port = bridge.port,
    headers = { ["x-claude-ide-extension"] = bridge.token },
    fragment_size = cfg.fragment_size,
    on_open = vim.schedule_wrap(function()
      if gen ~= generation then
        return conn:close()
      end
      M.state.status = "connected"
      M.state.conn = conn
      M.state.attempts = 0
      M.state.last_error = nil
      M.state.connected_at = os.time()
      M.notify("extension/hello", { extensionVersion = M.VERSION, packageVersion = M.VERSION, editor = "neovim", editorVersion = tostring(vim.version()) })
      log(vim.log.levels.INFO, "connected to the bridge on port " .. bridge.port)
      for _, fn in ipairs(on_connect_hooks) do
        local ok, e = pcall(fn)
        if not ok then
          log(vim.log.levels.WARN, "on_connect: " .. tostring(e))
        end
      end
    end),
    on_message = vim.schedule_wrap(function(text)
      if gen == generation then
        on_message(text)
      end
    end),
    on_error = vim.schedule_wrap(function(msg, status)
      if gen ~= generation then
        return
      end
      M.state.last_error = msg
      if status == 429 then
        M.state.retry_after = (conn.retry_after or 0.1)
      end
    end),
    on_close = vim.schedule_wrap(function(code, reason)
      if gen ~= generation then
        return
      end
      local retry_after = M.state.retry_after
      M.state.retry_after = nil
      if tostring(reason):find(REPLACED, 1, true) then
        -- Another editor took the bridge: reconnecting would take it back, and that
        -- one would do the same, for ever. Stand by until it leaves.
        set_disconnected("another editor connected to this bridge")
        log(vim.log.levels.WARN, "another editor connected to this bridge; this one stands by and "
          .. "reconnects when that one leaves (:IdeBridgeConnect takes the bridge back)")
        return stand_by()
      end
      set_disconnected(M.state.last_error or ("closed " .. tostring(code) .. " " .. tostring(reason)))
      M.state.attempts = M.state.attempts + 1
      if retry_after then
        schedule_retry(math.max(50, math.floor(retry_after * 1000)))
      else
        schedule_retry()
      end
    end),
  })
  M.state.conn = conn
end

--- Closes the connection and stops reconnecting.
function M.disconnect()
  M.state.enabled = false
  if retry_timer then
    retry_timer:stop()
  end
  local conn = M.state.conn
  set_disconnected("disconnected by the user")
  if conn then
    conn:close(1000, "bye")
  end
end

--- GET an authenticated path of the bridge (e.g. /status); cb(decoded_or_nil, err).
function M.http_get(path, cb)
  local b = M.state.bridge
  if not b then
    return cb(nil, "no bridge")
  end
  local tcp = uv.new_tcp()
  local chunks = {}
  local finished = false
  local function finish(v, e)
    if finished then
      return
    end
    finished = true
    if not tcp:is_closing() then
      tcp:close()
    end
    vim.schedule(function()
      cb(v, e)
    end)
  end
  tcp:connect("127.0.0.1", b.port, function(err)
    if err then
      return finish(nil, err)
    end
    tcp:write(table.concat({
      "GET " .. path .. " HTTP/1.1",
      "Host: 127.0.0.1:" .. b.port,
      "Authorization: Bearer " .. b.token,
      "Connection: close",
      "",
      "",
    }, "\r\n"))
    tcp:read_start(function(rerr, chunk)
      if rerr then
        return finish(nil, rerr)
      end
      if chunk then
        table.insert(chunks, chunk)
        return
      end
      local resp = table.concat(chunks)
      local head, body = resp:match("^(.-)\r\n\r\n(.*)$")
      if not head then
        return finish(nil, "bad HTTP response")
      end
      if head:lower():find("transfer%-encoding:%s*chunked") then
        local out, i = {}, 1
        while true do
          local size_hex, rest = body:match("^(%x+)[^\r\n]*\r\n()", i)
          if not size_hex then
            break
          end
          local size = tonumber(size_hex, 16)
          if size == 0 then
            break
          end
          table.insert(out, body:sub(rest, rest + size - 1))
          i = rest + size + 2
        end
        body = table.concat(out)
      end
      local ok, v = pcall(vim.json.decode, body, { luanil = { object = true, array = true } })
      finish(ok and v or nil, ok and nil or "bad JSON")
    end)
  end)
end

return M
