"""Text fitted to terminal cells: a path shortened from its start, a sentence wrapped.

Widths here are terminal cells, not characters: a CJK character takes two, and counting
characters let a wide name or question run past a row's or a pane's edge.
"""

from __future__ import annotations

from rich.cells import cell_len, get_character_cell_size
from textual.content import Content


def fit_path(path: str, room: int, *, middle: bool = False) -> tuple[str, str]:
    """Split a path into (folder part, file name) that fit in room cells, keeping the name's
    end, with "…" wherever the path was cut.

    The folder loses its start first: "ctxtui/widgets/file_list.py" in 20 cells becomes
    ("…idgets/", "file_list.py"), or with `middle` its middle ("ctxtu…gets/"); a folder
    with no room left is "…", and a name with no room left loses its start ("…", "e_list.py"
    in 10 cells), so a shortened path always says so and keeps its extension (review, session
    33: a folder that just did not fit went without a mark, "test_blueprints.py" beside
    "…ask/blueprints.py", and a name cut at its end lost its extension). Widths are terminal
    cells: a CJK character takes two (counted as one, a wide folder pushed the file's name
    past the row's end).
    """
    folder, _, name = path.rpartition("/")
    prefix = f"{folder}/" if folder else ""
    width = len if path.isascii() else cell_len  # ASCII: a cell a character, the usual case
    if width(prefix) + width(name) <= room:
        return prefix, name
    keep = room - width(name) - 1
    if keep <= 0:
        return "…", name if keep == 0 else _cells_from_end(name, room - 1)
    if middle:
        head = keep // 2
        return _cells_from_start(prefix, head) + "…" + _cells_from_end(prefix, keep - head), name
    return "…" + _cells_from_end(prefix, keep), name


def _cells_from_start(text: str, cells: int) -> str:
    """The longest start of `text` that fits in `cells` cells."""
    if text.isascii():
        return text[: max(cells, 0)]
    used = 0
    for at, char in enumerate(text):
        used += get_character_cell_size(char)
        if used > cells:
            return text[:at]
    return text


def _cells_from_end(text: str, cells: int) -> str:
    """The longest end of `text` that fits in `cells` cells."""
    return _cells_from_start(text[::-1], cells)[::-1]


def wrap_cells(text: str, width: int, max_lines: int) -> list[str]:
    """`text` in lines of at most `width` terminal cells, broken between words (a word
    longer than a line is folded), the last of `max_lines` ending in " …" if text is left.
    Cells, not characters: a question in CJK, two cells a character, ran past the list's
    edge (textwrap counts characters)."""
    lines = [line.plain.rstrip() for line in Content(text).wrap(width)]
    if len(lines) <= max_lines:
        return lines
    last = lines[max_lines - 1]
    while last and cell_len(last) + 2 > width:
        last = last[:-1]
    return [*lines[: max_lines - 1], f"{last.rstrip()} …"]
