-- :checkhealth ide_bridge
local M = {}

function M.check()
  local h = vim.health
  local start, ok, warn, err, info = h.start or h.report_start, h.ok or h.report_ok, h.warn or h.report_warn, h.error or h.report_error, h.info or h.report_info
  start("ide-bridge: Neovim")
  if vim.fn.has("nvim-0.10") == 1 then
    ok("Neovim " .. tostring(vim.version()))
  else
    err("Neovim 0.10 or newer is needed (vim.uv, vim.base64, vim.lsp.start)")
  end
  local sha1 = require("ide_bridge.sha1")
  if sha1.hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d" then
    ok("SHA-1 for the WebSocket handshake works")
  else
    err("SHA-1 self-test failed: the WebSocket handshake cannot be verified")
  end

  start("ide-bridge: bridge")
  local m = require("ide_bridge")
  local discovery = require("ide_bridge.discovery")
  local uv = vim.uv or vim.loop
  local dir = m.config.workspace or uv.cwd()
  info("lock files: " .. discovery.lock_dir())
  local all = discovery.list(dir)
  local found = discovery.find(dir)
  if found then
    ok(string.format("bridge serving %s: port %d, pid %d", found.workspace, found.port, found.pid))
  elseif #all > 0 then
    warn(string.format("%d bridge(s) running, none serves %s", #all, dir), { "run :IdeBridgeStart in this directory" })
  else
    warn("no bridge is running", { "run :IdeBridgeStart, or `ide-bridge --workspace " .. dir .. "`" })
  end
  local bin = m.config.bridge_bin or vim.fn.exepath("ide-bridge")
  if bin ~= "" and vim.fn.executable(bin) == 1 then
    ok("ide-bridge binary: " .. bin)
  else
    warn("ide-bridge is not on PATH (:IdeBridgeStart needs it)", { "set setup({ bridge_bin = '/path/to/ide-bridge' })" })
  end
  local c = require("ide_bridge.client")
  if not m.did_setup then
    warn("require('ide_bridge').setup() has not run")
  end
  if c.is_connected() then
    local agents = c.state.agents and c.state.agents.agents or 0
    ok(string.format("connected (port %d); %d agent(s) connected", c.state.bridge.port, agents))
  else
    warn("not connected: " .. tostring(c.state.last_error or c.state.status))
  end

  start("ide-bridge: features")
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  local clients = get()
  if #clients > 0 then
    local names = {}
    for _, cl in ipairs(clients) do
      table.insert(names, cl.name)
    end
    ok("language servers: " .. table.concat(names, ", "))
  else
    warn("no language server is running: definition, references, hover, symbols, code actions, rename and formatting need one")
  end
  if pcall(require, "dap") then
    ok("nvim-dap found: debugging methods work")
  else
    info("nvim-dap not installed: debugging methods answer 'not supported'")
  end
  if vim.fn.has("clipboard") == 1 then
    ok("clipboard provider available")
  else
    info("no clipboard provider: read/writeClipboard use the unnamed register")
  end
  if m.config.allow_commands then
    warn("allow_commands = true: agents can run any Ex command (and through it, Lua and shell)")
  else
    ok("agents cannot run Ex commands (allow_commands = false)")
  end
  info("not supported in Neovim: captureScreenshot")
end

return M
