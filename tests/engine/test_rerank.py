"""The learned re-rank of the best files (engine.rerank, `RankWeights.rerank`): it re-sorts the
first stage's best files by a linear model over their features, keeps the score values in
order, is exactly the first stage when its weights are empty, and never loses a named file."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from conftest import make_repo
from index_support import index_repo

from engine.model import Index, Ranking
from engine.query import analyse_query
from engine.rank import DEFAULT_WEIGHTS, candidate_features, rank
from engine.rerank import FEATURES

FIRST_STAGE = dataclasses.replace(DEFAULT_WEIGHTS, rerank=())
REPO = {
    # says "invoice" and "rounding" most, in its docstring (the docs field) and body
    "notes/ledger.py": (
        "def ledger():\n"
        '    """invoice rounding invoice rounding invoice rounding invoice rounding."""\n'
        "    return 'invoice rounding invoice rounding'\n"
    ),
    # declares the invoice's rounding: the name field holds the question's words
    "billing/invoice_rounding.py": "def round_invoice(total):\n    return round(total, 2)\n",
    "billing/tax.py": "def tax(total):\n    return total * 0.2\n",
    "README.md": "# Shop\n\nInvoices are rounded to cents.\n",
}


def paths(ranking: Ranking) -> list[str]:
    return [f.path for f in ranking.files]


def shop(tmp_path: Path) -> Index:
    return index_repo(make_repo(tmp_path / "shop", REPO))[0]


def only(feature: str, weight: float) -> tuple[float, ...]:
    return tuple(weight if name == feature else 0.0 for name in FEATURES)


def test_the_shipped_model_has_one_weight_per_feature_and_ignores_mentions() -> None:
    assert len(DEFAULT_WEIGHTS.rerank) == len(FEATURES)
    assert any(DEFAULT_WEIGHTS.rerank)
    assert DEFAULT_WEIGHTS.rerank[FEATURES.index("mentioned")] == 0.0


def test_the_model_re_sorts_the_best_files_and_keeps_the_scores_in_order(
    tmp_path: Path,
) -> None:
    index = shop(tmp_path)
    question = "invoice rounding"
    first = rank(index, question, weights=FIRST_STAGE)
    assert paths(first)[0] == "billing/invoice_rounding.py"
    by_doc = dataclasses.replace(DEFAULT_WEIGHTS, rerank=only("share_docs", 5.0))
    moved = rank(index, question, weights=by_doc)
    assert paths(moved)[0] == "notes/ledger.py"
    assert sorted(paths(moved)) == sorted(paths(first))  # the same files, re-sorted
    scores = [f.score for f in moved.files]
    assert scores == sorted(scores, reverse=True)


def test_empty_or_zero_weights_are_the_first_stage_exactly(tmp_path: Path) -> None:
    index = shop(tmp_path)
    for question in ("invoice rounding", "tax total", "where are invoices rounded"):
        first = rank(index, question, weights=FIRST_STAGE)
        zero = dataclasses.replace(DEFAULT_WEIGHTS, rerank=(0.0,) * len(FEATURES))
        again = rank(index, question, weights=zero)
        assert paths(again) == paths(first)
        assert [f.score for f in again.files] == [f.score for f in first.files]


def test_features_are_finite_on_odd_questions_and_files(tmp_path: Path) -> None:
    repo = dict(
        REPO, **{"empty.py": "", "one.py": "x = 1\n", "ünïcode/naïve.py": "def café(): pass\n"}
    )
    index = index_repo(make_repo(tmp_path / "odd", repo))[0]
    for question in ("invoice", "x", "?!", "café naïve", "invoice " * 200, ""):
        top, scores, features = candidate_features(index, question)
        assert features.shape == (len(top), len(FEATURES))
        assert np.isfinite(features).all() and np.isfinite(scores).all()
        rank(index, question)  # and the shipped model ranks them without an error


def test_a_file_the_question_names_stays_first(tmp_path: Path) -> None:
    index = shop(tmp_path)
    question = "why does billing/tax.py round the invoice total"
    assert analyse_query(index, question, FIRST_STAGE.query_weights()).mentioned
    assert paths(rank(index, question))[0] == "billing/tax.py"


def test_a_named_file_keeps_its_place_whatever_the_model_says(tmp_path: Path) -> None:
    """The review's case: a named file whose words the question does not use (docs/conf.py in
    "docs/conf.py blueprint registration") was re-sorted down by the model."""
    index = shop(tmp_path)
    question = "invoice rounding as billing/tax.py sees it"
    named = "billing/tax.py"
    assert analyse_query(index, question, FIRST_STAGE.query_weights()).mentioned
    place = paths(rank(index, question, weights=FIRST_STAGE)).index(named)
    by_coverage = dataclasses.replace(DEFAULT_WEIGHTS, rerank=only("coverage", 50.0))
    reranked = paths(rank(index, question, weights=by_coverage))
    assert reranked.index(named) == place


def test_kind_features_tell_aside_files_roles_and_languages_apart(tmp_path: Path) -> None:
    """Session 12's features: the stored role one-hot, files beside the product that the roles
    miss (tutorial sources, type tests, translated docs), depth, language."""
    repo = {
        "src/invoice.py": "def invoice_total():\n    return 1\n",
        "docs_src/invoice_tutorial.py": "def invoice_total():\n    return 2\n",
        "types/invoice.test-d.ts": "export const invoiceTotal = 1\n",
        "docs/zh/invoice.md": "# invoice total\n",
        "docs/js/invoice.md": "# invoice total\n",
        "tests/test_invoice.py": "def test_invoice_total():\n    pass\n",
        "Makefile": "invoice_total:\n\techo invoice total\n",
    }
    index = index_repo(make_repo(tmp_path / "kinds", repo))[0]
    top, _, x = candidate_features(index, "invoice total")
    by_path = {index.files[int(i)].path: dict(zip(FEATURES, row, strict=True))
               for i, row in zip(top, x, strict=True)}  # fmt: skip
    assert set(by_path) == set(repo)
    aside = {p for p, f in by_path.items() if f["aside_path"]}
    assert aside == {
        "docs_src/invoice_tutorial.py",
        "types/invoice.test-d.ts",
        "docs/zh/invoice.md",
    }
    assert by_path["tests/test_invoice.py"]["role_test"] == 1.0
    assert by_path["docs/js/invoice.md"]["role_doc"] == 1.0
    assert by_path["src/invoice.py"]["role_test"] == by_path["src/invoice.py"]["role_doc"] == 0.0
    assert by_path["src/invoice.py"]["code_language"] == 1.0
    assert (
        by_path["Makefile"]["code_language"]
        == by_path["docs/zh/invoice.md"]["code_language"]
        == 0.0
    )
    assert by_path["Makefile"]["log_depth"] == 0.0 < by_path["docs/zh/invoice.md"]["log_depth"]
    best = index.files[int(top[0])].path
    for p, f in by_path.items():
        assert f["same_language_as_best"] == (p.rsplit(".", 1)[-1] == best.rsplit(".", 1)[-1])


def test_a_kind_the_question_asks_for_is_no_mark_against_it(tmp_path: Path) -> None:
    """The benchmarks' gold files are never tests, so the model learns to push tests down; a
    question about tests must not get that push (nor docs, asked for, their role's)."""
    repo = {
        "src/invoice.py": "def invoice_total():\n    return 1\n",
        "tests/test_invoice.py": "def test_invoice_total():\n    assert invoice_total()\n",
        "docs/invoice.md": "# invoice total\n",
    }
    index = index_repo(make_repo(tmp_path / "asked", repo))[0]

    def column(question: str, feature: str) -> dict[str, float]:
        top, _, x = candidate_features(index, question)
        at = FEATURES.index(feature)
        return {index.files[int(i)].path: float(row[at]) for i, row in zip(top, x, strict=True)}

    assert column("invoice total", "role_test")["tests/test_invoice.py"] == 1.0
    assert column("which tests cover invoice total", "role_test")["tests/test_invoice.py"] == 0.0
    assert column("invoice total", "role_doc")["docs/invoice.md"] == 1.0
    assert column("update the docs of invoice total", "role_doc")["docs/invoice.md"] == 0.0
    ranking = rank(index, "which tests cover invoice_total")
    assert paths(ranking)[0] == "tests/test_invoice.py"


def test_code_in_a_language_the_parser_lacks_is_still_code(tmp_path: Path) -> None:
    """The review of session 23: Kotlin and Vue files are stored as "text", and the model's
    language column marked them as prose, so a Ruby helper that shares two words rose above the
    Kotlin class that answers. They are code; shell, build files and prose are not."""
    shop_files = {
        f"app/src/main/kotlin/com/shop/{name}.kt": (
            f"package com.shop\n\nclass {name} {{\n    fun {method}(order: Order): Money {{\n"
            f"        return order.{method}()\n    }}\n}}\n"
        )
        for name, method in [
            ("DiscountRules", "applyDiscount"),
            ("OrderRepository", "saveOrder"),
            ("PaymentGateway", "charge"),
            ("ShippingCost", "shippingFor"),
        ]
    }
    repo = {
        **shop_files,
        "app/src/main/kotlin/com/shop/CartService.kt": (
            "package com.shop\n\nclass CartService(private val discounts: DiscountRules) {\n"
            "    fun cartTotal(cart: Cart): Money {\n"
            "        val subtotal = cart.items.sumOf { it.price * it.quantity }\n"
            "        return discounts.applyDiscount(subtotal, cart.coupon)\n    }\n}\n"
        ),
        "web/CartTotal.vue": "<template><p>{{ cartTotal }}</p></template>\n",
        "scripts/release.py": "def release(version):\n    '''Tag a release.'''\n",
        "tools/coupon_import.rb": (
            "# imports coupon codes for the cart\ndef import_coupons(path)\n"
            "  File.readlines(path)\nend\n"
        ),
        "tools/cart.sh": "#!/bin/sh\necho cart total coupon\n",
        "app/cart.gradle.kts": '// cart total coupon\nplugins { kotlin("jvm") }\n',
    }
    index = index_repo(make_repo(tmp_path / "kotlin", repo))[0]
    question = "cart total ignores the coupon discount"
    top, _, x = candidate_features(index, question)
    code = {index.files[int(i)].path: row[FEATURES.index("code_language")]
            for i, row in zip(top, x, strict=True)}  # fmt: skip
    assert code["app/src/main/kotlin/com/shop/CartService.kt"] == 1.0
    assert code["web/CartTotal.vue"] == 1.0
    assert code["tools/coupon_import.rb"] == 1.0
    assert code["tools/cart.sh"] == code["app/cart.gradle.kts"] == 0.0
    assert paths(rank(index, question))[0] == "app/src/main/kotlin/com/shop/CartService.kt"


def test_files_the_first_stage_ties_come_out_in_the_models_order(tmp_path: Path) -> None:
    same = "def settle(ledger):\n    return ledger.settle_invoice()\n"
    repo = make_repo(tmp_path / "tie", {"a/b/c/settle.py": same, "z/settle.py": same})
    index = index_repo(repo)[0]
    question = "settle the invoice"
    first = rank(index, question, weights=FIRST_STAGE)
    assert paths(first) == ["a/b/c/settle.py", "z/settle.py"]  # a tie, broken by path
    assert first.files[0].score == first.files[1].score
    shallow = dataclasses.replace(DEFAULT_WEIGHTS, rerank=only("log_depth", -5.0))
    moved = rank(index, question, weights=shallow)
    assert paths(moved) == ["z/settle.py", "a/b/c/settle.py"]  # not put back by path
    assert moved.files[0].score > moved.files[1].score
