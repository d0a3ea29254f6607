-- wrk script: an era-2026 tools/call of kadu_executions_get, served by the executions bundle, with a bearer token
-- from $MCP_TOKEN and the execution id from $EXECUTION_ID (docs/benchmarks.md shows how to get both).
--   MCP_TOKEN=... EXECUTION_ID=exe_... wrk -t2 -c16 -d20s --latency -s docs/wrk-executions-get.lua http://127.0.0.1:18080/mcp
local token = os.getenv("MCP_TOKEN")
local id = os.getenv("EXECUTION_ID")
if not token or token == "" or not id or not id:match("^exe_%x+$") then
  io.stderr:write("set MCP_TOKEN (kadu token) and EXECUTION_ID (an exe_… id of the token's organisation)\n")
  os.exit(2)
end

wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer " .. token
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "kadu_executions_get"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"kadu_executions_get","arguments":{"id":"' .. id ..
  '"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},' ..
  '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"}}}}'

-- A tool error (isError) or a JSON-RPC error still answers 200: count them, so a run that measured
-- failures (a wrong id, a rate limit in the tool) does not pass for a fast one.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  failed = 0
end

function response(status, headers, body)
  if status ~= 200 or body:find('"isError":true', 1, true) or not body:find('"result"', 1, true) then
    failed = failed + 1
  end
end

done = function(summary, latency, requests)
  local failed = 0
  for _, thread in ipairs(threads) do
    failed = failed + thread:get("failed")
  end
  io.write(string.format("non-2xx or socket errors: %d\n", summary.errors.status + summary.errors.connect +
    summary.errors.read + summary.errors.write + summary.errors.timeout))
  io.write(string.format("failed tool calls (non-200, JSON-RPC error or isError): %d\n", failed))
end
