-- Bridge requests answered with Neovim's own facilities: files and buffers, text
-- edits, selection, AI comments, clipboard (registers), decorations (extmarks),
-- settings (options), file watches, commands (only when enabled in setup).
local client = require("ide_bridge.client")
local util = require("ide_bridge.util")
local events = require("ide_bridge.events")
local uv = vim.uv or vim.loop

local M = {}
local reg = client.register
local fail = util.fail

local function cfg()
  return require("ide_bridge").config
end

local function need(p, key)
  local v = p[key]
  if v == nil or v == "" then
    fail(key .. " is required")
  end
  return v
end

--- A normal window to show files in (not a terminal, diff or floating window).
local function main_window()
  local cur = vim.api.nvim_get_current_win()
  local function ok(w)
    local b = vim.api.nvim_win_get_buf(w)
    return vim.api.nvim_win_get_config(w).relative == "" and vim.bo[b].buftype == "" and not vim.wo[w].diff
  end
  if ok(cur) then
    return cur
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if ok(w) then
      return w
    end
  end
  return cur
end
M.main_window = main_window

local function save_buf(buf)
  -- A normal :write, so BufWritePost (fileSaved, LSP didSave, ...) fires.
  return pcall(vim.api.nvim_buf_call, buf, function()
    vim.cmd("silent write")
  end)
end
M.save_buf = save_buf

---------------------------------------------------------------- files

reg("getOpenFiles", function()
  local out = {}
  local cur = vim.api.nvim_get_current_buf()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local path = util.buf_path(b)
    if path and vim.bo[b].buflisted and vim.api.nvim_buf_is_loaded(b) then
      table.insert(out, { filePath = path, isActive = b == cur, isDirty = vim.bo[b].modified, languageId = util.language_id(b, path) })
    end
  end
  return out
end)

reg("isDirty", function(p)
  local b = util.find_buf(need(p, "file"))
  return b ~= nil and vim.bo[b].modified or false
end)

reg("openFile", function(p)
  local file = need(p, "file")
  if not util.file_exists(file) then
    fail("file not found: " .. file)
  end
  if p.background then
    -- Opened, not shown: the person's window stays where it is.
    util.ensure_buf(file)
    return true
  end
  local win = main_window()
  vim.api.nvim_set_current_win(win)
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local sel = p.selection
  if type(sel) == "table" then
    -- Select it (visual mode), as the editor shows a range it was asked to.
    local b = vim.api.nvim_get_current_buf()
    local sr, sc = util.proto_to_byte(b, sel.startLine, sel.startColumn)
    local er, ec = util.proto_to_byte(b, sel.endLine, sel.endColumn)
    -- The end is exclusive; visual mode includes the character under the cursor.
    if ec > 0 then
      ec = ec - 1
    elseif er > sr then
      er = er - 1
      ec = math.max(#util.line_text(b, er) - 1, 0)
    end
    if vim.api.nvim_get_mode().mode:sub(1, 1) ~= "n" then
      vim.cmd("stopinsert")
      vim.cmd("normal! \27")
    end
    vim.api.nvim_win_set_cursor(0, { sr + 1, sc })
    vim.cmd("normal! v")
    vim.api.nvim_win_set_cursor(0, { er + 1, ec })
  elseif p.line then
    local n = vim.api.nvim_buf_line_count(0)
    vim.api.nvim_win_set_cursor(0, { math.max(1, math.min(p.line, n)), 0 })
  end
  return true
end)

reg("saveFile", function(p)
  local file = need(p, "file")
  local b = util.find_buf(file)
  if not b then
    return { success = false, error = "file is not open in Neovim: " .. file }
  end
  local ok, err = save_buf(b)
  if not ok then
    return { success = false, error = tostring(err) }
  end
  return true
end)

reg("closeTab", function(p)
  local file = need(p, "file")
  local b = util.find_buf(file)
  if not b then
    return { success = false, error = "file is not open" }
  end
  if vim.bo[b].modified then
    return { success = false, promptedToSave = false, error = "the buffer has unsaved changes; save it or close it in Neovim" }
  end
  -- Keep the window layout: show another buffer where this one was the last.
  for _, w in ipairs(vim.fn.win_findbuf(b)) do
    if #vim.api.nvim_tabpage_list_wins(vim.api.nvim_win_get_tabpage(w)) > 1 then
      pcall(vim.api.nvim_win_close, w, false)
    else
      vim.api.nvim_win_call(w, function()
        local alt = vim.fn.bufnr("#")
        if alt > 0 and alt ~= b and vim.api.nvim_buf_is_loaded(alt) then
          vim.cmd("buffer " .. alt)
        else
          vim.cmd("enew")
        end
      end)
    end
  end
  vim.api.nvim_buf_delete(b, {})
  return { success = true }
end)

reg("getFileContent", function(p)
  local file = need(p, "file")
  local b = util.find_buf(file)
  if b then
    return {
      content = util.buf_text(b),
      isDirty = vim.bo[b].modified,
      languageId = util.language_id(b, file),
      lineCount = vim.api.nvim_buf_line_count(b),
      version = vim.api.nvim_buf_get_changedtick(b),
      source = "editor",
    }
  end
  local text = util.read_file(file)
  if not text then
    fail("file not found: " .. file)
  end
  local _, n = text:gsub("\n", "")
  if #text > 0 and text:sub(-1) ~= "\n" then
    n = n + 1
  end
  return { content = text, isDirty = false, languageId = util.language_id(nil, file), lineCount = n, version = 0, source = "disk" }
end)

reg("createFile", function(p)
  local path = need(p, "filePath")
  -- Created only when it was not there (a file overwritten, a directory asked for again).
  local existed = uv.fs_stat(path) ~= nil
  if p.isDirectory then
    vim.fn.mkdir(path, "p")
    return { success = true, filePath = path, created = not existed }
  end
  if util.file_exists(path) and not p.overwrite then
    fail("file already exists: " .. path .. " (pass overwrite)")
  end
  local b = util.find_buf(path)
  if b and vim.bo[b].modified and not p.overwrite then
    fail("the open buffer has unsaved changes: " .. path)
  end
  util.write_file(path, p.content or "")
  if b then
    vim.api.nvim_buf_call(b, function()
      vim.cmd("silent edit!")
    end)
  end
  if p.openAfterCreate then
    vim.api.nvim_set_current_win(main_window())
    vim.cmd("edit " .. vim.fn.fnameescape(path))
  end
  return { success = true, filePath = path, created = not existed }
end)

reg("deleteFile", function(p)
  local path = need(p, "filePath")
  local st = uv.fs_stat(path)
  if not st then
    fail("not found: " .. path)
  end
  local flags = st.type == "directory" and (p.recursive and "rf" or "d") or ""
  if vim.fn.delete(path, flags) ~= 0 then
    fail("could not delete " .. path .. (st.type == "directory" and not p.recursive and " (a directory: pass recursive)" or ""))
  end
  local b = util.find_buf(path)
  if b and not vim.bo[b].modified then
    pcall(vim.api.nvim_buf_delete, b, { force = true })
  end
  return { success = true, filePath = path, deleted = true }
end)

reg("renameFile", function(p)
  local old, new = need(p, "oldPath"), need(p, "newPath")
  if util.file_exists(new) and not p.overwrite then
    fail("target exists: " .. new .. " (pass overwrite)")
  end
  vim.fn.mkdir(vim.fs.dirname(new), "p")
  local ok, err = uv.fs_rename(old, new)
  if not ok then
    fail("rename failed: " .. tostring(err))
  end
  local b = util.find_buf(old)
  if b then
    if vim.bo[b].modified then
      vim.api.nvim_buf_set_name(b, new)
    else
      local nb = vim.fn.bufadd(new)
      vim.fn.bufload(nb)
      vim.bo[nb].buflisted = true
      for _, w in ipairs(vim.fn.win_findbuf(b)) do
        vim.api.nvim_win_set_buf(w, nb)
      end
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
  end
  return { success = true, oldPath = old, newPath = new, renamed = true }
end)

reg("getWorkspaceFolders", function()
  local b = client.state.bridge
  local folders = {}
  local list = (b and b.folders and #b.folders > 0) and b.folders or { uv.cwd() }
  for i, f in ipairs(list) do
    table.insert(folders, { name = vim.fs.basename(f), path = f, uri = vim.uri_from_fname(f), index = i - 1 })
  end
  return { folders = folders, count = #folders }
end)

---------------------------------------------------------------- text

reg("editText", function(p)
  local path = need(p, "filePath")
  local edits = p.edits or {}
  if #edits > 1000 then
    fail("at most 1000 edits")
  end
  local b = util.ensure_buf(path)
  -- Resolve every edit against the original text, then apply bottom-up.
  local resolved = {}
  for i, e in ipairs(edits) do
    local sr, sc = util.proto_to_byte(b, e.line, e.column)
    local er, ec = sr, sc
    if e.type ~= "insert" then
      er, ec = util.proto_to_byte(b, e.endLine or e.line, e.endColumn or e.column)
    end
    if er < sr or (er == sr and ec < sc) then
      fail("edit " .. i .. ": the end is before the start")
    end
    local text = e.type == "delete" and "" or (e.text or "")
    table.insert(resolved, { sr = sr, sc = sc, er = er, ec = ec, text = text, i = i })
  end
  table.sort(resolved, function(a, c)
    if a.sr ~= c.sr then
      return a.sr > c.sr
    end
    if a.sc ~= c.sc then
      return a.sc > c.sc
    end
    return a.i > c.i
  end)
  for _, e in ipairs(resolved) do
    vim.api.nvim_buf_set_text(b, e.sr, e.sc, e.er, e.ec, vim.split(e.text, "\n", { plain = true }))
  end
  local saved = false
  if p.save then
    saved = save_buf(b)
  end
  return { success = true, editCount = #edits, saved = saved }
end)

reg("replaceBlock", function(p)
  local path = need(p, "filePath")
  local old = p.oldContent
  if type(old) ~= "string" or old == "" then
    fail("oldContent is required")
  end
  local b = util.ensure_buf(path)
  local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
  local s, e = text:find(old, 1, true)
  if not s then
    fail("oldContent not found in " .. path)
  end
  if text:find(old, e + 1, true) then
    fail("oldContent occurs more than once in " .. path .. "; include more context")
  end
  local function pos(offset) -- 0-based byte offset -> row, col
    local before = text:sub(1, offset)
    local row = select(2, before:gsub("\n", ""))
    local last_nl = before:match(".*()\n")
    return row, last_nl and (offset - last_nl) or offset
  end
  local sr, sc = pos(s - 1)
  local er, ec = pos(e)
  vim.api.nvim_buf_set_text(b, sr, sc, er, ec, vim.split(p.newContent or "", "\n", { plain = true }))
  local saved = false
  if p.save then
    saved = save_buf(b)
  end
  return { success = true, saved = saved, source = "editor" }
end)

---------------------------------------------------------------- selection, AI comments

reg("getSelection", function()
  local sel = events.current_selection() or events.selection
  if not sel then
    return vim.NIL
  end
  return sel
end)

-- The bridge answers agents from the diagnostics the plugin pushes and never sends
-- this; it is answered anyway, as the protocol has it: {file} or every loaded buffer.
reg("getDiagnostics", function(p)
  local bufs = {}
  if p and p.file then
    local b = vim.fn.bufnr(p.file)
    if b ~= -1 then
      bufs = { b }
    end
  else
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_name(b) ~= "" then
        table.insert(bufs, b)
      end
    end
  end
  local out = {}
  for _, b in ipairs(bufs) do
    table.insert(out, { file = vim.api.nvim_buf_get_name(b), diagnostics = events.diagnostics_of(b) })
  end
  return out
end)

reg("getAIComments", function()
  return events.all_ai_comments()
end)

---------------------------------------------------------------- clipboard

local function clip_reg()
  local r = cfg().clipboard_register
  if (r == "+" or r == "*") and vim.fn.has("clipboard") == 0 then
    return '"'
  end
  return r
end

reg("readClipboard", function()
  local text = vim.fn.getreg(clip_reg())
  local max = 1024 * 1024
  local truncated = #text > max
  if truncated then
    text = text:sub(1, max)
  end
  return { text = text, byteLength = #text, truncated = truncated, register = clip_reg() }
end)

reg("writeClipboard", function(p)
  local text = p.text or ""
  vim.fn.setreg(clip_reg(), text)
  return { written = true, byteLength = #text, register = clip_reg() }
end)

---------------------------------------------------------------- decorations

local deco_ns = {} -- id -> namespace
local styles = {
  info = "DiagnosticVirtualTextInfo",
  warning = "DiagnosticVirtualTextWarn",
  error = "DiagnosticVirtualTextError",
  focus = "Visual",
  strikethrough = "IdeBridgeStrikethrough",
  dim = "Comment",
}

reg("setDecorations", function(p)
  local id, file = need(p, "id"), need(p, "file")
  vim.api.nvim_set_hl(0, "IdeBridgeStrikethrough", { strikethrough = true, default = true })
  local ns = deco_ns[id] or vim.api.nvim_create_namespace("ide_bridge_deco_" .. id)
  deco_ns[id] = ns
  local b = util.ensure_buf(file)
  vim.api.nvim_buf_clear_namespace(b, ns, 0, -1)
  local n = vim.api.nvim_buf_line_count(b)
  local applied = 0
  for _, d in ipairs(p.decorations or {}) do
    local s = math.max(1, math.min(d.startLine or 1, n)) - 1
    local e = math.max(s + 1, math.min(d.endLine or d.startLine or 1, n)) - 1
    local hl = styles[d.style or "info"] or styles.info
    for row = s, e do
      local opts = { line_hl_group = hl, priority = 200 }
      if row == s and (d.message or d.hoverMessage) then
        opts.virt_text = { { " " .. (d.message or d.hoverMessage), hl } }
        opts.virt_text_pos = "eol"
      end
      vim.api.nvim_buf_set_extmark(b, ns, row, 0, opts)
    end
    applied = applied + 1
  end
  return { applied = applied, editorsUpdated = #vim.fn.win_findbuf(b) }
end)

reg("clearDecorations", function(p)
  local cleared = 0
  for id, ns in pairs(deco_ns) do
    if p.id == nil or p.id == id then
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_is_loaded(b) then
          vim.api.nvim_buf_clear_namespace(b, ns, 0, -1)
        end
      end
      cleared = cleared + 1
      deco_ns[id] = nil
    end
  end
  return { cleared = cleared }
end)

---------------------------------------------------------------- settings

-- Options an agent may change by default (none of them evaluates code).
local SAFE_OPTIONS = {
  "tabstop", "shiftwidth", "softtabstop", "expandtab", "textwidth", "wrap", "linebreak",
  "number", "relativenumber", "spell", "spelllang", "ignorecase", "smartcase", "colorcolumn",
  "list", "cursorline", "cursorcolumn", "fileformat", "signcolumn", "scrolloff", "autoindent",
  "smartindent", "hlsearch", "incsearch", "conceallevel", "foldenable", "background",
}

reg("getWorkspaceSettings", function(p)
  local section = p.section
  local settings = {}
  for name, info in pairs(vim.api.nvim_get_all_options_info()) do
    if not section or section == "" or name:sub(1, #section) == section then
      local ok, v = pcall(vim.api.nvim_get_option_value, name, {})
      if ok and type(v) ~= "function" then
        settings[name] = v
      end
    end
    local _ = info
  end
  if next(settings) == nil then
    settings = vim.empty_dict()
  end
  return { section = section or vim.NIL, settings = settings, editor = "neovim" }
end)

reg("setWorkspaceSetting", function(p)
  local key = need(p, "key")
  local allowed = cfg().allow_unsafe_options or vim.tbl_contains(SAFE_OPTIONS, key) or vim.tbl_contains(cfg().settings_allowlist or {}, key)
  if not allowed then
    fail("setting '" .. key .. "' is not allowed for agents (allowed: " .. table.concat(SAFE_OPTIONS, ", ") .. "; extend with setup{ settings_allowlist = {...} })")
  end
  local scope = (p.target == "global") and "global" or nil
  local ok, err = pcall(vim.api.nvim_set_option_value, key, p.value, scope and { scope = scope } or {})
  if not ok then
    fail(tostring(err))
  end
  return { set = true, key = key, target = p.target or "workspace" }
end)

---------------------------------------------------------------- commands

reg("executeVSCodeCommand", function(p)
  local command = need(p, "command")
  if not cfg().allow_commands then
    fail("running editor commands for agents is disabled in Neovim; enable it with require('ide_bridge').setup({ allow_commands = true })")
  end
  local args = {}
  for _, a in ipairs(p.args or {}) do
    table.insert(args, type(a) == "string" and a or vim.json.encode(a))
  end
  local line = command .. (#args > 0 and (" " .. table.concat(args, " ")) or "")
  local out = vim.api.nvim_exec2(line, { output = true })
  return { result = out.output }
end)

reg("listVSCodeCommands", function(p)
  local names = {}
  for name in pairs(vim.api.nvim_get_commands({ builtin = false })) do
    if not p.filter or name:lower():find(p.filter:lower(), 1, true) then
      table.insert(names, name)
    end
  end
  table.sort(names)
  local truncated = #names > 500
  if truncated then
    names = vim.list_slice(names, 1, 500)
  end
  return { commands = names, count = #names, truncated = truncated, runnable = cfg().allow_commands == true }
end)

reg("captureScreenshot", function()
  util.not_supported("captureScreenshot", "Neovim draws text in a terminal, not an image; use getFileContent or getSelection")
end)

---------------------------------------------------------------- file watches

local watches = {} -- id -> { handles, pattern }
local SKIP = { [".git"] = true, node_modules = true, target = true, [".venv"] = true, __pycache__ = true }

local function glob_matcher(pattern, root)
  local ok, lpeg_pat = pcall(vim.glob.to_lpeg, pattern)
  return function(path)
    local rel = path:sub(#root + 2)
    if ok then
      return lpeg_pat:match(rel) ~= nil or lpeg_pat:match(path) ~= nil
    end
    return vim.fn.match(rel, vim.fn.glob2regpat(pattern)) >= 0
  end
end

reg("watchFiles", function(p)
  local id, pattern = need(p, "id"), need(p, "pattern")
  local root = (client.state.bridge and client.state.bridge.workspace) or uv.cwd()
  if watches[id] then
    for _, h in ipairs(watches[id].handles) do
      h:stop()
    end
  end
  local matches = glob_matcher(pattern, root)
  local handles = {}
  local exists = {}
  local function watch_dir(dir, depth)
    if #handles >= (cfg().max_watched_dirs or 500) or depth > 20 then
      return
    end
    local h = uv.new_fs_event()
    local ok = h:start(dir, {}, function(err, name, ev)
      if err or not name then
        return
      end
      local full = dir .. "/" .. name
      vim.schedule(function()
        if not matches(full) then
          return
        end
        local present = uv.fs_stat(full) ~= nil
        local kind
        if ev.rename then
          kind = present and (exists[full] and "changed" or "created") or "deleted"
        else
          kind = "changed"
        end
        exists[full] = present
        client.notify("extension/fileChanged", { id = id, type = kind, file = full })
      end)
    end)
    if ok then
      table.insert(handles, h)
    end
    for name, kind in vim.fs.dir(dir) do
      if kind == "directory" and not SKIP[name] then
        watch_dir(dir .. "/" .. name, depth + 1)
      elseif kind == "file" then
        exists[dir .. "/" .. name] = true
      end
    end
  end
  watch_dir(root, 0)
  watches[id] = { handles = handles, pattern = pattern }
  return { watching = true, id = id, pattern = pattern, directories = #handles }
end)

reg("unwatchFiles", function(p)
  local id = need(p, "id")
  local w = watches[id]
  if not w then
    return { unwatched = false, id = id }
  end
  for _, h in ipairs(w.handles) do
    h:stop()
  end
  watches[id] = nil
  return { unwatched = true, id = id }
end)

return M
