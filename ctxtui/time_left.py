"""How long a stage of a first index has left, said alike by the app's status line and the
CLI's progress bar: at the stage's pace since its first file was done, once enough of it is
done to tell."""

from __future__ import annotations

ESTIMATED_STAGES = frozenset({"parse"})
"""Stages whose time left is estimated: the parse is nearly all of a first index."""
ESTIMATE_FROM_SHARE = 0.05
"""Share of a stage done before its time left is said."""
ESTIMATE_FROM_SECONDS = 2.0
"""Seconds of measured pace before the time left is said."""


def time_left(elapsed: float, done: int, total: int, counted_from: int = 0) -> float | None:
    """Seconds a stage has left when `done - counted_from` of its `total` items took `elapsed`
    seconds; None while too little is done to tell."""
    if total <= 0 or done >= total or done < ESTIMATE_FROM_SHARE * total:
        return None
    if elapsed < ESTIMATE_FROM_SECONDS or done <= counted_from:
        return None
    return elapsed / (done - counted_from) * (total - done)


def said_time_left(seconds: float) -> str:
    """ "about 20 s left": to 5 s under a minute, to the minute from there."""
    if seconds < 60:
        return f"about {max(5, 5 * round(seconds / 5))} s left"
    return f"about {round(seconds / 60)} min left"


class Pace:
    """The time left of the stage being reported, measured from its first item done.

    The workers' start (loading the tokenizer and the grammars: about 2 s on 2 cores) finishes
    no file; counted in the pace, it made the first estimate of the 16k tree 84 s where 25 s
    were left. From the first report with something done, the pace is the workers' own.
    """

    def __init__(self) -> None:
        self._stage = ""
        self._since: float | None = None
        """When the stage's first report with an item done came (None: none yet)."""
        self._first_done = 0

    def said(self, stage: str, done: int, total: int, now: float) -> str:
        """ "about 20 s left" for a report of `stage`, or "" when it cannot be told yet."""
        if stage != self._stage:
            self._stage, self._since = stage, None
        if stage not in ESTIMATED_STAGES:
            return ""
        if self._since is None:
            if done > 0:
                self._since, self._first_done = now, done
            return ""
        left = time_left(now - self._since, done, total, self._first_done)
        return said_time_left(left) if left is not None else ""
