"""The app's plain modules, without Textual: persisted state, budget arithmetic, the copy chain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.support import FakeClipboard
from ctxtui.clipboard import CopyResult, CopyWay, deliver, describe, has_system_clipboard
from ctxtui.state import (
    HISTORY_LIMIT,
    MAX_BUDGET,
    MIN_BUDGET,
    RepoState,
    StateStore,
    parse_budget,
    remember,
    step_budget,
)
from engine.model import Format, Level


def test_state_round_trips_through_its_json_file(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "repo", tmp_path / "state")
    state = RepoState(
        pinned=frozenset({"a.py", "b/c.py"}),
        overrides={"a.py": Level.OUTLINE, "d.py": Level.OFF},
        budget=12_000,
        fmt=Format.JSON,
        encoding="cl100k_base",
        query="where is the session refreshed?",
        history=("where is the session refreshed?", "how are tokens signed"),
        notes=("a.py: outline would cost no less than full, so it is packed full",),
    )
    store.save(state)
    loaded, notice = store.load()
    assert loaded == state and notice == ""
    assert json.loads(store.path.read_text("utf-8"))["version"] == 1
    assert [p.name for p in store.path.parent.iterdir()] == [store.path.name]  # no temp left


def test_a_state_file_without_history_still_loads(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "repo", tmp_path / "state")
    store.path.parent.mkdir(parents=True)
    store.path.write_text('{"version": 1, "query": "old"}', encoding="utf-8")
    state, notice = store.load()
    assert notice == "" and state.query == "old" and state.history == ()


def test_the_place_in_the_list_is_kept_and_optional_on_disk(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "repo", tmp_path / "state")
    store.save(RepoState(query="q", cursor="a/b.py", focus="list"))
    assert store.load()[0].cursor == "a/b.py" and store.load()[0].focus == "list"
    # written before the place was kept, or by a later version with a place unknown here
    for text in ('{"version": 1}', '{"version": 1, "focus": "preview"}'):
        store.path.write_text(text, encoding="utf-8")
        state, notice = store.load()
        assert notice == "" and state.cursor == "" and state.focus == "question"
        assert state.notes == ()


def test_history_keeps_each_question_once_newest_first_and_bounded() -> None:
    history: tuple[str, ...] = ()
    for question in ("a", "b", " a ", "", "c"):
        history = remember(history, question)
    assert history == ("c", "a", "b")
    for number in range(HISTORY_LIMIT + 5):
        history = remember(history, f"q{number}")
    assert len(history) == HISTORY_LIMIT and history[0] == f"q{HISTORY_LIMIT + 4}"


def test_missing_state_gives_defaults(tmp_path: Path) -> None:
    assert StateStore(tmp_path, tmp_path / "state").load() == (RepoState(), "")


@pytest.mark.parametrize(
    "content",
    [
        "{broken",
        '{"version": 99}',
        '{"version": 1, "budget": "lots"}',
        "[]",
        '{"version": 1, "history": "not a list"}',
    ],
)
def test_unreadable_state_is_moved_aside_with_a_notice(tmp_path: Path, content: str) -> None:
    store = StateStore(tmp_path, tmp_path / "state")
    store.path.parent.mkdir(parents=True)
    store.path.write_text(content, encoding="utf-8")
    state, notice = store.load()
    assert state == RepoState()
    assert "moved it to" in notice
    assert not store.path.exists()
    assert len(list(store.path.parent.glob("*.corrupt-*"))) == 1


def test_each_repository_has_its_own_state_file(tmp_path: Path) -> None:
    first = StateStore(tmp_path / "one", tmp_path / "state")
    second = StateStore(tmp_path / "two", tmp_path / "state")
    assert first.path != second.path


def test_budget_steps_are_finer_below_8k() -> None:
    assert step_budget(8_000, -1) == 7_000
    assert step_budget(7_000, 1) == 8_000
    assert step_budget(8_000, 1) == 10_000
    assert step_budget(32_000, 1) == 36_000
    assert step_budget(8_500, -1) == 8_000
    assert step_budget(MIN_BUDGET, -1) == MIN_BUDGET
    assert step_budget(MAX_BUDGET, 1) == MAX_BUDGET


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("12000", 12_000), ("12,000", 12_000), ("12k", 12_000), ("1.5K", 1_500), ("1m", 1_000_000)],
)
def test_typed_budgets_are_understood(text: str, tokens: int) -> None:
    assert parse_budget(text) == tokens


@pytest.mark.parametrize("text", ["", "lots", "-5", "10", "3m", "12 k tokens"])
def test_nonsense_budgets_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_budget(text)


def test_verified_clipboard_copy_wins(tmp_path: Path) -> None:
    terminal: list[str] = []
    result = deliver(
        "pack",
        "md",
        backend=FakeClipboard(),
        terminal=terminal.append,
        cache_dir=tmp_path,
        env={"DISPLAY": ":0"},
    )
    assert result == CopyResult(CopyWay.CLIPBOARD, "fake-clip", tmp_path / "packs" / "last.md")
    assert terminal == []
    assert (tmp_path / "packs" / "last.md").read_text("utf-8") == "pack"


@pytest.mark.parametrize(
    ("backend", "env", "problem"),
    [
        (FakeClipboard(fail=True), {"DISPLAY": ":0"}, "no clipboard tool"),
        (FakeClipboard(forget=True), {"DISPLAY": ":0"}, "did not keep the text"),
        (FakeClipboard(), {}, "no display"),
    ],
)
def test_clipboard_failures_fall_through_to_the_terminal(
    tmp_path: Path, backend: FakeClipboard, env: dict[str, str], problem: str
) -> None:
    terminal: list[str] = []
    result = deliver(
        "pack", "xml", backend=backend, terminal=terminal.append, cache_dir=tmp_path, env=env
    )
    assert result.way is CopyWay.TERMINAL and terminal == ["pack"]
    assert problem in result.problems[0]
    assert (tmp_path / "packs" / "last.xml").exists()


def test_a_clipboard_that_takes_the_text_late_still_counts(tmp_path: Path) -> None:
    terminal: list[str] = []
    backend = FakeClipboard(late=3)  # xclip's child owns the clipboard only a moment later
    result = deliver(
        "pack", "md", backend=backend, terminal=terminal.append, cache_dir=tmp_path,
        env={"DISPLAY": ":0"},
    )  # fmt: skip
    assert result.way is CopyWay.CLIPBOARD and result.tool == "fake-clip"
    assert terminal == []


def test_the_terminal_fallback_says_why(tmp_path: Path) -> None:
    result = deliver(
        "pack", "md", backend=FakeClipboard(late=99), terminal=[].append, cache_dir=tmp_path,
        env={"DISPLAY": ":0"},
    )  # fmt: skip
    text = describe(result, 10, 1)
    assert text.startswith("Copied 10 tokens, 1 file — via terminal (OSC 52) (fake-clip did not")
    assert text.endswith(f"; also saved to {tmp_path / 'packs' / 'last.md'}")
    headless = deliver("pack", "md", backend=FakeClipboard(), terminal=[].append, env={})
    assert "(no display for a system clipboard (DISPLAY is not set))" in describe(headless, 1, 1)


def test_a_terminal_copy_too_large_to_trust_is_not_called_copied(tmp_path: Path) -> None:
    sent: list[str] = []
    small = deliver("x" * 75_000, "md", backend=None, terminal=sent.append, cache_dir=tmp_path)
    assert small.way is CopyWay.TERMINAL and not small.doubtful  # a 100,000-byte payload
    assert describe(small, 20_000, 9).startswith("Copied 20,000 tokens, 9 files — via terminal")
    big = deliver("é" * 40_000, "md", backend=None, terminal=sent.append, cache_dir=tmp_path)
    assert big.way is CopyWay.TERMINAL and big.doubtful  # 80,000 bytes of UTF-8: 106,668 sent
    assert sent == ["x" * 75_000, "é" * 40_000]  # sent all the same: it may well arrive
    last = tmp_path / "packs" / "last.md"
    assert describe(big, 30_000, 12) == (
        "Sent 30,000 tokens, 12 files to the terminal (OSC 52), unconfirmed (106 KB: many "
        f"terminals drop a copy this large); also saved to {last}"
    )


def test_without_clipboard_or_terminal_the_file_is_all(tmp_path: Path) -> None:
    result = deliver("pack", "json", backend=None, terminal=None, cache_dir=tmp_path, env={})
    assert result.way is CopyWay.FILE
    text = describe(result, 7_812, 9)
    assert (
        text == f"7,812 tokens, 9 files — no clipboard: saved to {tmp_path / 'packs' / 'last.json'}"
    )


def test_notifications_say_which_way_the_pack_went(tmp_path: Path) -> None:
    clip = CopyResult(CopyWay.CLIPBOARD, "xclip", tmp_path / "last.md")
    assert describe(clip, 7_812, 9) == "Copied 7,812 tokens, 9 files — clipboard via xclip"
    osc = CopyResult(CopyWay.TERMINAL, "", None)
    assert describe(osc, 100, 1) == "Copied 100 tokens, 1 file — via terminal (OSC 52)"


def test_linux_without_a_display_has_no_system_clipboard() -> None:
    assert not has_system_clipboard({}, "linux")
    assert has_system_clipboard({"WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert has_system_clipboard({}, "darwin")
