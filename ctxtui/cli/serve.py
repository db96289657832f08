"""`ctxtui mcp [PATH]`: serve the repository to agents over MCP on stdin/stdout.

stdout belongs to the protocol from the first byte, so everything said to a person (a bad
folder, settings problems, a discarded cache) goes to stderr.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from engine.scan import check_root


def run_mcp(args: argparse.Namespace) -> int:
    """`ctxtui mcp`: serve until the client hangs up."""
    check_root(os.path.expanduser(args.path))  # before the SDK's seconds of import; as given
    root = Path(args.path).expanduser()
    from ctxtui.mcp.server import serve  # deliberate: the MCP SDK loads only for this command

    serve(root.resolve())
    return 0
