"""The keys of the app as data, for the help screen and the command palette.

Both are generated from the live bindings (after any keymap), so a key added to a widget shows
up in the footer, the help and the palette at once. A palette command runs the same action, on
the same node, as its key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from inspect import isawaitable
from typing import Any

from textual.actions import parse
from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode
from textual.screen import Screen

from ctxtui.widgets.file_list import FileList
from ctxtui.widgets.query_bar import QueryBar


@dataclass(frozen=True, slots=True)
class KeyRow:
    """One action and the keys bound to it."""

    scope: str
    """Where the keys act: "Anywhere", "File list", ..."""
    keys: str
    """The keys as shown to the user ("c / ^y")."""
    title: str
    """What the action does, in a few words."""
    tooltip: str
    """A longer explanation; may be empty."""
    action: str
    """The action string the binding runs."""
    node: DOMNode
    """Where the action runs."""


def key_scopes(app: App[Any], screen: Screen[Any]) -> list[tuple[str, DOMNode]]:
    """Return the nodes whose bindings make up the app's keys, with a name for each."""
    scopes: list[tuple[str, DOMNode]] = [("Anywhere (letters when the list has focus)", screen)]
    scopes += [("Question", node) for node in screen.query(QueryBar)]
    scopes += [("File list (tab to focus it)", node) for node in screen.query(FileList)]
    scopes.append(("App", app))
    return scopes


def key_rows(app: App[Any], screen: Screen[Any]) -> list[KeyRow]:
    """List every binding that has an id, grouping the keys of one id on one row."""
    rows: list[KeyRow] = []
    seen: set[str] = set()
    for scope, node in key_scopes(app, screen):
        grouped: dict[str, tuple[list[str], str, str, str]] = {}
        for _key, binding in node._bindings:
            if binding.id is None or binding.system or binding.id in seen:
                continue
            keys, _title, _tip, _action = grouped.setdefault(
                binding.id, ([], binding.description, binding.tooltip, binding.action)
            )
            # the key itself: a footer's compact name ("+/-" on the budget-up key, for the
            # pair) would say here that - raises the budget too
            display = app.get_key_display(replace(binding, key_display=None))
            if display not in keys:
                keys.append(display)
        seen.update(grouped)
        rows += [
            KeyRow(scope, ", ".join(keys), title, tooltip, action, node)
            for keys, title, tooltip, action in grouped.values()
        ]
    return rows


async def run_directly(node: DOMNode, action: str) -> None:
    """Run an action on its node whatever `check_action` says: a key may be hidden where it
    would be text (a letter in the question), but its palette command works from anywhere."""
    _namespace, name, parameters = parse(action)
    method = getattr(node, f"action_{name}", None)
    if method is not None:
        result = method(*parameters)
        if isawaitable(result):
            await result


class CtxtuiCommands(Provider):
    """Offers every key of the app as a palette command."""

    def _rows(self) -> Iterator[KeyRow]:
        seen: set[str] = set()
        for row in key_rows(self.app, self.screen):
            if row.title and row.title not in seen:
                seen.add(row.title)
                yield row

    def _command(self, row: KeyRow) -> Callable[[], object]:
        return partial(run_directly, row.node, row.action)

    def _help(self, row: KeyRow) -> str:
        return f"{row.keys}  {row.tooltip}".rstrip()

    async def discover(self) -> Hits:
        """Show every command when nothing is typed yet."""
        for row in self._rows():
            yield DiscoveryHit(row.title, self._command(row), help=self._help(row))

    async def search(self, query: str) -> Hits:
        """Find commands whose title matches the typed text."""
        matcher = self.matcher(query)
        for row in self._rows():
            text = f"{row.title} {row.tooltip}"
            if (score := matcher.match(text)) > 0:
                yield Hit(
                    score,
                    matcher.highlight(row.title),
                    self._command(row),
                    text=row.title,
                    help=self._help(row),
                )
