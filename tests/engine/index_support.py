"""Helpers for tests that build real indexes: one tokenizer per test run, in-process parsing.

Loading a tokenizer table takes about half a second, so every test shares one; parsing runs
in this process (workers=1) because fixture repositories are far below the pool threshold.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from engine.indexer import build_index
from engine.model import Index, IndexReport, ScanOptions
from engine.tokens import Tokenizer, load_tokenizer

DEFAULT_OPTIONS = ScanOptions()

SHOP: dict[str, str | bytes] = {
    "auth/session.py": (
        "from auth.tokens import sign_token\n"
        "\n"
        "\n"
        "def open_session(user):\n"
        '    """Open a login session for a user."""\n'
        "    return sign_token(user)\n"
    ),
    "auth/tokens.py": "def sign_token(user):\n    return 'signed:' + user\n",
    "billing/invoice.py": "class Invoice:\n    def total(self):\n        return 42\n",
    "README.md": "# Shop\n\nSessions and invoices.\n",
}
"""A small shop repository: an import edge, a docstring, a class with a method, a README."""


@cache
def shared_tokenizer(encoding: str = "o200k_base") -> Tokenizer:
    """The tokenizer of `encoding`, loaded once for the whole test run."""
    return load_tokenizer(encoding)


def index_repo(
    root: Path,
    *,
    cache_dir: Path | None = None,
    options: ScanOptions = DEFAULT_OPTIONS,
    encoding: str = "o200k_base",
) -> tuple[Index, IndexReport]:
    """Index `root` in this process with the shared tokenizer, optionally with a cache."""
    return build_index(
        root, options=options, encoding=encoding, cache_dir=cache_dir, workers=1,
        tokenizer=shared_tokenizer(encoding),
    )  # fmt: skip


def index_content(index: Index) -> dict[str, object]:
    """Everything an index says about its files, keyed by path and word (not by ids)."""
    paths = [f.path for f in index.files]
    words = {term: word for word, term in index.vocab.items()}
    postings: dict[tuple[str, str], tuple[float, ...]] = {}
    ptr = index.postings.ptr
    for term in range(len(words)):
        for k in range(int(ptr[term]), int(ptr[term + 1])):
            doc = int(index.postings.docs[k])
            postings[(words[term], paths[doc])] = tuple(index.postings.tf[k].tolist())
    lines = {
        p: index.line_tokens[index.line_tokens_ptr[i] : index.line_tokens_ptr[i + 1]].tolist()
        for i, p in enumerate(paths)
    }
    return {
        "files": tuple(index.files),
        "postings": postings,
        "body_length": dict(zip(paths, index.body_length.tolist(), strict=True)),
        "line_tokens": lines,
        "imports": {p: [paths[t] for t in index.imports[i]] for i, p in enumerate(paths)},
        "importers": {p: [paths[t] for t in index.importers[i]] for i, p in enumerate(paths)},
        "declarations": {
            (words[t], paths[f], d)
            for t, pairs in index.declaration_postings.items()
            for f, d in pairs
        },
        "roles": dict(zip(paths, index.roles.tolist(), strict=True)),
        "git": dict(zip(paths, index.git, strict=True)),
        "terms_sorted": list(index.terms_sorted),
        "skipped": index.skipped,
        "units": unit_words(index, paths, words),
    }


def unit_words(
    index: Index, paths: list[str], words: dict[int, str]
) -> dict[tuple[str, int, str], tuple[int, ...]]:
    """Each declaration's words per field (engine.units), keyed by path, position and word."""
    units = index.units
    assert units is not None
    out = {}
    for file_id, path in enumerate(paths):
        first = int(units.file_ptr[file_id])
        for position in range(int(units.file_ptr[file_id + 1]) - first):
            start, end = units.row_ptr[first + position], units.row_ptr[first + position + 1]
            for row in range(int(start), int(end)):
                key = (path, position, words[int(units.terms[row])])
                out[key] = tuple(units.tf[row].tolist())
    return out
