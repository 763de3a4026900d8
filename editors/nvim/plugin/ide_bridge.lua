-- Commands of ide-bridge. Nothing connects until require("ide_bridge").setup() runs.
if vim.g.loaded_ide_bridge then
  return
end
vim.g.loaded_ide_bridge = true

local function ib()
  local m = require("ide_bridge")
  if not m.did_setup then
    m.setup({ auto_connect = false })
  end
  return m
end

vim.api.nvim_create_user_command("IdeBridgeStatus", function()
  ib().print_status()
end, { desc = "ide-bridge: connection and agents" })

vim.api.nvim_create_user_command("IdeBridgeStart", function()
  ib().start()
end, { desc = "ide-bridge: start a bridge for the current directory" })

vim.api.nvim_create_user_command("IdeBridgeConnect", function()
  local c = require("ide_bridge.client")
  ib()
  c.state.attempts = 0
  c.connect()
end, { desc = "ide-bridge: connect (and keep reconnecting)" })

vim.api.nvim_create_user_command("IdeBridgeDisconnect", function()
  ib()
  require("ide_bridge.client").disconnect()
end, { desc = "ide-bridge: disconnect and stop reconnecting" })

vim.api.nvim_create_user_command("IdeBridgeSend", function(opts)
  ib().send(opts)
end, {
  range = true,
  nargs = "?",
  desc = "ide-bridge: send the selection (or file) as an @-mention; [all|<session id>], else asks when several agents are connected",
})

vim.api.nvim_create_user_command("IdeBridgeDiffAccept", function()
  ib()
  require("ide_bridge.diff").accept()
end, { desc = "ide-bridge: accept the proposed change in this diff" })

vim.api.nvim_create_user_command("IdeBridgeDiffReject", function()
  ib()
  require("ide_bridge.diff").reject()
end, { desc = "ide-bridge: reject the proposed change in this diff" })

vim.api.nvim_create_user_command("IdeBridgeTasks", function()
  ib()
  require("ide_bridge.tasks").open()
end, { desc = "ide-bridge: output of Claude tasks" })

vim.api.nvim_create_user_command("IdeBridgeChanges", function()
  local items = require("ide_bridge.changes").quickfix_items()
  vim.fn.setqflist({}, " ", { title = "ide-bridge: lines agents changed", items = items })
  if #items > 0 then
    vim.cmd("copen")
  else
    vim.notify("[ide-bridge] no agent change waits", vim.log.levels.INFO)
  end
end, { desc = "ide-bridge: the lines agents changed (quickfix)" })
