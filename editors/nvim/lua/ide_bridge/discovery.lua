-- Finding the bridge that serves a directory: lock files in $CLAUDE_CONFIG_DIR/ide/
-- (default ~/.claude/ide/) with "isBridge": true, a live pid, and the deepest
-- workspace folder that contains the directory.
local uv = vim.uv or vim.loop

local M = {}

function M.lock_dir()
  local base = vim.env.CLAUDE_CONFIG_DIR
  if not base or base == "" then
    base = (vim.env.HOME or uv.os_homedir()) .. "/.claude"
  end
  return base .. "/ide"
end

M.realpath = require("ide_bridge.util").realpath

local function pid_alive(pid)
  if type(pid) ~= "number" then
    return false
  end
  local ok, err = uv.kill(pid, 0)
  -- EPERM: alive but not ours.
  return ok == 0 or (err ~= nil and tostring(err):find("EPERM") ~= nil)
end
M.pid_alive = pid_alive

local function contains(folder, dir)
  if folder == dir then
    return true
  end
  local prefix = folder:sub(-1) == "/" and folder or folder .. "/"
  return dir:sub(1, #prefix) == prefix
end

--- Every live bridge lock: { port, token, pid, folders, workspace (deepest match or nil) }.
function M.list(dir)
  dir = M.realpath(dir or uv.cwd())
  local out = {}
  local lockdir = M.lock_dir()
  local handle = uv.fs_scandir(lockdir)
  if not handle then
    return out
  end
  while true do
    local name, kind = uv.fs_scandir_next(handle)
    if not name then
      break
    end
    local port = name:match("^(%d+)%.lock$")
    if port and (kind == "file" or kind == nil) then
      local fd = io.open(lockdir .. "/" .. name, "r")
      local text = fd and fd:read("*a")
      if fd then
        fd:close()
      end
      local ok, data = pcall(vim.json.decode, text or "")
      if ok and type(data) == "table" and data.isBridge == true and pid_alive(data.pid) then
        local best
        for _, f in ipairs(data.workspaceFolders or {}) do
          local rf = M.realpath(f)
          if contains(rf, dir) and (not best or #rf > #best) then
            best = rf
          end
        end
        table.insert(out, {
          port = tonumber(port),
          token = data.authToken,
          pid = data.pid,
          folders = data.workspaceFolders or {},
          ide_name = data.ideName,
          workspace = best,
          lock = lockdir .. "/" .. name,
        })
      end
    end
  end
  return out
end

--- The bridge serving `dir` (deepest workspace folder wins), or nil.
function M.find(dir)
  local best
  for _, b in ipairs(M.list(dir)) do
    if b.workspace and (not best or #b.workspace > #best.workspace) then
      best = b
    end
  end
  return best
end

return M
