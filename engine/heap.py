"""Hand the C heap's free pages back to the system while a big index is assembled.

The analyses of 16,000 files arrive as small arrays, each a malloc of its own; freed one by
one as they are copied into the index's arrays (which are fresh mappings), they leave holes in
the heap that the process keeps, so its peak would grow by all of them again.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import cache


def give_back_memory() -> None:
    """Return the heap's free pages to the system (glibc's malloc_trim), where there is one."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim() -> Callable[[int], object] | None:
    """glibc's malloc_trim, looked up once: each `ctypes.CDLL` makes a handful of objects in
    reference cycles, which the app's frozen collector (ctxtui.collector) would keep for good."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # deliberate: only building an index needs it

    try:
        trim: Callable[[int], object] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # a C library without it (musl): nothing to do
        return None
    return trim
