"""What makes keystrokes cheaper once built, built off the keystroke path.

The re-rank reads, on every keystroke, how much of the question one declaration holds; with
the declarations' words inverted (engine.declaration_words) it reads only the rows of the
question's words. The inversion costs a sort of every declaration row (0.3 s on the 16k
tree), which a one-shot command never earns back, so the first keystroke of a session starts
it in a daemon thread (numpy's sorts let go of the interpreter) and the rankings use it once
it is there: the same numbers either way.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from engine.declaration_words import invert_declaration_words

if TYPE_CHECKING:
    from engine import Index
    from engine.model import UnitIndex


class WordsInverter:
    """Inverts each index's declaration words once (the index a workspace ranks on)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: UnitIndex | None = None
        """The declarations last handed to a build: the current index's, as a rule."""

    def later(self, index: Index) -> None:
        """Start inverting `index`'s declaration words in a daemon thread, unless done or
        under way."""
        units = self._claim(index)
        if units is not None:
            threading.Thread(target=_invert, args=(units,), daemon=True).start()

    def now(self, index: Index) -> None:
        """Invert `index`'s declaration words before returning (`bench`, before its timing),
        unless done or under way."""
        units = self._claim(index)
        if units is not None:
            _invert(units)

    def _claim(self, index: Index) -> UnitIndex | None:
        units = index.units
        if units is None or units.words is not None or len(units.terms) == 0:
            return None
        with self._lock:
            if self._started is units:
                return None
            self._started = units
        return units


def _invert(units: UnitIndex) -> None:
    # One assignment of a whole object: a ranking in another thread reads None or all of it.
    units.words = invert_declaration_words(units)
