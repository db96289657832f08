"""CTXTUI_WORKERS: how many processes a cold index starts, read by the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_repo

import engine
from ctxtui.workspace import Workspace
from ctxtui.workspace.core import index_workers


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("4", 4),
        (" 1 ", 1),
        ("1000", 64),
        ("0", None),
        ("-2", None),
        ("many", None),
        ("", None),
        ("²", None),
        ("٣", None),
    ],
)
def test_the_worker_count_comes_from_the_environment_when_it_is_a_whole_number(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: int | None
) -> None:
    if value is None:
        monkeypatch.delenv("CTXTUI_WORKERS", raising=False)
    else:
        monkeypatch.setenv("CTXTUI_WORKERS", value)
    assert index_workers() == expected


@pytest.mark.parametrize(("value", "expected"), [("3", 3), ("x", None)])
def test_the_workspace_hands_the_worker_count_to_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, expected: int | None
) -> None:
    asked: list[int | None] = []
    build = engine.build_index

    def recording(*args: object, workers: int | None = None, **kwargs: object) -> object:
        asked.append(workers)
        return build(*args, workers=1, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "build_index", recording)
    monkeypatch.setenv("CTXTUI_WORKERS", value)
    repo = make_repo(tmp_path / "repo", {"app.py": "def main():\n    return 1\n"})
    workspace = Workspace.open(repo, semantic=False, use_cache=False)
    assert asked == [expected]
    assert [f.path for f in workspace.index.files] == ["app.py"]


def test_the_progress_bar_on_a_terminal_starts_no_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A first index forks its workers only while the process has one thread (else they
    start through a forkserver: everything imported again, no page shared); rich's bar
    refreshed itself from a thread of its own, so on a terminal every index took that way.
    The bar is drawn from the reports instead."""
    import io
    import sys
    import threading

    from ctxtui.cli.common import progress_on_stderr

    terminal = io.StringIO()
    terminal.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress_on_stderr() as on_progress:
        assert on_progress is not None
        assert threading.active_count() == 1
        on_progress(engine.Progress("parse", 0, 0))
        on_progress(engine.Progress("parse", 16, 32))
        assert threading.active_count() == 1
    assert "parse" in terminal.getvalue()


def test_the_progress_bar_says_the_parse_time_left_as_the_app_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io
    import sys
    import time

    import rich.console

    from ctxtui.cli.common import progress_on_stderr

    clock = [100.0]
    monkeypatch.setattr(rich.console, "monotonic", lambda: clock[0])  # the bar's clock
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])  # when the bar is drawn again
    terminal = io.StringIO()
    terminal.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress_on_stderr() as on_progress:
        assert on_progress is not None
        on_progress(engine.Progress("parse", 0, 16_000))
        clock[0] = 102.0  # the workers' start: not counted in the pace
        on_progress(engine.Progress("parse", 400, 16_000))
        clock[0] = 110.0
        on_progress(engine.Progress("parse", 4_400, 16_000))
        assert "about 25 s left" in terminal.getvalue()
        clock[0] = 109.0
        on_progress(engine.Progress("resolve", 0, 0))
        clock[0] = 110.0
        on_progress(engine.Progress("resolve", 7, 0))  # a stage without a total
        assert "7/?" in terminal.getvalue() and "7/0" not in terminal.getvalue()
