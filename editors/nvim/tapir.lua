-- Tapir for Neovim: `.tap` files, their editing settings, and the language server (`tapir lsp`).
--
-- Paste this into your init.lua, or copy the file to ~/.config/nvim/plugin/tapir.lua. It needs
-- nothing else (no plugin manager, no nvim-lspconfig) and works from Neovim 0.7 (Debian 12's) on.
-- To change a default, set `vim.g.tapir` before this runs, e.g.
--
--   vim.g.tapir = { cmd = { vim.fn.expand("~/venvs/tapir/bin/tapir"), "lsp" } }
--
-- Options (all optional):
--   cmd           the server command                     default { "tapir", "lsp" }
--   root_markers  files that mark a project's root       default { "tapir.toml", ".git" }
--   settings      sent to the server as workspace/configuration
--   max_restarts  restarts allowed within three minutes  default 5 (a server that dies more
--                 often than that is left stopped, with a message; :TapirRestart starts it)
--
-- Commands: :TapirRestart (restart the server), :TapirStop.

local defaults = {
  cmd = { "tapir", "lsp" },
  root_markers = { "tapir.toml", ".git" },
  settings = vim.empty_dict(),
  max_restarts = 5,
}
local config = vim.tbl_deep_extend("force", defaults, vim.g.tapir or {})
local RESTART_WINDOW_S = 180

-- Filetype: Lua detection on 0.8+, an autocommand on 0.7 (where Lua detection is opt-in).
if vim.filetype and vim.filetype.add then
  vim.filetype.add({ extension = { tap = "tapir" } })
end
local group = vim.api.nvim_create_augroup("tapir", { clear = true })
vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
  group = group,
  pattern = "*.tap",
  command = "setfiletype tapir",
})

-- Editing: Tapir is Python-shaped, so Python's syntax and indentation, plus element references.
local function highlight(buf)
  if not vim.api.nvim_buf_is_valid(buf) or vim.bo[buf].filetype ~= "tapir" then
    return
  end
  vim.api.nvim_buf_call(buf, function()
    vim.bo.syntax = "python"
    vim.cmd([[syntax match tapirElement /\$[[:alnum:]_%]\+\(:\a[[:alnum:]_%]*\)\?/]])
    vim.cmd([[syntax match tapirDocHeader /\%1l#\s*doc:.*$/]])
    vim.cmd("highlight default link tapirElement Identifier")
    vim.cmd("highlight default link tapirDocHeader PreProc")
  end)
end

local function editing(buf)
  vim.bo[buf].commentstring = "# %s"
  vim.bo[buf].comments = ":#"
  vim.bo[buf].expandtab = true
  vim.bo[buf].shiftwidth = 4
  vim.bo[buf].softtabstop = 4
  vim.bo[buf].omnifunc = "v:lua.vim.lsp.omnifunc" -- <C-x><C-o> asks the server
  vim.bo[buf].iskeyword = "@,48-57,_,192-255,$,%" -- `$screen__element` is one word (w, *, completion)
  vim.api.nvim_buf_call(buf, function()
    vim.cmd("runtime! indent/python.vim")
  end)
  -- After the other FileType handlers: `:syntax on` sets syntax=tapir, which has no file.
  vim.schedule(function()
    highlight(buf)
  end)
end

local function root_of(buf)
  local dir = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":p:h")
  local here = dir
  while true do
    for _, marker in ipairs(config.root_markers) do
      if vim.loop.fs_stat(here .. "/" .. marker) then
        return here
      end
    end
    local parent = vim.fn.fnamemodify(here, ":h")
    if parent == here then
      return dir
    end
    here = parent
  end
end

-- One client per root. A client that exits without being asked to is restarted for the
-- buffers it served, unless it died `max_restarts` times within RESTART_WINDOW_S.
local clients = {} -- root -> client id
local stopping = {} -- client id -> true when we asked it to stop
local crashes = {} -- times of recent crashes
local start

local function crashed(root, code, signal)
  local now = os.time()
  local recent = {}
  for _, t in ipairs(crashes) do
    if now - t < RESTART_WINDOW_S then
      table.insert(recent, t)
    end
  end
  table.insert(recent, now)
  crashes = recent
  if #crashes > config.max_restarts then
    vim.notify(
      string.format("Tapir: the language server died %d times in a few minutes (last exit %d, signal %d); "
        .. "not restarting it. :TapirRestart starts it again.", #crashes, code, signal),
      vim.log.levels.ERROR
    )
    return
  end
  vim.notify(string.format("Tapir: the language server exited (%d, signal %d); restarting it", code, signal),
    vim.log.levels.WARN)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].filetype == "tapir" and root_of(buf) == root then
      start(buf)
    end
  end
end

start = function(buf)
  if vim.fn.executable(config.cmd[1]) ~= 1 then
    vim.notify_once(string.format("Tapir: '%s' was not found; install Tapir or set vim.g.tapir.cmd", config.cmd[1]),
      vim.log.levels.WARN)
    return
  end
  local root = root_of(buf)
  local client = {
    name = "tapir",
    cmd = config.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    settings = config.settings,
    on_exit = function(code, signal, client_id)
      if clients[root] == client_id then
        clients[root] = nil
      end
      local asked = stopping[client_id]
      stopping[client_id] = nil
      if not asked and (code ~= 0 or signal ~= 0) then
        vim.schedule(function()
          crashed(root, code, signal)
        end)
      end
    end,
  }
  local id = clients[root]
  if id ~= nil and vim.lsp.get_client_by_id(id) == nil then
    id = nil
  end
  if vim.lsp.start then -- 0.8+: reuses the client of the same name and root, attaches the buffer
    id = vim.lsp.start(client, { bufnr = buf })
  else -- 0.7
    id = id or vim.lsp.start_client(client)
    if id ~= nil then
      vim.lsp.buf_attach_client(buf, id)
    end
  end
  clients[root] = id
end

local function stop_all()
  for root, id in pairs(clients) do
    stopping[id] = true
    vim.lsp.stop_client(id)
    clients[root] = nil
  end
end

vim.api.nvim_create_autocmd("FileType", {
  group = group,
  pattern = "tapir",
  callback = function(args)
    editing(args.buf)
    start(args.buf)
  end,
})

vim.api.nvim_create_user_command("TapirStop", stop_all, { desc = "Stop the Tapir language server" })
vim.api.nvim_create_user_command("TapirRestart", function()
  stop_all()
  crashes = {}
  -- the old client needs a moment to exit; then every Tapir buffer gets a new one
  vim.defer_fn(function()
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].filetype == "tapir" then
        start(buf)
      end
    end
  end, 500)
end, { desc = "Restart the Tapir language server" })
