"""twin's MCP server: seed 003's agent tools over stdio (`twin mcp`) and streamable HTTP (`/mcp` on the API)."""
