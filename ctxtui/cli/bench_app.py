"""`ctxtui bench --app PATH`: the real app, driven headless, timed as a person would feel it.

The app runs under Textual's Pilot with the real workspace. A thread plays the typist: it
sends each key through the driver (as the terminal's input thread does) every `interval`
seconds. Every frame the app paints is stamped (and turned into terminal bytes, as a real
terminal needs) together with what the list and the meter show at that moment. Afterwards:
- key -> list: from a key to the first frame whose list shows the ranking of a question that
  already holds that key (a ranking skipped for a newer key counts to the newer one);
- last key -> exact meter: from the last key of a question to the first frame whose meter
  shows the exact (rendered and measured) total for the whole question.
Figures, not asserts: the tests never time anything.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxtui.cli.bench import percentile
from ctxtui.cli.output import emit

if TYPE_CHECKING:
    from textual.screen import Screen

    from ctxtui.app import CtxtuiApp

SIZE = (120, 36)
"""Terminal size the app is driven at."""
QUESTION_TIMEOUT = 30.0
"""Seconds to wait for a question's exact meter before giving up on it."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One painted frame and what it showed."""

    at: float
    """perf_counter() when the frame's terminal bytes were ready."""
    listed: str | None
    """The question whose ranking the list showed; None before the first."""
    exact: str | None
    """The question whose exact total the meter showed; None while it showed an estimate."""
    encoding: str = ""
    """The encoding the meter counted in."""
    plan: int = 0
    """Identity of the plan the meter showed."""


@dataclass(slots=True)
class Figures:
    """Latencies gathered over all questions, in milliseconds."""

    key_to_list: list[float] = field(default_factory=list)
    """Per key: to the first frame listing a ranking that includes the key."""
    last_key_to_exact: list[float] = field(default_factory=list)
    """Per question: from its last key to the first frame with its exact meter."""
    keys: int = 0
    """Keys sent."""
    unanswered: int = 0
    """Keys (or questions) whose answer never appeared on screen."""
    files: int = 0
    """Files in the index the app ranked."""
    encoding_switches: list[tuple[str, float]] = field(default_factory=list)
    """Per press of `e`: the encoding switched to, and ms to its exact meter."""


def key_for(char: str) -> tuple[str, str]:
    """The Textual key name and character a terminal sends for one typed character."""
    from textual.keys import _character_to_key  # deliberate: Textual loads only for --app

    return (char if char.isalnum() else _character_to_key(char)), char


def shown_state(screen: Screen[Any]) -> tuple[str | None, str | None]:
    """What the main screen's list and meter show now: (listed question, exact question)."""
    from ctxtui.widgets.budget_meter import BudgetMeter
    from ctxtui.widgets.file_list import FileList

    ranking = screen.query_one(FileList).shown_ranking
    plan = screen.query_one(BudgetMeter).plan
    exact = plan.query if plan is not None and plan.exact else None
    return (ranking.query if ranking is not None else None), exact


def stamp_frames(app: CtxtuiApp, frames: list[Frame]) -> None:
    """Record every frame the app paints, with what it shows."""
    from textual._compositor import CompositorUpdate

    from ctxtui.widgets.budget_meter import BudgetMeter

    original = app._display

    def display(screen: Screen[Any], renderable: object) -> None:
        original(screen, renderable)  # type: ignore[arg-type]
        if renderable is None:
            return
        if isinstance(renderable, CompositorUpdate):
            renderable.render_segments(app.console)  # the bytes a real terminal would get
        listed, exact = shown_state(app.main_screen)
        meter = app.main_screen.query_one(BudgetMeter)
        stamp = Frame(time.perf_counter(), listed, exact, meter.encoding, id(meter.plan))
        frames.append(stamp)

    app._display = display  # type: ignore[method-assign]


def type_question(
    app: CtxtuiApp, text: str, interval: float, sent: list[tuple[float, str]]
) -> None:
    """From a thread, send each key of text every `interval` seconds, as the terminal would."""
    from textual import events

    driver = app._driver
    assert driver is not None
    start = time.perf_counter()
    for number, char in enumerate(text):
        delay = start + number * interval - time.perf_counter()
        if delay > 0:
            time.sleep(delay)  # the typist's rhythm, in the typist's thread
        key, character = key_for(char)
        event = events.Key(key, character)
        event.set_sender(app)
        sent.append((time.perf_counter(), text[: number + 1]))
        driver.send_message(event)


def measure(frames: Sequence[Frame], sent: Sequence[tuple[float, str]], figures: Figures) -> None:
    """Turn the frames of one typed question into latencies."""
    prefixes = {prefix: number for number, (_at, prefix) in enumerate(sent)}
    for number, (at, _prefix) in enumerate(sent):
        figures.keys += 1
        shown = next(
            (
                frame.at
                for frame in frames
                if frame.at >= at and prefixes.get(frame.listed or "", -1) >= number
            ),
            None,
        )
        if shown is None:
            figures.unanswered += 1
        else:
            figures.key_to_list.append((shown - at) * 1000)
    last_at, question = sent[-1]
    exact = next((f.at for f in frames if f.at >= last_at and f.exact == question), None)
    if exact is None:
        figures.unanswered += 1
    else:
        figures.last_key_to_exact.append((exact - last_at) * 1000)


async def drive(app: CtxtuiApp, questions: Sequence[str], interval: float) -> Figures:
    """Run the app headless, type every question, and gather the latencies."""
    from ctxtui.widgets.query_bar import QueryBar

    figures = Figures()
    frames: list[Frame] = []
    async with app.run_test(size=SIZE) as pilot:
        screen = app.main_screen
        query_bar = screen.query_one(QueryBar)
        query_bar.cursor_blink = False  # a blinking cursor repaints on its own

        def ready() -> bool:  # a list shown, and the tree checked: no open competes with keys
            return shown_state(screen)[1] is not None and screen.checked

        await _wait(pilot, ready, QUESTION_TIMEOUT * 4)
        stamp_frames(app, frames)
        figures.files = len(app.workspace.index.files) if app.workspace is not None else 0
        for question in questions:
            query_bar.focus()
            query_bar.value = ""
            await _wait(pilot, lambda: shown_state(screen) == ("", ""), QUESTION_TIMEOUT)
            await pilot.pause(0.3)
            frames.clear()
            sent: list[tuple[float, str]] = []
            typist = threading.Thread(target=type_question, args=(app, question, interval, sent))
            typist.start()
            while typist.is_alive():
                await asyncio.sleep(0.01)
            await _wait(
                pilot, lambda q=question: any(f.exact == q for f in frames), QUESTION_TIMEOUT
            )
            measure(list(frames), sent, figures)
        for _switch in range(2):  # to the other encoding (counted anew), and back (kept)
            await switch_encoding(app, pilot, frames, figures)
    return figures


async def switch_encoding(
    app: CtxtuiApp, pilot: Any, frames: list[Frame], figures: Figures
) -> None:
    """Press `e` in the list and time it until the meter is exact in the new encoding."""
    from textual import events

    from ctxtui.state import ENCODINGS, next_in_cycle
    from ctxtui.widgets.budget_meter import BudgetMeter
    from ctxtui.widgets.file_list import FileList

    screen = app.main_screen
    screen.query_one(FileList).focus()
    await pilot.pause(0.3)
    target = next_in_cycle(ENCODINGS, screen.encoding)
    before = id(screen.query_one(BudgetMeter).plan)
    frames.clear()
    driver = app._driver
    assert driver is not None
    pressed = time.perf_counter()
    driver.send_message(events.Key("e", "e"))

    def counted() -> float | None:
        return next(
            (
                f.at
                for f in frames
                if f.encoding == target and f.exact is not None and f.plan != before
            ),
            None,
        )

    await _wait(pilot, lambda: counted() is not None, QUESTION_TIMEOUT * 4)
    done = counted()
    if done is None:
        figures.unanswered += 1
    else:
        figures.encoding_switches.append((target, (done - pressed) * 1000))


async def _wait(pilot: Any, condition: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        await pilot.pause(0.005)


def run_app_bench(path: Path, questions: Sequence[str], interval: float, repeat: int) -> int:
    """Print the app's latencies for one repository."""
    from ctxtui.app import make_app  # deliberate: Textual loads only for --app

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="ctxtui-bench-") as scratch:
        app = make_app(path, state_dir=Path(scratch) / "state", cache_dir=Path(scratch) / "cache")
        figures = asyncio.run(drive(app, list(questions) * repeat, interval))
    load_after = os.getloadavg()[0]
    lines = [
        f"repository   {path}",
        f"size         {figures.files:,} files indexed",
        f"app          {SIZE[0]}x{SIZE[1]} headless (Pilot), one key every "
        f"{interval * 1000:.0f} ms, {len(questions) * repeat} questions, {figures.keys} keys",
        f"load         {load_before:.1f} before, {load_after:.1f} after (1-minute average, "
        f"{os.cpu_count()} cores)",
        "",
        _line("key -> list", figures.key_to_list),
        _line("last key -> exact", figures.last_key_to_exact),
    ]
    lines += [
        f"e -> exact meter   {name} in {ms:,.0f} ms" for name, ms in figures.encoding_switches
    ]
    if figures.unanswered:
        lines.append(f"never shown  {figures.unanswered} (timed out)")
    emit("\n".join(lines) + "\n")
    return 0


def _line(label: str, values: Sequence[float]) -> str:
    if not values:
        return f"{label:<18} no samples"
    return (
        f"{label:<18} median {statistics.median(values):6.0f} ms   "
        f"p95 {percentile(values, 0.95):6.0f} ms   max {max(values):6.0f} ms   (n={len(values)})"
    )
