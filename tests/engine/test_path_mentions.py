"""`path_mentions` finds exactly what PATH_MENTION finds, without its backtracking."""

from __future__ import annotations

import random

import pytest

from engine.query import PATH_MENTION, path_mentions

ALPHABET = "ab.py/Z19_-\\ é²٣:·\t"
"""Path characters of every kind (ASCII and other letters, digits, "_", "-", ".", "/", "\\"),
word characters `[A-Za-z]` does not take, and characters that end a path."""


@pytest.mark.parametrize("seed", range(4))
def test_the_same_mentions_as_the_expression_on_random_text(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(5000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 30)))
        assert path_mentions(text) == PATH_MENTION.findall(text), repr(text)


@pytest.mark.parametrize(
    "text",
    [
        'File "/usr/lib/python3/site-packages/flask/app.py", line 12, in wsgi_app',
        "see src/textual/widgets/_data_table.py and flask.json.tag; docs/index.rst.",
        "C:\\Users\\me\\proj\\main.go:12 a.b.c.d.tar.gz x.pyc x.py2 x.abcdef x.ab_ -x.y- a/b/",
        "https://github.com/org/repo/blob/main/src/lib.rs#L10 ../up/one.ts ./here.js",
    ],
)
def test_the_same_mentions_as_the_expression_on_questions(text: str) -> None:
    assert path_mentions(text) == PATH_MENTION.findall(text)


@pytest.mark.parametrize("token", ["x" * 200_000, "x.1" * 70_000, "a-" * 100_000])
def test_a_huge_token_is_read_once(token: str) -> None:
    # the expression backtracks over the rest of the token from each of its characters
    # (about 5 s for 8,000 characters); read once, this is over in a moment
    assert path_mentions(f"see {token} and src/app.py") == ["src/app.py"]
