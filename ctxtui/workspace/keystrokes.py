"""What makes keystrokes cheaper once built, built off the keystroke path.

The re-rank reads, on every keystroke, how much of the question one declaration holds; with
the declarations' words inverted (engine.declaration_words) it reads only the rows of the
question's words. The inversion costs a sort of every declaration row (0.3 s on the 16k
tree), which a one-shot command never earns back, so the first keystroke of a session starts
it in a daemon thread of the lowest priority (numpy's sorts let go of the interpreter) and the
rankings use it once it is there: the same numbers either way.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import TYPE_CHECKING

from engine.declaration_words import invert_declaration_words

if TYPE_CHECKING:
    from engine import Index
    from engine.model import UnitIndex


BACKGROUND_NICE = 19
"""Nice value of the thread that inverts the words while the person types: the lowest."""


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
            threading.Thread(target=_invert_aside, args=(units,), daemon=True).start()

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


def _invert_aside(units: UnitIndex) -> None:
    """`_invert`, in a thread that gives way to every other: the person types while it runs.

    The inversion is a few seconds of one core on a big tree (3.4 s of CPU on the 5x tree's
    17.6 M rows); on two cores it took one of them from the interface and the keystrokes'
    rankings, and the first question's keys waited. Its sorts let go of the interpreter, so a
    low priority costs the others nothing but makes it wait for an idle core; until it is
    done, rankings read row by row (the same numbers, ~15 % slower on that tree). Linux keeps
    a nice value per thread (setpriority of the thread's id); elsewhere that call would name
    a process, so it is not made.
    """
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):  # a sandbox may refuse; the inversion still runs
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)
    _invert(units)


def _invert(units: UnitIndex) -> None:
    # One assignment of a whole object: a ranking in another thread reads None or all of it.
    units.words = invert_declaration_words(units)
