-- What agents changed (bridge/agentChanges): an unmodified buffer of the file reloads
-- (as :checktime would), and the lines each agent changed that the person has not kept
-- or undone yet are marked in the sign column, with the agent's name at the end of the
-- run's first line. A modified buffer is never reloaded: Neovim says the file changed
-- on disk. :IdeBridgeChanges lists the marked lines in the quickfix list; keep or undo
-- them in the bridge's page (Changes) or with the undoChanges/keepChanges tools.

local M = {}

local ns = vim.api.nvim_create_namespace("ide_bridge_changes")

-- Absolute path -> list of {startLine, endLine, agent, session}.
M.by_file = {}

local function buffer_of(file)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_name(b) == file then
      return b
    end
  end
  return nil
end

-- Marks `runs` in buffer `buf` (replacing earlier marks).
local function mark(buf, runs)
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  local count = vim.api.nvim_buf_line_count(buf)
  for _, r in ipairs(runs) do
    local first = math.max(1, r.startLine)
    local last = math.min(count, r.endLine)
    for line = first, last do
      local opts = { sign_text = "▍", sign_hl_group = "DiffChange", priority = 5 }
      if line == first then
        opts.virt_text = { { "  " .. (r.agent or "agent"), "Comment" } }
        opts.virt_text_pos = "eol"
      end
      pcall(vim.api.nvim_buf_set_extmark, buf, ns, line - 1, 0, opts)
    end
  end
end

-- bridge/agentChanges {file, changes, written}: reload an unmodified buffer when the
-- file was written, then mark.
function M.on_changes(p)
  if type(p) ~= "table" or type(p.file) ~= "string" then
    return
  end
  M.by_file[p.file] = p.changes or {}
  vim.schedule(function()
    local buf = buffer_of(p.file)
    if not buf then
      return
    end
    -- Only a write changed the file (a keep only changes the marks).
    if p.written ~= false then
      if not vim.bo[buf].modified then
        vim.api.nvim_buf_call(buf, function()
          vim.cmd("silent! checktime " .. buf)
        end)
      else
        vim.notify("[ide-bridge] an agent changed " .. vim.fn.fnamemodify(p.file, ":~:.") .. " on disk; your buffer has unsaved changes and was not reloaded", vim.log.levels.WARN)
      end
    end
    mark(buf, M.by_file[p.file])
  end)
end

-- Marks of a buffer read (again) from disk.
function M.on_read(buf)
  local runs = M.by_file[vim.api.nvim_buf_get_name(buf)]
  if runs then
    mark(buf, runs)
  end
end

-- The marked lines as quickfix items.
function M.quickfix_items()
  local items = {}
  for file, runs in pairs(M.by_file) do
    for _, r in ipairs(runs) do
      table.insert(items, {
        filename = file,
        lnum = r.startLine,
        end_lnum = r.endLine,
        text = string.format("%s changed lines %d-%d", r.agent or "an agent", r.startLine, r.endLine),
      })
    end
  end
  table.sort(items, function(a, b)
    if a.filename ~= b.filename then
      return a.filename < b.filename
    end
    return a.lnum < b.lnum
  end)
  return items
end

function M.setup(client)
  client.on_notification("bridge/agentChanges", M.on_changes)
  vim.api.nvim_create_autocmd("BufReadPost", {
    group = vim.api.nvim_create_augroup("ide_bridge_changes", { clear = true }),
    callback = function(ev)
      M.on_read(ev.buf)
    end,
  })
end

M.namespace = ns

return M
