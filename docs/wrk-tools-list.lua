-- wrk script: an era-2026 tools/list with a bearer token from $MCP_TOKEN.
--   TOKEN=$(./bin/kadu token --scope kadu.read) MCP_TOKEN=... wrk -t2 -c32 -d20s -s docs/wrk-tools-list.lua http://127.0.0.1:8080/mcp
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("MCP_TOKEN")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/list"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"}}}}'

done = function(summary, latency, requests)
  io.write(string.format("non-2xx or socket errors: %d\n", summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
