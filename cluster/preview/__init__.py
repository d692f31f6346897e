"""The app preview tool served to coding agents over MCP (``evalgrid mcp``), on the configured sandbox."""
