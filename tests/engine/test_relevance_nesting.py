"""Matched declarations and their reasons read from a stored file's outline (its spans and
names decoded once, its nesting worked out once) are those of the whole records."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import make_repo
from index_support import index_repo

from engine.model import DeclKind, Index
from engine.query import analyse_query
from engine.rank import DEFAULT_WEIGHTS, rank
from engine.relevance import _around, _held, _nested_once, match_declarations
from engine.tables import FileTable, Outline, Span, declaration_outline, nested_in


def _huge_module() -> str:
    parts = []
    for k in range(300):
        parts.append(
            f"class Handler{k}:\n"
            f"    def handle_request(self, request):\n"
            f"        def retry_request():\n"
            f"            return request.retry({k})\n"
            f"        return retry_request()\n\n"
            f"def parse_request_{k}(request):\n"
            f"    return request.parse()\n\n"
        )
    return "".join(parts)


FILES: dict[str, str | bytes] = {
    "server/handlers.py": (
        "class RequestHandler:\n"
        '    """Handle a request and its session."""\n'
        "\n"
        "    def handle_request(self, request):\n"
        "        def parse_session(raw):\n"
        "            return raw.session\n"
        "        return parse_session(request)\n"
        "\n"
        "    def close_session(self, session):\n"
        "        return session.close()\n"
        "\n"
        "\n"
        "def request_session(request):\n"
        "    return RequestHandler().handle_request(request)\n"
    ),
    "server/größe.py": (
        "class Größe:\n"
        "    def größe_berechnen(self, request):\n"
        "        return request.größe\n"
        "\n"
        "\n"
        "def größe(request):\n"
        "    return Größe().größe_berechnen(request)\n"
    ),
    "web/router.ts": (
        "export class Router {\n"
        "  route(request: Request) {\n"
        "    const handle = (session: Session) => session.request;\n"
        "    return handle(request.session);\n"
        "  }\n"
        "}\n"
        "export function routeRequest(request: Request) {\n"
        "  return new Router().route(request);\n"
        "}\n"
    ),
    "scripts/plain.py": "print('request session parse')\nprint('session')\n",
    "docs/requests.md": "# Requests\n\nEvery request has a session; parse it first.\n",
    "server/huge.py": _huge_module(),
}
"""Classes holding methods holding closures, unicode names, a module with no declarations,
a Markdown file, and one huge file (300 classes, 1,200 declarations)."""

QUESTIONS = (
    "handle the request session",
    "parse request",
    "retry_request",
    "größe berechnen request",
    "route request session",
    "close session",
    "nothing matches this",
)


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Index, Index]:
    """The stored index (outlines from the records' spans) and the same index over whole
    records (the nesting pass sorts the matches itself)."""
    repo = make_repo(tmp_path / "repo", FILES)
    index_repo(repo, cache_dir=tmp_path / "cache")
    warm, _ = index_repo(repo, cache_dir=tmp_path / "cache")
    assert isinstance(warm.files, FileTable)
    return warm, replace(warm, files=tuple(warm.files))


def test_matches_from_stored_outlines_are_those_of_whole_records(
    stored: tuple[Index, Index],
) -> None:
    warm, records = stored
    files = list(range(len(warm.files)))
    nested = 0
    for question in QUESTIONS:
        analysis = analyse_query(warm, question, DEFAULT_WEIGHTS.query_weights())
        terms = [(t.term_id, t.weight) for t in analysis.terms]
        fast = match_declarations(warm, terms, files)
        assert fast == match_declarations(records, terms, files)
        nested += sum(len(found) > 1 for found in fast.values())
    assert nested  # some files hold several matches, nested ones among them


def test_reasons_from_stored_outlines_name_what_whole_records_name(
    stored: tuple[Index, Index],
) -> None:
    warm, records = stored
    named = 0
    for question in QUESTIONS:
        fast, slow = rank(warm, question), rank(records, question)
        assert [f.path for f in fast.files] == [f.path for f in slow.files]
        for a, b in zip(fast.files, slow.files, strict=True):
            assert tuple(a.reasons) == tuple(b.reasons)
            assert tuple(a.matched_declarations) == tuple(b.matched_declarations)
            named += sum(r.kind.value == "declaration" for r in a.reasons)
    assert named


def test_outline_holders_are_the_spans_around_each_declaration(
    stored: tuple[Index, Index],
) -> None:
    warm, _ = stored
    huge = warm.path_ids["server/huge.py"]
    outline = declaration_outline(warm.files, huge)
    assert len(outline.spans) == 1200 and outline.holders is not None
    plain = warm.path_ids["scripts/plain.py"]
    assert declaration_outline(warm.files, plain).spans == ()
    unicode_file = warm.path_ids["server/größe.py"]
    assert "Größe.größe_berechnen" in declaration_outline(warm.files, unicode_file).names
    everything = [(1.0, p) for p in range(len(outline.spans))]
    assert _held(everything, outline.holders, dict((p, s) for s, p in everything)) == _around(
        everything, outline.spans
    )


KINDS = (DeclKind.CLASS, DeclKind.FUNCTION, DeclKind.METHOD)


def _random_spans(rng: random.Random) -> tuple[Span, ...]:
    """Spans that nest, repeat the very same lines, overlap in part, or stand alone."""
    spans: list[Span] = []
    for _ in range(rng.randint(1, 40)):
        if spans and rng.random() < 0.2:
            spans.append(Span(rng.choice(KINDS), *spans[-1][1:]))  # the very same lines
            continue
        start = rng.randint(1, 300)
        spans.append(Span(rng.choice(KINDS), start, start + rng.choice((0, 1, 5, 30, 90, 200))))
    return tuple(sorted(spans, key=lambda s: (s.start_line, -s.end_line)))


def test_holders_resolve_nesting_as_the_sorting_pass_does_on_random_spans() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        spans = _random_spans(rng)
        holders = Outline(spans, ("",) * len(spans), kept=True).holders
        assert holders is not None
        chosen = sorted(rng.sample(range(len(spans)), rng.randint(1, len(spans))))
        found = [(float(rng.choice((1, 2, 3, rng.random() * 9))), p) for p in chosen]
        whole = rng.choice((1, 30, 80, 150))
        slow = _nested_once(list(found), spans, whole)
        assert _nested_once(list(found), spans, whole, holders) == slow


def test_a_span_that_ends_before_it_starts_leaves_the_sorting_pass_in_charge() -> None:
    spans = (Span(DeclKind.FUNCTION, 10, 4), Span(DeclKind.FUNCTION, 5, 6))
    assert Outline(spans, ("a", "b"), kept=True).holders is None
    assert Outline(spans, ("a", "b"), kept=False).holders is None


def test_nested_in_finds_every_span_strictly_around_each_one_outer_first() -> None:
    """The one sweep both nesting passes share (engine.tables.nested_in), against a brute
    force: every span that starts no later and ends no sooner, not on the very same lines,
    in sorted order (by start, then end descending, then position)."""
    rng = random.Random(11)
    for _ in range(1000):
        spans = _random_spans(rng)
        entries = [(s.start_line, s.end_line, p) for p, s in enumerate(spans)]
        rng.shuffle(entries)
        key = {p: (start, -end, p) for start, end, p in entries}
        expected: dict[int, list[int]] = {}
        for start, end, p in entries:
            around = sorted(
                (o for o_start, o_end, o in entries
                 if o_start <= start and end <= o_end and (o_start, o_end) != (start, end)),
                key=key.__getitem__,
            )  # fmt: skip
            if around:
                expected[p] = around
        assert nested_in(entries) == expected
