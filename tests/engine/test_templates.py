"""A pasted question keeps the user's words, not the repository's issue or pull-request
template (issue 11, gin-3d44ff82a1): the template's lines are blanked before ranking."""

from __future__ import annotations

import dataclasses
import sys

import pytest
from conftest import make_repo
from index_support import index_repo

from engine.model import Index
from engine.rank import DEFAULT_WEIGHTS, rank
from engine.roles import Role
from engine.templates import template_lines, without_template_lines

TEMPLATE = (
    "- With pull requests:\n"
    "  - Open your pull request against `master`\n"
    "  - Your pull request should have no more than two commits\n"
    "  - [ ] It should pass all tests in the available continuous integration systems\n"
    "  - You should add or modify tests to cover your proposed code changes\n"
    "  - If the pull request contains a new feature, please document it in the README\n"
    "## Summary\n"
)
REPO: dict[str, str | bytes] = {
    ".github/PULL_REQUEST_TEMPLATE.md": TEMPLATE,
    "docs/pull_requests.md": "Open your pull request against `master`\n",  # not a template
    "debug.go": (
        "package gin\n\n"
        "func debugPrint(format string, values ...interface{}) {\n"
        '\tif !strings.HasSuffix(format, "\\n") {\n'
        '\t\tformat += "\\n" // every debug log line breaks\n'
        "\t}\n"
        '\tfmt.Fprintf(DefaultWriter, "[GIN-debug] "+format, values...)\n'
        "}\n"
    ),
    "ci.go": "package gin\n\n// tests run in continuous integration\nfunc ci() {}\n",
}
QUESTION = (
    "Make sure the debug log contains line breaks\n\n"
    "Many debug logs have no line breaks, so fix them here.\n\n"
    "- With pull requests:\n"
    " - Open your pull request against `master`\n"
    " - Your pull request should have no more than two commits\n"
    " - [x] It should pass all tests in the available continuous integration systems\n"
    " - You should add or modify tests to cover your proposed code changes\n"
    " - If the pull request contains a new feature, please document it in the README\n"
)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return index_repo(make_repo(tmp_path_factory.mktemp("tmpl") / "gin", REPO))[0]


def test_a_pasted_template_does_not_pull_its_file_up(
    repo: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert rank(repo, QUESTION).files[0].path == "debug.go"
    ranking = sys.modules["engine.rank"]  # the package exports the function under that name
    monkeypatch.setattr(ranking, "without_template_lines", lambda index, text: text)
    # the template's words (tests, feature, add) are also words that say what a question is
    # for, which weigh less (RankWeights.kind_weight), and its "README" no longer lifts the
    # docs (the kinds of file asked for are read from the first line): at full weight, with
    # docs ranked like code, it would come first
    docs_as_code = tuple(
        (role, 1.0 if role is Role.DOC else p) for role, p in DEFAULT_WEIGHTS.priors
    )
    full = dataclasses.replace(DEFAULT_WEIGHTS, kind_weight=1.0, priors=docs_as_code, rerank=())
    assert rank(repo, QUESTION, weights=full).files[0].path == ".github/PULL_REQUEST_TEMPLATE.md"


def test_only_the_template_lines_are_blanked(repo: Index) -> None:
    kept = without_template_lines(repo, QUESTION).split("\n")
    assert kept[:4] == QUESTION.split("\n")[:4]  # the user's own words, and "- With ..." (short)
    assert kept[4:9] == [""] * 5  # a ticked box is the template's unticked line
    assert len(kept) == len(QUESTION.split("\n"))


@pytest.mark.parametrize(
    "question",
    [
        "Open your pull request against `master`",  # one line: what the user typed
        "Open your pull request against master\nYour pull request should have no more than two"
        " commits",  # nothing of the user's would be left
        "Debug log line breaks\n\nOpen a pull request against the main branch",  # not the same
    ],
)
def test_a_question_of_the_users_own_is_kept(repo: Index, question: str) -> None:
    assert without_template_lines(repo, question) == question


def test_templates_are_the_files_the_hosting_services_read(repo: Index) -> None:
    lines = template_lines(repo)
    assert "open your pull request against master" in lines  # from .github/, not docs/
    assert "summary" not in lines  # a heading alone is not recognised
    assert template_lines(repo) is lines  # read once per index


def test_no_template_no_change(tmp_path_factory: pytest.TempPathFactory) -> None:
    root = make_repo(tmp_path_factory.mktemp("plain") / "r", {"a.py": "def a():\n    pass\n"})
    index = index_repo(root)[0]
    assert without_template_lines(index, QUESTION) is QUESTION
