"""How long a stage of a first index has left, said alike by the app's status line and the
CLI's progress bar: at the stage's pace so far, once enough of it is done to tell."""

from __future__ import annotations

ESTIMATED_STAGES = frozenset({"parse"})
"""Stages whose time left is estimated: the parse is nearly all of a first index."""
ESTIMATE_FROM_SHARE = 0.05
"""Share of a stage done before its time left is said (the workers' start is slower)."""
ESTIMATE_FROM_SECONDS = 2.0
"""Seconds into a stage before its time left is said."""


def time_left(elapsed: float, done: int, total: int) -> float | None:
    """Seconds a stage has left at its pace so far; None while too little is done to tell."""
    if total <= 0 or done >= total or done < ESTIMATE_FROM_SHARE * total:
        return None
    if elapsed < ESTIMATE_FROM_SECONDS:
        return None
    return elapsed / done * (total - done)


def said_time_left(seconds: float) -> str:
    """ "about 20 s left": to 5 s under a minute, to the minute from there."""
    if seconds < 60:
        return f"about {max(5, 5 * round(seconds / 5))} s left"
    return f"about {round(seconds / 60)} min left"
