"""Writing a command's data to stdout: one line on stderr and exit 1 when stdout refuses it.

Every subcommand that prints data (index, rank, pack, config, eval, bench) writes it through
`emit`, so a full disk, /dev/full or a closed pipe is said the same way everywhere.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys

from engine import EngineError


def emit(text: str) -> None:
    """Write data to stdout and flush it; a stdout that cannot be written (a full disk,
    /dev/full, a closed pipe, a stdout closed before the start) is one line on stderr and
    exit 1, never a traceback.

    Raises:
        EngineError: stdout refused the text (BrokenPipeError passes: the reader left).
    """
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
        raise
    except OSError as error:
        silence_stdout()
        why = "it is closed" if error.errno == errno.EBADF else error.strerror or error
        raise EngineError(f"cannot write to stdout: {why}") from None


def silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush has nowhere to fail."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
