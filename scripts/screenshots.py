"""Make the README's screenshots: drive the real app on a real repository and save SVGs.

    .venv/bin/python scripts/screenshots.py [REPO] [--question TEXT] [--out screenshots]

REPO defaults to this repository. The script types the question key by key, mixes levels,
pins a file, opens the help and the file finder, and saves one SVG per state into the output
folder: ranked.svg, levels.svg, help.svg, finder.svg (ctrl+f with a glob), over-budget.svg and
compact.svg (80x24, the list's footer). It uses a throw-away state folder, so the pins and
levels of your own sessions are left alone.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxtui.app import CtxtuiApp, make_app  # noqa: E402 - after the path is set
from ctxtui.widgets.query_bar import QueryBar  # noqa: E402

DEFAULT_QUESTION = "where is the budget meter drawn and how are segments sized"
FINDER_QUERY = "tests/*.py"
"""A glob for the finder's screenshot (every match is listed)."""


async def wait_until(pilot: Pilot[None], condition: Callable[[], object], timeout: float) -> None:
    """Let the app run until condition() holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the app did not settle in time")
        await pilot.pause(0.05)


async def settle(pilot: Pilot[None], app: CtxtuiApp, timeout: float = 120.0) -> None:
    """Wait for the ranking and exact pack of the question on screen."""

    def settled() -> bool:
        screen = app.main_screen
        answer, packed = screen.answer, screen.packed
        return (
            answer is not None
            and packed is not None
            and answer.query == screen.query_text
            and packed[0] == answer.generation == screen._generation
        )

    await wait_until(pilot, settled, timeout)
    await pilot.pause(0.3)


def build(repo: Path, state_dir: Path) -> CtxtuiApp:
    """The app as `ctxtui REPO` builds it, with a throw-away state folder."""
    return make_app(repo, state_dir=state_dir, cache_dir=state_dir / "cache")


async def shoot(repo: Path, question: str, out: Path, state_dir: Path) -> list[Path]:
    """Drive the app through the states the README shows; return the files written."""
    written: list[Path] = []

    def save(app: CtxtuiApp, name: str) -> None:
        app.save_screenshot(filename=name, path=str(out))
        written.append(out / name)

    app = build(repo, state_dir)
    async with app.run_test(size=(132, 40)) as pilot:
        app.main_screen.query_one(QueryBar).cursor_blink = False
        await wait_until(pilot, lambda: app.workspace is not None, 600)
        await pilot.press(*question)
        await settle(pilot, app)
        save(app, "ranked.svg")
        await pilot.press("tab", "down", "p")  # pin the second file: it moves to the top
        await settle(pilot, app)
        await pilot.press("down", "s", "down", "o", "down", "down", "x", "home")
        await settle(pilot, app)
        save(app, "levels.svg")
        await pilot.press("question_mark")
        await pilot.pause(0.5)
        save(app, "help.svg")
        await pilot.press("escape", "ctrl+f", *FINDER_QUERY)
        await pilot.pause(1.0)
        save(app, "finder.svg")
        await pilot.press("escape", "f", "down", "f", "down", "f")
        await settle(pilot, app)
        for _ in range(6):
            await pilot.press("minus")
        await settle(pilot, app)
        await pilot.pause(0.5)
        save(app, "over-budget.svg")
        await pilot.press("ctrl+q")

    app = build(repo, state_dir)  # restarts with pins, levels, question and cursor restored
    async with app.run_test(size=(80, 24)) as pilot:
        app.main_screen.query_one(QueryBar).cursor_blink = False
        await wait_until(pilot, lambda: app.workspace is not None, 600)
        await settle(pilot, app)
        await pilot.press("tab")
        await pilot.pause(0.3)
        save(app, "compact.svg")
    return written


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments and write the screenshots."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", nargs="?", default=str(ROOT), help="repository to open")
    parser.add_argument("--question", default=DEFAULT_QUESTION, help="question to type")
    parser.add_argument("--out", default=str(ROOT / "screenshots"), help="output folder")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ctxtui-shots-") as state:
        files = asyncio.run(shoot(Path(args.repo).resolve(), args.question, out, Path(state)))
    for path in files:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
