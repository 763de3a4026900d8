-- What the editor pushes to the bridge: selection and active file (debounced, only
-- on change), diagnostics from vim.diagnostic (any source), saves, AI comments.
local client = require("ide_bridge.client")
local util = require("ide_bridge.util")
local uv = vim.uv or vim.loop

local M = {}

local group
local last_selection_key = nil
local last_active = nil
M.selection = nil -- latest selection, protocol shape (1-based)
local diag_sent = {} -- path -> encoded list
local ai_sent = {} -- path -> encoded list
local timers = {}

local function debounce(key, ms, fn)
  local t = timers[key]
  if not t then
    t = uv.new_timer()
    timers[key] = t
  end
  t:stop()
  t:start(ms, 0, vim.schedule_wrap(fn))
end

---------------------------------------------------------------- selection

--- The selection of the current window (protocol shape) or nil for special buffers.
function M.current_selection()
  local buf = vim.api.nvim_get_current_buf()
  local path = util.buf_path(buf)
  if not path then
    return nil
  end
  local mode = vim.fn.mode()
  local cur = vim.api.nvim_win_get_cursor(0)
  if mode == "v" or mode == "V" or mode == "\22" then
    local v = vim.fn.getpos("v")
    local s = { v[2], v[3] - 1 } -- row 1-based, byte col 0-based
    local e = { cur[1], cur[2] }
    if s[1] > e[1] or (s[1] == e[1] and s[2] > e[2]) then
      s, e = e, s
    end
    local sline = util.line_text(buf, s[1] - 1)
    local eline = util.line_text(buf, e[1] - 1)
    local sb, eb -- byte columns, end exclusive
    if mode == "V" then
      sb, eb = 0, #eline
    else
      sb = math.min(s[2], #sline)
      -- Inclusive end: step over the whole character under the end.
      local ch = vim.fn.strcharpart(eline:sub(e[2] + 1), 0, 1)
      eb = math.min(e[2] + math.max(#ch, 1), #eline)
      if #eline == 0 then
        eb = 0
      end
    end
    local text
    if mode == "\22" then
      local region = vim.fn.getregion(vim.fn.getpos("v"), vim.fn.getpos("."), { type = mode })
      text = table.concat(region, "\n")
    else
      local lines = vim.api.nvim_buf_get_text(buf, s[1] - 1, sb, e[1] - 1, eb, {})
      text = table.concat(lines, "\n")
    end
    local sl, sc = util.byte_to_proto(buf, s[1] - 1, sb)
    local el, ec = util.byte_to_proto(buf, e[1] - 1, eb)
    return { file = path, startLine = sl, startColumn = sc, endLine = el, endColumn = ec, selectedText = text }
  end
  local l, c = util.byte_to_proto(buf, cur[1] - 1, cur[2])
  return { file = path, startLine = l, startColumn = c, endLine = l, endColumn = c, selectedText = "" }
end

local function push_selection()
  local sel = M.current_selection()
  if not sel then
    return
  end
  M.selection = sel
  local key = vim.json.encode(sel)
  if key ~= last_selection_key and client.is_connected() then
    if client.notify("extension/selectionChanged", sel) then
      last_selection_key = key
    end
  end
end

local function push_active()
  local path = util.buf_path(vim.api.nvim_get_current_buf())
  if path and path ~= last_active and client.is_connected() then
    if client.notify("extension/activeFileChanged", { file = path }) then
      last_active = path
      last_selection_key = nil
    end
  end
end

---------------------------------------------------------------- diagnostics

local severity_names = { "error", "warning", "information", "hint" }

function M.diagnostics_of(buf)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local l, c = util.byte_to_proto(buf, d.lnum, d.col)
    local el, ec = util.byte_to_proto(buf, d.end_lnum or d.lnum, d.end_col or d.col)
    local code = d.code
    if code == nil and type(d.user_data) == "table" and type(d.user_data.lsp) == "table" then
      code = d.user_data.lsp.code
    end
    table.insert(out, {
      message = d.message,
      severity = severity_names[d.severity] or "information",
      line = l,
      column = c,
      endLine = el,
      endColumn = ec,
      source = d.source,
      code = code,
    })
  end
  table.sort(out, function(a, b)
    if a.line ~= b.line then
      return a.line < b.line
    end
    if a.column ~= b.column then
      return a.column < b.column
    end
    return a.message < b.message
  end)
  return out
end

local function push_diagnostics(buf, force)
  local path = util.buf_path(buf)
  if not path or not client.is_connected() then
    return
  end
  local list = M.diagnostics_of(buf)
  local key = vim.json.encode(list)
  if not force and diag_sent[path] == key then
    return
  end
  if not force and diag_sent[path] == nil and #list == 0 then
    return
  end
  if client.notify("extension/diagnosticsChanged", { file = path, diagnostics = list }) then
    diag_sent[path] = key
  end
end

---------------------------------------------------------------- AI comments

-- `// AI: fix this`, `# AI! do it`, `-- AI? why` ... in any comment syntax.
local leaders = { "//", "#", "--", ";", "/%*", "<!%-%-", "%%", '"' }

local function parse_ai(line)
  for _, lead in ipairs(leaders) do
    local pre, body = line:match("^(.-)" .. lead .. "%s*AI([:!?].*)$")
    if body then
      local mark, rest = body:sub(1, 1), vim.trim(body:sub(2)):gsub("%s*%*/%s*$", ""):gsub("%s*%-%->%s*$", "")
      local severity
      if mark == "!" then
        severity = "fix"
      elseif mark == "?" then
        severity = "question"
      else
        local word = (rest:match("^(%a+)") or ""):lower()
        local known = { fix = "fix", todo = "todo", question = "question", warn = "warn", warning = "warn", task = "task" }
        severity = known[word] or "task"
      end
      local syntax = lead:gsub("%%", "")
      return { comment = rest, syntax = syntax, severity = severity }
    end
  end
  return nil
end
M.parse_ai = parse_ai

function M.ai_comments_of(buf)
  local path = util.buf_path(buf)
  if not path or not vim.api.nvim_buf_is_loaded(buf) then
    return {}
  end
  local out = {}
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if line:find("AI", 1, true) then
      local c = parse_ai(line)
      if c then
        c.file = path
        c.line = i
        c.fullLine = line
        table.insert(out, c)
      end
    end
  end
  return out
end

function M.all_ai_comments()
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    vim.list_extend(out, M.ai_comments_of(b))
  end
  return out
end

local function push_ai(buf, force)
  local path = util.buf_path(buf)
  if not path or not client.is_connected() then
    return
  end
  local list = M.ai_comments_of(buf)
  local key = vim.json.encode(list)
  if not force and ai_sent[path] == key then
    return
  end
  if not force and ai_sent[path] == nil and #list == 0 then
    return
  end
  if client.notify("extension/aiCommentsChanged", { comments = list, file = path }) then
    ai_sent[path] = key
  end
end

---------------------------------------------------------------- wiring

--- After (re)connecting: push the whole state again (a restarted bridge has none).
function M.resync()
  last_selection_key, last_active = nil, nil
  diag_sent, ai_sent = {}, {}
  push_active()
  push_selection()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) then
      push_diagnostics(b, false)
      push_ai(b, false)
    end
  end
end

function M.setup(cfg)
  group = vim.api.nvim_create_augroup("IdeBridgeEvents", { clear = true })
  local sel_ms = cfg.selection_debounce_ms
  vim.api.nvim_create_autocmd({ "CursorMoved", "CursorMovedI", "ModeChanged" }, {
    group = group,
    callback = function()
      debounce("selection", sel_ms, push_selection)
    end,
  })
  vim.api.nvim_create_autocmd({ "BufEnter", "WinEnter" }, {
    group = group,
    callback = function()
      debounce("selection", sel_ms, function()
        push_active()
        push_selection()
      end)
    end,
  })
  vim.api.nvim_create_autocmd("DiagnosticChanged", {
    group = group,
    callback = function(args)
      local buf = args.buf
      debounce("diag" .. buf, cfg.diagnostics_debounce_ms, function()
        if vim.api.nvim_buf_is_valid(buf) then
          push_diagnostics(buf)
        end
      end)
    end,
  })
  vim.api.nvim_create_autocmd("BufWritePost", {
    group = group,
    callback = function(args)
      local path = util.buf_path(args.buf)
      if path then
        client.notify("extension/fileSaved", { file = path })
        push_ai(args.buf)
      end
    end,
  })
  if cfg.ai_comments then
    vim.api.nvim_create_autocmd({ "BufReadPost", "TextChanged", "TextChangedI", "InsertLeave" }, {
      group = group,
      callback = function(args)
        local buf = args.buf
        debounce("ai" .. buf, cfg.ai_comments_debounce_ms, function()
          if vim.api.nvim_buf_is_valid(buf) then
            push_ai(buf)
          end
        end)
      end,
    })
  end
  vim.api.nvim_create_autocmd({ "BufDelete", "BufWipeout" }, {
    group = group,
    callback = function(args)
      local t = timers["diag" .. args.buf]
      if t then
        t:stop()
      end
    end,
  })
end

return M
