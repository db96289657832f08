"""The question bar at the top: every keystroke is a new question.

An `Input` by another name, so that handlers read `QueryBar.Changed` and CSS can address it.
While it has focus, letters are text: the list's keys (f, s, o, p, ...) act only when the list
has focus, which tab gives it.
"""

from __future__ import annotations

from textual.widgets import Input


class QueryBar(Input):
    """Where the question is typed."""

    def __init__(self, value: str = "", *, id: str | None = None) -> None:
        super().__init__(
            value=value,
            placeholder="Ask about the code: where is the session refreshed?",
            id=id,
        )
