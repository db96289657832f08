"""A level of less detail never costs more: focused <= full, outline <= focused, in every
fixture language, counted exactly on the rendered pack.

Each fixture file is packed three times in each format, its level chosen by the user as full,
focused and outline; the tokens the rendered pack spends on it (its content as the format
carries it, with its heading, element or object) must not grow as the level asks for less.
Where an outline (or a focused view) would cost more than a richer level, the pack shows the
richer, cheaper one, says so by its level and in a note. The files of many one-line
declarations (tests/level_fixtures.py) are the hard cases: gaps marked between kept one-liners,
outlines that repeat every line. The MCP tools' single files keep the same contract
(tests/mcp/test_level_contract.py).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from conftest import make_repo
from index_support import index_repo, shared_tokenizer
from level_fixtures import QUESTION, TINY_SOURCES, tiny_files
from test_levels_cases import CASES as LEVEL_CASES
from test_parse_languages import CASES as LANGUAGE_CASES

from engine.analyse import read_text
from engine.levels import level_tokens, render_level, shown_level
from engine.model import Format, Index, Level, Plan, PlanEntry, Session
from engine.pack import _richer_where_no_dearer, pack
from engine.plan import plan
from engine.rank import rank
from engine.render import render

EXTENSIONS = {
    "python": "py", "javascript": "js", "typescript": "ts", "tsx": "tsx", "go": "go",
    "rust": "rs", "java": "java", "c": "c", "cpp": "cpp", "csharp": "cs", "ruby": "rb",
    "php": "php", "markdown": "md", "rst": "rst",
}  # fmt: skip


def _documented_functions(count: int) -> str:
    """Many small documented functions: the outline (a signature and doc sentence each)
    costs more than a focused view of one of them."""
    return "".join(
        f"def adjust_invoice_rule_{i}(invoice, order, *, rounding=None):\n"
        f'    """Adjust the invoice for pricing rule number {i} of the yearly contract."""\n'
        f"    return invoice\n\n\n"
        for i in range(count)
    )


def _quoted_functions(count: int) -> str:
    """Documented one-liners returning escaped strings, every other one named for the
    question "label": bare, the focused view costs less than the outline; in JSON, which
    escapes every quote and backslash, more (rendered alone: 515 against 447 tokens)."""
    return "".join(
        f'def {"label" if i % 2 == 0 else "idle"}_{i}(): """Return the thing {i}."""; '
        f'return "\\"q\\" \\\\n"\n'
        for i in range(count)
    )


QUOTED = "json/quoted.py"
FILES: dict[str, str | bytes] = {
    **{f"lang/fixture.{EXTENSIONS[lang]}": source for lang, source, _, _ in LANGUAGE_CASES},
    **{f"levels/{path}": text for path, (_, text, _, _) in LEVEL_CASES.items()},
    "billing/rules.py": _documented_functions(60),
    QUOTED: _quoted_functions(20),
    **tiny_files(),
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Index]:
    root = make_repo(tmp_path_factory.mktemp("costs") / "repo", FILES)
    return root, index_repo(root)[0]


def _question(index: Index, path: str) -> str:
    """The question a file is packed for: the tiny files' own, else its first two names."""
    if path.startswith("tiny/"):
        return QUESTION
    if path == QUOTED:
        return "label"
    return " ".join(d.name for d in index.files[index.path_ids[path]].declarations[:2])


def _packed_tokens(
    root: Path, index: Index, path: str, level: Level, fmt: Format = Format.MARKDOWN
) -> tuple[Level, int, tuple[str, ...], int]:
    """The level of `path` in a pack where the user chose `level` for it, the exact tokens
    its part of the pack takes rendered in `fmt` (the file alone in a pack), the pack's
    notes, and what the file would take rendered alone at `level` itself."""
    session = Session(overrides={path: level})
    question = _question(index, path) or "fixture"
    ranking = rank(index, question, session)
    packed, _ = pack(
        ranking, index, 50_000, fmt, counter=shared_tokenizer(), session=session,
        read_text=lambda p: read_text(root, p),
    )  # fmt: skip
    entry = next(e for e in packed.entries if e.path == path)

    def alone(shown: PlanEntry) -> int:
        return render(
            Plan(question, 50_000, (shown,), 0, True, False), index, fmt,
            counter=shared_tokenizer(), read_text=lambda p: read_text(root, p),
        ).tokens  # fmt: skip

    return entry.level, alone(entry), packed.notes, alone(replace(entry, level=level))


@pytest.mark.parametrize("fmt", list(Format))
@pytest.mark.parametrize("path", sorted(p for p in FILES if not p.endswith((".txt",))))
def test_less_detail_never_costs_more(repo: tuple[Path, Index], path: str, fmt: Format) -> None:
    root, index = repo
    full = _packed_tokens(root, index, path, Level.FULL, fmt)
    focused = _packed_tokens(root, index, path, Level.FOCUSED, fmt)
    outline = _packed_tokens(root, index, path, Level.OUTLINE, fmt)
    assert full[0] is Level.FULL
    assert outline[1] <= focused[1] <= full[1], (outline, focused, full)
    # and a level shown richer than asked costs no more than the asked one would have
    assert focused[1] <= focused[3] and outline[1] <= outline[3], (outline, focused)


@pytest.mark.parametrize("path", sorted(tiny_files()))
@pytest.mark.parametrize("asked", [Level.FULL, Level.FOCUSED, Level.OUTLINE])
def test_a_level_set_by_hand_costs_no_more_than_a_richer_one(
    repo: tuple[Path, Index], path: str, asked: Level
) -> None:
    """Whatever level is asked for (with the question's matches, or none as an MCP call on
    a file the question does not touch), what is shown costs no more than each richer
    level, counted exactly."""
    root, index = repo
    file, text = index.files[index.path_ids[path]], read_text(root, path)
    count = shared_tokenizer().count
    matched = next(f for f in rank(index, QUESTION).files if f.path == path)
    for declarations in (tuple(matched.matched_declarations), ()):
        level, shown, tokens = shown_level(file, text, asked, declarations, count)
        assert tokens == count(shown)
        assert shown == render_level(file, text, level, declarations)
        order = (Level.OUTLINE, Level.FOCUSED, Level.FULL)
        assert order.index(level) >= order.index(asked)
        for richer in order[order.index(asked) :]:
            assert tokens <= count(render_level(file, text, richer, declarations)), richer


@pytest.mark.parametrize("fmt", list(Format))
def test_a_choice_is_settled_in_the_packs_format(repo: tuple[Path, Index], fmt: Format) -> None:
    """An outline asked for by hand is shown focused only where the focused view costs no
    more in the pack's own format: in JSON the escaped quotes make it dearer, so the outline
    stays; bare (and in Markdown) it is cheaper, so the file is shown focused."""
    root, index = repo
    outline = _packed_tokens(root, index, QUOTED, Level.OUTLINE, fmt)
    focused = _packed_tokens(root, index, QUOTED, Level.FOCUSED, fmt)
    assert focused[0] is Level.FOCUSED
    assert outline[1] <= outline[3] and outline[1] <= focused[1], (outline, focused)
    assert outline[0] is (Level.OUTLINE if fmt is Format.JSON else Level.FOCUSED)


def test_a_choice_shown_at_a_richer_level_says_so(repo: tuple[Path, Index]) -> None:
    root, index = repo
    path = "tiny/steps.py"
    level, _, notes, _ = _packed_tokens(root, index, path, Level.OUTLINE)
    assert level is Level.FOCUSED
    assert notes == (f"{path}: outline would cost no less than focused, so it is packed focused",)
    assert _packed_tokens(root, index, path, Level.FULL)[2] == ()


def test_many_choices_shown_richer_make_one_short_note_that_does_not_change_per_question(
    tmp_path: Path,
) -> None:
    """40 tiny files set to focused are all packed full (a focused view of three lines costs
    as much): one note names a few and counts the rest, and it carries nothing that changes
    with the question, so the app (which notifies when the notes change) does not notify
    again on every question."""
    words = ("price", "refund", "coupon", "cart", "total", "count", "items", "tax")
    files = {
        f"pkg/mod{i:02}.py": (
            f"def {words[i % 8]}_{i}(price, count):\n    return price * count + {i}\n"
        )
        for i in range(40)
    }  # distinct words, so that each question orders the files differently (review s23)
    root = make_repo(tmp_path / "repo", files)
    index = index_repo(root)[0]
    session = Session(overrides=dict.fromkeys(files, Level.FOCUSED))
    notes = []
    for question in ("total price", "refund total", "coupon for the cart"):
        packed, _ = pack(
            rank(index, question, session), index, 50_000, Format.JSON,
            counter=shared_tokenizer(), session=session, read_text=lambda p: read_text(root, p),
        )  # fmt: skip
        assert {e.level for e in packed.entries if e.path in files} == {Level.FULL}
        notes.append(packed.notes)
    assert len(notes[0]) == 1 and len(notes[0][0]) <= 200, notes[0]
    assert notes[0][0].startswith("40 files you set are packed richer")
    assert notes[0][0].endswith("and 37 more")
    assert notes[1] == notes[0] == notes[2]


def test_every_fixture_language_is_covered() -> None:
    assert {lang for lang, *_ in LANGUAGE_CASES} == set(EXTENSIONS) == set(TINY_SOURCES)


def test_an_outline_dearer_than_the_focused_view_is_shown_focused(
    repo: tuple[Path, Index],
) -> None:
    root, index = repo
    path = "billing/rules.py"
    file_id = index.path_ids[path]
    matched = rank(index, "adjust_invoice_rule_7").files[0].matched_declarations
    focused = level_tokens(index, file_id, Level.FOCUSED, matched)
    assert level_tokens(index, file_id, Level.OUTLINE) > 2 * focused  # the case in point
    level, tokens, _, _ = _packed_tokens(root, index, path, Level.OUTLINE)
    assert level is Level.FOCUSED
    assert tokens < level_tokens(index, file_id, Level.OUTLINE)


def test_the_estimated_plan_shows_the_cheaper_richer_level_too(repo: tuple[Path, Index]) -> None:
    """The app's badge shows the estimated plan's level before the exact pack arrives."""
    _, index = repo
    path = "billing/rules.py"
    session = Session(overrides={path: Level.OUTLINE})
    ranking = rank(index, "adjust_invoice_rule_7", session)
    entry = next(e for e in plan(ranking, index, 8000, session).entries if e.path == path)
    assert entry.level is Level.FOCUSED and not entry.automatic


def test_the_exact_pack_moves_an_entry_to_a_richer_level_that_counts_no_more(
    repo: tuple[Path, Index],
) -> None:
    """The last, exact guard: an entry the estimates left at OUTLINE moves to FOCUSED when
    the focused view, counted, costs no more; one whose richer levels cost more stays."""
    root, index = repo
    counter = shared_tokenizer()
    rules, store = index.path_ids["billing/rules.py"], index.path_ids["levels/store.py"]
    matched = rank(index, "adjust_invoice_rule_7").files[0].matched_declarations
    outline = render_level(index.files[rules], read_text(root, "billing/rules.py"), Level.OUTLINE)
    store_outline = render_level(
        index.files[store], read_text(root, "levels/store.py"), Level.OUTLINE
    )
    draft = Plan("q", 50_000, (
        PlanEntry("billing/rules.py", rules, Level.OUTLINE, counter.count(outline), 1, 1.0,
                  True, matched_declarations=matched),
        PlanEntry("levels/store.py", store, Level.OUTLINE, counter.count(store_outline), 2,
                  0.5, True),
    ), 0, True, False)  # fmt: skip
    moved = _richer_where_no_dearer(
        draft, index, counter, lambda p: read_text(root, p), line_numbers=False
    )
    assert [e.level for e in moved.entries] == [Level.FOCUSED, Level.OUTLINE]
    assert moved.entries[0].tokens < draft.entries[0].tokens
    assert moved.entries[1] == draft.entries[1]
