-- Language features through vim.lsp: definition, references, hover, code actions,
-- rename, document and workspace symbols, call and type hierarchy, inlay hints,
-- formatting, organize imports, fix all.
local client = require("ide_bridge.client")
local util = require("ide_bridge.util")
local uv = vim.uv or vim.loop

local M = {}
local reg = client.register
local fail = util.fail
local ASYNC = client.ASYNC

local function cfg()
  return require("ide_bridge").config
end

local function supports(c, method, buf)
  if not c.supports_method then
    return true
  end
  local ok, r
  if vim.fn.has("nvim-0.11") == 1 then
    ok, r = pcall(c.supports_method, c, method, buf)
  else
    ok, r = pcall(c.supports_method, method, { bufnr = buf })
  end
  return not ok or r
end

local function get_clients(buf)
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  return get({ bufnr = buf })
end

--- Waits until a language server supporting `method` is attached to `buf` and
--- initialized; cb(client) or cb(nil, err).
local function with_client(buf, method, cb)
  local start = uv.now()
  local timeout = cfg().lsp_attach_timeout_ms
  local timer = uv.new_timer()
  timer:start(0, 50, vim.schedule_wrap(function()
    if timer:is_closing() then
      return
    end
    local attached = get_clients(buf)
    local ready = {}
    for _, c in ipairs(attached) do
      if c.initialized ~= false and c.server_capabilities and supports(c, method, buf) then
        table.insert(ready, c)
      end
    end
    local any_initialized = false
    for _, c in ipairs(attached) do
      if c.initialized ~= false and c.server_capabilities then
        any_initialized = true
      end
    end
    if #ready > 0 or (any_initialized and #ready == 0) or uv.now() - start > timeout then
      timer:stop()
      timer:close()
      if #ready > 0 then
        return cb(ready[1])
      end
      if #attached == 0 then
        return cb(nil, "no language server is attached to " .. (util.buf_path(buf) or "this buffer") .. " in Neovim (configure one with vim.lsp.config / lspconfig)")
      end
      local names = {}
      for _, c in ipairs(attached) do
        table.insert(names, c.name)
      end
      return cb(nil, "the language server(s) " .. table.concat(names, ", ") .. " attached to this file do not support " .. method)
    end
  end))
end

--- One LSP request; answers within `lsp_timeout_ms` (the bridge's own timeout is
--- longer, so a slow server gives a clear error instead of tripping its breaker).
local function request(c, method, params, buf, cb)
  local settled = false
  local timer = uv.new_timer()
  local req_id
  local function finish(err, result)
    if settled then
      return
    end
    settled = true
    if not timer:is_closing() then
      timer:stop()
      timer:close()
    end
    vim.schedule(function()
      cb(err, result)
    end)
  end
  local timeout = cfg().lsp_timeout_ms
  timer:start(timeout, 0, function()
    if req_id then
      vim.schedule(function()
        pcall(function()
          if vim.fn.has("nvim-0.11") == 1 then
            c:cancel_request(req_id)
          else
            c.cancel_request(req_id)
          end
        end)
      end)
    end
    finish({ message = string.format("the language server %s did not answer %s within %d ms", c.name, method, timeout) })
  end)
  local ok
  if vim.fn.has("nvim-0.11") == 1 then
    ok, req_id = c:request(method, params, finish, buf)
  else
    ok, req_id = c.request(method, params, finish, buf)
  end
  if not ok then
    finish({ message = "the language server " .. c.name .. " refused " .. method })
  end
end

--- Runs one LSP request for `file`; answer(client, result) returns the protocol answer.
local function lsp_call(file, method, make_params, answer, done)
  local buf = util.ensure_buf(file, false)
  with_client(buf, method, function(c, err)
    if not c then
      return done(nil, err)
    end
    local enc = c.offset_encoding or "utf-16"
    local ok, params = util.pcall_msg(make_params, buf, enc, c)
    if not ok then
      return done(nil, params)
    end
    request(c, method, params, buf, function(rerr, result)
      if rerr then
        return done(nil, c.name .. ": " .. (rerr.message or vim.inspect(rerr)))
      end
      local aok, v = util.pcall_msg(answer, c, result, buf)
      if not aok then
        return done(nil, v)
      end
      done(v)
    end)
  end)
  return ASYNC
end

--- LSP position params from protocol 1-based line/column.
local function position(buf, line, column, enc)
  local row, byte = util.proto_to_byte(buf, line, column)
  return { line = row, character = util.byte_to_units(util.line_text(buf, row), byte, enc) }
end

local function text_doc(buf)
  return { uri = vim.uri_from_bufnr(buf) }
end

local function pos_params(p)
  return function(buf, enc)
    return { textDocument = text_doc(buf), position = position(buf, p.line, p.column, enc) }
  end
end

local function range_params(buf, p, enc)
  return {
    start = position(buf, p.startLine, p.startColumn, enc),
    ["end"] = position(buf, p.endLine or p.startLine, p.endColumn or p.startColumn, enc),
  }
end

--- An LSP Location/LocationLink -> {file, line, column, endLine, endColumn} (1-based).
local function location(loc, enc)
  local uri = loc.uri or loc.targetUri
  local range = loc.range or loc.targetSelectionRange or loc.targetRange
  local path = util.uri_to_path(uri)
  local l, c = util.lsp_pos_to_proto(path, range.start, enc)
  local el, ec = util.lsp_pos_to_proto(path, range["end"], enc)
  return { file = path, line = l, column = c, endLine = el, endColumn = ec }
end

local function locations(result, enc)
  if result == nil then
    return {}
  end
  if result.uri or result.targetUri then
    result = { result }
  end
  local out = {}
  for _, loc in ipairs(result) do
    table.insert(out, location(loc, enc))
  end
  return out
end

local function need_file(p)
  if not p.file then
    fail("file is required")
  end
  return p.file
end

reg("goToDefinition", function(p, done)
  return lsp_call(need_file(p), "textDocument/definition", pos_params(p), function(c, result)
    local locs = locations(result, c.offset_encoding)
    if #locs == 0 then
      return vim.NIL
    end
    return locs
  end, done)
end)

reg("findReferences", function(p, done)
  return lsp_call(need_file(p), "textDocument/references", function(buf, enc)
    local params = pos_params(p)(buf, enc)
    params.context = { includeDeclaration = true }
    return params
  end, function(c, result)
    local refs = locations(result, c.offset_encoding)
    return { references = refs, count = #refs }
  end, done)
end)

local function hover_strings(contents)
  local out = {}
  local function add(x)
    if type(x) == "string" then
      if x ~= "" then
        table.insert(out, x)
      end
    elseif type(x) == "table" then
      if x.kind then -- MarkupContent
        add(x.value)
      elseif x.language then -- MarkedString
        add("```" .. x.language .. "\n" .. (x.value or "") .. "\n```")
      elseif x.value then
        add(x.value)
      else
        for _, y in ipairs(x) do
          add(y)
        end
      end
    end
  end
  add(contents)
  return out
end

reg("getHover", function(p, done)
  return lsp_call(need_file(p), "textDocument/hover", pos_params(p), function(c, result, buf)
    if not result or not result.contents then
      return vim.NIL
    end
    local contents = hover_strings(result.contents)
    if #contents == 0 then
      return vim.NIL
    end
    local range = vim.NIL
    if result.range then
      local path = util.buf_path(buf)
      local l, col = util.lsp_pos_to_proto(path, result.range.start, c.offset_encoding)
      local el, ec = util.lsp_pos_to_proto(path, result.range["end"], c.offset_encoding)
      range = { startLine = l, startColumn = col, endLine = el, endColumn = ec }
    end
    return { contents = contents, range = range }
  end, done)
end)

---------------------------------------------------------------- code actions

local function diagnostics_in(buf, range)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.lnum <= range["end"].line and (d.end_lnum or d.lnum) >= range.start.line then
      local lsp = d.user_data and d.user_data.lsp
      if lsp then
        table.insert(out, lsp)
      else
        table.insert(out, {
          range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col } },
          message = d.message,
          severity = d.severity,
          source = d.source,
        })
      end
    end
  end
  return out
end

local function code_action_params(p, only)
  return function(buf, enc)
    local range
    if p.startLine then
      range = range_params(buf, p, enc)
    else
      local n = vim.api.nvim_buf_line_count(buf)
      range = { start = { line = 0, character = 0 }, ["end"] = { line = n - 1, character = #util.line_text(buf, n - 1) } }
    end
    return {
      textDocument = text_doc(buf),
      range = range,
      context = { diagnostics = diagnostics_in(buf, range), only = only, triggerKind = 1 },
    }
  end
end

--- Applies one code action (its edit, then its command); cb(err).
local function apply_action(c, action, buf, cb)
  local function run_command(cmd)
    if not cmd then
      return cb(nil)
    end
    local command = type(cmd.command) == "table" and cmd.command or cmd
    request(c, "workspace/executeCommand", { command = command.command, arguments = command.arguments }, buf, function(err)
      cb(err and (err.message or vim.inspect(err)) or nil)
    end)
  end
  local function apply(a)
    if a.edit then
      vim.lsp.util.apply_workspace_edit(a.edit, c.offset_encoding or "utf-16")
    end
    if a.command then
      return run_command(a.command)
    elseif a.title and a.arguments and type(a.command) == "string" then
      return run_command(a)
    end
    cb(nil)
  end
  if type(action.command) == "string" and not action.edit and not action.kind then
    return run_command(action) -- a bare Command
  end
  if not action.edit and action.data ~= nil and c.server_capabilities.codeActionProvider
    and type(c.server_capabilities.codeActionProvider) == "table"
    and c.server_capabilities.codeActionProvider.resolveProvider then
    return request(c, "codeAction/resolve", action, buf, function(err, resolved)
      if err then
        return cb(err.message or vim.inspect(err))
      end
      apply(resolved or action)
    end)
  end
  apply(action)
end

reg("getCodeActions", function(p, done)
  return lsp_call(need_file(p), "textDocument/codeAction", code_action_params(p), function(_, result)
    local actions = {}
    for _, a in ipairs(result or {}) do
      table.insert(actions, { title = a.title, kind = a.kind or vim.NIL, isPreferred = a.isPreferred == true })
    end
    return { actions = actions }
  end, done)
end)

reg("applyCodeAction", function(p, done)
  local file = need_file(p)
  local buf = util.ensure_buf(file, false)
  local method = "textDocument/codeAction"
  with_client(buf, method, function(c, err)
    if not c then
      return done(nil, err)
    end
    request(c, method, code_action_params(p)(buf, c.offset_encoding or "utf-16"), buf, function(rerr, result)
      if rerr then
        return done(nil, rerr.message)
      end
      local titles = {}
      for _, a in ipairs(result or {}) do
        table.insert(titles, a.title)
        if a.title == p.actionTitle then
          return apply_action(c, a, buf, function(e)
            if e then
              return done({ applied = false, title = a.title, error = e })
            end
            done({ applied = true, title = a.title })
          end)
        end
      end
      done({ applied = false, error = "no code action titled '" .. tostring(p.actionTitle) .. "' (available: " .. table.concat(titles, "; ") .. ")" })
    end)
  end)
  return ASYNC
end)

--- Requests code actions of `kinds` for the whole file and applies them all.
local function apply_kinds(file, kinds, done, filter)
  local buf = util.ensure_buf(file, false)
  local method = "textDocument/codeAction"
  with_client(buf, method, function(c, err)
    if not c then
      return done(nil, err)
    end
    request(c, method, code_action_params({}, kinds)(buf, c.offset_encoding or "utf-16"), buf, function(rerr, result)
      if rerr then
        return done(nil, rerr.message)
      end
      local todo = {}
      for _, a in ipairs(result or {}) do
        if not filter or filter(a) then
          table.insert(todo, a)
        end
      end
      local n, i = 0, 0
      local function step()
        i = i + 1
        if i > #todo then
          return done({ success = true, actionsApplied = n })
        end
        apply_action(c, todo[i], buf, function(e)
          if not e then
            n = n + 1
          end
          step()
        end)
      end
      step()
    end)
  end)
  return ASYNC
end

reg("organizeImports", function(p, done)
  return apply_kinds(need_file(p), { "source.organizeImports" }, done, function(a)
    return a.kind == nil or a.kind:find("^source%.organizeImports") ~= nil
  end)
end)

reg("fixAllLintErrors", function(p, done)
  return apply_kinds(need_file(p), { "source.fixAll", "quickfix" }, done, function(a)
    return (a.kind and a.kind:find("^source%.fixAll") ~= nil) or a.isPreferred == true
  end)
end)

reg("formatDocument", function(p, done)
  return lsp_call(need_file(p), "textDocument/formatting", function(buf)
    return { textDocument = text_doc(buf), options = { tabSize = vim.bo[buf].shiftwidth > 0 and vim.bo[buf].shiftwidth or vim.bo[buf].tabstop, insertSpaces = vim.bo[buf].expandtab } }
  end, function(c, result, buf)
    local edits = result or {}
    if #edits > 0 then
      vim.lsp.util.apply_text_edits(edits, buf, c.offset_encoding or "utf-16")
    end
    return { success = true, editsApplied = #edits }
  end, done)
end)

reg("renameSymbol", function(p, done)
  return lsp_call(need_file(p), "textDocument/rename", function(buf, enc)
    local params = pos_params(p)(buf, enc)
    params.newName = p.newName
    return params
  end, function(c, result)
    if not result then
      return { success = false, error = "the language server found nothing to rename there" }
    end
    local files, edits = {}, 0
    for uri, list in pairs(result.changes or {}) do
      files[vim.uri_to_fname(uri)] = true
      edits = edits + #list
    end
    for _, change in ipairs(result.documentChanges or {}) do
      if change.textDocument then
        files[vim.uri_to_fname(change.textDocument.uri)] = true
        edits = edits + #(change.edits or {})
      end
    end
    vim.lsp.util.apply_workspace_edit(result, c.offset_encoding or "utf-16")
    return { success = true, affectedFiles = vim.tbl_keys(files), totalEdits = edits }
  end, done)
end)

---------------------------------------------------------------- symbols

local kind_names = {}
for name, n in pairs(vim.lsp.protocol.SymbolKind) do
  if type(name) == "string" then
    kind_names[n] = name
  end
end

local function flatten_symbols(list, path, enc, out, container)
  for _, s in ipairs(list or {}) do
    local range = s.selectionRange or s.range or (s.location and s.location.range)
    local file = path or (s.location and util.uri_to_path(s.location.uri))
    local l, c = 1, 1
    if range and file then
      l, c = util.lsp_pos_to_proto(file, range.start, enc)
    end
    local el = l
    if s.range and file then
      el = util.lsp_pos_to_proto(file, s.range["end"], enc)
    end
    table.insert(out, {
      name = s.name,
      kind = kind_names[s.kind] or tostring(s.kind),
      detail = s.detail or vim.NIL,
      file = file,
      line = l,
      column = c,
      endLine = el,
      containerName = s.containerName or container or vim.NIL,
    })
    if s.children then
      flatten_symbols(s.children, path, enc, out, s.name)
    end
  end
  return out
end

reg("getDocumentSymbols", function(p, done)
  return lsp_call(need_file(p), "textDocument/documentSymbol", function(buf)
    return { textDocument = text_doc(buf) }
  end, function(c, result, buf)
    local symbols = flatten_symbols(result, util.buf_path(buf), c.offset_encoding, {})
    return { symbols = symbols, count = #symbols }
  end, done)
end)

reg("searchSymbols", function(p, done)
  local query = p.query or ""
  local max = math.min(p.maxResults or 100, 200)
  local q = query:lower()
  -- Every server once: workspace/symbol where it answers that; else the document
  -- symbols of each loaded buffer it serves. The answers are merged (one server per
  -- language: asking only the first would leave the others' languages out).
  local by_workspace, by_document, asked = {}, {}, {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and util.buf_path(b) then
      for _, c in ipairs(get_clients(b)) do
        if supports(c, "workspace/symbol", b) and c.server_capabilities.workspaceSymbolProvider then
          if not asked[c.id] then
            asked[c.id] = true
            table.insert(by_workspace, { c = c, b = b })
          end
        elseif c.server_capabilities.documentSymbolProvider then
          table.insert(by_document, { c = c, b = b })
        end
      end
    end
  end
  local pending = #by_workspace + #by_document
  if pending == 0 then
    fail("no language server with symbols is attached to any open buffer")
  end
  local sources = {}
  if #by_workspace > 0 then
    table.insert(sources, "workspace/symbol")
  end
  if #by_document > 0 then
    table.insert(sources, "documentSymbol of open buffers")
  end
  local all, failures = {}, {}
  local function answered()
    pending = pending - 1
    if pending > 0 then
      return
    end
    if #all == 0 and #failures > 0 then
      return done(nil, table.concat(failures, "; "))
    end
    local truncated = #all > max
    if truncated then
      all = vim.list_slice(all, 1, max)
    end
    done({ symbols = all, count = #all, truncated = truncated, source = table.concat(sources, " and ") })
  end
  for _, t in ipairs(by_workspace) do
    request(t.c, "workspace/symbol", { query = query }, t.b, function(err, result)
      if err then
        table.insert(failures, t.c.name .. ": " .. tostring(err.message))
      else
        vim.list_extend(all, flatten_symbols(result, nil, t.c.offset_encoding, {}))
      end
      answered()
    end)
  end
  for _, t in ipairs(by_document) do
    request(t.c, "textDocument/documentSymbol", { textDocument = text_doc(t.b) }, t.b, function(_, result)
      for _, s in ipairs(flatten_symbols(result, util.buf_path(t.b), t.c.offset_encoding, {})) do
        if s.name:lower():find(q, 1, true) then
          table.insert(all, s)
        end
      end
      answered()
    end)
  end
  return ASYNC
end)

---------------------------------------------------------------- hierarchies

local function item_out(item, enc)
  local path = util.uri_to_path(item.uri)
  local l, c = util.lsp_pos_to_proto(path, (item.selectionRange or item.range).start, enc)
  return { name = item.name, kind = kind_names[item.kind] or tostring(item.kind), detail = item.detail or vim.NIL, file = path, line = l, column = c }
end

reg("getCallHierarchy", function(p, done)
  need_file(p)
  local dir = p.direction or "both"
  local dirs = {}
  if dir == "incoming" or dir == "both" then
    table.insert(dirs, { key = "incoming", method = "callHierarchy/incomingCalls", field = "from" })
  end
  if dir == "outgoing" or dir == "both" then
    table.insert(dirs, { key = "outgoing", method = "callHierarchy/outgoingCalls", field = "to" })
  end
  local buf = util.ensure_buf(p.file, false)
  with_client(buf, "textDocument/prepareCallHierarchy", function(c, err)
    if not c then
      return done(nil, err)
    end
    M._hier(c, buf, p, "textDocument/prepareCallHierarchy", dirs, vim.NIL, function(root)
      return { symbol = root }
    end, done)
  end)
  return ASYNC
end)

reg("getTypeHierarchy", function(p, done)
  need_file(p)
  local dir = p.direction or "both"
  local dirs = {}
  if dir == "supertypes" or dir == "both" then
    table.insert(dirs, { key = "supertypes", method = "typeHierarchy/supertypes" })
  end
  if dir == "subtypes" or dir == "both" then
    table.insert(dirs, { key = "subtypes", method = "typeHierarchy/subtypes" })
  end
  local buf = util.ensure_buf(p.file, false)
  with_client(buf, "textDocument/prepareTypeHierarchy", function(c, err)
    if not c then
      return done(nil, err)
    end
    M._hier(c, buf, p, "textDocument/prepareTypeHierarchy", dirs, { found = false }, function(root)
      return { found = true, root = root }
    end, done)
  end)
  return ASYNC
end)

function M._hier(c, buf, p, prepare, dirs, empty, shape, done)
  local enc = c.offset_encoding or "utf-16"
  request(c, prepare, pos_params(p)(buf, enc), buf, function(rerr, items)
    if rerr then
      return done(nil, rerr.message)
    end
    if not items or #items == 0 then
      return done(empty)
    end
    local item = items[1]
    local out = shape(item_out(item, enc))
    local pending = #dirs
    if pending == 0 then
      return done(out)
    end
    local max = p.maxResults or 50
    for _, d in ipairs(dirs) do
      request(c, d.method, { item = item }, buf, function(e2, res)
        local list = {}
        if not e2 then
          for _, r in ipairs(res or {}) do
            if #list >= max then
              break
            end
            table.insert(list, item_out(d.field and r[d.field] or r, enc))
          end
        end
        out[d.key] = list
        pending = pending - 1
        if pending == 0 then
          done(out)
        end
      end)
    end
  end)
end

---------------------------------------------------------------- inlay hints

reg("getInlayHints", function(p, done)
  return lsp_call(need_file(p), "textDocument/inlayHint", function(buf, enc)
    local n = vim.api.nvim_buf_line_count(buf)
    local s = math.max(1, math.min(p.startLine or 1, n)) - 1
    local e = math.max(1, math.min(p.endLine or n, n)) - 1
    return { textDocument = text_doc(buf), range = { start = { line = s, character = 0 }, ["end"] = { line = e, character = #util.line_text(buf, e) } } }
  end, function(c, result, buf)
    local hints = {}
    local path = util.buf_path(buf)
    for _, h in ipairs(result or {}) do
      local label = h.label
      if type(label) == "table" then
        local parts = {}
        for _, part in ipairs(label) do
          table.insert(parts, part.value)
        end
        label = table.concat(parts)
      end
      local l, col = util.lsp_pos_to_proto(path, h.position, c.offset_encoding)
      local tooltip = h.tooltip
      if type(tooltip) == "table" then
        tooltip = tooltip.value
      end
      table.insert(hints, { position = { line = l, column = col }, label = label, kind = h.kind == 1 and "type" or (h.kind == 2 and "parameter" or vim.NIL), tooltip = tooltip or vim.NIL })
    end
    return { hints = hints, count = #hints }
  end, done)
end)

return M
