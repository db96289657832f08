"""Values worked out once from an index's arrays and kept while those arrays live.

Some of what a ranking needs depends on the index and the tuning but not on the question (the
import graph prepared for the walk, the git boost of every file): working it out again on
every keystroke cost milliseconds on a 16,000-file tree (issue 7). An index's arrays never
change in place (a refresh makes a new index), so the array object itself is the key, held by
a weak reference that proves the identity still belongs to it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class ArrayMemo(Generic[T]):
    """A few values per (array, key), forgotten all at once when there are too many."""

    __slots__ = ("_kept", "_size")

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._kept: dict[tuple[int, Hashable], tuple[weakref.ref[Any], T]] = {}

    def get(self, owner: Any, key: Hashable, make: Callable[[], T]) -> T:
        """The value for `owner` (an array of the index) and `key`, made on first use."""
        slot = (id(owner), key)
        found = self._kept.get(slot)
        if found is not None and found[0]() is owner:
            return found[1]
        value = make()
        if len(self._kept) >= self._size:
            self._kept.clear()  # indexes come and go rarely: forget them all
        self._kept[slot] = (weakref.ref(owner), value)
        return value
