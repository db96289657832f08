"""How a ranked file is put into words for the list: its score bar and its reasons line.

Plain functions over engine records, kept apart from the widget so they can be read and tested
on their own; the widget only adds styles.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.model import Level, Reason, ReasonKind, one_line

SCORE_CELLS = 6
"""Width of the score bar."""
_EIGHTHS = " ▏▎▍▌▋▊▉█"


def score_bar(fraction: float, cells: int = SCORE_CELLS) -> str:
    """Draw a fraction 0..1 as a bar of block characters in eighths of a cell."""
    eighths = round(max(0.0, min(1.0, fraction)) * cells * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (_EIGHTHS[part] if part else "")).ljust(cells)


def describe_reasons(reasons: tuple[Reason, ...], limit: int = 3) -> str:
    """Say why a file is ranked, pins and declarations first: "defines Session.get · words user"."""
    by_kind: dict[ReasonKind, list[str]] = {}
    for reason in reasons:
        by_kind.setdefault(reason.kind, []).append(reason.detail)
    parts: list[str] = []
    for kind, label in (
        (ReasonKind.PIN, "pinned"),
        (ReasonKind.FOCUS, "focus"),
        (ReasonKind.DECLARATION, "defines "),
        (ReasonKind.WORD, "words "),
        (ReasonKind.SEMANTIC, "meaning "),
        (ReasonKind.PATH, "path "),
        (ReasonKind.IMPORTS, "imports "),
        (ReasonKind.IMPORTED_BY, "imported by "),
        (ReasonKind.GIT, ""),
    ):
        details = by_kind.get(kind)
        if not details:
            continue
        if kind in (ReasonKind.PIN, ReasonKind.FOCUS):
            parts.append(label)
        else:
            shown = ", ".join(dict.fromkeys(details[:limit]))
            more = f" +{len(details) - limit}" if len(details) > limit else ""
            parts.append(f"{label}{shown}{more}")
    return one_line(" · ".join(parts)) if parts else "no direct evidence"


def fit_path(path: str, room: int) -> tuple[str, str]:
    """Split a path into (folder part, file name) that fit in room cells, keeping the name.

    The folder loses its start first: "ctxtui/widgets/file_list.py" in 20 cells becomes
    ("…idgets/", "file_list.py"); the name is never cut here (the row's ellipsis does that).
    """
    folder, _, name = path.rpartition("/")
    prefix = f"{folder}/" if folder else ""
    if len(prefix) + len(name) <= room:
        return prefix, name
    keep = room - len(name) - 1
    return ("…" + prefix[-keep:] if keep > 0 else ""), name


class RowKey(NamedTuple):
    """What a row shows besides its file's path and reasons; a row is redrawn when it changes."""

    number: int
    """1-based rank."""
    level: Level
    """Level in the plan (OFF when left out)."""
    chosen: bool
    """The user fixed the level."""
    packed: bool
    """The file is in the plan."""
    tokens: str
    """The tokens column, formatted."""
    eighths: int
    """Score bar length in eighths of a cell (of 48)."""
    pinned: bool
    """The file is pinned."""
    reasons: tuple[Reason, ...]
    """The ranking's evidence."""
    width: int
    """Cells the row may use."""
    changed: bool = False
    """The file changed in the work tree and the changes are packed."""
    secret: str = ""
    """Why the file is marked for secrets ("secret redacted, line 12"); empty when it holds none."""
