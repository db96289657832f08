"""The Markdown pack: a header, then per file a heading, its level and a fenced block.

Each fence is longer than any backtick run in its content, so repository text can never close
the fence early and spill into the surrounding prose. File and folder names are repository
text too: one with a character Markdown acts on (a newline, a backtick, `<`, `#`, ...) is shown
as a code span on one line, its control characters escaped, so a crafted name cannot end the
heading and smuggle prose into the pack.
"""

from __future__ import annotations

import re

from engine.model import one_line
from engine.render.view import FileView, PackView, changes_summary, fence_tag

MARKDOWN_ACTIVE = frozenset("`<>#*[]|&\\!")
"""Characters that Markdown may act on inside a heading; a name with one is quoted.
(`_` is left out on purpose: snake_case names are everywhere and act only at word edges.)"""


def quote_name(name: str) -> str:
    """A file or folder name for a Markdown heading: as is when plain, else a code span on one
    line (control characters escaped, the span's backticks longer than any run inside)."""
    shown = one_line(name)
    if shown == name and not MARKDOWN_ACTIVE.intersection(name):
        return name
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if shown.startswith(("`", " ")) or shown.endswith(("`", " ")) else ""
    return f"{ticks}{pad}{shown}{pad}{ticks}"


_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
"""A line that opens or closes a fenced code block (CommonMark: at most 3 spaces before it)."""


def closed_fences(text: str) -> str:
    """Text that leaves no fenced code block open: a closing fence is added after a fence the
    text opens and never closes. The instructions are the user's Markdown, written into the
    pack as they are; an unclosed ``` there turned the pack's title, question, totals and
    first file into code, and every fence after it inside out."""
    opened = ""
    for line in text.split("\n"):
        found = _FENCE_LINE.match(line)
        if found is None:
            continue
        run, rest = found.groups()
        if not opened:
            if not (run[0] == "`" and "`" in rest):  # a backtick in the info string: no fence
                opened = run
        elif run[0] == opened[0] and len(run) >= len(opened) and not rest.strip():
            opened = ""
    return f"{text}\n{opened}" if opened else text


def to_markdown(pack: PackView) -> str:
    """Format a pack as Markdown."""
    instructions = closed_fences(pack.instructions.strip())
    parts = [instructions + "\n"] if instructions else []
    parts.append(f"# Context pack: {quote_name(pack.root)}\n")
    if pack.query.strip():
        quoted = (f"> {line}".rstrip() for line in pack.query.strip().split("\n"))
        parts.append("\n".join(quoted) + "\n")
    parts.append(
        f"{len(pack.files)} file{'' if len(pack.files) == 1 else 's'}"
        f" · {pack.total_tokens:,} tokens · {pack.encoding}"
        f" · budget {pack.budget:,} token{'' if pack.budget == 1 else 's'}\n"
    )
    if pack.changes is not None:
        parts.append(_changes_section(pack))
    parts.extend(file_section(file) for file in pack.files)
    return "\n".join(parts)


def _changes_section(pack: PackView) -> str:
    assert pack.changes is not None
    diff = pack.changes.diff
    if diff and not diff.endswith("\n"):
        diff += "\n"
    fence = _fence(diff)
    return f"## Changes\n\n{changes_summary(pack.changes)}\n\n{fence}diff\n{diff}{fence}\n"


def _fence(content: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    return "`" * max(3, longest + 1)


def file_section(file: FileView) -> str:
    """One file's heading, details line and fenced content."""
    details = [file.level.value, f"{file.tokens:,} tokens"]
    if file.pinned:
        details.append("pinned")
    content = (
        file.content if file.content.endswith("\n") or not file.content else file.content + "\n"
    )
    fence = _fence(content)
    return (
        f"## {quote_name(file.path)}\n\n{' · '.join(details)}\n\n"
        f"{fence}{fence_tag(file.path, file.language)}\n{content}{fence}\n"
    )
