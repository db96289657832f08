"""engine.pack: the rendered pack is measured with the real tokenizer and fits the budget.

Rendered.tokens is the count of Rendered.text; it stays within the budget unless the user's own
choices force it over; each plan entry's tokens are the count of that file's rendered content.
"""

from __future__ import annotations

import importlib
import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import make_repo
from index_support import index_repo, shared_tokenizer

from engine.analyse import read_text
from engine.levels import render_level
from engine.model import Format, Index, Level, Plan, Rendered, Session
from engine.pack import FORMAT_FILE_OVERHEAD, FORMAT_REASON_TOKENS, pack
from engine.plan import PACK_REASONS
from engine.rank import rank
from engine.render import FILE_FORMATTERS
from engine.render.to_xml import escape_text
from engine.render.view import FileView


def _module(name: str, functions: int) -> str:
    return f'"""The {name} module of the scheduler."""\n\nimport heapq\n\n\n' + "".join(
        f"def {name}_task_{i}(queue, job):\n"
        f'    """Handle {name} step {i}: "quotes", <angle> & ampersands."""\n'
        f"    heapq.heappush(queue, (job.priority + {i}, job))\n"
        f"    return queue\n\n\n"
        for i in range(functions)
    )


SCHEDULER: dict[str, str | bytes] = {
    "sched/retry.py": _module("retry", 40) + "def schedule_retry_with_backoff(job, attempt):\n"
    '    """Put a failed job back on the queue after an exponential backoff."""\n'
    "    delay = min(2 ** attempt, 300)\n"
    "    return job.requeue(delay=delay)\n",
    "sched/queue.py": _module("queue", 12),
    "sched/worker.py": _module("worker", 8)
    + "from sched.retry import schedule_retry_with_backoff\n",
    "web/status.js": (
        "// Show the retry status of each job.\n"
        "export function renderRetryStatus(job) {\n"
        "  return `<li>${job.name}: retry ${job.attempt}</li>`;\n"
        "}\n"
    ),
    "docs/retries.md": (
        "# Retries\n\nFailed jobs are retried with backoff.\n\n## Limits\n\nAt most 300 s.\n"
    ),
    "README.md": "# Scheduler\n\nJobs, queues, workers and retries.\n",
}
QUESTION = "how does a failed job get retried with backoff?"
BUDGETS = (300, 700, 1500, 3000, 8000)


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return index_repo(make_repo(tmp_path_factory.mktemp("pack") / "sched", SCHEDULER))[0]


NO_CHOICES = Session()


def packed(
    index: Index,
    budget: int,
    fmt: Format,
    session: Session = NO_CHOICES,
    *,
    line_numbers: bool = False,
) -> tuple[Plan, Rendered]:
    ranking = rank(index, QUESTION, session)
    return pack(
        ranking, index, budget, fmt, counter=shared_tokenizer(), session=session,
        line_numbers=line_numbers,
    )  # fmt: skip


@pytest.mark.parametrize("fmt", list(Format))
@pytest.mark.parametrize("budget", BUDGETS)
def test_rendered_tokens_are_the_tokenizers_count_of_the_text(
    scheduler: Index, fmt: Format, budget: int
) -> None:
    _, rendered = packed(scheduler, budget, fmt)
    assert rendered.tokens == shared_tokenizer().count(rendered.text)


@pytest.mark.parametrize("fmt", list(Format))
@pytest.mark.parametrize("budget", BUDGETS)
def test_pack_fits_the_budget_when_nothing_is_pinned(
    scheduler: Index, fmt: Format, budget: int
) -> None:
    plan, rendered = packed(scheduler, budget, fmt)
    assert rendered.tokens <= budget
    assert not plan.over_budget
    assert rendered.files == len(plan.entries) > 0


@pytest.mark.parametrize("fmt", list(Format))
def test_pack_with_line_numbers_fits_the_budget_too(scheduler: Index, fmt: Format) -> None:
    _, rendered = packed(scheduler, 1500, fmt, line_numbers=True)
    assert rendered.tokens <= 1500
    assert rendered.tokens == shared_tokenizer().count(rendered.text)


@pytest.mark.parametrize("fmt", list(Format))
def test_plan_totals_are_exact_after_packing(scheduler: Index, fmt: Format) -> None:
    plan, rendered = packed(scheduler, 3000, fmt)
    assert plan.exact
    assert plan.total_tokens == rendered.tokens


@pytest.mark.parametrize("fmt", list(Format))
def test_each_entrys_tokens_are_the_count_of_its_rendered_content(
    scheduler: Index, fmt: Format
) -> None:
    plan, rendered = packed(scheduler, 3000, fmt)
    assert tuple(e.tokens for e in plan.entries) == rendered.file_tokens
    for entry in plan.entries:
        parsed = scheduler.files[entry.file_id]
        content = render_level(
            parsed, read_text(scheduler.root, parsed.path), entry.level, entry.matched_declarations
        )
        assert entry.tokens == shared_tokenizer().count(content), entry.path


def test_the_answer_is_packed_with_its_code(scheduler: Index) -> None:
    plan, rendered = packed(scheduler, 1500, Format.MARKDOWN)
    answer = next(e for e in plan.entries if e.path == "sched/retry.py")
    assert answer.rank <= 2
    assert answer.level in (Level.FULL, Level.FOCUSED)
    assert "def schedule_retry_with_backoff(job, attempt):" in rendered.text


def test_json_pack_lists_the_plan_entries_in_order(scheduler: Index) -> None:
    plan, rendered = packed(scheduler, 3000, Format.JSON)
    document = json.loads(rendered.text)
    assert document["total_tokens"] == rendered.tokens
    assert [f["path"] for f in document["files"]] == [e.path for e in plan.entries]
    assert [f["tokens"] for f in document["files"]] == [e.tokens for e in plan.entries]
    assert [f["level"] for f in document["files"]] == [e.level.value for e in plan.entries]


def test_xml_pack_parses_and_holds_the_escaped_code(scheduler: Index) -> None:
    plan, rendered = packed(scheduler, 8000, Format.XML)
    root = ET.fromstring(rendered.text)
    files = root.findall("file")
    assert [f.get("path") for f in files] == [e.path for e in plan.entries]
    assert any("<angle> & ampersands" in (f.text or "") for f in files)


def test_pinned_files_stay_whole_in_the_pack_even_over_budget(scheduler: Index) -> None:
    session = Session(overrides={"sched/retry.py": Level.FULL})
    plan, rendered = packed(scheduler, 500, Format.MARKDOWN, session)
    assert plan.over_budget and plan.notes
    entry = next(e for e in plan.entries if e.path == "sched/retry.py")
    assert entry.level is Level.FULL
    assert rendered.tokens > 500
    assert rendered.tokens == shared_tokenizer().count(rendered.text)


def test_packing_twice_gives_the_same_text(scheduler: Index) -> None:
    assert packed(scheduler, 1500, Format.XML)[1] == packed(scheduler, 1500, Format.XML)[1]


def test_read_text_callback_supplies_file_contents(scheduler: Index) -> None:
    ranking = rank(scheduler, QUESTION)
    seen: list[str] = []

    def reader(path: str) -> str:
        seen.append(path)
        return read_text(scheduler.root, path)

    plan, _ = pack(
        ranking, scheduler, 3000, Format.MARKDOWN, counter=shared_tokenizer(), read_text=reader
    )
    assert set(seen) >= {e.path for e in plan.entries}
    assert len(seen) == len(set(seen))  # each file read once, however many rounds


def test_pack_of_an_empty_ranking_is_a_header_only(tmp_path: Path) -> None:
    index, _ = index_repo(make_repo(tmp_path / "repo", {"a.py": "x = 1\n"}))
    plan, rendered = pack(
        rank(index, "nothing matches"), index, 8000, Format.JSON, counter=shared_tokenizer()
    )
    assert plan.entries == ()
    assert json.loads(rendered.text)["files"] == []
    assert rendered.tokens == shared_tokenizer().count(rendered.text) <= 8000


@pytest.mark.parametrize("fmt", list(Format))
def test_the_planners_wrapping_cost_is_what_a_file_costs_in_its_format(
    scheduler: Index, fmt: Format
) -> None:
    """engine.pack's FORMAT_FILE_OVERHEAD (with FORMAT_REASON_TOKENS a reason) is what a file
    of a real pack costs apart from its content, as the format escapes that content: the
    planner spends the budget by these numbers (session 27: JSON 150 and 27 a reason were
    counted where a file cost ~62 and a reason ~7)."""
    plan, _ = packed(scheduler, 3000, fmt)
    counter = shared_tokenizer()
    reason_tokens = FORMAT_REASON_TOKENS.get(fmt, 0)
    measured, expected = [], []
    for entry in plan.entries:
        parsed = scheduler.files[entry.file_id]
        content = render_level(
            parsed, read_text(scheduler.root, parsed.path), entry.level,
            entry.matched_declarations, best_lines=entry.best_lines,
        )  # fmt: skip
        view = FileView(
            path=entry.path, language=parsed.language, level=entry.level, pinned=entry.pinned,
            score=entry.score, reasons=entry.reasons, content=content,
            tokens=counter.count(content),
        )  # fmt: skip
        escaped = {
            Format.JSON: json.dumps(content, ensure_ascii=False)[1:-1],
            Format.XML: escape_text(content),
        }.get(fmt, content)
        measured.append(counter.count(FILE_FORMATTERS[fmt](view)) - counter.count(escaped))
        expected.append(
            FORMAT_FILE_OVERHEAD[fmt] - reason_tokens * (PACK_REASONS - len(entry.reasons))
        )
    assert len(measured) >= 4
    assert sum(expected) * 0.8 <= sum(measured) <= sum(expected) * 1.2, (measured, expected)


@pytest.mark.parametrize("budget", BUDGETS)
def test_a_json_packs_total_tokens_is_the_tokenizers_count_of_the_printed_json(
    scheduler: Index, budget: int
) -> None:
    """The total printed inside the pack is the count of the whole printed text, reasons and
    one-line file objects included, and every file carries the keys of DESIGN §8."""
    _, rendered = packed(scheduler, budget, Format.JSON)
    document = json.loads(rendered.text)
    assert document["total_tokens"] == shared_tokenizer().count(rendered.text) <= budget
    assert any(f["reasons"] for f in document["files"])
    for file in document["files"]:
        assert {"path", "level", "tokens", "score", "reasons", "content"} <= set(file)
        assert all(isinstance(reason, str) for reason in file["reasons"])


def test_a_second_pack_takes_the_views_the_first_one_cut(
    scheduler: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    views: dict[tuple[object, ...], str] = {}
    ranking = rank(scheduler, QUESTION)
    first = pack(ranking, scheduler, 700, Format.XML, counter=shared_tokenizer(), views=views)
    assert any(e.level in (Level.FOCUSED, Level.OUTLINE) for e in first[0].entries)
    assert views  # the focused and outline views, kept

    def never(*_args: object, **_kwargs: object) -> str:
        raise AssertionError("a view was cut again")

    monkeypatch.setattr(importlib.import_module("engine.render"), "render_level", never)
    again = pack(ranking, scheduler, 700, Format.XML, counter=shared_tokenizer(), views=views)
    assert again[1] == first[1]


def test_a_plan_the_rounds_meet_again_is_rendered_once(
    scheduler: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each round re-plans with a corrected cost factor; when that gives the plan already
    rendered, its rendering is the same, so it is not made again."""
    pack_module = importlib.import_module("engine.pack")  # `engine.pack` is the function
    ranking = rank(scheduler, QUESTION)
    planned = pack_module.plan(ranking, scheduler, 3000, NO_CHOICES)
    rounds: list[int] = []

    def the_same_plan_misjudged(*_args: object, **_kwargs: object) -> Plan:
        rounds.append(1)  # estimates far over what it renders to: the loop re-plans
        return replace(planned, total_tokens=planned.total_tokens * 3 + len(rounds))

    renders: list[Plan] = []
    render = pack_module.render

    def counted(draft: Plan, *args: object, **kwargs: object) -> Rendered:
        renders.append(draft)
        return render(draft, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pack_module, "plan", the_same_plan_misjudged)
    monkeypatch.setattr(pack_module, "render", counted)
    _, rendered = pack(ranking, scheduler, 3000, Format.MARKDOWN, counter=shared_tokenizer())
    assert len(rounds) == pack_module.MAX_REPLANS
    assert len(renders) == 1
    assert rendered.tokens == shared_tokenizer().count(rendered.text)
