"""Gitignore matching: the pattern rules git documents, one behaviour per test."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import make_repo

from engine.ignore import IgnoreMatcher, compile_rule, parse_rules


def matcher(text: str, base: str = "") -> IgnoreMatcher:
    return IgnoreMatcher(parse_rules(text, base))


def test_comments_and_blank_lines_make_no_rules() -> None:
    assert parse_rules("# a comment\n\n   \n#*.py\n") == ()


def test_escaped_hash_and_bang_are_literal() -> None:
    m = matcher("\\#notes\n\\!important\n")
    assert m.is_ignored("#notes")
    assert m.is_ignored("!important")
    assert not m.is_ignored("notes")


def test_trailing_spaces_are_trimmed_unless_escaped() -> None:
    assert matcher("foo   \n").is_ignored("foo")
    escaped = matcher("bar\\ \n")
    assert escaped.is_ignored("bar ")
    assert not escaped.is_ignored("bar")


def test_negation_re_includes_a_file() -> None:
    m = matcher("*.log\n!keep.log\n")
    assert m.is_ignored("debug.log")
    assert m.is_ignored("sub/debug.log")
    assert not m.is_ignored("keep.log")
    assert not m.is_ignored("sub/keep.log")


def test_last_matching_rule_wins() -> None:
    m = matcher("!keep.log\n*.log\n")
    assert m.is_ignored("keep.log")


def test_leading_slash_anchors_to_the_folder_of_the_ignore_file() -> None:
    m = matcher("/todo.txt\n")
    assert m.is_ignored("todo.txt")
    assert not m.is_ignored("sub/todo.txt")


def test_middle_slash_anchors_the_pattern() -> None:
    m = matcher("doc/frotz\n")
    assert m.is_ignored("doc/frotz")
    assert not m.is_ignored("a/doc/frotz")


def test_pattern_without_slash_matches_at_any_depth() -> None:
    m = matcher("frotz\n")
    assert m.is_ignored("frotz")
    assert m.is_ignored("a/b/frotz")
    assert m.is_ignored("a/frotz/inside.py")


def test_trailing_slash_matches_folders_only() -> None:
    m = matcher("logs/\n")
    assert m.verdict("logs", is_dir=True)
    assert not m.is_ignored("logs", is_dir=False)
    assert m.is_ignored("logs/today.txt")
    assert m.is_ignored("a/logs/today.txt")


def test_star_and_question_mark_stop_at_slashes() -> None:
    m = matcher("foo/*\n")
    assert m.verdict("foo/a", is_dir=False)
    assert m.verdict("foo/a/b", is_dir=False) is None
    assert m.is_ignored("foo/a/b")  # because folder foo/a is ignored
    q = matcher("file?.txt\n")
    assert q.is_ignored("file1.txt")
    assert not q.is_ignored("file10.txt")
    assert not matcher("a?b\n").is_ignored("a/b")


def test_bracket_classes() -> None:
    m = matcher("[abc].txt\nnum[0-9].txt\nnot[!x].txt\ndigit[[:digit:]].md\n")
    assert m.is_ignored("a.txt")
    assert not m.is_ignored("d.txt")
    assert m.is_ignored("num7.txt")
    assert m.is_ignored("notz.txt")
    assert not m.is_ignored("notx.txt")
    assert m.is_ignored("digit4.md")
    assert not m.is_ignored("digitx.md")


def test_bracket_never_matches_a_slash() -> None:
    assert not matcher("a[/]b\n").is_ignored("a/b")
    assert not matcher("a[!x]b\n").is_ignored("a/b")


def test_leading_double_star_matches_in_every_folder() -> None:
    m = matcher("**/foo.py\n**/cache/data\n")
    assert m.is_ignored("foo.py")
    assert m.is_ignored("x/y/foo.py")
    assert m.is_ignored("cache/data")
    assert m.is_ignored("x/cache/data")


def test_trailing_double_star_matches_everything_inside() -> None:
    m = matcher("abc/**\n")
    assert m.is_ignored("abc/x")
    assert m.is_ignored("abc/x/y.py")
    assert not m.verdict("abc", is_dir=True)


def test_middle_double_star_matches_zero_or_more_folders() -> None:
    m = matcher("a/**/b\n")
    assert m.is_ignored("a/b")
    assert m.is_ignored("a/x/b")
    assert m.is_ignored("a/x/y/b")
    assert not m.is_ignored("xa/b")


def test_rules_of_a_nested_file_apply_under_its_folder_only() -> None:
    m = matcher("*.txt\n/top.md\n", base="sub")
    assert m.is_ignored("sub/a.txt")
    assert m.is_ignored("sub/deeper/a.txt")
    assert not m.is_ignored("a.txt")
    assert not m.is_ignored("subway/a.txt")
    assert m.is_ignored("sub/top.md")
    assert not m.is_ignored("sub/deeper/top.md")


def test_deeper_rules_win_over_shallower_ones() -> None:
    m = IgnoreMatcher(parse_rules("*.txt\n")).extended(parse_rules("!keep.txt\n", "sub"))
    assert m.is_ignored("keep.txt")
    assert not m.is_ignored("sub/keep.txt")


def test_a_file_under_an_ignored_folder_cannot_be_re_included() -> None:
    m = matcher("build/\n!build/keep.txt\n")
    assert m.verdict("build/keep.txt", is_dir=False) is False
    assert m.is_ignored("build/keep.txt")
    assert m.ignored_at("build/keep.txt") == "build"


def test_folder_contents_can_be_re_included_when_only_contents_are_ignored() -> None:
    m = matcher("build/*\n!build/keep.txt\n")
    assert not m.is_ignored("build/keep.txt")
    assert m.is_ignored("build/other.txt")


@pytest.mark.parametrize("line", ["", "#x", "!", "/", "   "])
def test_lines_without_a_pattern_compile_to_nothing(line: str) -> None:
    assert compile_rule(line) is None


def test_unclosed_bracket_is_literal() -> None:
    assert matcher("a[b\n").is_ignored("a[b")


def test_regex_special_characters_are_literal() -> None:
    m = matcher("a+b(c).txt\n")
    assert m.is_ignored("a+b(c).txt")
    assert not m.is_ignored("aab(c).txt")


def test_empty_matcher_ignores_nothing() -> None:
    assert not IgnoreMatcher()
    assert not IgnoreMatcher().is_ignored("anything/at/all.py")


# --------------------------------------------------------------------------- against git itself

GIT_CASES: list[tuple[str, dict[str, str]]] = [
    (
        "*.o\n!/lib/keep.o\n[Bb]uild/\ndoc/**/*.pdf.txt\n**/logs\nfoo\\ \n\\#x\n*.[!c]h\n",
        {
            "a.o": "", "lib/keep.o": "", "lib/x/keep.o": "", "Build/out.c": "", "build2/k.c": "",
            "doc/a.pdf.txt": "", "doc/x/y/a.pdf.txt": "", "src/logs/1.c": "", "logs": "",
            "foo ": "", "foo": "", "#x": "", "y.hh": "", "y.ch": "", "z.h": "",
        },
    ),
    (
        "/*\n!/src/\n/src/*\n!/src/keep/\nsrc/keep/**/*.tmp\n",
        {
            "top.c": "", "src/drop.c": "", "src/keep/k.c": "", "src/keep/a/b.tmp": "",
            "src/keep/c.tmp": "",
        },
    ),
    (
        "data/\n!data/inner.txt\n*.md\n!README.md\nsub/*.py\n?.c\n",
        {
            "data/inner.txt": "", "x/data/y": "", "notes.md": "", "README.md": "",
            "d/README.md": "", "sub/a.py": "", "sub/deep/a.py": "", "q.c": "", "qq.c": "",
        },
    ),
]  # fmt: skip


@pytest.mark.parametrize(("gitignore", "files"), GIT_CASES)
def test_matcher_agrees_with_git_ls_files(
    tmp_path: Path, gitignore: str, files: dict[str, str]
) -> None:
    root = make_repo(tmp_path / "r", {".gitignore": gitignore, **files})
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    listed = subprocess.run(
        ["git", "ls-files", "-o", "--exclude-standard", "-z"],
        cwd=root, check=True, capture_output=True,
    ).stdout.decode().split("\0")  # fmt: skip
    by_git = sorted(p for p in listed if p)
    m = matcher(gitignore)
    by_matcher = sorted(p for p in [".gitignore", *files] if not m.is_ignored(p))
    assert by_matcher == by_git
