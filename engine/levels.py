"""Levels of detail: one file's content at full, focused, outline or off.

`render_level` builds the text from the parse (declaration and import line ranges), never from
regexes. `level_tokens` estimates its size from cached counts alone, because the planner asks for
it for 200 candidates on every keystroke. Both walk the same kept-line layout (`kept_ranges`), so
the estimate and the text cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from engine.focus import MATCH_LINES, kept_ranges
from engine.model import Declaration, Index, Level, ParsedFile

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
from engine.parse.languages import spec_for

HUGE_DECLARATIONS = 200
"""Above this many declarations the outline keeps exported ones at depth <= 1 only."""
HUGE_SIGNATURE_TOKENS = 4_000
"""... and likewise above this many tokens of outline lines (estimated)."""
MARKER_TOKENS = 12
"""Estimate of one omission marker with its indent and newline; measured 8-11 in o200k/cl100k."""
OUTLINE_LINE_TOKENS = 1
"""Estimate of an outline line's indent, comment sign and newline beyond its rounded-up text
(together 2.1 tokens on flask with o200k)."""
OUTLINE_CHARS_PER_TOKEN = 4.0
"""Signatures and doc sentences measured 4.2 and 4.9 characters a token on flask (o200k);
TypeScript code runs nearer 3.6 (FACTS.md §2), which the rounding up partly covers."""
PROSE_CHARS_PER_TOKEN = 3.0
"""Headings ("Version 2.0.1", "Install") run 2.5-3.5 characters a token."""
LINE_NUMBER_TOKENS = 3
"""Estimate of a "123 | " prefix."""
SHORT_LINE_CHARS = 100
"""A lone omitted line up to this long is shown rather than replaced by a marker."""
MIN_SAVED_LINES, MAX_KEPT_SHARE, OUTLINE_SHARE = 5, 0.8, 0.5
"""FOCUSED is offered when it leaves out 5+ lines and keeps at most 80 % of them (without a
match); OUTLINE when it is at most half the file's tokens."""


def line_comment(language: str) -> str:
    """Return the language's line comment prefix; empty for prose and plain text."""
    spec = spec_for(language)
    return spec.line_comment if spec is not None else ""


def omission_marker(language: str, first: int, last: int) -> str:
    """Return the marker for omitted lines first..last, in the language's comment syntax."""
    where = f"line {first}" if first == last else f"lines {first}\N{EN DASH}{last}"
    comment = line_comment(language)
    return f"{comment} … {where} omitted" if comment else f"… {where} omitted"


def split_lines(text: str) -> list[str]:
    """Split on "\\n" only; a final newline ends the last line rather than starting a new one."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def render_level(
    file: ParsedFile,
    text: str,
    level: Level,
    matched: tuple[int, ...] = (),
    *,
    line_numbers: bool = False,
    best_lines: int = MATCH_LINES,
) -> str:
    """Return the content of one file at `level` (no header or fence; the renderers add those).

    Args:
        matched: indexes into file.declarations kept whole by FOCUSED, best first.
        line_numbers: prefix source lines with "NNN | " (markers get a blank gutter).
        best_lines: FOCUSED cuts the best matched declaration after this many lines.
    """
    if level is Level.OFF:
        return ""
    lines = split_lines(text)
    if level is Level.FULL:
        if not line_numbers:
            return text
        width = len(str(len(lines)))
        return "".join(_numbered(width, i, line) + "\n" for i, line in enumerate(lines, 1))
    if level is Level.OUTLINE:
        return render_outline(file)
    return _render_focused(file, lines, matched, line_numbers, best_lines)


LESS_DETAIL: tuple[Level, ...] = (Level.OUTLINE, Level.FOCUSED, Level.FULL)
"""The levels with content, from the least detail to the most."""


def shown_level(
    file: ParsedFile,
    text: str,
    level: Level,
    matched: tuple[int, ...],
    count: Callable[[str], int],
    *,
    line_numbers: bool = False,
    best_lines: int = MATCH_LINES,
    cost: Callable[[Level, str], int] | None = None,
) -> tuple[Level, str, int]:
    """Return the level a file is shown at when `level` is asked for, with its text and
    exact count: `level`, or the richest level above it that costs no more than the cheapest
    so far (a focused view of many one-line declarations is mostly omission markers; an
    outline of many documented one-liners repeats them). So less detail never costs more:
    what FULL shows costs at least what FOCUSED shows, which costs at least what OUTLINE
    shows, whoever chose the level (the planner, a key in the app, an MCP call).

    Args:
        count: the exact token count of a text (the pack's tokenizer); the returned count.
        cost: what a level's text costs where it goes, compared instead of `count` (a pack
            counts it in its format: JSON escapes every newline and quote, so a richer
            level's content can cost no more bare and more in JSON).
    """
    shown = render_level(
        file, text, level, matched, line_numbers=line_numbers, best_lines=best_lines
    )
    if level not in LESS_DETAIL:
        return level, shown, count(shown) if shown else 0
    price = cost if cost is not None else (lambda _level, content: count(content))
    best = (level, shown, price(level, shown))
    for richer in LESS_DETAIL[LESS_DETAIL.index(level) + 1 :]:
        content = render_level(
            file, text, richer, matched, line_numbers=line_numbers, best_lines=best_lines
        )
        price_richer = price(richer, content)
        if price_richer <= best[2]:  # a tie shows more for the same price
            best = (richer, content, price_richer)
    chosen, content, priced = best
    return chosen, content, priced if cost is None else count(content)


def _numbered(width: int, number: int | None, line: str) -> str:
    gutter = f"{number:>{width}}" if number is not None else " " * width
    return f"{gutter} | {line}" if line else f"{gutter} |"


def _render_focused(
    file: ParsedFile,
    lines: list[str],
    matched: Sequence[int],
    line_numbers: bool,
    best_lines: int,
) -> str:
    kept = kept_ranges(file, matched, len(lines), best_lines)
    width = len(str(len(lines)))
    out: list[tuple[int | None, str]] = []  # (line number or None for a marker, text)
    position = 1
    for first, last in [*kept, (len(lines) + 1, len(lines))]:
        if position < first:
            out.extend(_gap(file.language, lines, position, first - 1))
        out.extend((n, lines[n - 1]) for n in range(first, last + 1))
        position = last + 1
    if line_numbers:
        return "".join(_numbered(width, n, line) + "\n" for n, line in out)
    return "".join(line + "\n" for _, line in out)


def _gap(language: str, lines: list[str], first: int, last: int) -> list[tuple[int | None, str]]:
    """Render omitted lines first..last as one marker, with the stretch's leading and trailing
    blank lines kept to separate blocks; a blank stretch or a single short line stays as is
    (a marker would cost as much)."""
    core = [n for n in range(first, last + 1) if lines[n - 1].strip()]
    verbatim: list[tuple[int | None, str]] = [(n, lines[n - 1]) for n in range(first, last + 1)]
    if not core or (len(core) == 1 and len(lines[core[0] - 1]) <= SHORT_LINE_CHARS):
        return verbatim
    text = lines[core[0] - 1]
    marker = text[: len(text) - len(text.lstrip())] + omission_marker(language, core[0], core[-1])
    return [*verbatim[: core[0] - first], (None, marker), *verbatim[core[-1] - first + 1 :]]


def outline_declarations(file: ParsedFile) -> tuple[tuple[Declaration, ...], int]:
    """Return the declarations the outline shows and how many it leaves out (huge files)."""
    decls = file.declarations
    huge = len(decls) > HUGE_DECLARATIONS or (
        sum(len(d.signature) + len(d.doc) for d in decls) / OUTLINE_CHARS_PER_TOKEN
        > HUGE_SIGNATURE_TOKENS
    )
    if not huge:
        return tuple(decls), 0
    shown = tuple(d for d in decls if d.exported and d.depth <= 1)
    return shown, len(decls) - len(shown)


def one_line(signature: str) -> str:
    """Collapse a multi-line signature to one line, dropping a trailing comma before a bracket."""
    flat = re.sub(r",\s+([)\]}])", r"\1", signature.strip())
    flat = re.sub(r"\s+", " ", flat)
    return re.sub(r"([(\[{]) ", r"\1", flat)


def render_outline(file: ParsedFile) -> str:
    """Return one line per declaration: signature, doc sentence as a comment, nested by depth."""
    comment = line_comment(file.language)
    shown, hidden = outline_declarations(file)
    out = []
    for decl in shown:
        head = one_line(decl.signature) or f"{decl.kind.value} {decl.name}"
        if not comment:  # prose: Markdown headings carry their depth, rst titles are indented
            out.append(head if head.startswith("#") else "  " * decl.depth + head)
            continue
        doc = f"  {comment} {one_line(decl.doc)}" if decl.doc else ""
        out.append("  " * decl.depth + head + doc)
    if hidden:
        note = f"… {hidden} private or nested declarations omitted"
        out.append(f"{comment} {note}" if comment else note)
    return "".join(line + "\n" for line in out)


def level_tokens(
    index: Index,
    file_id: int,
    level: Level,
    matched: tuple[int, ...] = (),
    *,
    line_numbers: bool = False,
    best_lines: int = MATCH_LINES,
) -> int:
    """Estimate the tokens of `render_level`'s output from cached counts only (no tokenizer).

    Slightly pessimistic: each omission marker costs MARKER_TOKENS whatever its digits.
    """
    file = index.files[file_id]
    if level is Level.OFF:
        return 0
    if level is Level.FULL:
        return file.tokens + (LINE_NUMBER_TOKENS * file.lines if line_numbers else 0)
    if level is Level.OUTLINE:
        return file.outline_tokens if file.outline_tokens >= 0 else outline_tokens(file)
    if not matched and not line_numbers and file.focused_tokens >= 0:
        return file.focused_tokens
    start = int(index.line_tokens_ptr[file_id])
    line_count = int(index.line_tokens_ptr[file_id + 1]) - start - 1
    return focused_tokens(
        file, index.line_tokens, start, line_count, matched,
        line_numbers=line_numbers, best_lines=best_lines,
    )  # fmt: skip


def focused_tokens(
    file: ParsedFile,
    prefix_sums: npt.NDArray[np.int32] | npt.NDArray[np.int64],
    start: int,
    line_count: int,
    matched: tuple[int, ...] = (),
    *,
    line_numbers: bool = False,
    best_lines: int = MATCH_LINES,
) -> int:
    """Estimate the focused view's tokens from a file's per-line prefix sums, which start at
    `start` in `prefix_sums` (the index's flat array, or the file's own with start 0)."""
    ranges = kept_ranges(file, matched, line_count, best_lines)
    # One gather of the prefix sums needed, then plain sums: P[0], P[a1-1], P[b1], ..., P[n].
    bounds = [start]
    for first, last in ranges:
        bounds += (start + first - 1, start + last)
    bounds.append(start + line_count)
    prefix = prefix_sums[bounds].tolist()
    total = sum(prefix[2::2]) - sum(prefix[1:-1:2])  # the kept lines
    previous_lasts = [0, *(last for _, last in ranges)]
    next_firsts = [*(first for first, _ in ranges), line_count + 1]
    for previous_last, first, before, after in zip(
        previous_lasts, next_firsts, prefix[0::2], prefix[1::2], strict=True
    ):
        gap_lines = first - 1 - previous_last
        if gap_lines > 0:
            gap = after - before
            # One line, or at most one token a line (almost surely blank), is kept as is.
            total += gap if gap_lines == 1 or gap <= gap_lines else MARKER_TOKENS
    if line_numbers:
        total += LINE_NUMBER_TOKENS * sum(last - first + 1 for first, last in ranges)
    return int(total)


def outline_line_tokens(decl: Declaration, prose: bool = False) -> int:
    """Estimate one outline line: the smaller of the cached signature count and a character
    estimate (the cached count spans the signature's source lines, decorators included)."""
    if prose:  # a heading line alone; titles hold numbers and short words
        return int(len(decl.signature) / PROSE_CHARS_PER_TOKEN) + OUTLINE_LINE_TOKENS
    by_chars = int((len(decl.signature) + len(decl.doc)) / OUTLINE_CHARS_PER_TOKEN) + 1
    signature = min(decl.signature_tokens, by_chars) if decl.signature_tokens else by_chars
    return signature + OUTLINE_LINE_TOKENS


def outline_tokens(file: ParsedFile) -> int:
    """Estimate the outline's tokens from its declarations' signatures and docs."""
    shown, hidden = outline_declarations(file)
    prose = not line_comment(file.language)
    total = sum(outline_line_tokens(decl, prose) for decl in shown)
    return total + (MARKER_TOKENS if hidden else 0)


def available_levels(file: ParsedFile) -> tuple[Level, ...]:
    """Return the levels worth offering for a file, richest first; FULL and OFF always.

    FOCUSED needs to leave out a real share of the file (without a match), OUTLINE needs
    declarations and to be well under the file's tokens.
    """
    levels = [Level.FULL]
    kept = sum(last - first + 1 for first, last in kept_ranges(file, (), file.lines))
    saved = file.lines - kept
    if saved >= MIN_SAVED_LINES and kept <= MAX_KEPT_SHARE * file.lines:
        levels.append(Level.FOCUSED)
    if file.declarations and outline_tokens(file) <= OUTLINE_SHARE * file.tokens:
        levels.append(Level.OUTLINE)
    levels.append(Level.OFF)
    return tuple(levels)
