"""Ranking signals added for repositories the tuning never saw (issue 11): each test builds a
small repository where the signal decides the order, and checks it against the weights
without that signal, so a test fails when the signal stops working."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import make_repo
from index_support import index_repo

from engine.model import Index, ParsedFile, Ranking
from engine.query import analyse_query, scope_words
from engine.rank import DEFAULT_WEIGHTS, rank
from engine.roles import Role, classify
from engine.words import identifier_words


def paths(ranking: Ranking) -> list[str]:
    return [f.path for f in ranking.files]


# ------------------------------------------------------------------- a word that names a file

HANDLERS = (
    "def handle_{name}(request, response):\n"
    "    response.headers.append(('x-{name}', request.path))\n"
    "    response.headers.append(('x-{name}-header', request.query))\n"
    "    response.status = 200\n"
    "    return response\n"
)

WEB: dict[str, str | bytes] = {
    **{f"web/handlers/{n}.py": HANDLERS.format(name=n) for n in ("users", "orders", "items")},
    "web/response.py": (
        "class Reply:\n"
        "    def __init__(self, fields):\n"
        "        self.fields = list(fields)\n\n"
        "    def add(self, key, value):\n"
        "        self.fields.append((key, value))\n"
    ),
    "web/cookies.py": "def parse_cookie(header):\n    return dict(p.split('=') for p in header)\n",
}


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return index_repo(make_repo(tmp_path_factory.mktemp("web") / "web", WEB))[0]


def test_a_word_every_file_uses_still_finds_the_one_file_it_names(web: Index) -> None:
    question = "append a header to the response"
    assert paths(rank(web, question))[0] == "web/response.py"
    without = dataclasses.replace(DEFAULT_WEIGHTS, field_match=(0.0,) * 6)
    assert paths(rank(web, question, weights=without))[0] != "web/response.py"


# ------------------------------------------------------------------- a role named in passing

SHOP: dict[str, str | bytes] = {
    "shop/ledger.py": (
        "def cart_total(cart, discounts):\n"
        "    total = sum(line.price for line in cart.lines)\n"
        "    return round(total - sum(d.amount for d in discounts), 2)\n"
    ),
    "shop/users.py": "def display_name(user):\n    return user.first + ' ' + user.last\n",
    "CHANGELOG.md": "# Changes\n\n"
    + "".join(
        f"## 2.{n}\n\n- Fix the cart total with discounts in release {n}.\n"
        f"- Faster page loads and smaller images in release {n}.\n\n"
        for n in range(6)
    ),
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return index_repo(make_repo(tmp_path_factory.mktemp("shop") / "shop", SHOP))[0]


def test_a_changelog_named_in_passing_stays_below_the_code(shop: Index) -> None:
    question = "Fix rounding of the cart total with discounts; add changelog"
    assert paths(rank(shop, question))[0] == "shop/ledger.py"
    # "changelog" said in prose weighs less too (engine.query.CHANGE_WORDS)
    full_lift = dataclasses.replace(DEFAULT_WEIGHTS, asked_lift=1.0, kind_weight=1.0, rerank=())
    assert paths(rank(shop, question, weights=full_lift))[0] == "CHANGELOG.md"


def test_a_question_for_the_changelog_alone_still_gets_it_first(shop: Index) -> None:
    assert paths(rank(shop, "changelog"))[0] == "CHANGELOG.md"


# ------------------------------------------------------------------- a commit's subject line

CACHE: dict[str, str | bytes] = {
    "cache/store.py": (
        "class Store:\n"
        "    def evict(self, now):\n"
        "        for key in [k for k, e in self.entries.items() if e.expires < now]:\n"
        "            del self.entries[key]\n"
    ),
    "net/client.py": (
        "def fetch(url, timeout):\n"
        "    for attempt in range(3):\n"
        "        connection = open_connection(url, timeout)\n"
        "        if connection.ok:\n"
        "            return connection.read()\n"
    ),
}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return index_repo(make_repo(tmp_path_factory.mktemp("cache") / "cache", CACHE))[0]


def test_the_subject_line_of_a_long_question_weighs_more(cache: Index) -> None:
    question = (
        "Evict expired entries\n\nSeen while a connection hit its timeout: the fetch was retried."
    )
    assert paths(rank(cache, question))[0] == "cache/store.py"
    flat = dataclasses.replace(DEFAULT_WEIGHTS, title_weight=1.0)
    assert paths(rank(cache, question, weights=flat))[0] == "net/client.py"


@pytest.mark.parametrize(
    "question",
    ["fix(store): a fetch retried after the timeout", "store: a fetch retried after the timeout"],
)
def test_the_scope_of_a_subject_names_the_code(cache: Index, question: str) -> None:
    assert paths(rank(cache, question))[0] == "cache/store.py"
    flat = dataclasses.replace(DEFAULT_WEIGHTS, scope_weight=1.0, scope_path=0.0, rerank=())
    assert paths(rank(cache, question, weights=flat))[0] == "net/client.py"


AREA: dict[str, str | bytes] = {
    "router/trie.py": (
        "class Node:\n"
        "    def insert(self, parts, handler):\n"
        "        child = self.children.setdefault(parts[0], Node())\n"
        "        return child.insert(parts[1:], handler) if parts[1:] else handler\n"
    ),
    "app.py": (
        "def mount(app, router, prefix):\n"
        "    # the router takes every wildcard route below the prefix\n"
        "    for route in router.routes:\n"
        "        app.add(prefix + route.path, route.handler, router=router)\n"
        "    return router\n"
    ),
    "router/static.py": "def serve(root, path):\n    return open(root + path).read()\n",
    "router/params.py": "def split(path):\n    return [p for p in path.split('/') if p]\n",
    **{f"util_{i}.py": f"def util_{i}(v):\n    return v + {i}\n" for i in range(6)},
}


def test_the_scope_is_an_area_of_the_tree(tmp_path: Path) -> None:
    """A scope word found in a file's folders or name is a path hint as well as a word
    (`RankWeights.scope_path`): `fix(router):` lifts the files of `router/` above the file
    that merely says "router" most; said as a plain word, "router" is only a word."""
    index = index_repo(make_repo(tmp_path / "area", AREA))[0]
    area = {"router/trie.py", "router/static.py", "router/params.py"}
    question = "fix(router): the wildcard route takes a child node"
    assert set(paths(rank(index, question))[:3]) == area
    # the first stage's own signal, before the learned re-rank (which reads folders too)
    first_stage = dataclasses.replace(DEFAULT_WEIGHTS, rerank=())
    assert set(paths(rank(index, question, weights=first_stage))[:3]) == area
    off = dataclasses.replace(first_stage, scope_path=0.0)
    assert paths(rank(index, question, weights=off))[1] == "app.py"
    plain = "the wildcard route takes a child node in the router"
    assert paths(rank(index, plain, weights=first_stage))[1] == "app.py"


@pytest.mark.parametrize(
    ("question", "scope"),
    [
        ("feat(builder)!: set actions", "builder"),
        ("Router: add parameter handling", "Router"),
        ("list view: scroll to the end", "list view"),
        ("fix: timeout store", ""),  # a label says what kind of change, not where
        ("Bug: timeout store", ""),
        ("Seen while it fetched a page: timeout", ""),  # a sentence, not a label
        ("timeout store", ""),
    ],
)
def test_the_scope_is_read_from_the_subject(question: str, scope: str) -> None:
    assert scope_words(question) == {w for t in scope.split() for w in identifier_words(t)}


# ------------------------------------------------------------------- what a question is for

FAILURES: dict[str, str | bytes] = {
    **CACHE,
    "net/retry.py": (
        "def fetch_with_retry(url, fail_fast=False):\n"
        "    # fix: a failed fetch is retried unless fail_fast; a bug report names the error\n"
        "    # entries of the error log: each failed fetch, each bug fixed\n"
        "    for attempt in range(3):\n"
        "        error = try_fetch(url)\n"
        "        if error is None or fail_fast:\n"
        "            return error\n"
    ),
    **{f"util_{i}.py": f"def util_{i}(v):\n    return v + {i}\n" for i in range(6)},
}


@pytest.fixture(scope="module")
def failures(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return index_repo(make_repo(tmp_path_factory.mktemp("failures") / "f", FAILURES))[0]


def test_words_saying_what_the_question_is_for_weigh_less(failures: Index) -> None:
    """fix, bug, fails, error say that something is broken, not where: the file about
    evicting expired entries answers, not the one that talks of failures and bugs."""
    index = failures
    question = "evict fails with an error on expired entries, fix the bug"
    assert paths(rank(index, question))[0] == "cache/store.py"
    flat = dataclasses.replace(DEFAULT_WEIGHTS, kind_weight=1.0)
    assert paths(rank(index, question, weights=flat))[0] == "net/retry.py"


@pytest.mark.parametrize(
    ("question", "kept"),
    [
        ("call `fail_fast` when evict fails", "fail"),  # written as code
        ("fix(error): evict fails", "error"),  # the scope
    ],
)
def test_a_kind_word_written_as_code_or_as_the_scope_keeps_its_weight(
    failures: Index, question: str, kept: str
) -> None:
    weights = DEFAULT_WEIGHTS.query_weights()
    flat = dataclasses.replace(weights, kind_weight=1.0)
    damped = {t.word: t.weight for t in analyse_query(failures, question, weights).terms}
    plain = {t.word: t.weight for t in analyse_query(failures, question, flat).terms}
    assert damped[kept] == plain[kept]
    assert damped["evict"] == plain["evict"]
    said, said_flat = (
        {t.word: t.weight for t in analyse_query(failures, "evict fails with an error", w).terms}
        for w in (weights, flat)
    )
    assert said["fail"] < said_flat["fail"] and said["error"] < said_flat["error"]  # in prose


# ------------------------------------------------------------------- words written as code


@pytest.mark.parametrize(
    "written", ["call `append` on the headers", "call res.append on the headers"]
)
def test_words_in_backticks_or_dotted_names_weigh_as_code(web: Index, written: str) -> None:
    plain = {t.word: t.weight for t in analyse_query(web, "call append on the headers").terms}
    coded = {t.word: t.weight for t in analyse_query(web, written).terms}
    assert coded["append"] > plain["append"]
    assert coded["head"] == plain["head"]  # prose beside the code keeps its weight


# ------------------------------------------------------------------- code around the project


@pytest.mark.parametrize(
    "path",
    ["scripts/release.py", "tools/gen.go", "benchmarks/routing/index.ts", ".github/ci.py"],
)
def test_scripts_tools_and_benchmarks_rank_as_examples(path: str) -> None:
    parsed = ParsedFile(path, "python", 1, 0, "", 1, 1, (), ())
    assert classify(parsed) is Role.EXAMPLE
    assert classify(dataclasses.replace(parsed, path="src/release.py")) is Role.CODE


def _god_file() -> str:
    """A long builder with one documented method per setting: every word of the question
    below is in it once, each in a different method."""
    words = ["help", "version", "usage", "options", "action", "skip", "tag", "template"]
    methods = []
    for number in range(60):
        word = words[number] if number < len(words) else "value"
        body = "\n".join(f"        self.settings_{number}_{k} = {k}" for k in range(8))
        methods.append(
            f"    def set_{word}_{number}(self, value):\n"
            f'        """Set the {word} of the command, number {number}."""\n{body}\n'
        )
    return "class Command:\n" + "\n".join(methods)


@pytest.fixture(scope="module")
def builder(tmp_path_factory: pytest.TempPathFactory) -> Index:
    files = {
        "cli/command.py": _god_file(),
        "cli/usage.py": (
            "def needs_options_tag(command):\n"
            '    """Skip the options tag in the usage line when the only options are help and\n'
            '    version."""\n'
            "    return any(o.name not in ('help', 'version') for o in command.options)\n"
        ),
        **{f"cli/other_{i}.py": f"def other_{i}(v):\n    return v + {i}\n" for i in range(6)},
    }
    return index_repo(make_repo(tmp_path_factory.mktemp("builder"), files))[0]


def test_a_huge_file_matching_the_question_in_scattered_methods_yields(builder: Index) -> None:
    question = "Skip the options tag in the usage if the help or version action"
    tokens = builder.files[builder.path_ids["cli/command.py"]].tokens
    small = dataclasses.replace(DEFAULT_WEIGHTS, scattered_tokens=tokens // 2)
    scattered = paths(rank(builder, question, weights=small))
    off = paths(rank(builder, question, weights=dataclasses.replace(small, scattered_tokens=0)))
    assert off[0] == "cli/command.py"  # the words alone favour the file that has them all
    assert scattered[0] == "cli/usage.py"
    assert paths(rank(builder, question))[0] == "cli/command.py"  # far below 25k tokens


KEPT_WHOLE = {
    "one method holds the question": "set_template_7: set the template of the command",
    "the question names the file": (
        "cli/command.py: skip the options tag in the usage if the help or version action"
    ),
}


@pytest.mark.parametrize("question", KEPT_WHOLE.values(), ids=KEPT_WHOLE.keys())
def test_a_huge_file_keeps_its_score_when_its_matches_are_not_scattered_or_it_is_named(
    builder: Index, question: str
) -> None:
    tokens = builder.files[builder.path_ids["cli/command.py"]].tokens
    small = dataclasses.replace(DEFAULT_WEIGHTS, scattered_tokens=tokens // 2)
    off = rank(builder, question, weights=dataclasses.replace(small, scattered_tokens=0))
    kept = rank(builder, question, weights=small)
    assert paths(kept)[0] == "cli/command.py"
    assert kept.files[0].score == pytest.approx(off.files[0].score)


def test_a_huge_file_without_declarations_is_not_damped(tmp_path: Path) -> None:
    words = ("replication", "heartbeat", "leader", "election", "quorum", "lease")
    rows = [f"-- step {i}: the {words[i % 6]} table keeps row {i}\n" for i in range(600)]
    files: dict[str, str | bytes] = {
        "docs/spec.sql": "".join(rows),
        "notes.sql": "-- the leader sends a heartbeat\n",
        **{f"other_{i}.py": f"def other_{i}(v):\n    return v + {i}\n" for i in range(6)},
    }
    index = index_repo(make_repo(tmp_path / "r", files))[0]
    spec = index.files[index.path_ids["docs/spec.sql"]]
    assert not spec.declarations
    question = "replication heartbeat leader election"
    small = dataclasses.replace(DEFAULT_WEIGHTS, scattered_tokens=spec.tokens // 2)
    off = rank(index, question, weights=dataclasses.replace(small, scattered_tokens=0))
    kept = rank(index, question, weights=small)
    assert paths(kept)[0] == paths(off)[0] == "docs/spec.sql"
    assert kept.files[0].score == pytest.approx(off.files[0].score)


@pytest.mark.parametrize("complete", [True, False], ids=["complete", "typed"])
def test_an_index_counted_again_in_another_encoding_damps_by_its_new_counts(
    tmp_path: Path, complete: bool
) -> None:
    """The damping reads each file's token count; after a recount (another encoding, no
    parse) the ranking must read the new counts, not a memo of the old index's."""
    from index_support import shared_tokenizer

    from engine.recount import recount

    files = {
        "cli/command.py": _god_file().replace('"""Set', '"""設定値を日本語で説明する。Set'),
        "cli/usage.py": (
            "def needs_options_tag(command):\n"
            '    """Skip the options tag in the usage line when the only options are help and\n'
            '    version."""\n'
            "    return any(o.name not in ('help', 'version') for o in command.options)\n"
        ),
        **{f"cli/other_{i}.py": f"def other_{i}(v):\n    return v + {i}\n" for i in range(6)},
    }
    root = make_repo(tmp_path / "repo", files)
    older, fresh = index_repo(root)[0], index_repo(root, encoding="cl100k_base")[0]
    question = "Skip the options tag in the usage if the help or version action"
    before = older.files[older.path_ids["cli/command.py"]].tokens
    after = fresh.files[fresh.path_ids["cli/command.py"]].tokens
    assert before < after  # o200k spends fewer tokens on Japanese
    weights = dataclasses.replace(DEFAULT_WEIGHTS, scattered_tokens=(before + after) // 2)
    old = rank(older, question, weights=weights, complete=complete)
    texts = {path: (root / path).read_text(encoding="utf-8") for path in files}
    recounted, _ = recount(older, shared_tokenizer("cl100k_base"), texts)
    new = rank(recounted, question, weights=weights, complete=complete)
    expected = rank(fresh, question, weights=weights, complete=complete)
    assert paths(new) == paths(expected) != paths(old)
    assert [f.score for f in new.files] == pytest.approx([f.score for f in expected.files])


EDITS: dict[str, str | bytes] = {
    **CACHE,
    "tools/docs.py": (
        "def update_docstrings(module):\n"
        "    # update each docstring and comment, fix typos, keep the changelog formatted\n"
        "    for comment in comments(module):\n"
        "        update(comment, format_docstring(comment))\n"
    ),
    **{f"util_{i}.py": f"def util_{i}(v):\n    return v + {i}\n" for i in range(6)},
}


def test_words_saying_how_a_change_was_made_weigh_less(tmp_path: Path) -> None:
    """A commit body's "Update CHANGELOG", "update docstrings and comments", "fix typos" say
    how the change was made, not which code it is about (engine.query.CHANGE_WORDS)."""
    index = index_repo(make_repo(tmp_path / "edits", EDITS))[0]
    question = "Evict on time\n\n* Update CHANGELOG\n* update docstrings and comments\n* fix typos"
    assert paths(rank(index, question))[0] == "cache/store.py"
    flat = dataclasses.replace(DEFAULT_WEIGHTS, kind_weight=1.0)
    assert paths(rank(index, question, weights=flat))[0] == "tools/docs.py"


BLOG = {
    "blog/comments.py": (
        "class CommentStore:\n"
        "    def save_comment(self, comment):\n"
        '        """Store a comment of a post."""\n'
        "        self.db.insert(comment)\n"
    ),
    "blog/posts.py": (
        "class PostStore:\n"
        "    def save_post(self, post):\n"
        '        """Store a post in the database."""\n'
        "        self.db.insert(post)\n"
    ),
    "blog/db.py": "class Database:\n    def insert(self, row):\n        return row\n",
    "fmt/formatter.py": (
        'def format_date(value):\n    """Format a date."""\n    return str(value)\n'
    ),
    "utils/dates.py": 'def parse_date(text):\n    """Parse a date."""\n    return text\n',
}


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("where are comments of a post stored in the database", "blog/comments.py"),
        ("how do we format a date", "fmt/formatter.py"),
    ],
)
def test_a_one_line_question_about_comments_or_formats_keeps_those_words(
    tmp_path: Path, question: str, answer: str
) -> None:
    """The change words (comment, format, review, update ...) weigh less only in a question
    with a body: in one line a person types they are what the question is about."""
    index = index_repo(make_repo(tmp_path / "blog", BLOG))[0]
    assert paths(rank(index, question))[0] == answer
    with_body = f"{question}\n\n* update tests"
    kept = analyse_query(index, question, DEFAULT_WEIGHTS.query_weights())
    lowered = analyse_query(index, with_body, DEFAULT_WEIGHTS.query_weights())
    word = "comment" if "comment" in question else "format"
    weight = {t.word: t.weight for t in kept.terms}[word]
    assert weight == 1.0
    assert {t.word: t.weight for t in lowered.terms}[word] < weight / 2
