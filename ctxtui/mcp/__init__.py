"""The MCP front-end: `ctxtui mcp [PATH]` serves one repository's rankings and packs to agents.

`server` declares the tools with the MCP SDK, `tools` answers them over a `warm` repository
(settings and workspaces kept in memory, stat-checked before each call). It shares the
workspace with the app and the command line and imports neither of them.
"""

from __future__ import annotations
