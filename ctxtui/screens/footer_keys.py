"""Keys the footer shows only when the terminal is wide enough for them, and that work anyway.

A key's footer entry and the key itself are separate bindings: the first (its action tagged
with a last argument, "footer") is shown and runs while the screen is at least as wide as the
action's entry in FOOTER_WIDTH; below that `check_action` turns it off, and the key falls
through to its hidden twin, which always runs. So at 80 columns the footer lists whole the
keys a person needs first, and every other key still works, from the help and the palette too.
"""

from __future__ import annotations

from textual.binding import Binding

FOOTER = "footer"
"""The last argument of an action run from a footer entry."""
FOOTER_WIDTH: dict[str, int] = {
    "step_budget": 70,
    "find_file": 70,
    "cycle_format": 100,
    "clear_choices": 110,
    "toggle_changes": 120,
}
"""Columns from which each action's key is listed in the footer (computed for the compact
footer below 130 columns: the list's keys, the level group, copy, find, help and quit)."""


def shown_when_wide(
    key: str,
    action: str,
    description: str,
    *,
    tooltip: str,
    id: str,
    key_display: str | None = None,
) -> list[Binding]:
    """A key listed in the footer from FOOTER_WIDTH columns on, and working at any width."""
    name, _, arguments = action.partition("(")
    arguments = arguments.removesuffix(")")
    tagged = f"{name}({arguments + ', ' if arguments else ''}'{FOOTER}')"
    common = {"tooltip": tooltip, "id": id, "key_display": key_display}
    return [
        Binding(key, tagged, description, **common),  # type: ignore[arg-type]
        Binding(key, action, description, show=False, **common),  # type: ignore[arg-type]
    ]


def fits_footer(action: str, parameters: tuple[object, ...], width: int) -> bool:
    """False for a footer entry the screen is too narrow to list (its twin runs instead)."""
    if parameters and parameters[-1] == FOOTER:
        return width >= FOOTER_WIDTH.get(action, 0)
    return True
