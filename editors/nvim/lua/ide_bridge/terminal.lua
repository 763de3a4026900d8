-- Terminals as :terminal buffers: list, create, dispose, send, execute (exit code
-- and output through printed markers), wait for output, read output.
local client = require("ide_bridge.client")
local util = require("ide_bridge.util")
local uv = vim.uv or vim.loop

local M = {}
local reg = client.register
local fail = util.fail

local names = {} -- buf -> name given by an agent (or the user)
local marks = {} -- buf -> line (1-based) where an agent last typed a command
local seq = 0

--- Without timeoutMs the bridge waits its editor request timeout (10 s by default):
--- answer before it.
local DEFAULT_WAIT_MS = 9000

--- The wait an agent asked for (the bridge waits timeoutMs plus a margin for the
--- answer), at most max_wait_ms.
local function wait_ms(p)
  local cap = require("ide_bridge").config.max_wait_ms
  return math.min(p.timeoutMs or DEFAULT_WAIT_MS, cap)
end

local function mark(b)
  local lines = vim.api.nvim_buf_get_lines(b, 0, -1, false)
  local n = #lines
  while n > 0 and lines[n]:match("^%s*$") do
    n = n - 1
  end
  marks[b] = math.max(n, 1)
end

local function terminals()
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "terminal" then
      table.insert(out, b)
    end
  end
  return out
end

local function term_name(b)
  return names[b] or vim.api.nvim_buf_get_name(b)
end

local function find(p, create)
  local list = terminals()
  if p.name then
    for _, b in ipairs(list) do
      if term_name(b) == p.name then
        return b
      end
    end
    if create then
      return M.create({ name = p.name, show = p.show })
    end
    fail("no terminal named " .. p.name)
  end
  if p.index then
    local b = list[p.index + 1]
    if not b then
      fail("no terminal with index " .. p.index)
    end
    return b
  end
  local cur = vim.api.nvim_get_current_buf()
  if vim.bo[cur].buftype == "terminal" then
    return cur
  end
  if list[1] then
    return list[1]
  end
  if create then
    return M.create({ show = p.show })
  end
  fail("no terminal is open")
end

local function shell_is_fish()
  return vim.o.shell:match("fish$") ~= nil
end

function M.create(p)
  local buf = vim.api.nvim_create_buf(true, false)
  local env = nil
  if p.env and next(p.env) then
    env = p.env
  end
  local opts = { cwd = p.cwd, env = env }
  local chan
  vim.api.nvim_buf_call(buf, function()
    if vim.fn.has("nvim-0.11") == 1 then
      opts.term = true
      chan = vim.fn.jobstart(vim.o.shell, opts)
    else
      chan = vim.fn.termopen(vim.o.shell, opts)
    end
  end)
  if chan <= 0 then
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
    fail("could not start a terminal (" .. vim.o.shell .. ")")
  end
  seq = seq + 1
  names[buf] = p.name or ("terminal-" .. seq)
  vim.b[buf].ide_bridge_terminal = names[buf]
  if p.show then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, buf)
    vim.cmd("wincmd p")
  end
  return buf
end

local function chan_of(b)
  local chan = vim.bo[b].channel
  if not chan or chan <= 0 then
    fail("the terminal " .. term_name(b) .. " has no running job")
  end
  return chan
end

--- Terminal lines with trailing empty lines removed.
local function lines_of(b)
  local lines = vim.api.nvim_buf_get_lines(b, 0, -1, false)
  while #lines > 0 and lines[#lines]:match("^%s*$") do
    table.remove(lines)
  end
  return lines
end

reg("listTerminals", function()
  local out = {}
  local cur = vim.api.nvim_get_current_buf()
  for i, b in ipairs(terminals()) do
    table.insert(out, { name = term_name(b), index = i - 1, isActive = b == cur, hasOutputCapture = true })
  end
  return { terminals = out, count = #out }
end)

reg("createTerminal", function(p)
  local b = M.create(p)
  local idx = 0
  for i, t in ipairs(terminals()) do
    if t == b then
      idx = i - 1
    end
  end
  return { success = true, name = term_name(b), index = idx }
end)

reg("disposeTerminal", function(p)
  local b = find(p, false)
  local name = term_name(b)
  pcall(vim.fn.jobstop, vim.bo[b].channel)
  vim.api.nvim_buf_delete(b, { force = true })
  names[b], marks[b] = nil, nil
  return { success = true, terminalName = name }
end)

reg("sendTerminalCommand", function(p)
  local b = find(p, false)
  local text = p.text or ""
  if p.addNewline ~= false then
    text = text .. "\r"
  end
  local chan = chan_of(b)
  mark(b)
  vim.fn.chansend(chan, text)
  return { success = true, terminalName = term_name(b) }
end)

reg("getTerminalOutput", function(p)
  local ok, b = pcall(find, p, false)
  if not ok then
    return { available = false, terminalName = p.name or vim.NIL, error = type(b) == "table" and b.message or tostring(b) }
  end
  local lines = lines_of(b)
  local want = p.lines or 100
  if #lines > want then
    lines = vim.list_slice(lines, #lines - want + 1, #lines)
  end
  return { available = true, terminalName = term_name(b), lines = lines, lineCount = #lines }
end)

--- Polls `check()` every 50 ms until it returns a value or `timeout_ms` passes.
local function poll(timeout_ms, check, done)
  local start = uv.now()
  local timer = uv.new_timer()
  timer:start(0, 50, vim.schedule_wrap(function()
    if timer:is_closing() then
      return
    end
    local ok, v = pcall(check)
    if not ok then
      timer:stop()
      timer:close()
      return done(nil, v)
    end
    if v ~= nil then
      timer:stop()
      timer:close()
      return done(v)
    end
    if uv.now() - start >= timeout_ms then
      timer:stop()
      timer:close()
      return done(nil, nil, true)
    end
  end))
end

reg("executeInTerminal", function(p, done)
  local command = p.command
  if not command or command == "" then
    fail("command is required")
  end
  local b = find(p, true)
  local chan = chan_of(b)
  seq = seq + 1
  local tag = tostring(os.time()) .. "_" .. seq
  -- The typed line holds the markers' format strings, the output holds the markers:
  -- only the printed ones match.
  local status = shell_is_fish() and "$status" or "$?"
  local line = string.format("printf '\\n__IDEB_%%s_%s__\\n' START; %s; printf '\\n__IDEB_DONE_%s_%%s__\\n' %s", tag, command, tag, status)
  mark(b)
  vim.fn.chansend(chan, line .. "\r")
  local timeout = wait_ms(p)
  poll(timeout, function()
    local lines = vim.api.nvim_buf_get_lines(b, 0, -1, false)
    local start_at, code, done_at
    for i = #lines, 1, -1 do
      local c = lines[i]:match("^__IDEB_DONE_" .. tag .. "_(%d+)__")
      if c then
        code, done_at = tonumber(c), i
      elseif lines[i] == "__IDEB_START_" .. tag .. "__" then
        start_at = i
        break
      end
    end
    if code and start_at then
      local out = vim.list_slice(lines, start_at + 1, done_at - 1)
      while #out > 0 and out[#out] == "" do
        table.remove(out)
      end
      return { code = code, out = out }
    end
    return nil
  end, function(v, err, timed_out)
    if err then
      return done(nil, err)
    end
    if timed_out then
      return done({ success = false, timedOut = true, error = "no exit status within " .. timeout .. " ms", terminalName = term_name(b) })
    end
    local output = table.concat(v.out, "\n")
    local truncated = #output > 100000
    if truncated then
      output = output:sub(-100000)
    end
    done({ success = v.code == 0, exitCode = v.code, output = output, truncated = truncated, terminalName = term_name(b) })
  end)
  return client.ASYNC
end)

--- A JavaScript-style regex approximated with Vim's very magic regex.
local function compile(pattern)
  local ok, re = pcall(vim.regex, "\\v" .. pattern)
  if ok then
    return re
  end
  ok, re = pcall(vim.regex, pattern)
  if ok then
    return re
  end
  fail("invalid pattern: " .. pattern)
end

reg("waitForTerminalOutput", function(p, done)
  local b = find(p, false)
  local re = compile(p.pattern or "")
  -- Output after the line where an agent last typed a command (that line holds the
  -- command itself), else the whole terminal.
  local from = marks[b] and (marks[b] + 1) or 1
  local start = uv.now()
  local timeout = wait_ms(p)
  poll(timeout, function()
    if not vim.api.nvim_buf_is_valid(b) then
      error("the terminal was closed")
    end
    local lines = vim.api.nvim_buf_get_lines(b, from - 1, -1, false)
    for _, l in ipairs(lines) do
      if re:match_str(l) then
        return l
      end
    end
    return nil
  end, function(line, err, timed_out)
    if err then
      return done(nil, err)
    end
    if timed_out then
      return done({ matched = false, timedOut = true, elapsed = uv.now() - start, terminalName = term_name(b) })
    end
    done({ matched = true, matchedLine = line, elapsed = uv.now() - start, terminalName = term_name(b) })
  end)
  return client.ASYNC
end)

return M
