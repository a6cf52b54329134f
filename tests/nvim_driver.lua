-- Drives a headless Neovim for tests/nvim_client.py: opens a file, waits for the language
-- server, reads back what the editor shows, writes it as JSON and quits. Neovim 0.7 and later.
-- The request comes as JSON in $TAPIR_NVIM_REQUEST:
--   file, out          the file to open, where to write the answer
--   timeout_ms         how long to wait for the server each time
--   completion         {line, character} (0-based) to ask for completion at, or nil
--   crashes            how many times to send `crash_command` (each time waiting for a restart)
--   crash_command      a workspace/executeCommand name that makes the server exit
--   probe              {line, col} (1-based) for the syntax group there

local req = vim.fn.json_decode(os.getenv("TAPIR_NVIM_REQUEST"))
local out = { events = {} }

local function finish()
  local f = assert(io.open(req.out, "w"))
  f:write(vim.fn.json_encode(out))
  f:close()
  vim.cmd("qa!")
end

local function is_stopped(client)
  if vim.fn.has("nvim-0.11") == 1 then -- a method from 0.11 on
    return client:is_stopped()
  end
  return client.is_stopped()
end

local function clients(buf)
  local list = {}
  if vim.lsp.get_clients then
    list = vim.lsp.get_clients({ bufnr = buf })
  else
    for _, c in pairs(vim.lsp.buf_get_clients(buf)) do
      table.insert(list, c)
    end
  end
  local alive = {}
  for _, c in ipairs(list) do
    if not is_stopped(c) then
      table.insert(alive, c)
    end
  end
  return alive
end

local function diagnostics(buf)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(list, { line = d.lnum, col = d.col, message = d.message, severity = d.severity })
  end
  return list
end

local ok, err = pcall(function()
  vim.cmd("edit " .. vim.fn.fnameescape(req.file))
  local buf = vim.api.nvim_get_current_buf()
  local timeout = req.timeout_ms or 15000
  out.nvim = vim.version()
  vim.wait(timeout, function()
    return #clients(buf) > 0
  end, 20)
  vim.wait(50) -- the configuration finishes some settings on the next turn of the event loop
  out.filetype = vim.bo.filetype
  out.options = {
    commentstring = vim.bo.commentstring,
    shiftwidth = vim.bo.shiftwidth,
    expandtab = vim.bo.expandtab,
    iskeyword = vim.bo.iskeyword,
    syntax = vim.bo.syntax,
    indentexpr = vim.bo.indentexpr,
    omnifunc = vim.bo.omnifunc,
  }
  if req.probe then
    out.syntax_group = vim.fn.synIDattr(vim.fn.synID(req.probe[1], req.probe[2], 1), "name")
  end
  local attached = clients(buf)
  out.clients = {}
  for _, c in ipairs(attached) do
    table.insert(out.clients, { id = c.id, name = c.name, root_dir = c.config.root_dir, cmd = c.config.cmd })
  end
  if #attached > 0 then
    vim.wait(timeout, function()
      return #vim.diagnostic.get(buf) > 0
    end, 20)
  end
  out.diagnostics = diagnostics(buf)

  if req.completion and #attached > 0 then
    local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = req.completion }
    local responses = vim.lsp.buf_request_sync(buf, "textDocument/completion", params, timeout) or {}
    out.completion = {}
    for _, response in pairs(responses) do
      local result = response.result or {}
      for _, item in ipairs(result.items or result) do
        table.insert(out.completion, item.label)
      end
    end
  end

  out.restarts = {}
  for _ = 1, (req.crashes or 0) do
    local before = clients(buf)[1]
    if before == nil then
      table.insert(out.restarts, false)
    else
      vim.lsp.buf_request(buf, "workspace/executeCommand", { command = req.crash_command, arguments = {} },
        function() end)
      vim.wait(5000, function()
        return is_stopped(before)
      end, 20)
      local restarted = vim.wait(3000, function()
        local now = clients(buf)[1]
        return now ~= nil and now.id ~= before.id
      end, 20)
      if restarted then
        vim.wait(timeout, function()
          return #vim.diagnostic.get(buf) > 0
        end, 20)
      end
      table.insert(out.restarts, restarted)
    end
  end
  out.diagnostics_at_end = diagnostics(buf)
  out.messages = vim.fn.execute("messages")
end)
if not ok then
  out.error = tostring(err)
end
finish()
