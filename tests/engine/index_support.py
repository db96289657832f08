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
