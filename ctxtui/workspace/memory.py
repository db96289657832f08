"""What a workspace keeps between packs: file texts, views and token counts, each bounded.

The exact pack runs after every pause in the typing, and the next pause packs mostly the same
files at the same levels: reading, cutting and counting them again was most of its time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    import engine
    from engine import Index

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SizedCache(MutableMapping[K, V], Generic[K, V]):
    """A thread-safe mapping that forgets its least recently used items once the summed
    `size` of what it holds passes `limit` (the newest item is always kept)."""

    def __init__(self, limit: int, size: Callable[[K, V], int]) -> None:
        self._items: OrderedDict[K, V] = OrderedDict()
        self._sizes: dict[K, int] = {}
        self._total = 0
        self._limit = limit
        self._size = size
        self._lock = threading.Lock()

    def __getitem__(self, key: K) -> V:
        with self._lock:
            value = self._items[key]
            self._items.move_to_end(key)
            return value

    def __setitem__(self, key: K, value: V) -> None:
        size = self._size(key, value)
        with self._lock:
            if key in self._items:
                self._total -= self._sizes[key]
            self._items[key] = value
            self._items.move_to_end(key)
            self._sizes[key] = size
            self._total += size
            while self._total > self._limit and len(self._items) > 1:
                dropped, _ = self._items.popitem(last=False)
                self._total -= self._sizes.pop(dropped)

    def __delitem__(self, key: K) -> None:
        with self._lock:
            del self._items[key]
            self._total -= self._sizes.pop(key)

    def __iter__(self) -> Iterator[K]:
        with self._lock:
            return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    @property
    def total(self) -> int:
        """The summed size of what is held."""
        return self._total


class TextCache:
    """File texts kept between packs, keyed by path and the mtime the index knows.

    The exact pack re-renders a dozen files after every pause in the typing; reading them
    again each time costs more than rendering. A changed file has a new mtime in the
    refreshed index, so a stale text is never served. Bounded by characters kept.
    """

    LIMIT = 32_000_000
    """Characters kept at most (about 32 MB of ASCII source)."""

    def __init__(self) -> None:
        self._texts: SizedCache[tuple[str, str, int], str] = SizedCache(
            self.LIMIT, lambda _key, text: len(text)
        )

    def read(self, index: Index, path: str) -> str:
        """The text of a file of `index`, from memory when its mtime is unchanged."""
        from engine.analyse import read_text  # deliberate: keeps start-up light

        file_id = index.path_ids.get(path)
        mtime = index.files[file_id].mtime_ns if file_id is not None else -1
        key = (index.root, path, mtime)
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = read_text(index.root, path)
        return text


class CountCache:
    """Exact token counts kept between packs, keyed by the text counted (so never stale).

    Counting the files' views was 40 % of an 8k pack's time on flask (the bench's typing:
    160 packs, 12.6 files each). Only texts of at most MAX_CHARS are kept: a whole pack's
    text changes with each question. Bounded by characters kept.
    """

    LIMIT = 8_000_000
    """Characters of counted text kept at most."""
    MAX_CHARS = 200_000
    """Longest text kept."""

    def __init__(self, tokenizer: Callable[[], engine.Tokenizer]) -> None:
        self._tokenizer = tokenizer
        self._counts: SizedCache[str, int] = SizedCache(self.LIMIT, lambda text, _n: len(text))

    @property
    def name(self) -> str:
        """The encoding's name, as the tokenizer says."""
        return self._tokenizer().name

    def count(self, text: str) -> int:
        """The exact tokens of `text`, from memory when it was counted before."""
        tokens = self._counts.get(text)
        if tokens is None:
            tokens = self._tokenizer().count(text)
            if len(text) <= self.MAX_CHARS:
                self._counts[text] = tokens
        return tokens


def view_cache() -> SizedCache[tuple[object, ...], str]:
    """Files' views at a level (engine.render's `views`), bounded by characters kept."""
    return SizedCache(VIEW_LIMIT, lambda _key, view: len(view))


VIEW_LIMIT = 8_000_000
"""Characters of files' views kept at most."""
