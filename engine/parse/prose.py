"""Heading sections of reStructuredText, found by a line scan.

rst has no tree-sitter grammar in the language pack, and its headings are simple to see: a
title line with an underline (and optionally an overline) of one repeated punctuation
character. Levels follow the order in which adornment styles first appear, as docutils does.
"""

from __future__ import annotations

from engine.model import Declaration, DeclKind
from engine.parse.nodes import first_sentence

ADORNMENT_CHARS = frozenset("=-`:'\"~^_*+#<>.")
"""Characters docutils accepts for section adornments (the common ones)."""

SECTION_SEPARATOR = " > "
"""Joins parent headings in a section's qualified name."""


def _is_adornment(line: str) -> bool:
    stripped = line.rstrip()
    return len(stripped) >= 2 and stripped[0] in ADORNMENT_CHARS and len(set(stripped)) == 1


def _headings(lines: list[str]) -> list[tuple[int, int, str, tuple[str, bool]]]:
    """Return (first line index, title line index, title, style) for every heading."""
    found: list[tuple[int, int, str, tuple[str, bool]]] = []
    index = 0
    while index + 1 < len(lines):
        line, below = lines[index], lines[index + 1]
        title = line.strip()
        if (
            _is_adornment(line)
            and index + 2 < len(lines)
            and lines[index + 1].strip()
            and not _is_adornment(lines[index + 1])
            and lines[index + 2].rstrip() == line.rstrip()
        ):
            found.append((index, index + 1, lines[index + 1].strip(), (line.strip()[0], True)))
            index += 3
            continue
        if (
            title
            and not _is_adornment(line)
            and not line[:1].isspace()
            and _is_adornment(below)
            and len(below.rstrip()) >= min(len(title), 3)
        ):
            found.append((index, index, title, (below.strip()[0], False)))
            index += 2
            continue
        index += 1
    return found


def rst_sections(text: str) -> tuple[Declaration, ...]:
    """Return one SECTION declaration per rst heading, nested by adornment level."""
    lines = text.splitlines()
    headings = _headings(lines)
    styles: dict[tuple[str, bool], int] = {}
    levels = [styles.setdefault(style, len(styles)) for *_, style in headings]
    result: list[Declaration] = []
    stack: list[tuple[int, str]] = []
    for position, (first, title_at, title, _style) in enumerate(headings):
        level = levels[position]
        end = len(lines)
        for later in range(position + 1, len(headings)):
            if levels[later] <= level:
                end = headings[later][0]
                break
        while end > first + 1 and not lines[end - 1].strip():
            end -= 1
        while stack and stack[-1][0] >= level:
            stack.pop()
        parents = [name for _, name in stack]
        body_at = title_at + 2
        result.append(
            Declaration(
                kind=DeclKind.SECTION,
                name=title,
                qualified_name=SECTION_SEPARATOR.join([*parents, title]),
                signature=title,
                doc=_first_paragraph(lines, body_at, end),
                start_line=first + 1,
                end_line=end,
                body_start_line=min(body_at + 1, end),
                exported=True,
                depth=len(parents),
            )
        )
        stack.append((level, title))
    return tuple(result)


def _first_paragraph(lines: list[str], start: int, end: int) -> str:
    """First sentence of the first paragraph in lines[start:end]."""
    paragraph: list[str] = []
    for line in lines[start:end]:
        if not line.strip():
            if paragraph:
                break
            continue
        if _is_adornment(line) or line.lstrip().startswith(".."):
            break
        paragraph.append(line)
    return first_sentence("\n".join(paragraph))
