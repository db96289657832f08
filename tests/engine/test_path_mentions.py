"""`path_mentions` finds exactly what PATH_MENTION finds, without its backtracking."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from index_support import index_repo

from engine.model import Index
from engine.query import DOTTED, PATH_MENTION, _names, mentioned_files, path_mentions

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


MENTIONED_REPO = {
    "flask/json/tag.py": "x = 1\n",
    "flask/json/__init__.py": "x = 1\n",
    "flask/app.py": "x = 1\n",
    "src/app.py": "x = 1\n",
    "docs.v2/README": "text\n",
    "web/app.py.bak/app.py": "x = 1\n",
    "Makefile": "all:\n",
    "lib/tag": "x\n",
    "pkg/utils/helpers.ts": "export const x = 1\n",
}
"""Paths with a shared last part, a folder with a dot, files without an extension."""


def _every_path_compared(index: Index, text: str) -> tuple[int, ...]:
    """mentioned_files as it was before `Index.named`: each mention against every path."""
    candidates: set[str] = set()
    for match in PATH_MENTION.findall(text):
        path = match.replace("\\", "/").strip("./")
        if "/" in path or "." in path:
            candidates.add(path)
    for match in DOTTED.findall(text):
        parts = match.split(".")
        candidates.update("/".join(parts[:end]) for end in range(len(parts), 1, -1))
    found = {
        file_id
        for path, file_id in index.path_ids.items()
        for mention in candidates
        if _names(path, mention) or ("/" in mention and _names(path.rsplit(".", 1)[0], mention))
    }
    return tuple(sorted(found))


@pytest.mark.parametrize(
    "question",
    [
        "why does flask.json.tag fail on nested dicts",
        'File "/usr/lib/python3/site-packages/flask/app.py", line 1820, in dispatch',
        "see app.py and src/app.py, web/app.py.bak and docs.v2/README",
        "the x/docs folder, lib/tag, pkg.utils.helpers and ./Makefile.am",
        "nothing named here at all",
    ],
)
def test_the_files_a_question_names_are_those_every_path_compared_finds(
    tmp_path: Path, question: str
) -> None:
    for path, text in MENTIONED_REPO.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    index, _ = index_repo(tmp_path)
    expected = _every_path_compared(index, question)
    assert mentioned_files(index, question) == expected
    assert mentioned_files(index, question) == expected  # again, from Index.named
