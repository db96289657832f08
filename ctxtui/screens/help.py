"""The help screen: every key of the app, generated from the bindings, so it cannot go stale.

The rows come from `ctxtui.commands.key_rows` (the same source as the command palette); this
screen only lays them out by where they act.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

if TYPE_CHECKING:
    from ctxtui.commands import KeyRow


class HelpScreen(ModalScreen[None]):
    """Lists the keys by scope; any of escape, q, ? or f1 closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "dismiss_help", "Close", id="help-close"),
    ]

    def __init__(self, rows: Sequence[KeyRow]) -> None:
        super().__init__()
        self._rows = tuple(rows)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog"):
            yield Label("ctxtui keys", id="help-title")
            yield Static(Group(*self._tables()), id="help-table")
            yield Label("escape closes this · ctrl+p finds any action by name", id="help-footer")

    def _tables(self) -> list[Table]:
        tables: dict[str, Table] = {}
        key_width = max((len(row.keys) for row in self._rows), default=10)
        for row in self._rows:
            table = tables.get(row.scope)
            if table is None:
                table = Table(
                    title=row.scope, title_justify="left", box=None, show_header=False,
                    padding=(0, 1), expand=True,
                )  # fmt: skip
                table.add_column("key", no_wrap=True, min_width=key_width + 1)
                table.add_column("action", ratio=1)
                tables[row.scope] = table
            detail = Text(row.title)
            if row.tooltip:
                detail.append(f" — {row.tooltip}", "dim")
            table.add_row(Text(row.keys, "bold"), detail)
        return list(tables.values())

    def action_dismiss_help(self) -> None:
        """Close the help."""
        self.dismiss(None)
