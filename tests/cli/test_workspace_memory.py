"""What the workspace keeps between packs (ctxtui.workspace.memory): bounded, never stale,
and a second pack of the same files neither cuts nor counts them again."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_repo
from semantic_support import SHOP

from ctxtui.workspace import Workspace
from ctxtui.workspace.memory import CountCache, SizedCache
from engine.model import Format, Session

pytestmark = pytest.mark.usefixtures("tokenizer_loaded_once")


def test_a_sized_cache_forgets_the_least_recently_used_past_its_limit() -> None:
    cache: SizedCache[str, str] = SizedCache(10, lambda _key, value: len(value))
    cache["a"] = "xxxx"
    cache["b"] = "xxxx"
    assert cache["a"] == "xxxx"  # a is now the most recent
    cache["c"] = "xxxx"  # 12 > 10: b goes
    assert set(cache) == {"a", "c"} and cache.total == 8
    cache["c"] = "x"  # replaced, its size with it
    assert cache.total == 5
    cache["big"] = "x" * 50  # over the limit alone: the newest is kept, all else goes
    assert list(cache) == ["big"] and cache.total == 50
    del cache["big"]
    assert len(cache) == 0 and cache.total == 0


class Tally:
    name = "tally"

    def __init__(self) -> None:
        self.counted: list[str] = []

    def count(self, text: str) -> int:
        self.counted.append(text)
        return len(text.split())


def test_a_count_cache_counts_each_text_once_and_keeps_no_long_text() -> None:
    tally = Tally()
    counts = CountCache(lambda: tally)  # type: ignore[arg-type, return-value]
    long = "word " * (CountCache.MAX_CHARS // 5 + 1)
    assert [counts.count(t) for t in ("a b", "a b", "c", long, long)] == [
        2,
        2,
        1,
        *[len(long) // 5] * 2,
    ]
    assert tally.counted == ["a b", "c", long, long]
    assert counts.name == "tally"


def test_a_second_pack_of_the_same_files_counts_only_what_is_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = Workspace.open(make_repo(tmp_path / "shop", SHOP), semantic=False)
    first = workspace.rank("compute the total of an order with its discounts", Session())
    plain = workspace.pack(first, 600, Session(), Format.MARKDOWN)
    counted: list[str] = []
    tokenizer = workspace.tokenizer
    count = type(tokenizer).count

    def tallied(self: object, text: str) -> int:
        counted.append(text)
        return count(self, text)  # type: ignore[arg-type]

    monkeypatch.setattr(type(tokenizer), "count", tallied)
    again = workspace.rank("compute the total of an order with its discount", Session())
    packed = workspace.pack(again, 600, Session(), Format.MARKDOWN)
    assert [e.path for e in packed[0].entries] == [e.path for e in plain[0].entries]
    # only texts that hold the new question (the pack's own) were counted again
    assert counted and all("discount" in text for text in counted)
    assert packed[1].tokens == count(tokenizer, packed[1].text)
