"""The workspace while a question is typed: a keystroke that asks what the last one asked.

engine.rank hands such a keystroke the very files of the last answer; the workspace then
hands back the plan it drafted for them, under the new question, instead of drafting it again.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from conftest import make_repo
from semantic_support import SHOP

import engine
from ctxtui.workspace import Workspace
from engine.model import Level, Plan, Ranking, Session

pytestmark = pytest.mark.usefixtures("tokenizer_loaded_once")


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace.open(make_repo(tmp_path / "shop", SHOP), semantic=False)


def test_a_keystroke_asking_the_same_gets_the_same_plan_under_its_question(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    drafts: list[str] = []
    draft = engine.plan

    def counted(ranking: Ranking, *args: Any, **kwargs: Any) -> Plan:
        drafts.append(ranking.query)
        return draft(ranking, *args, **kwargs)

    monkeypatch.setattr(engine, "plan", counted)
    first = workspace.rank("compute the total of", Session(), complete=False)
    planned = workspace.plan(first, 4000, Session())
    again = workspace.rank("compute the total of the", Session(), complete=False)
    assert len(first.files) > 1 and again.files is first.files
    replanned = workspace.plan(again, 4000, Session())
    assert drafts == ["compute the total of"]  # drafted once
    assert replanned.query == "compute the total of the"
    assert replanned.entries == planned.entries
    drafted = draft(again, workspace.index, 4000, Session())  # the plain computation
    assert replanned.entries == drafted.entries


def test_another_budget_or_choice_is_planned_anew(workspace: Workspace) -> None:
    ranking = workspace.rank("compute the total of", Session(), complete=False)
    assert len(ranking.files) > 1
    workspace.plan(ranking, 4000, Session())
    tight = workspace.plan(ranking, 600, Session())
    assert tight.budget == 600
    assert tight.entries == engine.plan(ranking, workspace.index, 600, Session()).entries
    best = ranking.files[0].path
    assert next(e.level for e in tight.entries if e.path == best) is not Level.OFF
    chosen = Session(overrides={best: Level.OFF})
    replanned = workspace.plan(ranking, 600, chosen)
    assert best not in {e.path for e in replanned.entries if e.level is not Level.OFF}
    assert replanned.entries == engine.plan(ranking, workspace.index, 600, chosen).entries


def test_a_pack_told_to_stop_gives_up_and_one_never_told_is_unchanged(
    workspace: Workspace,
) -> None:
    from ctxtui.workspace.stopping import PackStopped
    from engine.model import Format

    ranking = workspace.rank("compute the total of", Session(), complete=False)
    plain = workspace.pack(ranking, 4000, Session(), Format.MARKDOWN)
    asked: list[bool] = []

    def after_three_steps() -> bool:  # a newer key arrives half-way through
        asked.append(True)
        return len(asked) > 3

    with pytest.raises(PackStopped):
        workspace.pack(ranking, 4000, Session(), Format.MARKDOWN, should_stop=after_three_steps)
    assert len(asked) == 4  # it stopped at the first check after the signal
    never = workspace.pack(ranking, 4000, Session(), Format.MARKDOWN, should_stop=lambda: False)
    assert never[1].text == plain[1].text and never[0].entries == plain[0].entries


def test_the_declaration_words_are_built_from_the_second_keystroke_on(
    workspace: Workspace,
) -> None:
    """The first keystroke ranking is the app's opening list: building the declarations' word
    index beside it (0.4 s of CPU on the 16k tree) delayed that list; the next one starts it."""
    units = workspace.index.units
    assert units is not None and len(units.terms) > 0
    workspace.rank("compute the total", Session(), complete=False)
    time.sleep(0.2)
    assert units.words is None
    workspace.rank("compute the total of", Session(), complete=False)
    deadline = time.monotonic() + 10
    while units.words is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert units.words is not None
