"""How a ranked file is put into words for the list: score bar, tokens, path, reasons line.

Plain functions over engine records, kept apart from the widget so they can be read and tested
on their own; the widget hands in its component styles.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.content import Content
from textual.strip import Strip
from textual.style import Style

from ctxtui.widgets.cells import fit_path
from engine.model import Level, RankedFile, Reason, ReasonKind, one_line
from engine.shown_path import shown_detail, shown_line

SCORE_CELLS = 6
"""Width of the score bar."""
TOKENS_CELLS = 8
"""Width of the tokens column: "(99,999)" or "999,999" at most."""
ROW_PREFIX = 19 + TOKENS_CELLS + 1
"""Cells before the path: rank 4, score bar 6, level and star 9, tokens and a space."""
REASONS_INDENT = 5
"""Cells before the reasons line."""
PATH_CELLS = 18
"""Cells a row's path is given at the least before the row turns narrow (a row narrower than
ROW_PREFIX + PATH_CELLS, 46 cells): the path is what a file is picked by, so the score bar goes,
the level shows as its key's letter and the tokens move to the reasons line; the path gets all
but NARROW_PREFIX cells (27 at 40 columns, where the wide row left it 6: review, session 29).
46 is the row of an 80-column terminal beside the preview, the narrowest row the snapshots fix
(80x24, 60x20: they stay wide); the next, 50 columns, is 44 cells."""
NARROW_PREFIX = 7
"""Cells before the path of a narrow row: rank 4, level letter and star, a space."""
_BADGES = {Level.FULL: "full", Level.FOCUSED: "focused", Level.OUTLINE: "outline", Level.OFF: "off"}
LEVEL_LETTERS = {Level.FULL: "f", Level.FOCUSED: "s", Level.OUTLINE: "o", Level.OFF: "x"}
"""A narrow row's level: the letter of the key that sets it."""
_EIGHTHS = " ▏▎▍▌▋▊▉█"


def score_bar(fraction: float, cells: int = SCORE_CELLS) -> str:
    """Draw a fraction 0..1 as a bar of block characters in eighths of a cell."""
    eighths = round(max(0.0, min(1.0, fraction)) * cells * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (_EIGHTHS[part] if part else "")).ljust(cells)


def describe_reasons(reasons: Sequence[Reason], width: int = 0, *, redact: bool = True) -> str:
    """Say why a file is ranked, pins and declarations first: "defines Session.get · words user".

    Each kind lists as many of its details as fit in `width` cells (every detail when 0), at
    least one, with "+N" for the ones left out; a secret in a path among them is redacted
    unless `redact` is off (engine.shown_path).
    """
    by_kind: dict[ReasonKind, list[str]] = {}
    for reason in reasons:
        by_kind.setdefault(reason.kind, []).append(shown_detail(reason, redact=redact))
    line = ""
    for limit in _LIMITS:
        line = _reasons_line(by_kind, limit)
        if not width or len(line) <= width:
            break
    return line


_LIMITS = (16, 8, 5, 4, 3, 2, 1)
"""Details per kind tried, most first, until the reasons line fits."""


def _reasons_line(by_kind: dict[ReasonKind, list[str]], limit: int) -> str:
    parts: list[str] = []
    for kind, label in _REASON_LABELS:
        details = by_kind.get(kind)
        if not details:
            continue
        if kind in (ReasonKind.PIN, ReasonKind.FOCUS):
            parts.append(label)
        else:
            unique = list(dict.fromkeys(details))
            more = f" +{len(unique) - limit}" if len(unique) > limit else ""
            parts.append(f"{label}{', '.join(unique[:limit])}{more}")
    return one_line(" · ".join(parts)) if parts else "no direct evidence"


_REASON_LABELS = (
    (ReasonKind.PIN, "pinned"),
    (ReasonKind.FOCUS, "focus"),
    (ReasonKind.DECLARATION, "defines "),
    (ReasonKind.WORD, "words "),
    (ReasonKind.SEMANTIC, "meaning "),
    (ReasonKind.PATH, "path "),
    (ReasonKind.IMPORTS, "imports "),
    (ReasonKind.IMPORTED_BY, "imported by "),
    (ReasonKind.GIT, ""),
)


def format_tokens(tokens: int | None, packed: bool) -> str:
    """The tokens column, at most TOKENS_CELLS wide: "1,234", or "(1,234)" for a file left
    out (its full size); above 99,999 in thousands ("(250k)")."""
    if tokens is None:
        return ""
    text = f"{tokens:,}" if tokens < 100_000 else f"{tokens // 1000:,}k"
    return text if packed else f"({text})"


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
    reasons: Sequence[Reason]
    """The ranking's evidence, as the ranking holds it: worked out when first read, which
    for rows past the first screen is when they are drawn (engine.explain)."""
    width: int
    """Cells the row may use."""
    changed: bool = False
    """The file changed in the work tree and the changes are packed."""
    secret: str = ""
    """Why the file is marked for secrets ("secret redacted, line 12"); empty when it holds none."""
    redact: bool = True
    """A secret in the file's name (or a path among its reasons) is shown redacted: the
    settings' `redact`, as the preview, the copy and the pack follow it."""


def looks_alike(row: RowKey, other: RowKey) -> bool:
    """Whether two rows draw alike, without reading their evidence: it counts as the same
    only when it is the same ranking's (a plan's change redraws nothing else)."""
    return row.reasons is other.reasons and row._replace(reasons=()) == other._replace(reasons=())


Part = tuple[str, str | None]
"""A run of a row's text and the component style it takes (None: the row's own style)."""


def row_parts(key: RowKey, path: str) -> tuple[tuple[Part, ...], tuple[Part, ...]]:
    """The two lines of a row as runs of text, each with its component style's name.

    A row narrower than ROW_PREFIX + PATH_CELLS shows rank, the level's letter and the path
    on its first line (the path's middle elided when too long) and leads its reasons line
    with the tokens."""
    level = key.level
    narrow = key.width < ROW_PREFIX + PATH_CELLS
    columns: tuple[Part, ...]
    if narrow:
        columns = (
            (LEVEL_LETTERS[level], f"level-{level.value}"),
            ("*" if key.chosen else " ", "user-choice"),
            (" ", None),
        )
    else:
        columns = (
            (score_bar(key.eighths / 48), "score"),
            (f" {_BADGES[level]}", f"level-{level.value}"),
            ("*" if key.chosen else " ", "user-choice"),
            (" " * (7 - len(_BADGES[level])), None),
            (key.tokens, "tokens" if key.packed else "tokens-off"),
        )
    marks = (2 if key.pinned or key.changed else 0) + (2 if key.secret else 0)
    room = key.width - (NARROW_PREFIX if narrow else ROW_PREFIX) - marks
    folder, name = fit_path(shown_line(path, redact=key.redact), room, middle=narrow)
    tokens = f"{key.tokens.strip()} · " if narrow and key.tokens.strip() else ""
    secret = f"{key.secret} · " if key.secret else ""
    width = max(20, key.width - REASONS_INDENT - len(tokens) - len(secret))
    reasons = describe_reasons(key.reasons, width, redact=key.redact)
    first: tuple[Part, ...] = (
        (f"{key.number:>3} ", "rank"),
        *columns,
        (folder, "folder"),
        (name, "name"),
        (" ±" if key.changed else " ◆" if key.pinned else "", "pin"),
        (" ⚠" if key.secret else "", "secret"),
    )
    second: tuple[Part, ...] = (
        (" " * REASONS_INDENT, None),
        (tokens, "tokens" if key.packed else "tokens-off"),
        (secret, "secret"),
        (reasons, "reasons"),
    )
    return first, second


def row_content(key: RowKey, path: str, style: Callable[[str], Style]) -> Content:
    """The two lines of a row; `style` gives the widget's component style of a part."""
    first, second = row_parts(key, path)
    return Content.assemble(
        *((text, style(name)) if name else text for text, name in first),
        "\n",
        *((text, style(name)) if name else text for text, name in second),
        strip_control_codes=False,
    )


def row_strips(
    lines: Sequence[Sequence[Part]],
    width: int,
    base: Style,
    style: Callable[[str], Style],
    looks: dict[str, RichStyle] | None = None,
) -> list[Strip]:
    """Draw a row's lines `width` cells wide on `base`, cut with an ellipsis where too long:
    what Content's no-wrap rendering draws, without its general machinery (wrapping, spans,
    per-cell offsets), so a screen of rows draws in well under a millisecond. `looks` keeps
    the parts' terminal styles on this base from row to row."""
    base_rich = base.rich_style
    # styled as Content renders a run (the base, plus the base combined with the run's own),
    # so that the colours blend alike and the terminal gets the same runs
    plain = (base + base).rich_style
    looks = {} if looks is None else looks
    strips = []
    for line in lines:
        segments: list[Segment] = []
        cells = 0
        for text, name in line:
            if not text:
                continue
            look = plain if name is None else looks.get(name)
            if look is None and name is not None:
                look = looks[name] = (base + Style.combine((base, style(name)))).rich_style
            size = cell_len(text)
            if cells + size > width:  # the last cell left becomes the ellipsis
                room = width - 1 - cells
                if room > 0:
                    segments.append(Segment(set_cell_size(text, room), look))
                if width > 0:
                    segments.append(Segment("…", look))
                cells = width
                break
            segments.append(Segment(text, look))
            cells += size
        strips.append(Strip(segments, cells).extend_cell_length(width, base_rich))
    return strips


def keep_places(files: list[RankedFile], shown: list[str]) -> list[RankedFile]:
    """Order a new ranking's files as the rows on show; a file new to the list takes its
    own rank's place."""
    place = {path: number for number, path in enumerate(shown)}
    kept = sorted((f for f in files if f.path in place), key=lambda f: place[f.path])
    for number, ranked in enumerate(files):
        if ranked.path not in place:
            kept.insert(min(number, len(kept)), ranked)
    return kept
