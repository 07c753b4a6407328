"""The MCP face: `memconsole mcp` over stdio, or streamable HTTP behind a bearer token."""
