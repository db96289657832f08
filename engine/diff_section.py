"""The pack's "Changes" section: the diff fitted to its share of the budget, hunk by hunk.

Every changed file keeps its header (so the reader sees what changed), then hunks are taken
round-robin across files (every file's first hunk, then every second one, ...) while they fit,
so a large change in one file cannot crowd out all the others. A file that lost hunks says so
in a marker line where they were left out. The section is counted with the real tokenizer.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.changes import ChangedFile, Changes
from engine.model import printable
from engine.render import TokenCounter

CHANGES_SHARE = 0.5
"""Share of the budget the diff may take at most; the rest is for the files themselves
(the changed files are pinned, so their current code is in the pack too)."""
SECTION_OVERHEAD = 40
"""Tokens of the section's heading, summary line and fence (measured 25-38 in the formats)."""


@dataclass(frozen=True, slots=True)
class ChangesSection:
    """The diff as the pack carries it."""

    base: str
    """The base as asked ("HEAD", a branch, a commit)."""
    files: tuple[ChangedFile, ...]
    """Every changed file, trimmed or not."""
    diff: str
    """The unified diff shown, with a marker where hunks were left out; may be empty."""
    tokens: int
    """Exact tokens of `diff`."""
    hunks: int
    """Hunks shown."""
    hunks_left_out: int
    """Hunks left out to fit the budget (0 when the whole diff fits)."""


def fit_changes(changes: Changes, max_tokens: int, counter: TokenCounter) -> ChangesSection:
    """Return the diff of `changes` trimmed hunk-wise to at most `max_tokens` tokens."""
    total = changes.hunk_count
    costs = [[counter.count(hunk) for hunk in f.hunks] for f in changes.files]
    kept: list[list[bool]] = [[False] * len(f.hunks) for f in changes.files]
    headers = sum(counter.count(f.header) for f in changes.files)
    budget = max_tokens - headers
    for depth in range(max((len(f.hunks) for f in changes.files), default=0)):
        for number, file_costs in enumerate(costs):
            if depth < len(file_costs) and file_costs[depth] <= budget:
                kept[number][depth] = True
                budget -= file_costs[depth]
    text = _assemble(changes.files, kept)
    tokens = counter.count(text)
    # markers and joins make the sum of parts inexact: drop the last hunks taken until it fits
    while tokens > max_tokens and _drop_last(kept):
        text = _assemble(changes.files, kept)
        tokens = counter.count(text)
    if tokens > max_tokens:  # even the headers do not fit: name the files only
        text = _summary_only(changes.files)
        tokens = counter.count(text)
    shown = sum(sum(row) for row in kept) if text and not _is_summary(text) else 0
    return ChangesSection(
        base=changes.base,
        files=changes.files,
        diff=text,
        tokens=tokens,
        hunks=shown,
        hunks_left_out=total - shown,
    )


def _assemble(files: tuple[ChangedFile, ...], kept: list[list[bool]]) -> str:
    parts: list[str] = []
    for changed, row in zip(files, kept, strict=True):
        parts.append(changed.header)
        left_out = 0
        lines_left_out = 0
        for hunk, keep in zip(changed.hunks, row, strict=True):
            if keep:
                if left_out:
                    parts.append(_marker(left_out, lines_left_out))
                    left_out = lines_left_out = 0
                parts.append(hunk)
            else:
                left_out += 1
                lines_left_out += hunk.count("\n") - 1
        if left_out:
            parts.append(_marker(left_out, lines_left_out))
    return "".join(parts)


def _marker(hunks: int, lines: int) -> str:
    plural = "" if hunks == 1 else "s"
    return f"… {hunks} hunk{plural} ({lines:,} lines) left out to fit the budget\n"


def _drop_last(kept: list[list[bool]]) -> bool:
    """Unmark the deepest kept hunk of the last file holding one (the last one taken)."""
    deepest = max((len(row) for row in kept), default=0)
    for depth in range(deepest - 1, -1, -1):
        for row in reversed(kept):
            if depth < len(row) and row[depth]:
                row[depth] = False
                return True
    return False


SUMMARY_HEAD = "… the diff was left out to fit the budget; changed files:\n"


def _summary_only(files: tuple[ChangedFile, ...]) -> str:
    return SUMMARY_HEAD + "".join(f"{f.status.value} {printable(f.path)}\n" for f in files)


def _is_summary(text: str) -> bool:
    return text.startswith(SUMMARY_HEAD)
