"""A read-write gate: many readers (rank, pack, preview) at once, or one writer (a refresh).

A refresh replaces the workspace's index whole; readers that started before it finish on the
index they took, and new readers wait until the refresh is done, so no answer mixes two indexes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ReadWriteGate:
    """Many readers at once, or one writer alone (writers wait for readers to leave)."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._readers = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold the gate for reading."""
        with self._condition:
            self._readers += 1
        try:
            yield
        finally:
            with self._condition:
                self._readers -= 1
                if not self._readers:
                    self._condition.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the gate alone; new readers wait until the writer is done."""
        with self._condition:
            self._condition.wait_for(lambda: self._readers == 0)
            yield
