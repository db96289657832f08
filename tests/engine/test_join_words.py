"""Strings stored as one blob and offsets: the vocabulary's fast path and the general one."""

from __future__ import annotations

import numpy as np
import pytest

from engine.tables import join_strings, join_words, split_strings


@pytest.mark.parametrize(
    "items",
    [
        [],
        [""],
        ["", ""],
        ["alpha"],
        ["getusersession", "名前", "naïve", "", "zz"],
        ["with\x00nul", "plain"],  # not a word: the general way
    ],
)
def test_join_words_stores_what_join_strings_stores(items: list[str]) -> None:
    blob, offsets = join_words(items)
    expected_blob, expected_offsets = join_strings(items)
    assert blob.dtype == np.uint8 and offsets.dtype == np.int64
    assert blob.tobytes() == expected_blob
    assert offsets.tolist() == expected_offsets
    assert split_strings(blob, offsets) == items
