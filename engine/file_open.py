"""Opening a repository file to read it, safe against what took its place since indexing."""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO


def open_regular(path: str) -> BinaryIO:
    """Open a repository file to read its bytes, failing at once when it is no longer a
    regular file: a FIFO put in its place since it was indexed would hold `open` (and the
    app's or the MCP server's pack with it) until some program writes to it.

    Raises:
        OSError: it cannot be opened, or is not a regular file (strerror says so).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    stream = open(fd, "rb")  # noqa: SIM115 - handed to the caller's `with`
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        stream.close()
        if stat.S_ISDIR(mode):  # as `open` says it
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        raise OSError(errno.EINVAL, "not a regular file", path)
    return stream
