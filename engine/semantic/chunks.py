"""Cut a file into the pieces the semantic stage embeds: about 40 lines each, path first.

A chunk ends before a declaration that starts late in its window, so a function is rarely
split across two chunks; the file's path heads every chunk, so the model sees where the code
lives (`src/flask/sessions.py` says "session" before a line of code does). Chunk size and the
cap per file are `SemanticWeights` numbers chosen on DEV (see engine.semantic.fuse).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.model import Declaration, printable

CHUNKER_VERSION = 1
"""Bump when the cutting changes: cached vectors of another version are not reused."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """A stretch of a file as the model reads it."""

    start_line: int
    """First line, 1-based."""
    end_line: int
    """Last line, 1-based, inclusive."""
    text: str
    """The path, a newline, then the lines."""


def chunk_file(
    path: str,
    text: str,
    declarations: Sequence[Declaration] = (),
    *,
    lines: int = 40,
    max_chunks: int = 64,
) -> tuple[Chunk, ...]:
    """Cut `text` into chunks of at most `lines` lines, ending before declarations.

    Blank stretches make no chunk; a file longer than `max_chunks` chunks keeps its first
    ones (such files are data or generated, and only the best chunk of a file counts). The
    path heads each chunk as `printable` shows it: bytes of a name that are not UTF-8 (kept
    as surrogates) become U+FFFD, as the model's tokenizer takes valid Unicode only.
    """
    head = printable(path)
    all_lines = text.splitlines()
    starts = sorted({d.start_line for d in declarations if d.depth <= 1})
    chunks: list[Chunk] = []
    first = 1
    total = len(all_lines)
    lines = max(lines, 1)
    while first <= total and len(chunks) < max_chunks:
        last = min(first + lines - 1, total)
        if last < total:
            # the latest declaration start past the first quarter of the window: cut before it
            cut = [s for s in starts if first + lines // 4 < s <= last]
            if cut:
                last = cut[-1] - 1
        body = "\n".join(all_lines[first - 1 : last])
        if body.strip():
            chunks.append(Chunk(first, last, f"{head}\n{body}"))
        first = last + 1
    return tuple(chunks)
