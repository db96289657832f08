"""When the app lets Python's cyclic garbage collector run: full collections wait for a pause.

A full collection walks every container the collector tracks and holds the interpreter while
it does: on textual (1,449 files) one took 60-140 ms of CPU, every 10-15 keys, so it landed in
the keystroke figures' tail. Two measures: the long-lived structures (an index, a tokenizer's
rank tables) are frozen out of every collection once they are in place (`settle`), and while
the app runs, full collections wait for the person to be idle (`collect_now`, called after a
pause); every `FULL_EVERY` middle-generation collections one still runs, for a session with
no pause. Young collections (a millisecond or two) run as Python schedules them.
"""

from __future__ import annotations

import gc

FULL_EVERY = 100
"""Middle-generation collections between two automatic full ones (Python's default: 10):
about one per 120 keystrokes typed without an idle second. Typing leaves ~0.17 MB of cyclic
garbage a key (textual, `bench --app`: peak RSS 203 MB with Python's default, 234 MB with
1,000 here, 224 MB with 100), which only a full collection frees; the idle one resets the
count."""


def hold_until_started() -> None:
    """No collections while the process starts (called first thing by the entry point).

    Importing the engine and Textual and building the app's first screen allocate a few
    hundred thousand objects that live as long as the process; Python collected young
    generations every 700 allocations and ran a full collection on the way, scanning them
    again and again for the few thousand that are garbage (125 ms of 890 of the imports'
    CPU under load; 519 objects found unreachable after them). `started` ends the pause."""
    gc.disable()


def started() -> None:
    """Collections run again: a command's imports are done, the app's first list is on
    screen (or its wait for one has passed).

    What the start built is frozen first (as `settle` does): enabled alone, the collector
    found every object of the start in its youngest generation and walked them all in the
    next collections (a warm `ctxtui rank` on 16,000 files: 3 middle and 35 young
    collections, 336 ms, against 166 ms with no pause at all). The few thousand objects of
    the start that are garbage stay, as `settle` keeps those alive when it runs."""
    gc.freeze()
    gc.enable()


def settle(*, collect: bool = False) -> None:
    """Keep every object alive now out of all later collections (they are still freed by
    their reference counts; only a reference cycle among them would outlive its use, and the
    index and the tokenizers hold none). Called once a large long-lived structure is built.

    Cyclic garbage alive at that moment would be kept for good: with `collect` (where the
    person is idle, e.g. after a re-index the idle check started), a full collection first."""
    if collect:
        gc.collect()
    gc.freeze()


def hold_full_collections() -> tuple[int, int, int]:
    """Let full collections wait for `collect_now`; returns the thresholds to restore."""
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], FULL_EVERY)
    return thresholds


def release_full_collections(thresholds: tuple[int, int, int]) -> None:
    """Give Python back the thresholds `hold_full_collections` replaced."""
    gc.set_threshold(*thresholds)


def collect_now() -> None:
    """A full collection, while the person is idle."""
    gc.collect()
