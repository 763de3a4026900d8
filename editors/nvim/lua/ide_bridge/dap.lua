-- Debugging through nvim-dap when it is installed; otherwise the debug methods answer
-- "not supported in Neovim without nvim-dap".
local client = require("ide_bridge.client")
local util = require("ide_bridge.util")

local M = {}
local reg = client.register

local function dap()
  local ok, d = pcall(require, "dap")
  if not ok then
    util.not_supported("debugging", "install nvim-dap (https://github.com/mfussenegger/nvim-dap) to debug from agents")
  end
  return d
end

local function breakpoints()
  local out = {}
  local ok, bps = pcall(require, "dap.breakpoints")
  if not ok then
    return out
  end
  for buf, list in pairs(bps.get()) do
    local file = util.buf_path(buf) or vim.api.nvim_buf_get_name(buf)
    for _, bp in ipairs(list) do
      table.insert(out, { file = file, line = bp.line, condition = bp.condition or vim.NIL, enabled = true })
    end
  end
  return out
end

reg("getDebugState", function()
  local d = dap()
  local s = d.session()
  if not s then
    return { hasActiveSession = false, isPaused = false, breakpoints = breakpoints() }
  end
  local state = {
    hasActiveSession = true,
    sessionId = tostring(s.id),
    sessionName = s.config and s.config.name or vim.NIL,
    sessionType = s.config and s.config.type or vim.NIL,
    isPaused = s.stopped_thread_id ~= nil,
    breakpoints = breakpoints(),
  }
  local frame = s.current_frame
  if frame then
    local file = frame.source and frame.source.path or vim.NIL
    state.pausedAt = { file = file, line = frame.line, column = frame.column }
    local stack = {}
    local thread = s.threads and s.threads[s.stopped_thread_id]
    for _, f in ipairs(thread and thread.frames or {}) do
      table.insert(stack, { id = f.id, name = f.name, file = f.source and f.source.path or vim.NIL, line = f.line, column = f.column })
    end
    state.callStack = stack
    local scopes = {}
    for _, sc in ipairs(frame.scopes or {}) do
      local vars = {}
      for _, v in ipairs(sc.variables or {}) do
        table.insert(vars, { name = v.name, value = v.value, type = v.type or vim.NIL })
      end
      table.insert(scopes, { name = sc.name, variables = vars })
    end
    state.scopes = scopes
  end
  return state
end)

reg("evaluateInDebugger", function(p, done)
  local s = dap().session()
  if not s then
    util.fail("no debug session")
  end
  local frame_id = p.frameId or (s.current_frame and s.current_frame.id)
  s:request("evaluate", { expression = p.expression, frameId = frame_id, context = p.context or "repl" }, function(err, resp)
    vim.schedule(function()
      if err then
        return done(nil, err.message or vim.inspect(err))
      end
      done({ result = resp.result, type = resp.type or vim.NIL })
    end)
  end)
  return client.ASYNC
end)

reg("setDebugBreakpoints", function(p)
  local d = dap()
  local bps = require("dap.breakpoints")
  local buf = util.ensure_buf(p.file)
  bps.clear(buf)
  for _, bp in ipairs(p.breakpoints or {}) do
    bps.set({ condition = bp.condition, hit_condition = bp.hitCondition, log_message = bp.logMessage }, buf, bp.line)
  end
  local s = d.session()
  if s then
    s:set_breakpoints(bps.get(buf))
  end
  return { set = #(p.breakpoints or {}), file = p.file }
end)

reg("startDebugging", function(p)
  local d = dap()
  if p.configName then
    for _, configs in pairs(d.configurations or {}) do
      for _, c in ipairs(configs) do
        if c.name == p.configName then
          d.run(c)
          return { started = true, configName = c.name }
        end
      end
    end
    util.fail("no nvim-dap configuration named " .. p.configName)
  end
  d.continue()
  return { started = true }
end)

reg("stopDebugging", function()
  local d = dap()
  if not d.session() then
    return { stopped = false, error = "no debug session" }
  end
  d.terminate()
  return { stopped = true }
end)

function M.setup()
  local ok, d = pcall(require, "dap")
  if not ok then
    return
  end
  local function push()
    local okk, state = pcall(client.handlers()["getDebugState"], {})
    if okk then
      client.notify("extension/debugSessionChanged", state)
    end
  end
  for _, ev in ipairs({ "event_initialized", "event_stopped", "event_continued", "event_terminated", "event_exited" }) do
    d.listeners.after[ev]["ide_bridge"] = function()
      vim.schedule(push)
    end
  end
end

return M
