"""Ranking on a small shop repository: the right file first, with its reasons, whatever the
shape of the question."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import make_repo
from index_support import index_repo

from engine.model import Index, Intent, RankedFile, Ranking, ReasonKind, Session
from engine.query import analyse_query, detect_intent, mentioned_files
from engine.rank import rank
from engine.words import path_words, words

SHOP: dict[str, str | bytes] = {
    "shop/__init__.py": "",
    "shop/ledger.py": (
        "from shop.money import round_cents\n\n\n"
        "def compute_cart_total(cart, discounts):\n"
        '    """Sum the cart lines, then apply every discount."""\n'
        "    result = sum(line.price * line.quantity for line in cart.lines)\n"
        "    for discount in discounts:\n"
        "        result -= discount.amount\n"
        "    return round_cents(result)\n"
    ),
    "shop/money.py": "def round_cents(value):\n    result = round(value, 2)\n    return result\n",
    "shop/cart_view.py": (
        "from shop.ledger import compute_cart_total\n\n\n"
        "def show_cart(request):\n"
        "    result = compute_cart_total(request.cart, request.discounts)\n"
        "    return render('cart.html', total=result, value=request.value)\n"
    ),
    "shop/users.py": (
        "class UserAccount:\n"
        "    def get_display_name(self):\n"
        "        result = self.first + ' ' + self.last\n"
        "        return result\n"
    ),
    "shop/session_store.py": (
        "class SessionStore:\n"
        "    def load_session(self, key):\n"
        "        result = self.backend.get(key)\n"
        "        return result\n"
        "\n"
        "    def save_session(self, key, value):\n"
        "        self.backend.set(key, value)\n"
    ),
    "shop/pages.py": (
        "def render_page(request, value):\n"
        "    result = request.template.render(value)\n"
        "    return result\n"
    ),
    "tests/test_ledger.py": (
        "from shop.ledger import compute_cart_total\n\n\n"
        "def test_compute_cart_total_applies_discounts():\n"
        "    cart, discounts = make_cart(), [make_discount(5)]\n"
        "    result = compute_cart_total(cart, discounts)\n"
        "    assert result == compute_cart_total(cart, discounts)\n"
        "    assert compute_cart_total(cart, []) != compute_cart_total(cart, discounts)\n"
    ),
    "docs/cart.md": "# Cart\n\nThe cart total applies discounts at checkout.\n",
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Index:
    root = make_repo(tmp_path_factory.mktemp("rank") / "shop", SHOP)
    return index_repo(root)[0]


def paths(ranking: Ranking) -> list[str]:
    return [f.path for f in ranking.files]


def ranked(ranking: Ranking, path: str) -> RankedFile:
    return next(f for f in ranking.files if f.path == path)


def kinds(file: RankedFile) -> set[ReasonKind]:
    return {r.kind for r in file.reasons}


# --------------------------------------------------------------------------- finding the answer


def test_answer_named_unlike_the_question_is_found_by_what_it_declares(shop: Index) -> None:
    ranking = rank(shop, "how is the total price with discounts computed?")
    name_words, folder_words = path_words("shop/ledger.py")
    assert not set(ranking.terms) & {*name_words, *folder_words}  # the path is no help
    top = ranking.files[0]
    assert top.path == "shop/ledger.py"
    assert any(
        r.kind is ReasonKind.DECLARATION and r.detail == "compute_cart_total" for r in top.reasons
    )


def test_camel_case_query_finds_snake_case_definition(tmp_path: Path) -> None:
    files = {"auth/session.py": "def get_user_session(): ...\n", "README.md": "# Hi\n"}
    index, _ = index_repo(make_repo(tmp_path, files))
    ranking = rank(index, "getUserSession", Session())
    assert ranking.files[0].path == "auth/session.py"
    assert any(r.kind is ReasonKind.DECLARATION for r in ranking.files[0].reasons)


def test_camel_case_question_ranks_the_snake_case_declaration_first(shop: Index) -> None:
    ranking = rank(shop, "computeCartTotal")
    assert ranking.files[0].path == "shop/ledger.py"
    assert "computecarttotal" in ranking.terms


def test_test_file_repeating_the_words_does_not_outrank_the_implementation(shop: Index) -> None:
    test_text, code_text = SHOP["tests/test_ledger.py"], SHOP["shop/ledger.py"]
    assert isinstance(test_text, str) and isinstance(code_text, str)
    assert test_text.count("compute_cart_total") > code_text.count("compute_cart_total")
    order = paths(rank(shop, "compute cart total discounts"))
    assert order.index("shop/ledger.py") < order.index("tests/test_ledger.py")


def test_a_question_about_tests_lifts_the_test_file(shop: Index) -> None:
    ranking = rank(shop, "which tests cover compute_cart_total")
    assert ranking.intent is Intent.TEST
    assert ranking.files[0].path == "tests/test_ledger.py"


def test_tests_named_in_a_commit_body_do_not_lift_the_test_file(shop: Index) -> None:
    """What a question asks for is read from its first line: a body's "add unit tests with
    pytest" is a side note of the change, not the question (`QueryAnalysis.asks_tests`)."""
    subject, body = "compute_cart_total applies discounts", "* add unit tests with pytest coverage"
    ranking = rank(shop, f"{subject}\n\n{body}")
    assert ranking.intent is Intent.TEST  # the whole question's words still say tests
    assert ranking.files[0].path == "shop/ledger.py"
    assert rank(shop, f"{body}\n\n{subject}").files[0].path == "tests/test_ledger.py"


def test_a_subject_that_tests_in_passing_asks_for_the_code(shop: Index) -> None:
    """When a subject's words tie between what it is for, the one said first wins (`query.
    detect_intent`): "Add ..., and test ..." adds code, its test a side note; "tests: fix ..."
    is about tests."""
    question = "Add discounts to compute_cart_total, and test the rounding"
    added = analyse_query(shop, question)
    assert added.wants_tests and not added.asks_tests  # tests lifted a little, not fully
    # the test file is no longer lifted over the code beside the answer
    assert paths(rank(shop, question))[:3] == [
        "shop/ledger.py",
        "shop/cart_view.py",
        "tests/test_ledger.py",
    ]
    labelled = analyse_query(shop, "tests: fix compute_cart_total discounts")
    assert labelled.asks_tests
    assert detect_intent({"add", "test"}) is Intent.TEST  # no order given: INTENT_WORDS' order


@pytest.mark.parametrize("opening", ["Hi,", "Hello team!\n", "Bug:", "Dear maintainers,\n---"])
def test_a_greeting_or_header_line_is_not_the_first_line(shop: Index, opening: str) -> None:
    """A salutation or a bare header opens a message; the question's first line, where what
    it asks for is read, is the next one with content (`query.without_opening`)."""
    question = f"{opening}\nwhich tests cover compute_cart_total?"
    analysis = analyse_query(shop, question)
    assert analysis.asks_tests and analysis.wants_tests
    assert rank(shop, question).files[0].path == "tests/test_ledger.py"
    # an opening alone is still a question, and a line of content is never dropped
    assert analyse_query(shop, opening).terms == analyse_query(shop, f"{opening}\n").terms
    said = analyse_query(shop, "compute_cart_total discounts\nHi,\nwhich tests cover it?")
    assert not said.asks_tests


def test_files_without_any_evidence_are_left_out(shop: Index) -> None:
    order = paths(rank(shop, "where are values rounded to cents"))
    assert order[0] == "shop/money.py"
    assert "shop/users.py" not in order and "docs/cart.md" not in order


# --------------------------------------------------------------------------- the import graph


def test_an_imported_file_without_a_keyword_match_is_pulled_in_by_the_graph(shop: Index) -> None:
    ranking = rank(shop, "how is the total price with discounts computed?")
    money = ranked(ranking, "shop/money.py")
    assert ReasonKind.WORD not in kinds(money)
    assert any(
        r.kind is ReasonKind.IMPORTED_BY and r.detail == "shop/ledger.py" for r in money.reasons
    )
    assert paths(ranking).index("shop/money.py") > paths(ranking).index("shop/ledger.py")


def test_a_file_importing_the_top_hit_says_so(shop: Index) -> None:
    view = ranked(
        rank(shop, "how is the total price with discounts computed?"), "shop/cart_view.py"
    )
    assert any(r.kind is ReasonKind.IMPORTS and r.detail == "shop/ledger.py" for r in view.reasons)


def test_a_file_imported_by_several_top_hits_names_the_first(
    tmp_path: Path,
) -> None:
    files: dict[str, str | bytes] = {
        "bill/alpha.py": "from bill.money import cents\n\n\ndef invoice_total(x):\n    return x\n",
        "bill/beta.py": "from bill.money import cents\n\n\ndef invoice_totals(x): ...\n",
        "bill/money.py": "def cents(value):\n    return round(value, 2)\n",
    }
    # a hub: many importers that the question does not rank (their reasons are never built)
    for n in range(30):
        files[f"other/user_{n:02}.py"] = f"from bill.money import cents\n\n\ndef page_{n}(): ...\n"
    index, _ = index_repo(make_repo(tmp_path, files))
    ranking = rank(index, "invoice total", Session())
    money = ranked(ranking, "bill/money.py")
    imported_by = [r.detail for r in money.reasons if r.kind is ReasonKind.IMPORTED_BY]
    assert imported_by == ["bill/alpha.py"]  # one reason: the first top hit, by path
    # money is no top hit (no word of the question): importing it is no reason
    alpha = ranked(ranking, "bill/alpha.py")
    assert ReasonKind.IMPORTS not in kinds(alpha)


# --------------------------------------------------------------------------- reasons


def test_word_reasons_name_the_fields_they_matched(shop: Index) -> None:
    money = rank(shop, "where are values rounded to cents").files[0]
    word_fields = {r.detail: set(r.fields) for r in money.reasons if r.kind is ReasonKind.WORD}
    assert {"exported", "body"} <= word_fields["cents"]
    assert all(word_fields.values())


def test_word_reason_shares_add_up_to_one(shop: Index) -> None:
    money = rank(shop, "where are values rounded to cents").files[0]
    shares = [r.share for r in money.reasons if r.kind is ReasonKind.WORD]
    assert sum(shares) == pytest.approx(1.0, abs=0.01)
    assert all(0 < s <= 1 for s in shares)


def test_declaration_reason_names_the_matching_function(shop: Index) -> None:
    money = rank(shop, "where are values rounded to cents").files[0]
    declared = [r.detail for r in money.reasons if r.kind is ReasonKind.DECLARATION]
    assert declared == ["round_cents"]
    decl = shop.files[money.file_id].declarations[money.matched_declarations[0]]
    assert decl.name == "round_cents"


def test_declaration_reason_uses_the_qualified_name_of_a_method(shop: Index) -> None:
    store = rank(shop, "how does save_session work").files[0]
    assert store.path == "shop/session_store.py"
    declared = [r.detail for r in store.reasons if r.kind is ReasonKind.DECLARATION]
    assert declared[0] == "SessionStore.save_session"


# --------------------------------------------------------------------------- the user's choices


def test_focus_files_come_first_in_their_order_then_pins(shop: Index) -> None:
    session = Session(pinned=frozenset({"shop/users.py"}), focus=("shop/pages.py", "shop/money.py"))
    ranking = rank(shop, "compute cart total", session)
    assert paths(ranking)[:3] == ["shop/pages.py", "shop/money.py", "shop/users.py"]
    assert paths(ranking)[3] == "shop/ledger.py"


def test_a_file_focused_twice_is_ranked_once(shop: Index) -> None:
    # review: `pack --focus a --focus a` (or an agent's focus list) packed the file twice
    session = Session(focus=("shop/money.py", "shop/pages.py", "shop/money.py"))
    ranking = rank(shop, "compute cart total", session)
    assert paths(ranking)[:2] == ["shop/money.py", "shop/pages.py"]
    assert len(paths(ranking)) == len(set(paths(ranking)))


def test_focus_and_pin_are_flagged_and_given_as_reasons(shop: Index) -> None:
    session = Session(pinned=frozenset({"shop/users.py"}), focus=("shop/money.py",))
    ranking = rank(shop, "compute cart total", session)
    focus, pin = ranked(ranking, "shop/money.py"), ranked(ranking, "shop/users.py")
    assert focus.focused and not focus.pinned and ReasonKind.FOCUS in kinds(focus)
    assert pin.pinned and not pin.focused and ReasonKind.PIN in kinds(pin)


def test_pinned_files_are_returned_beyond_the_limit(shop: Index) -> None:
    session = Session(pinned=frozenset({"shop/users.py", "shop/pages.py"}))
    ranking = rank(shop, "compute cart total", session, limit=1)
    assert paths(ranking) == ["shop/pages.py", "shop/users.py", "shop/ledger.py"]


def test_pins_of_unknown_paths_are_ignored(shop: Index) -> None:
    session = Session(pinned=frozenset({"gone.py"}), focus=("also/gone.py",))
    assert paths(rank(shop, "compute cart total", session)) == paths(
        rank(shop, "compute cart total")
    )


def test_limit_caps_the_number_of_files(shop: Index) -> None:
    assert len(rank(shop, "result value", limit=2).files) == 2


# --------------------------------------------------------------------------- long and odd questions


def test_a_path_in_a_stack_trace_boosts_that_file(shop: Index) -> None:
    question = "something went wrong while computing the cart total with discounts"
    trace = '\nTraceback (most recent call last):\n  File "/home/u/proj/shop/money.py", line 2\n'
    plain, traced = rank(shop, question), rank(shop, question + trace)
    assert paths(traced).index("shop/money.py") < paths(plain).index("shop/money.py")
    money = ranked(traced, "shop/money.py")
    assert ReasonKind.PATH in kinds(money)
    assert money.score >= 0.5 * traced.files[0].score


@pytest.mark.parametrize(
    "mention",
    ['File "/home/u/proj/shop/money.py", line 3', "see shop/money.py", "in money.py", "shop.money"],
)
def test_paths_file_names_and_module_names_mention_a_file(shop: Index, mention: str) -> None:
    assert mentioned_files(shop, mention) == (shop.path_ids["shop/money.py"],)


@pytest.mark.parametrize("text", ["money", "the money module", "moneypy", "other/money.py"])
def test_words_that_only_resemble_a_path_mention_nothing(shop: Index, text: str) -> None:
    assert mentioned_files(shop, text) == ()


def test_a_2000_word_bug_report_still_ranks_the_named_code_first(shop: Index) -> None:
    generic = (
        "when i open the app and try it the result value is wrong and nothing appears it "
        "happened yesterday again after a reload steps to reproduce expected result actual "
        "result please help thanks i think something is wrong somewhere maybe the server or "
        "network or browser cache version latest same problem every time"
    )
    words_of_report = generic.split()
    rng = random.Random(2024)
    report = [rng.choice(words_of_report) for _ in range(2000)]
    report.insert(1200, "SessionStore.load_session")
    ranking = rank(shop, " ".join(report))
    assert ranking.files[0].path == "shop/session_store.py"
    assert len(ranking.terms) <= 40


def test_prose_repeated_fifty_times_does_not_outweigh_the_named_identifier(shop: Index) -> None:
    filler = "the page does not render when the request shows a value " * 50
    report = f"{filler}\nTraceback: SessionStore.load_session failed\n{filler}"
    ranking = rank(shop, report)
    assert ranking.files[0].path == "shop/session_store.py"


def test_equal_scores_are_ordered_by_path(tmp_path: Path) -> None:
    same = "def parse_header(line):\n    return line.split(':')\n"
    index, _ = index_repo(
        make_repo(tmp_path, {"zeta/dup.py": same, "alpha/dup.py": same, "mid/dup.py": same})
    )
    ranking = rank(index, "parse header")
    # the re-rank hands tied values out an ulp apart, so the list keeps its order when cut
    assert [f.score for f in ranking.files] == pytest.approx([ranking.files[0].score] * 3)
    assert paths(ranking) == ["alpha/dup.py", "mid/dup.py", "zeta/dup.py"]


def test_ranking_the_same_question_twice_gives_equal_rankings(shop: Index) -> None:
    assert rank(shop, "compute the cart total") == rank(shop, "compute the cart total")


@pytest.mark.parametrize("question", ["?!?! ... ;;; ---", "🙂🔥💥", "", "   \n\t", "a b c"])
def test_a_question_without_words_gives_an_empty_ranking(shop: Index, question: str) -> None:
    ranking = rank(shop, question)
    assert ranking.files == ()
    assert ranking.terms == ()


def test_words_the_repository_never_uses_give_an_empty_ranking(shop: Index) -> None:
    assert rank(shop, "kubernetes helm chart").files == ()


def test_a_partly_typed_word_is_completed_while_typing(shop: Index) -> None:
    assert rank(shop, "sess", complete=False).files[0].path == "shop/session_store.py"
    typing = rank(shop, "where is the sessi", complete=False)
    assert typing.files[0].path == "shop/session_store.py"
    assert rank(shop, "where is the sessi").files == ()


def test_the_last_word_is_not_completed_after_a_space(shop: Index) -> None:
    assert analyse_query(shop, "sessi ", complete=False).terms == ()


def test_a_debugging_question_is_detected(shop: Index) -> None:
    assert rank(shop, "fix the crash in round_cents").intent is Intent.DEBUG


def test_ranking_keeps_the_question_and_its_terms(shop: Index) -> None:
    ranking = rank(shop, "Where are values rounded?")
    assert ranking.query == "Where are values rounded?"
    assert set(ranking.terms) == set(words("values rounded"))


def test_a_partly_typed_word_expands_to_the_words_most_files_use_first(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        f"app/m{n}.py": "".join(f"{word} = 1\n" for word in used)
        for n, used in enumerate(
            [("talc", "tallow", "talon"), ("tallow", "talon"), ("talon",), ("tango",)]
        )
    }
    index = index_repo(make_repo(tmp_path / "repo", files))[0]
    expanded = [t.word for t in analyse_query(index, "tal", complete=False).terms]
    assert expanded[:3] == ["talon", "tallow", "talc"]  # in 3, 2 and 1 files
    assert "tango" not in expanded
