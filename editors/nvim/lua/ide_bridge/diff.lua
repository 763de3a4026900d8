-- openDiff: the proposed change in a new tab page, original on the left, proposal on
-- the right (focused, editable). Accept with :w (or the accept mapping / command):
-- FILE_SAVED with the final text, the user's own edits included. Reject with :q (or
-- the reject mapping / command): DIFF_REJECTED. The file itself is not written: the
-- agent does that; open buffers of it are reloaded afterwards.
local client = require("ide_bridge.client")
local util = require("ide_bridge.util")

local M = {}

M.diffs = {} -- tabName -> diff
local counter = 0

local function cfg()
  return require("ide_bridge").config
end

local function split_lines(text)
  local eol = text:sub(-1) == "\n"
  if eol then
    text = text:sub(1, -2)
  end
  return vim.split(text, "\n", { plain = true }), eol
end

local function close_view(d)
  d.closing = true
  local tab = d.tab
  if tab and vim.api.nvim_tabpage_is_valid(tab) then
    if #vim.api.nvim_list_tabpages() > 1 then
      local ok = pcall(function()
        vim.cmd("tabclose " .. vim.api.nvim_tabpage_get_number(tab))
      end)
      if not ok then
        pcall(vim.cmd, "tabclose! " .. vim.api.nvim_tabpage_get_number(tab))
      end
    else
      for _, w in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
        pcall(function()
          -- The diff's windows kept their buffers; this one takes another now.
          vim.wo[w].winfixbuf = false
        end)
        pcall(function()
          vim.api.nvim_win_call(w, function()
            vim.cmd("diffoff")
          end)
        end)
      end
      local wins = vim.api.nvim_tabpage_list_wins(tab)
      for i = 2, #wins do
        pcall(vim.api.nvim_win_close, wins[i], true)
      end
      if wins[1] and vim.api.nvim_win_is_valid(wins[1]) then
        local alt = d.return_buf
        if alt and vim.api.nvim_buf_is_valid(alt) then
          vim.api.nvim_win_set_buf(wins[1], alt)
        else
          vim.api.nvim_win_set_buf(wins[1], vim.api.nvim_create_buf(true, false))
        end
      end
    end
  end
  for _, b in ipairs({ d.left, d.right }) do
    if b and vim.api.nvim_buf_is_valid(b) then
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
  end
end

local function reload_later(path)
  for _, ms in ipairs({ 300, 1500 }) do
    vim.defer_fn(function()
      local b = util.find_buf(path)
      if b and not vim.bo[b].modified then
        pcall(vim.cmd, "checktime " .. b)
      end
    end, ms)
  end
end

--- Settles a diff: `content` (accepted) or nil (rejected).
local function settle(d, accepted, content)
  if d.settled then
    return
  end
  d.settled = true
  M.diffs[d.tab_name] = nil
  if accepted then
    d.done({ decision = "FILE_SAVED", content = content })
    reload_later(d.new_path)
    client.log(vim.log.levels.INFO, "accepted the change to " .. vim.fn.fnamemodify(d.new_path, ":~:."))
  else
    d.done({ decision = "DIFF_REJECTED", tabName = d.tab_name })
    client.log(vim.log.levels.INFO, "rejected the change to " .. vim.fn.fnamemodify(d.new_path, ":~:."))
  end
  vim.schedule(function()
    close_view(d)
  end)
end

function M.current()
  local b = vim.api.nvim_get_current_buf()
  for _, d in pairs(M.diffs) do
    if d.right == b or d.left == b then
      return d
    end
  end
  -- Otherwise the only pending one.
  local only, n = nil, 0
  for _, d in pairs(M.diffs) do
    only, n = d, n + 1
  end
  return n == 1 and only or nil
end

function M.accept(d)
  d = d or M.current()
  if not d then
    return vim.notify("[ide-bridge] no pending diff here", vim.log.levels.WARN)
  end
  local lines = vim.api.nvim_buf_get_lines(d.right, 0, -1, false)
  local text = table.concat(lines, "\n")
  if d.eol then
    text = text .. "\n"
  end
  vim.bo[d.right].modified = false
  settle(d, true, text)
end

function M.reject(d)
  d = d or M.current()
  if not d then
    return vim.notify("[ide-bridge] no pending diff here", vim.log.levels.WARN)
  end
  settle(d, false)
end

--- The bridge already settled it (bridge/closeDiff, or the editor disconnected).
function M.close(tab_name, why)
  local d = M.diffs[tab_name]
  if not d then
    return false
  end
  d.settled = true
  M.diffs[tab_name] = nil
  close_view(d)
  if why then
    client.log(vim.log.levels.INFO, "closed the diff " .. tab_name .. ": " .. why)
  end
  return true
end

function M.close_all(why)
  for name in pairs(vim.deepcopy(M.diffs)) do
    M.close(name, why)
  end
end

client.register("openDiff", function(p, done)
  local old_path = p.oldFilePath or p.newFilePath
  local new_path = p.newFilePath or p.oldFilePath
  if not new_path then
    util.fail("newFilePath is required")
  end
  local tab_name = p.tabName or new_path
  M.close(tab_name, "replaced by a newer diff with the same name")
  local old_text = util.read_file(old_path) or ""
  local old_lines = split_lines(old_text)
  local new_lines, eol = split_lines(p.newFileContents or "")
  counter = counter + 1
  local return_buf = vim.api.nvim_get_current_buf()
  local ft = vim.filetype.match({ filename = new_path }) or ""

  vim.cmd("tabnew")
  local tab = vim.api.nvim_get_current_tabpage()
  local left = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_name(left, string.format("ide-bridge://%d/%s (original)", counter, vim.fs.basename(old_path)))
  vim.api.nvim_buf_set_lines(left, 0, -1, false, old_lines)
  for k, v in pairs({ buftype = "nofile", bufhidden = "wipe", swapfile = false, modifiable = false, readonly = true }) do
    vim.bo[left][k] = v
  end
  if ft ~= "" then
    vim.bo[left].filetype = ft
  end
  vim.cmd("diffthis")
  local left_win = vim.api.nvim_get_current_win()

  vim.cmd("rightbelow vnew")
  local right = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_name(right, string.format("ide-bridge://%d/%s (proposed: :w accepts, :q rejects)", counter, vim.fs.basename(new_path)))
  vim.api.nvim_buf_set_lines(right, 0, -1, false, new_lines)
  for k, v in pairs({ buftype = "acwrite", bufhidden = "wipe", swapfile = false }) do
    vim.bo[right][k] = v
  end
  if ft ~= "" then
    vim.bo[right].filetype = ft
  end
  vim.bo[right].modified = false
  vim.cmd("diffthis")
  vim.b[right].ide_bridge_diff = tab_name
  vim.b[left].ide_bridge_diff = tab_name
  vim.t[tab].ide_bridge_diff = tab_name
  pcall(vim.api.nvim_tabpage_set_var, tab, "ide_bridge_title", tab_name)

  local d = {
    tab_name = tab_name,
    tab = tab,
    left = left,
    right = right,
    left_win = left_win,
    eol = eol,
    new_path = new_path,
    old_path = old_path,
    return_buf = return_buf,
    done = done,
  }
  M.diffs[tab_name] = d

  local group = vim.api.nvim_create_augroup("IdeBridgeDiff" .. counter, { clear = true })
  vim.api.nvim_create_autocmd("BufWriteCmd", {
    group = group,
    buffer = right,
    callback = function()
      M.accept(d)
    end,
  })
  vim.api.nvim_create_autocmd({ "BufWipeout", "BufUnload" }, {
    group = group,
    buffer = right,
    callback = function()
      if not d.settled and not d.closing then
        settle(d, false)
      end
      pcall(vim.api.nvim_del_augroup_by_id, group)
    end,
  })
  local keys = cfg().keys or {}
  for _, b in ipairs({ left, right }) do
    if keys.diff_accept then
      vim.keymap.set("n", keys.diff_accept, function()
        M.accept(d)
      end, { buffer = b, desc = "ide-bridge: accept the proposed change" })
    end
    if keys.diff_reject then
      vim.keymap.set("n", keys.diff_reject, function()
        M.reject(d)
      end, { buffer = b, desc = "ide-bridge: reject the proposed change" })
    end
  end
  -- `:e other` in either window would wipe its buffer (and so reject the change, or
  -- break the view): the windows keep their buffers ('winfixbuf', Neovim 0.10+), and
  -- another file opens in a split or tab of its own.
  for _, w in ipairs({ left_win, vim.fn.bufwinid(right) }) do
    pcall(function()
      vim.wo[w].winfixbuf = true
    end)
  end
  vim.api.nvim_set_current_win(vim.fn.bufwinid(right))
  client.log(vim.log.levels.INFO, string.format("proposed change to %s: :w (or %s) accepts, :q (or %s) rejects", vim.fn.fnamemodify(new_path, ":~:."), keys.diff_accept or "-", keys.diff_reject or "-"))
  return client.ASYNC
end)

client.on_notification("bridge/closeDiff", function(p)
  if p.tabName then
    M.close(p.tabName, "closed by the agent")
  end
end)

client.on_disconnect(function()
  M.close_all("the bridge connection was lost")
end)

return M
