-- Helpers: paths, buffers, and column conversions between the protocol (1-based,
-- UTF-16 code units like VS Code and LSP), LSP encodings and Neovim byte columns.
local uv = vim.uv or vim.loop

local M = {}

--- The error a request handler raises; its message reaches the agent.
function M.fail(msg)
  error({ ide_bridge = true, message = msg }, 0)
end

function M.not_supported(method, why)
  M.fail(string.format("%s is not supported in Neovim%s", method, why and (": " .. why) or ""))
end

function M.realpath(p)
  if not p or p == "" then
    return p
  end
  return uv.fs_realpath(p) or vim.fs.normalize(p)
end

--- The absolute path of a file buffer, or nil for special buffers.
function M.buf_path(buf)
  if not vim.api.nvim_buf_is_valid(buf) then
    return nil
  end
  if vim.bo[buf].buftype ~= "" then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return nil
  end
  return M.realpath(name)
end

--- The loaded buffer of `path`, or nil.
function M.find_buf(path)
  local want = M.realpath(path)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and M.buf_path(b) == want then
      return b
    end
  end
  return nil
end

--- The buffer of `path`, loaded (without showing it).
--- The buffer of `path`, loaded (not shown). `listed` (default true) puts it in the
--- buffer list: a buffer an agent edits is the person's to see and save; one a
--- language request only reads stays out of `:ls`.
function M.ensure_buf(path, listed)
  listed = listed ~= false
  local b = M.find_buf(path)
  if b then
    if listed then
      vim.bo[b].buflisted = true
    end
    return b
  end
  b = vim.fn.bufadd(path)
  vim.bo[b].buflisted = listed
  -- A swap file of another Vim (or one a crash left) would stop the load with E325
  -- and a prompt nobody sees: load it as "edit anyway" does (the swap file stays).
  local shortmess = vim.o.shortmess
  vim.o.shortmess = shortmess .. "A"
  local ok, err = pcall(vim.fn.bufload, b)
  vim.o.shortmess = shortmess
  if not ok then
    error(err, 0)
  end
  -- bufload does not run filetype detection for a buffer never shown.
  if vim.bo[b].filetype == "" then
    local ft = vim.filetype.match({ buf = b, filename = path })
    if ft then
      vim.bo[b].filetype = ft
    end
  end
  return b
end

function M.file_exists(path)
  return uv.fs_stat(path) ~= nil
end

function M.read_file(path)
  local fd = io.open(path, "rb")
  if not fd then
    return nil
  end
  local s = fd:read("*a")
  fd:close()
  return s
end

function M.write_file(path, content)
  vim.fn.mkdir(vim.fs.dirname(path), "p")
  local fd, err = io.open(path, "wb")
  if not fd then
    M.fail("cannot write " .. path .. ": " .. tostring(err))
  end
  fd:write(content)
  fd:close()
end

--- Buffer text as one string (with a final newline when the buffer has one).
function M.buf_text(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local text = table.concat(lines, "\n")
  if vim.bo[buf].eol or vim.bo[buf].fixeol then
    text = text .. "\n"
  end
  return text
end

function M.language_id(buf, path)
  local ft = buf and vim.bo[buf].filetype or ""
  if ft == "" and path then
    ft = vim.filetype.match({ filename = path }) or ""
  end
  local map = { sh = "shellscript", cs = "csharp", text = "plaintext", [""] = "plaintext" }
  return map[ft] or ft
end

-- UTF-8 walk: calls f(byte_index0, cp_units_utf16, cp_bytes) per code point.
local function units(cp_bytes, first, enc)
  if enc == "utf-8" then
    return cp_bytes
  elseif enc == "utf-32" then
    return 1
  end
  -- utf-16: code points beyond the BMP (4-byte UTF-8) take two units.
  return cp_bytes == 4 and 2 or 1
end

local function cp_len(b)
  if b < 0x80 then
    return 1
  elseif b >= 0xF0 then
    return 4
  elseif b >= 0xE0 then
    return 3
  elseif b >= 0xC0 then
    return 2
  end
  return 1
end

--- Byte offset (0-based) in `line` of `col` units (0-based) in encoding `enc`.
function M.units_to_byte(line, col, enc)
  enc = enc or "utf-16"
  if enc == "utf-8" then
    return math.min(col, #line)
  end
  local i, u = 1, 0
  while i <= #line and u < col do
    local n = cp_len(line:byte(i))
    u = u + units(n, line:byte(i), enc)
    i = i + n
  end
  return i - 1
end

--- Units (0-based) in `enc` of byte offset `byte` (0-based) in `line`.
function M.byte_to_units(line, byte, enc)
  enc = enc or "utf-16"
  if enc == "utf-8" then
    return byte
  end
  local i, u = 1, 0
  while i <= #line and i - 1 < byte do
    local n = cp_len(line:byte(i))
    u = u + units(n, line:byte(i), enc)
    i = i + n
  end
  return u
end

function M.line_text(buf, line0)
  return vim.api.nvim_buf_get_lines(buf, line0, line0 + 1, false)[1] or ""
end

--- Protocol position (1-based line, 1-based UTF-16 column) -> 0-based row, byte col.
function M.proto_to_byte(buf, line, col)
  local row = math.max((line or 1) - 1, 0)
  local count = vim.api.nvim_buf_line_count(buf)
  if row >= count then
    row = count - 1
    return row, #M.line_text(buf, row)
  end
  return row, M.units_to_byte(M.line_text(buf, row), math.max((col or 1) - 1, 0), "utf-16")
end

--- 0-based row and byte col -> protocol line, column (1-based, UTF-16).
function M.byte_to_proto(buf, row, byte)
  return row + 1, M.byte_to_units(M.line_text(buf, row), byte, "utf-16") + 1
end

--- Converts an LSP position in encoding `enc` to protocol 1-based (UTF-16) for `path`.
function M.lsp_pos_to_proto(path, pos, enc)
  if enc == "utf-16" or not enc then
    return pos.line + 1, pos.character + 1
  end
  local buf = M.find_buf(path)
  local line
  if buf then
    line = M.line_text(buf, pos.line)
  else
    local text = M.read_file(path) or ""
    local n = 0
    for l in (text .. "\n"):gmatch("([^\n]*)\n") do
      if n == pos.line then
        line = l
        break
      end
      n = n + 1
    end
  end
  line = line or ""
  local byte = M.units_to_byte(line, pos.character, enc)
  return pos.line + 1, M.byte_to_units(line, byte, "utf-16") + 1
end

function M.uri_to_path(uri)
  return vim.uri_to_fname(uri)
end

--- Runs `fn` in a protected call; returns ok, result_or_error_message.
function M.pcall_msg(fn, ...)
  local ok, res = pcall(fn, ...)
  if ok then
    return true, res
  end
  if type(res) == "table" and res.message then
    return false, res.message
  end
  return false, tostring(res)
end

return M
