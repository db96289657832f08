"""`ctxtui mcp [PATH]`: serve the repository to agents over MCP on stdin/stdout.

stdout belongs to the protocol from the first byte, so everything said to a person (a bad
folder, settings problems, a discarded cache) goes to stderr.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.scan import check_root


def run_mcp(args: argparse.Namespace) -> int:
    """`ctxtui mcp`: serve until the client hangs up."""
    root = Path(args.path).expanduser()
    check_root(str(root))  # before the SDK's seconds of import
    from ctxtui.mcp.server import serve  # deliberate: the MCP SDK loads only for this command

    serve(root.resolve())
    return 0
