"""Helpers for the app tests: the fixture repository, a fake clipboard, `wait_until`.

Waiting is done by polling a condition while the app runs, never by sleeps.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.worker import WorkerState

from ctxtui.app import CtxtuiApp
from ctxtui.workspace import Workspace
from ctxtui.workspace import core as core_module

SESSION_PY = '''"""User sessions: creation, refresh and expiry."""

import time

from auth.tokens import sign


class Session:
    """A logged-in user and the token that proves it."""

    def __init__(self, user: str) -> None:
        self.user = user
        self.created = time.time()
        self.token = sign(user)

    def refresh(self) -> None:
        """Refresh the session token and restart its clock."""
        self.created = time.time()
        self.token = sign(self.user)

    def expired(self, now: float, ttl: float = 3600.0) -> bool:
        """True when the session is older than its time to live."""
        return now - self.created > ttl


def get_user_session(user: str) -> Session:
    """Return a new session for a user."""
    return Session(user)
'''

TOKENS_PY = '''"""Signing of session tokens."""

import hashlib


def sign(value: str, secret: str = "dev") -> str:
    """Sign a value with the secret."""
    return hashlib.sha256((secret + value).encode()).hexdigest()
'''

LOGIN_PY = '''from auth.session import get_user_session


def login(user: str, password: str) -> bool:
    """Check a password and open a session."""
    session = get_user_session(user)
    return bool(session and password)
'''

MODELS_PY = '''class User:
    """A row of the users table."""

    name: str
    email: str


class Order:
    """A customer's order."""

    total: float
'''

README_MD = """# Demo shop

A demo application with sessions, orders and invoices.

## Sessions

Sessions expire after an hour; a refresh restarts the clock.

## Orders

Orders belong to users.
"""


STRINGS_PY = """def slugify(text: str) -> str:
    return "-".join(text.lower().split())
"""


def invoice_module() -> str:
    """A long, deterministic module (a few thousand tokens) for over-budget states."""
    parts = ['"""Invoices: totals, taxes and the printed layout."""\n']
    for number in range(60):
        parts.append(
            f"\n\ndef invoice_line_{number}(quantity: int, price: float) -> float:\n"
            f'    """Price of invoice line {number} with tax band {number % 4}."""\n'
            f"    subtotal = quantity * price\n"
            f"    return round(subtotal * (1 + {number % 4} / 10), 2)\n"
        )
    return "".join(parts)


REPO_FILES: dict[str, str] = {
    "auth/session.py": SESSION_PY,
    "auth/tokens.py": TOKENS_PY,
    "auth/login.py": LOGIN_PY,
    "db/models.py": MODELS_PY,
    "billing/invoice.py": invoice_module(),
    "README.md": README_MD,
    "utils/strings.py": STRINGS_PY,
}


class FakeClipboard:
    """A clipboard that keeps what it is given (or fails, or forgets, when told to)."""

    def __init__(self, *, fail: bool = False, forget: bool = False, late: int = 0) -> None:
        self.text = ""
        self.copies = 0
        self.fail = fail
        self.forget = forget
        self.late = late
        """Reads that still see the old text after a copy (xclip's background child)."""
        self._stale = 0
        self._old = ""

    def copy(self, text: str) -> str:
        from ctxtui.clipboard import ClipboardError

        if self.fail:
            raise ClipboardError("no clipboard tool (fake)")
        self.copies += 1
        self._stale = self.late
        self._old, self.text = self.text, "" if self.forget else text
        return "fake-clip"

    def paste(self) -> str:
        if self._stale:
            self._stale -= 1
            return self._old
        return self.text


WAIT_TIMEOUT = 40.0
"""Seconds a condition may take. A settle takes well under a second on a quiet machine; on a
shared 2-core machine at load 9-10, app starts and settles of 15 s and more were seen (a
restart ranks and packs twice: the saved index, then the checked tree). A real hang still
fails, only later."""


async def wait_until(
    pilot: Pilot[Any], condition: Callable[[], object], timeout: float = WAIT_TIMEOUT
) -> None:
    """Let the app run until condition() is true; fail after timeout seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {getattr(condition, '__name__', '?')}")
        await pilot.pause(0.02)


def prompt_up(app: CtxtuiApp, under: object) -> bool:
    """True once a screen over `under` is shown with its input mounted: the screen is pushed
    a frame or more before its widgets are (CI, session 33: a query for the prompt's Input
    right after the push found none)."""
    from textual.widgets import Input  # deliberate: as the tests that ask for it

    return app.screen is not under and bool(app.screen.query(Input))


def is_settled(app: CtxtuiApp, query: str | None = None) -> bool:
    """True when the answer for the question on screen (or `query`), its exact pack and the
    preview of the highlighted file are shown, from the checked tree (not the saved index)."""
    screen = app.main_screen
    answer, packed = screen.answer, screen.packed
    if answer is None or packed is None or not screen.checked:
        return False
    wanted = screen.query_text if query is None else query
    previewing = screen._preview_timer is not None or any(
        worker.group == "preview" and worker.state in (WorkerState.PENDING, WorkerState.RUNNING)
        for worker in app.workers
    )
    return (
        answer.query == wanted
        and answer.generation == screen._generation
        and packed[0] == answer.generation
        and not previewing
    )


async def settle(pilot: Pilot[Any], query: str | None = None) -> None:
    """Wait until the ranking and the exact pack of the current question are on screen."""
    app = pilot.app
    assert isinstance(app, CtxtuiApp)
    await wait_until(pilot, lambda: is_settled(app, query))
    await pilot.pause()


async def pick_in_palette(pilot: Pilot[Any], key: str, typed: str) -> None:
    """Open a command list with `key` (ctrl+p, ctrl+r), type `typed` and take the first match."""
    from textual.command import CommandPalette

    app = pilot.app
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*typed)
    palette = app.screen
    assert isinstance(palette, CommandPalette)
    await wait_until(pilot, lambda: palette._list_visible)
    await pilot.press("enter")


def burst(app: CtxtuiApp, *keys: str) -> None:
    """Send keys as a terminal does when they pile up (typed while a frame was busy): all at
    once, without waiting for the app between them as `Pilot.press` does."""
    from textual import events

    driver = app._driver
    assert driver is not None
    for key in keys:
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        driver.send_message(event)


def notices(app: CtxtuiApp) -> list[str]:
    """The notifications currently held by the app."""
    return [notification.message for notification in app._notifications]


def count_tokenizer_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """From now on, note the encoding of every tokenizer loaded, in the returned list."""
    loaded: list[str] = []
    load = core_module.engine.load_tokenizer

    def counting_load(name: str = "o200k_base") -> Any:
        loaded.append(name)
        return load(name)

    monkeypatch.setattr(core_module.engine, "load_tokenizer", counting_load)
    return loaded


def keep_notices(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """From now on, note every notification of the main screen, (title, message), in the
    returned list: kept past its timeout, which a loaded machine may reach first."""
    from ctxtui.screens.host import WorkspaceHost

    said: list[tuple[str, str]] = []
    notify = WorkspaceHost.notify

    def keep(self: WorkspaceHost, message: str, **options: Any) -> None:
        said.append((options.get("title", ""), message))
        notify(self, message, **options)

    monkeypatch.setattr(WorkspaceHost, "notify", keep)
    return said


def held_open() -> tuple[threading.Event, Callable[..., Workspace]]:
    """A workspace factory whose open waits (30 s at most) for the returned event: a first
    index still running, the list without rows."""
    release = threading.Event()

    def slow_open(root: Path, **options: Any) -> Workspace:
        release.wait(30)
        return Workspace.open(root, **options)

    return release, slow_open
