"""The focused view keeps the doc comment right above a kept declaration when it is short, in
the languages of engine.focus.DOC_LANGUAGES (Javadoc, PHP docblocks): engine.focus.DOC_LINES."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_repo
from index_support import index_repo

import engine.focus
from engine.levels import level_tokens, render_level
from engine.model import Index, Level

JAVA = """package shop;

import java.util.List;

public class Cart {
    private int count;

    /**
     * Adds an item to the cart.
     * Returns the new count.
     */
    public int add(String item) {
        count += 1;
        return count;
    }

    /**
     * Removes every item.
     *
     * <p>The cart keeps its owner, its currency, its coupons and its
     * delivery address; only the items go. Listeners hear one event
     * for the whole cart, not one for each item, so that a page with
     * a thousand items redraws once.
     */
    public void clear() {
        count = 0;
    }

    public int size() {
        return count;
    }
}
"""
PHP = """<?php

class Cart
{
    /**
     * Adds an item to the cart.
     */
    public function add($item)
    {
        return $item;
    }
}
"""
PYTHON = '''import os


# A comment above, not a docstring.
def add(item):
    """Add an item."""
    return item
'''


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Index, dict[str, str]]:
    files = {"Cart.java": JAVA, "Cart.php": PHP, "cart.py": PYTHON}
    root = make_repo(tmp_path_factory.mktemp("docs") / "shop", files)
    return index_repo(root)[0], files


def _focused(shop: tuple[Index, dict[str, str]], path: str, name: str) -> tuple[str, int]:
    index, texts = shop
    file_id = index.path_ids[path]
    file = index.files[file_id]
    position = next(i for i, d in enumerate(file.declarations) if d.name == name)
    text = render_level(file, texts[path], Level.FOCUSED, (position,))
    return text, level_tokens(index, file_id, Level.FOCUSED, (position,))


def test_a_short_doc_comment_above_a_kept_method_is_kept(
    shop: tuple[Index, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    with_doc, cost_with = _focused(shop, "Cart.java", "add")  # the shipped limit
    monkeypatch.setattr(engine.focus, "DOC_LINES", 0)
    without, cost_without = _focused(shop, "Cart.java", "add")
    monkeypatch.undo()
    assert "Adds an item to the cart." not in without
    assert "     * Adds an item to the cart.\n     * Returns the new count.\n     */\n" in with_doc
    assert cost_with > cost_without  # the estimate walks the same lines as the text
    php, _ = _focused(shop, "Cart.php", "add")
    assert "    /**\n     * Adds an item to the cart.\n     */\n    public function add" in php


def test_a_long_doc_comment_and_a_method_without_one_keep_only_their_code(
    shop: tuple[Index, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine.focus, "DOC_LINES", 8)
    long_doc, _ = _focused(shop, "Cart.java", "clear")
    assert "Removes every item" not in long_doc  # nine lines: over the limit
    assert "    public void clear() {\n        count = 0;\n    }\n" in long_doc
    bare, _ = _focused(shop, "Cart.java", "size")
    assert "count = 0" not in bare  # the code above a method without a doc stays out
    assert "    public int size() {\n" in bare


def test_other_languages_keep_only_their_code(shop: tuple[Index, dict[str, str]]) -> None:
    """Python's docstring is in the body; a comment above it (or JSDoc, Go's comments: they
    cost more than they show, see DOC_LANGUAGES) stays out."""
    assert "python" not in engine.focus.DOC_LANGUAGES
    text, _ = _focused(shop, "cart.py", "add")
    assert "import os" not in text and "A comment above" not in text
    assert '    """Add an item."""\n' in text


TYPE_JAVA = """package shop;

import java.util.List;
import java.util.Map;
import java.io.File;

/**
 * A cart of items.
 */
public class Basket {
    public int size() {
        return 0;
    }
}
"""


def test_a_first_types_doc_comment_is_kept_without_the_imports_above_it(tmp_path: Path) -> None:
    """The gap above a file's first type holds its imports too; only its Javadoc is kept
    (the imports kept code uses come from the import rule: none here). Review of
    session 24: the whole gap, imports and package line included, was kept."""
    root = make_repo(tmp_path / "basket", {"Basket.java": TYPE_JAVA})
    index = index_repo(root)[0]
    text, _ = _focused((index, {"Basket.java": TYPE_JAVA}), "Basket.java", "Basket")
    assert "/**\n * A cart of items.\n */\npublic class Basket {\n" in text
    assert "import java.util.Map" not in text and "import java.io.File" not in text
