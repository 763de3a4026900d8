-- bridge/claudeTaskOutput: output of Claude tasks (runClaudeTask, automation hooks),
-- collected in the scratch buffer ide-bridge://tasks (:IdeBridgeTasks shows it).
local client = require("ide_bridge.client")

local M = {}
M.tasks = {} -- taskId -> { status, chunks }
local buf

local function ensure_buf()
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, "ide-bridge://tasks")
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].filetype = "markdown"
  return buf
end

local function append(lines)
  local b = ensure_buf()
  local n = vim.api.nvim_buf_line_count(b)
  local first = vim.api.nvim_buf_get_lines(b, 0, 1, false)[1]
  if n == 1 and first == "" then
    vim.api.nvim_buf_set_lines(b, 0, 1, false, lines)
  else
    vim.api.nvim_buf_set_lines(b, n, n, false, lines)
  end
end

function M.open()
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, ensure_buf())
end

client.on_notification("bridge/claudeTaskOutput", function(p)
  local id = p.taskId or "?"
  local t = M.tasks[id]
  if not t then
    t = { status = "running", chunks = {} }
    M.tasks[id] = t
    append({ "## task " .. id })
  end
  if p.chunk then
    table.insert(t.chunks, p.chunk)
    append(vim.split(p.chunk, "\n", { plain = true }))
  end
  if p.status and p.status ~= t.status then
    t.status = p.status
    if p.status ~= "running" and p.status ~= "queued" then
      append({ "-- task " .. id .. ": " .. p.status .. (p.error and p.error ~= vim.NIL and (" (" .. tostring(p.error) .. ")") or "") })
      client.log(vim.log.levels.INFO, "Claude task " .. id .. " " .. p.status .. " (:IdeBridgeTasks)")
    end
  end
end)

return M
