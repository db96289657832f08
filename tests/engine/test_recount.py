"""Counting an index again in another encoding, file by file, without parsing."""

from __future__ import annotations

from pathlib import Path

from conftest import make_repo
from index_support import index_repo, shared_tokenizer

from engine import Progress, build_index
from engine.recount import recount
from engine.tokens import Tokenizer

FILES = {
    "app/session.py": (
        "class Session:\n"
        '    """A user session: déjà vu 👋."""\n'
        "\n"
        "    def refresh(self, token: str) -> str:\n"
        "        return token.upper() + '🔥' * 3\n"
    ),
    "app/util.py": "def slug(text):\n    return '-'.join(text.split())\n",
    "README.md": "# Demo\n\nSessions refresh 日本語 tokens.\n",
}


def cl100k() -> Tokenizer:
    return shared_tokenizer("cl100k_base")


def test_recounted_files_match_a_fresh_index_in_the_new_encoding(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    old, _ = index_repo(repo, encoding="o200k_base")
    fresh, _ = index_repo(repo, encoding="cl100k_base")
    texts = {path: (repo / path).read_text(encoding="utf-8") for path in FILES}
    new, counted = recount(old, cl100k(), texts)
    assert counted == 3 and new.encoding == "cl100k_base"
    assert list(new.files) == list(fresh.files)
    assert new.line_tokens.tolist() == fresh.line_tokens.tolist()
    assert new.line_tokens_ptr.tolist() == fresh.line_tokens_ptr.tolist()
    assert old.encoding == "o200k_base"  # the old index is left alone


def test_files_not_given_keep_their_counts_and_changed_files_are_skipped(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    old, _ = index_repo(repo, encoding="o200k_base")
    fresh, _ = index_repo(repo, encoding="cl100k_base")
    texts = {"app/session.py": FILES["app/session.py"], "app/util.py": "one line only\n"}
    new, counted = recount(old, cl100k(), texts)
    assert counted == 1
    by_path = {f.path: f for f in new.files}
    assert by_path["app/session.py"] == next(f for f in fresh.files if f.path == "app/session.py")
    assert by_path["app/util.py"] == next(f for f in old.files if f.path == "app/util.py")
    util = new.path_ids["app/util.py"]
    assert new.tokens_of_lines(util, 1, 2) == old.tokens_of_lines(util, 1, 2)


def test_each_stage_of_an_index_is_reported_as_it_starts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    seen: list[Progress] = []
    build_index(
        repo,
        workers=1,
        cache_dir=tmp_path / "cache",
        on_progress=seen.append,
        tokenizer=shared_tokenizer(),
    )
    starts = [p.stage for p in seen if p.done == 0 and p.total == 0]
    assert starts[:3] == ["scan", "load cache", "parse"]
    assert {"git", "index", "save cache"} <= set(starts)
