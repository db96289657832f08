"""The MCP server's memory of one repository: its settings and warm workspaces.

Each call asks for the workspace it needs (encoding and excludes, from the settings and the
call's arguments); one already open is stat-checked first, so files changed on disk since the
last call are re-indexed before it is answered. A few workspaces stay open at once, the least
recently used closed first. Settings files are read again whenever one of them changes.

An agent may send several calls at once (the SDK runs each in its own thread): calls that need
the same workspace take turns to open or check it, so the repository is indexed once, not
once a call, and two checks never re-index the same changed file side by side.

When the client hangs up, `close` stops the background embedding and waits a little for it to
save the vectors made so far.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import OrderedDict
from pathlib import Path

from ctxtui.settings import (
    Settings,
    load_settings,
    repository_settings_path,
    scan_options,
    tuning,
    user_settings_path,
)
from ctxtui.workspace import ReadWriteGate, Tuning, Workspace, refresh_job
from ctxtui.workspace.notices import APP_SECRET_HINT

KEPT_WORKSPACES = 3
"""Workspaces kept open at once (one per encoding and exclude set asked for)."""
CLOSE_WAIT_SECONDS = 10.0
"""How long `close` waits for the background embedding to stop and save: it stops between
two groups of chunks sent to the model (64 chunks, about 5 s on two idle cores)."""

_Key = tuple[str, tuple[str, ...], tuple[str, ...], Tuning]


class WarmRepository:
    """Settings and open workspaces of one repository, shared by the server's tool calls."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().resolve()
        """The repository folder served."""
        self._lock = threading.Lock()
        self._turns: dict[_Key, threading.Lock] = {}
        """One lock a workspace key: held while that workspace is opened or checked."""
        self._embedding: list[threading.Thread] = []
        """The background embedding threads started (see `_embed_in_background`)."""
        self._open: OrderedDict[_Key, tuple[Workspace, ReadWriteGate]] = OrderedDict()
        self._settings: Settings | None = None
        self._settings_stamp: tuple[object, ...] = ()

    def settings(self) -> Settings:
        """The settings now in force (read again when a settings file changed)."""
        stamp = tuple(_stamp(path) for path in self._settings_files())
        with self._lock:
            if self._settings is None or stamp != self._settings_stamp:
                self._settings = load_settings(self.root)
                self._settings_stamp = stamp
                for problem in self._settings.problems:
                    print(f"ctxtui mcp: {problem}", file=sys.stderr)
            return self._settings

    def workspace(
        self, settings: Settings, *, encoding: str | None = None
    ) -> tuple[Workspace, ReadWriteGate]:
        """A warm workspace for these settings, refreshed from disk (stat check) first."""
        key: _Key = (
            encoding or settings.encoding,
            settings.exclude,
            settings.include,
            tuning(settings, secret_hint=APP_SECRET_HINT),  # an agent has no --include-secret
        )
        with self._lock:
            turn = self._turns.setdefault(key, threading.Lock())
        with turn:  # a call that waited here finds the workspace the first one opened
            return self._open_or_refresh(key, settings)

    def _open_or_refresh(self, key: _Key, settings: Settings) -> tuple[Workspace, ReadWriteGate]:
        with self._lock:
            found = self._open.get(key)
            if found is not None:
                self._open.move_to_end(key)
        if found is not None:
            refresh_job(*found)
            return found
        workspace = Workspace.open(
            self.root, encoding=key[0], options=scan_options(settings), tuning=key[3]
        )
        if workspace.report.cache_notice:
            print(f"ctxtui mcp: {workspace.report.cache_notice}", file=sys.stderr)
        opened = (workspace, ReadWriteGate())
        with self._lock:
            self._open[key] = opened
            while len(self._open) > KEPT_WORKSPACES:
                self._open.popitem(last=False)
        if workspace.semantic is not None:
            _embed_in_background(self, key, workspace)
        return opened

    def close(self, wait: float = CLOSE_WAIT_SECONDS) -> None:
        """Close every workspace: the background embedding stops at its next group of chunks
        and saves what it made; wait up to `wait` seconds for it."""
        with self._lock:
            self._open.clear()
            threads, self._embedding = self._embedding, []
        deadline = time.monotonic() + wait
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _settings_files(self) -> tuple[Path, ...]:
        repository = repository_settings_path(self.root)
        return (user_settings_path(), *((repository,) if repository else ()))


def _stamp(path: Path) -> tuple[str, int, int]:
    try:
        stat = path.stat()
    except OSError:
        return (str(path), -1, -1)
    return (str(path), stat.st_mtime_ns, stat.st_size)


def _embed_in_background(warm: WarmRepository, key: _Key, workspace: Workspace) -> None:
    """Embed the whole repository in a daemon thread (the semantic extra), so that later
    calls need no model run but the question's; it stops when the workspace is closed."""

    def closed() -> bool:
        with warm._lock:
            return warm._open.get(key, (None,))[0] is not workspace

    thread = threading.Thread(
        target=workspace.embed_all, kwargs={"should_stop": closed}, name="ctxtui-embed", daemon=True
    )
    with warm._lock:
        warm._embedding = [t for t in warm._embedding if t.is_alive()] + [thread]
    thread.start()
