"""`ctxtui mcp [PATH]`: serve the repository to agents over MCP on stdin/stdout.

stdout belongs to the protocol from the first byte, so everything said to a person (a bad
folder, settings problems, a discarded cache) goes to stderr.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.errors import ScanError


def run_mcp(args: argparse.Namespace) -> int:
    """`ctxtui mcp`: serve until the client hangs up."""
    root = Path(args.path).expanduser()
    if not root.exists():
        raise ScanError(f"no such folder: {args.path}")
    if not root.is_dir():
        raise ScanError(f"not a folder: {args.path}")
    from ctxtui.mcp.server import serve  # deliberate: the MCP SDK loads only for this command

    serve(root.resolve())
    return 0
