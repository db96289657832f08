"""Planner invariants on a billing repository with one large answer file and many small ones.

Never over budget unless the user's choices force it; no automatic file above its cap; pinned
and overridden files always in; OFF removes a file; same input, same plan; and it beats the
plain greedy planner when the answer is a large file ranked first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import make_repo
from index_support import index_repo

from engine.levels import level_tokens
from engine.model import Index, Level, Plan, PlanLimits, Ranking, Session
from engine.plan import FILE_OVERHEAD, PACK_OVERHEAD, PACK_REASONS, greedy_plan, plan
from engine.rank import rank


def _invoice_engine(rules: int) -> str:
    """A large module of many small rules, with the late-fee function in the middle."""
    parts = [
        '"""Invoice engine: every rule that turns orders into invoices."""\n\nimport datetime\n\n\n'
    ]
    for i in range(rules):
        parts.append(
            f"def rule_{i:02d}_adjust_invoice(invoice, order):\n"
            f'    """Adjust the invoice for rule {i}."""\n'
            f"    amount = order.amount * {i + 1} / 100\n"
            f"    invoice.lines.append(('rule {i}', amount))\n"
            "    return invoice\n\n\n"
        )
    parts.insert(
        len(parts) // 2,
        "def apply_late_fee(invoice, days_late):\n"
        '    """Charge a late fee for every day past the due date."""\n'
        "    fee = days_late * invoice.daily_late_fee\n"
        "    invoice.total += fee\n"
        "    return invoice\n\n\n",
    )
    return "".join(parts)


def _medium(name: str, n: int) -> str:
    body = "".join(
        f"def {name}_step_{i}(invoice):\n"
        f'    """Step {i} of {name} for monthly invoices."""\n'
        f"    invoice.notes.append('{name} {i}')\n"
        "    return invoice\n\n\n"
        for i in range(n)
    )
    return f'"""The {name} part of billing."""\n\n\n' + body


BILLING: dict[str, str | bytes] = {
    "billing/engine.py": _invoice_engine(60),
    "billing/reminders.py": _medium("reminder", 12),
    "billing/statements.py": _medium("statement", 20),
    "billing/tax.py": _medium("tax", 6),
    "docs/fees.md": "# Fees\n\nA late fee is charged per day past the due date.\n",
    **{
        f"billing/helpers_{i:02d}.py": (
            f'def helper_{i}(invoice):\n    """Small helper {i} for late invoices."""\n'
            f"    return invoice.total + {i}\n"
        )
        for i in range(12)
    },
}
QUESTIONS = ("how is the late fee applied?", "invoice rules", "reminder statement steps")


@pytest.fixture(scope="module")
def billing(tmp_path_factory: pytest.TempPathFactory) -> Index:
    root = make_repo(tmp_path_factory.mktemp("plan") / "billing", BILLING)
    return index_repo(root)[0]


NO_CHOICES = Session()


def plan_for(index: Index, question: str, budget: int, session: Session = NO_CHOICES) -> Plan:
    return plan(rank(index, question, session), index, budget, session)


BUDGETS = range(200, 20_001, 233)


# --------------------------------------------------------------------------- the budget


@pytest.mark.parametrize("question", QUESTIONS)
def test_plan_never_exceeds_the_budget_without_user_choices(billing: Index, question: str) -> None:
    ranking = rank(billing, question)
    for budget in BUDGETS:
        packed = plan(ranking, billing, budget)
        assert packed.total_tokens <= budget, budget
        assert not packed.over_budget and packed.notes == (), budget


@pytest.mark.parametrize("question", QUESTIONS)
def test_entries_and_overheads_add_up_to_the_plan_total(billing: Index, question: str) -> None:
    ranking = rank(billing, question)
    for budget in BUDGETS:
        packed = plan(ranking, billing, budget)
        expected = PACK_OVERHEAD + sum(e.tokens + FILE_OVERHEAD for e in packed.entries)
        assert packed.total_tokens == expected, budget


@pytest.mark.parametrize("question", QUESTIONS)
def test_no_automatic_file_takes_more_than_its_cap(billing: Index, question: str) -> None:
    ranking = rank(billing, question)
    limits = PlanLimits()
    for budget in BUDGETS:
        for entry in plan(ranking, billing, budget, limits=limits).entries:
            assert entry.automatic
            assert entry.tokens <= int(limits.auto_cap * budget), (budget, entry.path)


def test_a_tighter_cap_is_respected_too(billing: Index) -> None:
    ranking = rank(billing, "how is the late fee applied?")
    limits = PlanLimits(auto_cap=0.1)
    for budget in BUDGETS:
        assert all(
            e.tokens <= 0.1 * budget for e in plan(ranking, billing, budget, limits=limits).entries
        )


def test_plan_entries_follow_the_ranking_order(billing: Index) -> None:
    packed = plan_for(billing, "how is the late fee applied?", 4000)
    ranks = [e.rank for e in packed.entries]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)
    assert all(e.level is not Level.OFF for e in packed.entries)


def test_a_budget_too_small_for_anything_gives_an_empty_plan(billing: Index) -> None:
    packed = plan_for(billing, "how is the late fee applied?", 50)
    assert packed.entries == ()


def test_a_budget_below_the_pack_header_does_not_blame_pinned_files(billing: Index) -> None:
    packed = plan_for(billing, "how is the late fee applied?", 50)
    assert not any("pinned" in note for note in packed.notes)


def test_max_candidates_limits_the_files_considered(billing: Index) -> None:
    ranking = rank(billing, "late invoices")
    packed = plan(ranking, billing, 20_000, limits=PlanLimits(max_candidates=3))
    assert {e.path for e in packed.entries} <= {f.path for f in ranking.files[:3]}


# --------------------------------------------------------------------------- the user's choices


def test_pinned_file_bigger_than_the_budget_is_in_and_the_plan_says_so(billing: Index) -> None:
    session = Session(pinned=frozenset({"billing/engine.py"}))
    packed = plan_for(billing, "helper", 300, session)
    entry = next(e for e in packed.entries if e.path == "billing/engine.py")
    assert entry.pinned and not entry.automatic
    assert packed.over_budget
    assert packed.total_tokens > packed.budget
    assert len(packed.notes) == 1 and "exceed the budget" in packed.notes[0]


@pytest.mark.parametrize("budget", [200, 1000, 5000, 20_000])
def test_pinned_and_focus_files_are_always_in(billing: Index, budget: int) -> None:
    session = Session(pinned=frozenset({"billing/tax.py"}), focus=("billing/helpers_07.py",))
    paths = {
        e.path for e in plan_for(billing, "how is the late fee applied?", budget, session).entries
    }
    assert {"billing/tax.py", "billing/helpers_07.py"} <= paths


def test_overridden_level_is_kept_even_above_the_cap_and_the_budget(billing: Index) -> None:
    session = Session(overrides={"billing/engine.py": Level.FULL})
    packed = plan_for(billing, "how is the late fee applied?", 1000, session)
    entry = next(e for e in packed.entries if e.path == "billing/engine.py")
    assert entry.level is Level.FULL and not entry.automatic
    assert entry.tokens == billing.files[entry.file_id].tokens
    assert packed.over_budget and packed.notes


def test_override_off_removes_the_file(billing: Index) -> None:
    question = "how is the late fee applied?"
    assert plan_for(billing, question, 4000).entries[0].path == "billing/engine.py"
    session = Session(overrides={"billing/engine.py": Level.OFF})
    packed = plan_for(billing, question, 4000, session)
    assert "billing/engine.py" not in {e.path for e in packed.entries}
    assert not packed.over_budget


def test_override_outline_is_used_as_chosen_where_it_is_the_cheapest(billing: Index) -> None:
    session = Session(overrides={"billing/helpers_03.py": Level.OUTLINE})
    packed = plan_for(billing, "how is the late fee applied?", 20_000, session)
    entry = next(e for e in packed.entries if e.path == "billing/helpers_03.py")
    assert entry.level is Level.OUTLINE and not entry.automatic


def test_override_outline_dearer_than_focused_gives_the_focused_view(billing: Index) -> None:
    session = Session(overrides={"billing/engine.py": Level.OUTLINE})
    packed = plan_for(billing, "how is the late fee applied?", 20_000, session)
    entry = next(e for e in packed.entries if e.path == "billing/engine.py")
    assert entry.level is Level.FOCUSED and not entry.automatic
    outline = level_tokens(billing, entry.file_id, Level.OUTLINE)
    assert entry.tokens < outline


def test_overridden_file_is_in_even_when_the_question_does_not_rank_it(billing: Index) -> None:
    session = Session(overrides={"billing/engine.py": Level.FULL})
    ranking = rank(billing, "reminder steps", session)
    packed = plan(ranking, billing, 20_000, session)
    assert "billing/engine.py" in {e.path for e in packed.entries}


# --------------------------------------------------------------------------- stability and quality


def test_the_same_input_gives_equal_plans(billing: Index) -> None:
    session = Session(pinned=frozenset({"billing/tax.py"}))
    ranking = rank(billing, "how is the late fee applied?", session)
    for budget in (300, 2000, 9000):
        assert plan(ranking, billing, budget, session) == plan(ranking, billing, budget, session)


def test_planner_packs_the_large_answer_that_greedy_leaves_out(billing: Index) -> None:
    ranking = rank(billing, "how is the late fee applied?")
    answer = ranking.files[0]
    assert answer.path == "billing/engine.py"
    budget = 2000
    assert billing.files[answer.file_id].tokens > budget  # the whole file cannot fit
    ours = {e.path: e for e in plan(ranking, billing, budget).entries}
    greedy = {e.path for e in greedy_plan(ranking, billing, budget).entries}
    assert answer.path not in greedy
    assert ours[answer.path].level is Level.FOCUSED
    assert answer.matched_declarations == ours[answer.path].matched_declarations


def test_greedy_plan_takes_whole_files_in_ranked_order_while_they_fit(billing: Index) -> None:
    ranking = rank(billing, "late invoices")
    packed = greedy_plan(ranking, billing, 3000)
    assert all(e.level is Level.FULL for e in packed.entries)
    assert packed.total_tokens <= 3000
    assert [e.rank for e in packed.entries] == sorted(e.rank for e in packed.entries)


def test_an_empty_ranking_gives_an_empty_plan(tmp_path: Path) -> None:
    index, _ = index_repo(make_repo(tmp_path / "repo", {"a.py": "x = 1\n"}))
    packed = plan(rank(index, "nothing matches"), index, 8000)
    assert (packed.entries, packed.over_budget, packed.notes) == ((), False, ())


# --------------------------------------------------------------------------- breadth, then depth


def _ledger(name: str) -> str:
    """A ledger module: many entries, one of which posts a refund."""
    entries = "".join(
        f"def {name}_entry_{i:02d}(book, amount):\n"
        f'    """Book entry {i} of the {name} ledger."""\n'
        f"    book.lines.append(('{name} {i}', amount * {i + 1}))\n"
        "    return book\n\n\n"
        for i in range(30)
    )
    notes = "".join(
        f"def refund_tax_note_{i}(book, refund):\n"
        f'    """Note {i}: how to post a refund and reverse its tax."""\n'
        + "".join(f"    book.note(refund.tax, line={j})\n" for j in range(12))
        + "    return book\n\n\n"
        for i in range(4)
    )
    refund = notes + (
        f"def post_{name}_refund(book, refund):\n"
        f'    """Post a refund to the {name} ledger and reverse its tax."""\n'
        + "".join(f"    book.reverse_tax(refund, step={i})\n" for i in range(20))
        + "    return book\n\n\n"
    )
    return f'"""The {name} ledger."""\n\nimport decimal\n\n\n' + entries + refund


LEDGERS: dict[str, str | bytes] = {
    f"ledgers/{name}.py": _ledger(name)
    for name in ("cash", "bank", "card", "gift", "loan", "rent", "wage", "fees", "loss", "misc")
}


@pytest.fixture(scope="module")
def ledgers(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return index_repo(make_repo(tmp_path_factory.mktemp("plan") / "ledgers", LEDGERS))[0]


def test_each_of_the_best_ten_files_gets_code_before_any_gets_more(ledgers: Index) -> None:
    ranking = rank(ledgers, "post a refund and reverse its tax")
    assert len(ranking.files) == 10
    full_files = sum(ledgers.files[f.file_id].tokens for f in ranking.files)
    budget = 6000
    assert full_files > 3 * budget  # whole files would not do
    packed = plan(ranking, ledgers, budget)
    assert {e.path for e in packed.entries if e.level is Level.FOCUSED} == {
        f.path for f in ranking.files
    }
    assert all(len(f.matched_declarations) > 1 for f in ranking.files)  # more to show
    greedy = greedy_plan(ranking, ledgers, budget)
    assert len(greedy.entries) <= 2


def test_the_smallest_code_view_is_the_best_declaration_alone(ledgers: Index) -> None:
    ranking = rank(ledgers, "post a refund and reverse its tax")
    for entry in plan(ranking, ledgers, 3000).entries:
        decls = ledgers.files[entry.file_id].declarations
        assert [decls[d].name for d in entry.matched_declarations][:1] == [
            entry.path.split("/")[1].replace(".py", "").join(("post_", "_refund"))
        ]


def test_leftover_budget_deepens_the_best_files_first(ledgers: Index) -> None:
    ranking = rank(ledgers, "post a refund and reverse its tax")
    packed = plan(ranking, ledgers, 6000).entries
    assert len(packed) == 10
    deeper = [e.rank for e in packed if len(e.matched_declarations) > 1]
    assert 0 < len(deeper) < 10
    assert deeper == list(range(1, len(deeper) + 1))  # in ranked order


def test_a_pack_entry_carries_only_the_strongest_reasons(ledgers: Index) -> None:
    ranking = rank(ledgers, "post a refund and reverse its tax")
    for entry, ranked in zip(plan(ranking, ledgers, 6000).entries, ranking.files, strict=True):
        assert entry.reasons == ranked.reasons[:PACK_REASONS]


class _Watched(Sequence[int]):
    """A file's matching declarations that note when the planner reads them."""

    def __init__(self, items: Sequence[int], path: str, asked: set[str]) -> None:
        self.items, self.path, self.asked = tuple(items), path, asked

    def __len__(self) -> int:
        self.asked.add(self.path)
        return len(self.items)

    def __getitem__(self, i: Any) -> Any:
        self.asked.add(self.path)
        return self.items[i]


def test_once_the_budget_is_spent_no_further_file_is_looked_into(ledgers: Index) -> None:
    ranking = rank(ledgers, "post a refund and reverse its tax")
    asked: set[str] = set()
    watched = replace(
        ranking,
        files=tuple(
            replace(f, matched_declarations=_Watched(f.matched_declarations, f.path, asked))
            for f in ranking.files
        ),
    )
    budget = 1545  # eight focused ledgers fill it to within 2 tokens
    packed = plan(watched, ledgers, budget)
    assert packed == plan(ranking, ledgers, budget)
    assert budget - packed.total_tokens < FILE_OVERHEAD  # spent: no further file can fit
    last = max(e.rank for e in packed.entries)
    assert last < len(ranking.files) - 1
    assert asked and not asked & {f.path for f in ranking.files[last:]}


def _weak_from(ledgers: Index, first: int) -> tuple[Ranking, set[str]]:
    """The refund question's ranking with the files from position `first` (0-based) on
    scoring 5 % of the best: weak files (under PlanLimits.code_score_share); and their paths."""
    ranking = rank(ledgers, "post a refund and reverse its tax")
    best = ranking.files[0].score
    weak = {f.path for f in ranking.files[first:]}
    skewed = replace(
        ranking,
        files=tuple(replace(f, score=best * 0.05) if f.path in weak else f for f in ranking.files),
    )
    return skewed, weak


def test_weak_files_among_the_best_get_their_code_before_the_strong_files_depth(
    ledgers: Index,
) -> None:
    """Files of the top 10 scoring under PlanLimits.code_score_share of the best get their
    smallest code view in the breadth step, before any file gets more; only the strong files
    are deepened."""
    skewed, weak = _weak_from(ledgers, 5)
    breadth = PlanLimits().breadth_lines
    for budget in (6000, 9000, 30000):
        packed = plan(skewed, ledgers, budget).entries
        assert {e.path for e in packed if e.level in (Level.FOCUSED, Level.FULL)} >= weak
        for entry in packed:
            if entry.path in weak:  # the smallest view, never deepened
                assert len(entry.matched_declarations) == 1
                assert entry.best_lines == breadth
    roomy = plan(skewed, ledgers, 30000).entries
    assert any(e.best_lines > breadth for e in roomy if e.path not in weak)


def test_the_first_code_view_cuts_the_best_declaration_then_depth_lets_it_run(
    ledgers: Index,
) -> None:
    """The breadth step keeps the first PlanLimits.breadth_lines lines of each file's best
    declaration (post_*_refund has 23); what is left lets the best files' run on, in
    ranked order."""
    ranking = rank(ledgers, "post a refund and reverse its tax")
    breadth = PlanLimits().breadth_lines
    assert breadth < 23
    every = PlanLimits(breadth_tokens=0)  # ten first views however small the budget
    tight = plan(ranking, ledgers, 1900, limits=every).entries
    assert [e.rank for e in tight] == list(range(1, 11))
    assert all(e.level is Level.FOCUSED and len(e.matched_declarations) == 1 for e in tight)
    cut = [e.rank for e in tight if e.best_lines == breadth]
    longer = [e.rank for e in tight if e.best_lines > breadth]
    assert cut and longer and max(longer) < min(cut)  # the best ones ran on first
    first_view = level_tokens(
        ledgers, tight[-1].file_id, Level.FOCUSED, tight[-1].matched_declarations,
        best_lines=breadth,
    )  # fmt: skip
    assert tight[-1].tokens == first_view


def test_a_small_budget_gives_fewer_files_their_first_view_before_depth(ledgers: Index) -> None:
    """Under breadth_files x PlanLimits.breadth_tokens, the breadth step covers budget //
    breadth_tokens files: ten first views would leave the best file no depth."""
    ranking = rank(ledgers, "post a refund and reverse its tax")
    limits = PlanLimits()
    budget = 3 * limits.breadth_tokens
    packed = plan(ranking, ledgers, budget).entries
    spread = plan(ranking, ledgers, budget, limits=PlanLimits(breadth_tokens=0)).entries
    breadth = budget // limits.breadth_tokens
    assert len(spread) > len(packed) > breadth
    deeper = [e.rank for e in packed if e.best_lines > limits.breadth_lines]
    assert deeper[:breadth] == list(range(1, breadth + 1))  # they ran on before the rest
    assert sum(e.best_lines > limits.breadth_lines for e in spread) < breadth


def test_the_next_files_get_the_first_lines_of_their_code_from_what_depth_leaves(
    ledgers: Index,
) -> None:
    """Past the breadth files, PlanLimits.tail_files weak files get the first tail_lines
    lines of their best declaration instead of an outline, from what the best files'
    depth leaves: the best files' views do not change; the files after them keep outlines
    (here an outline costs ten times such a view: many documented one-liners)."""
    skewed, _ = _weak_from(ledgers, 4)
    narrow = PlanLimits(breadth_files=4, tail_files=0)
    tail = replace(narrow, tail_files=3)
    assert tail.tail_lines < tail.breadth_lines
    for budget in (6000, 12000):
        before = {e.rank: e for e in plan(skewed, ledgers, budget, limits=narrow).entries}
        after = {e.rank: e for e in plan(skewed, ledgers, budget, limits=tail).entries}
        assert {r: before[r] for r in range(1, 5)} == {r: after[r] for r in range(1, 5)}
        assert all(r not in before or before[r].level is Level.OUTLINE for r in range(5, 8))
        for r in range(5, 8):
            assert after[r].level is Level.FOCUSED
            assert after[r].best_lines == tail.tail_lines
            assert len(after[r].matched_declarations) == 1
        assert after[8].level is Level.OUTLINE


def test_the_next_files_carry_fewer_reasons_so_that_more_of_them_fit(ledgers: Index) -> None:
    """A tail file's entry carries PlanLimits.tail_reasons reasons; where each reason costs
    tokens (JSON), the room saved gives further tail files their code; the breadth files
    keep PACK_REASONS."""
    skewed, _ = _weak_from(ledgers, 4)
    assert all(len(f.reasons) > PACK_REASONS for f in skewed.files)
    every = PlanLimits(breadth_files=4, tail_files=5, tail_reasons=PACK_REASONS)
    fewer = replace(every, tail_reasons=1)
    with_all, with_one = (
        plan(skewed, ledgers, 3600, limits=limits, file_overhead=150, reason_tokens=27).entries
        for limits in (every, fewer)
    )  # JSON's wrapping
    code = (Level.FOCUSED, Level.FULL)
    tail_all = [e for e in with_all if e.rank > 4 and e.level in code]
    tail_one = [e for e in with_one if e.rank > 4 and e.level in code]
    assert len(tail_one) > len(tail_all) > 0
    assert all(len(e.reasons) == 1 for e in tail_one)
    assert all(len(e.reasons) == PACK_REASONS for e in with_one if e.rank <= 4)


def test_tail_after_gives_the_next_files_their_first_lines_before_the_last_depth_steps(
    ledgers: Index,
) -> None:
    """PlanLimits.tail_after 3: the tail files get their first lines after the best files'
    first three depth steps, before the whole-file step (4, the default: after all of them)."""
    skewed, _ = _weak_from(ledgers, 4)
    last = PlanLimits(breadth_files=4, tail_files=3, tail_after=4, breadth_tokens=500)
    earlier = replace(last, tail_after=3)
    code = (Level.FOCUSED, Level.FULL)
    for budget in (1000, 1200):
        after_depth = {e.rank: e for e in plan(skewed, ledgers, budget, limits=last).entries}
        before_whole = {e.rank: e for e in plan(skewed, ledgers, budget, limits=earlier).entries}
        tail_last = [r for r in (5, 6, 7) if r in after_depth and after_depth[r].level in code]
        tail_earlier = [
            r for r in (5, 6, 7) if before_whole.get(r) and before_whole[r].level in code
        ]
        assert len(tail_earlier) > len(tail_last)
        assert all(before_whole[r].best_lines == last.tail_lines for r in tail_earlier)
        assert all(before_whole[r].tokens <= after_depth[r].tokens for r in range(1, 5))
