-- ide-bridge for Neovim: connects Neovim to the ide-bridge daemon so that AI coding
-- agents (Claude Code and other MCP clients) see your selection, diagnostics and
-- files, propose changes as diffs you review, and use Neovim's language servers.
--
--   require("ide_bridge").setup({ ... })   -- see :help ide-bridge
local M = {}

M.defaults = {
  -- Connect at startup and keep reconnecting.
  auto_connect = true,
  -- Directory whose bridge to use (default: the current working directory).
  workspace = nil,
  -- The ide-bridge binary for :IdeBridgeStart (default: `ide-bridge` on PATH).
  bridge_bin = nil,
  -- Extra arguments for :IdeBridgeStart.
  bridge_args = {},
  reconnect = { min_ms = 200, max_ms = 2000, poll_ms = 2000 },
  selection_debounce_ms = 50,
  diagnostics_debounce_ms = 150,
  ai_comments = true,
  ai_comments_debounce_ms = 300,
  -- Wait this long for a language server to attach before an LSP request fails.
  lsp_attach_timeout_ms = 4000,
  -- An LSP request not answered within this answers with an error (keep it below
  -- the bridge's editor.request_timeout_ms, default 10 s).
  lsp_timeout_ms = 5000,
  -- Register used as the clipboard ("+" falls back to the unnamed register
  -- when Neovim has no clipboard provider).
  clipboard_register = "+",
  -- Safe by default: agents cannot run Ex commands (executeVSCodeCommand) ...
  allow_commands = false,
  -- ... nor set options outside a safe list (plus these names).
  allow_unsafe_options = false,
  settings_allowlist = {},
  -- Buffer-local mappings in a diff view (false to disable one).
  keys = { diff_accept = "<leader>da", diff_reject = "<leader>dr" },
  -- vim.notify level for plugin messages (nil: silent).
  log_level = vim.log.levels.INFO,
  -- Split outgoing messages into WebSocket fragments of this size (nil: never).
  fragment_size = nil,
  max_watched_dirs = 500,
  -- executeInTerminal / waitForTerminalOutput wait as long as the agent's timeoutMs
  -- says (the bridge waits that long plus 2 s for the answer), at most this long.
  max_wait_ms = 600000,
}

M.config = vim.deepcopy(M.defaults)
M.did_setup = false

local function client()
  return require("ide_bridge.client")
end

local function load_modules()
  require("ide_bridge.handlers")
  require("ide_bridge.terminal")
  require("ide_bridge.lsp")
  require("ide_bridge.diff")
  require("ide_bridge.dap")
  require("ide_bridge.tasks")
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  if vim.fn.has("nvim-0.10") ~= 1 then
    vim.notify("[ide-bridge] needs Neovim 0.10 or newer", vim.log.levels.ERROR)
    return
  end
  local c = client()
  load_modules()
  local events = require("ide_bridge.events")
  events.setup(M.config)
  require("ide_bridge.dap").setup()
  if not M.did_setup then
    c.on_connect(function()
      events.resync()
      M.refresh_status()
    end)
    c.on_notification("bridge/claudeConnectionChanged", function(p)
      local before = c.state.agents
      c.state.agents = p
      local was = before and before.agents or 0
      if (p.agents or 0) ~= was then
        if p.connected then
          c.log(vim.log.levels.INFO, string.format("%d agent%s connected", p.agents or 0, (p.agents == 1) and "" or "s"))
        else
          c.log(vim.log.levels.INFO, "no agent connected")
        end
      end
      vim.api.nvim_exec_autocmds("User", { pattern = "IdeBridgeAgents", modeline = false, data = p })
      M.refresh_status()
    end)
    c.on_notification("bridge/claimsChanged", function(p)
      M.claims_seen = (M.claims_seen or 0) + 1
      M.set_claims(p.claims)
    end)
    -- An automation hook with action "notify" fired: shown (at log_level INFO) and
    -- handed to `User IdeBridgeAutomationNotice` autocommands ({hook, subject, message}).
    c.on_notification("bridge/automationNotice", function(p)
      c.log(vim.log.levels.INFO, string.format("automation (%s): %s", p.hook or "?", p.message or p.subject or ""))
      vim.api.nvim_exec_autocmds("User", { pattern = "IdeBridgeAutomationNotice", modeline = false, data = p })
    end)
    require("ide_bridge.changes").setup(c)
  end
  M.did_setup = true
  if M.config.auto_connect then
    c.connect()
  end
end

--- Re-reads /status (sessions) in the background. Its claims are used only when no
--- bridge/claimsChanged arrived while the request was out: that notice is newer.
function M.refresh_status(cb)
  local seen = M.claims_seen or 0
  client().http_get("/status", function(status)
    if status then
      M.last_status = status
      if status.claims and status.claims.held and (M.claims_seen or 0) == seen then
        M.set_claims(status.claims.held)
      end
    end
    if cb then
      cb(status)
    end
  end)
end

--- Keeps the file claims held now and tells the statusline (User IdeBridgeClaims).
function M.set_claims(claims)
  client().state.claims = claims or {}
  vim.schedule(function()
    vim.api.nvim_exec_autocmds("User", { pattern = "IdeBridgeClaims", modeline = false, data = claims })
    vim.cmd("redrawstatus!")
  end)
end

--- The claim covering `path` (absolute), if any: a claimed path itself, what is beneath
--- a claimed directory, or a glob's match (relative to the bridge's workspace).
function M.claim_of(path)
  local c = client()
  local root = c.state.bridge and c.state.bridge.workspace
  if not path or not root then
    return nil
  end
  local rel = path:sub(1, #root + 1) == root .. "/" and path:sub(#root + 2) or nil
  if not rel then
    return nil
  end
  for _, claim in ipairs(c.state.claims or {}) do
    for _, pat in ipairs(claim.patterns or {}) do
      local bare = pat:gsub("/$", "")
      if rel == bare or rel:sub(1, #bare + 1) == bare .. "/" then
        return claim
      end
      local ok, lpeg = pcall(vim.glob.to_lpeg, pat)
      if ok and lpeg:match(rel) then
        return claim
      end
    end
  end
  return nil
end

--- For the statusline (`set statusline+=%{v:lua.require'ide_bridge'.statusline()}`):
--- the agents and claims, and who claims the current buffer's file.
function M.statusline()
  local c = client()
  if c.state.status ~= "connected" then
    return ""
  end
  local n = c.state.agents and c.state.agents.agents or 0
  local parts = { string.format("ide-bridge: %d agent%s", n, n == 1 and "" or "s") }
  local claims = #(c.state.claims or {})
  if claims > 0 then
    table.insert(parts, string.format("%d claim%s", claims, claims == 1 and "" or "s"))
  end
  local util = require("ide_bridge.util")
  local claim = M.claim_of(util.buf_path(vim.api.nvim_get_current_buf()))
  if claim then
    table.insert(parts, "claimed by " .. tostring(claim.holder))
  end
  return table.concat(parts, " · ")
end

--- The status as a table (what :IdeBridgeStatus shows).
function M.status()
  local c = client()
  local s = c.state
  local agents = s.agents and s.agents.agents or 0
  local sessions = {}
  if M.last_status and M.last_status.sessions then
    for _, sess in ipairs(M.last_status.sessions) do
      table.insert(sessions, sess)
    end
  end
  return {
    status = s.standby and "standing by" or s.status,
    port = s.bridge and s.bridge.port or nil,
    workspace = s.bridge and s.bridge.workspace or nil,
    pid = s.bridge and s.bridge.pid or nil,
    agents = agents,
    sessions = sessions,
    claims = s.claims or {},
    last_error = s.last_error,
    version = c.VERSION,
  }
end

function M.status_lines()
  local st = M.status()
  local lines = {}
  if st.status == "connected" then
    table.insert(lines, string.format("ide-bridge: connected to the bridge on port %d (pid %s) serving %s", st.port, tostring(st.pid), tostring(st.workspace)))
    table.insert(lines, string.format("agents connected: %d", st.agents))
    for _, sess in ipairs(st.sessions) do
      table.insert(lines, string.format("  session %s: %s%s", tostring(sess.id), sess.client or "agent", sess.inGrace and " (in grace period)" or ""))
    end
    table.insert(lines, string.format("file claims: %d", #st.claims))
    for _, claim in ipairs(st.claims) do
      local why = (claim.reason and claim.reason ~= "") and (": " .. claim.reason) or ""
      table.insert(lines, string.format("  %s by %s%s", table.concat(claim.patterns or {}, ", "), tostring(claim.holder), why))
    end
  else
    table.insert(lines, "ide-bridge: " .. st.status .. (st.last_error and (" (" .. st.last_error .. ")") or ""))
    if st.status == "disconnected" then
      table.insert(lines, "start a bridge for this directory with :IdeBridgeStart")
    elseif st.status == "standing by" then
      table.insert(lines, "it reconnects when that editor leaves; :IdeBridgeConnect takes the bridge back")
    end
  end
  return lines
end

function M.print_status()
  print(table.concat(M.status_lines(), "\n"))
end

--- :IdeBridgeStart: starts `ide-bridge --workspace <cwd>` detached when none serves the cwd.
function M.start()
  local uv = vim.uv or vim.loop
  local discovery = require("ide_bridge.discovery")
  local dir = M.config.workspace or uv.cwd()
  local found = discovery.find(dir)
  if found then
    vim.notify(string.format("[ide-bridge] a bridge already serves %s (port %d, pid %d)", found.workspace, found.port, found.pid))
    client().connect()
    return found
  end
  local bin = M.config.bridge_bin or vim.fn.exepath("ide-bridge")
  if not bin or bin == "" or vim.fn.executable(bin) ~= 1 then
    vim.notify("[ide-bridge] ide-bridge not found: put it on PATH or set setup({ bridge_bin = ... })", vim.log.levels.ERROR)
    return nil
  end
  local logfile = vim.fn.stdpath("log") .. "/ide-bridge.log"
  vim.fn.mkdir(vim.fs.dirname(logfile), "p")
  local fd = uv.fs_open(logfile, "a", 420)
  -- Started for the editor, not by hand: it stops by itself once unused (server.idle_stop_ms).
  local args = { "--workspace", dir, "--on-demand" }
  vim.list_extend(args, M.config.bridge_args or {})
  local handle, pid = uv.spawn(bin, { args = args, cwd = dir, detached = true, stdio = { nil, fd, fd } }, function() end)
  if fd then
    uv.fs_close(fd)
  end
  if not handle then
    vim.notify("[ide-bridge] could not start " .. bin .. ": " .. tostring(pid), vim.log.levels.ERROR)
    return nil
  end
  handle:unref()
  vim.notify(string.format("[ide-bridge] started %s for %s (pid %d, log %s)", bin, dir, pid, logfile))
  local c = client()
  c.state.attempts = 0
  c.connect()
  return { pid = pid }
end

--- :IdeBridgeSend: the range (or the whole file) as an @-mention to the agents.
function M.send(opts)
  opts = opts or {}
  local c = client()
  local util = require("ide_bridge.util")
  local path = util.buf_path(vim.api.nvim_get_current_buf())
  if not path then
    return vim.notify("[ide-bridge] this buffer is not a file", vim.log.levels.WARN)
  end
  if not c.is_connected() then
    return vim.notify("[ide-bridge] not connected to a bridge (:IdeBridgeStatus)", vim.log.levels.WARN)
  end
  local params = { filePath = path }
  if opts.range and opts.range > 0 then
    params.lineStart = opts.line1 - 1
    params.lineEnd = opts.line2 - 1
  end
  local where = params.lineStart and string.format(":%d-%d", params.lineStart + 1, params.lineEnd + 1) or ""
  local function deliver(agent)
    if agent then
      params.sessionId = agent.id
    end
    c.notify("extension/atMentioned", params)
    local who = agent and ("sent to " .. agent.id)
      or (c.state.agents and (c.state.agents.agents or 0) > 0 and "sent to every agent")
      or "queued until an agent connects"
    c.log(vim.log.levels.INFO, vim.fn.fnamemodify(path, ":~:.") .. where .. " " .. who)
  end
  local wanted = opts.args and vim.trim(opts.args) or ""
  if wanted == "all" then
    return deliver(nil)
  end
  -- Which agents are connected: /status names them (id, client, pid).
  M.refresh_status(function(status)
    vim.schedule(function()
      local agents = {}
      for _, s in ipairs((status and status.sessions) or {}) do
        if s.connected then
          table.insert(agents, s)
        end
      end
      if wanted ~= "" then
        for _, a in ipairs(agents) do
          if a.id == wanted then
            return deliver(a)
          end
        end
        return vim.notify("[ide-bridge] no connected agent with session id " .. wanted, vim.log.levels.WARN)
      end
      if #agents <= 1 then
        return deliver(nil)
      end
      local choices = { { label = "all agents" } }
      for _, a in ipairs(agents) do
        local label = a.id .. "  " .. (a.client or "agent")
        if a.clientPid then
          label = label .. "  pid " .. a.clientPid
        end
        table.insert(choices, { label = label, agent = a })
      end
      vim.ui.select(choices, {
        prompt = "Send to which agent?",
        format_item = function(item)
          return item.label
        end,
      }, function(choice)
        if choice then
          deliver(choice.agent)
        end
      end)
    end)
  end)
end

return M
