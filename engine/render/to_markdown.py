"""The Markdown pack: a header, then per file a heading, its level and a fenced block.

Each fence is longer than any backtick run in its content, so repository text can never close
the fence early and spill into the surrounding prose.
"""

from __future__ import annotations

import re

from engine.render.view import FileView, PackView, changes_summary, fence_tag


def to_markdown(pack: PackView) -> str:
    """Format a pack as Markdown."""
    parts = [pack.instructions.strip() + "\n"] if pack.instructions.strip() else []
    parts.append(f"# Context pack: {pack.root}\n")
    if pack.query.strip():
        quoted = (f"> {line}".rstrip() for line in pack.query.strip().split("\n"))
        parts.append("\n".join(quoted) + "\n")
    parts.append(
        f"{len(pack.files)} file{'' if len(pack.files) == 1 else 's'}"
        f" · {pack.total_tokens:,} tokens · {pack.encoding}"
        f" · budget {pack.budget:,} tokens\n"
    )
    if pack.changes is not None:
        parts.append(_changes_section(pack))
    parts.extend(_file_section(file) for file in pack.files)
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


def _file_section(file: FileView) -> str:
    details = [file.level.value, f"{file.tokens:,} tokens"]
    if file.pinned:
        details.append("pinned")
    content = (
        file.content if file.content.endswith("\n") or not file.content else file.content + "\n"
    )
    fence = _fence(content)
    return (
        f"## {file.path}\n\n{' · '.join(details)}\n\n"
        f"{fence}{fence_tag(file.path, file.language)}\n{content}{fence}\n"
    )
