"""Give up a pack half-way: the pack a typed key starts ahead is dropped when the next key comes.

`engine.pack` takes no stop signal of its own; what it does between two steps is count a text
or read a file, so the token counter and the file reader it is handed check the signal first
and raise `PackStopped`, which the engine does not catch. The longest stretch with no check is
one planning round (10-20 ms on textual's 1,449 files).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.render import TokenCounter


class PackStopped(Exception):
    """The pack was given up: its `should_stop` said a newer request had come."""


class StoppableCounter:
    """A token counter that gives up (PackStopped) once `should_stop` says so."""

    def __init__(self, counter: TokenCounter, should_stop: Callable[[], bool]) -> None:
        self._counter = counter
        self._should_stop = should_stop

    @property
    def name(self) -> str:
        """The encoding's name, as the counter it wraps says."""
        return self._counter.name

    def count(self, text: str) -> int:
        """The exact tokens of `text`, unless the pack is to stop."""
        if self._should_stop():
            raise PackStopped
        return self._counter.count(text)


def stoppable_reader(
    read: Callable[[str], str], should_stop: Callable[[], bool]
) -> Callable[[str], str]:
    """A file reader that gives up (PackStopped) once `should_stop` says so."""

    def read_unless_stopped(path: str) -> str:
        if should_stop():
            raise PackStopped
        return read(path)

    return read_unless_stopped
