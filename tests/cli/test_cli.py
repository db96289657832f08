"""The command line through its real entry point, `ctxtui.cli.main([...])`, and once as a process.

Exit codes: 0 success, 1 a failure of the work (bad path, unreadable input), 2 bad usage. Data
on stdout only; errors are one line on stderr, never a traceback. Tokenizer tables are loaded
once per test run (the loader is wrapped with a memo, nothing else is replaced).
"""

from __future__ import annotations

import gc
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import load_tokenizer_once, make_repo

from ctxtui import collector
from ctxtui.cli import FORMATS, main
from engine import Format

REPO_FILES: dict[str, str | bytes] = {
    "auth/session.py": (
        "from auth.tokens import sign_token\n"
        "\n"
        "\n"
        "def get_user_session(user_id):\n"
        '    """Open a login session for a user."""\n'
        "    return sign_token(user_id)\n"
    ),
    "auth/tokens.py": "def sign_token(user_id):\n    return f'signed:{user_id}'\n",
    "billing/invoice.py": "class Invoice:\n    def total(self):\n        return 42\n",
    "web/app.js": "export function renderCart(cart) {\n  return cart.items.length;\n}\n",
    "README.md": "# Shop\n\nSessions and invoices.\n",
    "logo.png": b"\x89PNG\r\n\x1a\n\0\0\0",
    "blob.dat": b"head\0tail" * 10,
}

pytestmark = pytest.mark.usefixtures("tokenizer_loaded_once")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root: Path = make_repo(tmp_path / "shop", REPO_FILES)
    return root


Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    """Call main(argv); return (exit code, stdout, stderr)."""

    def call(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return call


def one_line(err: str) -> str:
    """The single line of an error message, checked to be one line and no traceback."""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# --------------------------------------------------------------------------- rank


def test_rank_json_prints_only_a_list_of_paths_scores_and_reasons(run: Run, repo: Path) -> None:
    code, out, err = run("rank", "getUserSession", str(repo), "--json")
    assert (code, err) == (0, "")
    ranking = json.loads(out)
    assert isinstance(ranking, list)
    assert ranking[0]["path"] == "auth/session.py"
    for item in ranking:
        assert {"path", "score", "reasons"} <= set(item)
        assert isinstance(item["score"], float)
        assert all({"kind", "detail"} <= set(r) for r in item["reasons"])
    assert [i["score"] for i in ranking] == sorted((i["score"] for i in ranking), reverse=True)


def test_rank_json_reasons_carry_kinds_and_fields(run: Run, repo: Path) -> None:
    _, out, _ = run("rank", "get user session", str(repo), "--json")
    reasons = json.loads(out)[0]["reasons"]
    assert {"kind": "declaration", "detail": "get_user_session"}.items() <= reasons[0].items()
    words = [r for r in reasons if r["kind"] == "word"]
    assert words and all(r["fields"] for r in words)


def test_rank_json_says_how_recently_and_how_often_git_changed_a_file(
    run: Run, tmp_path: Path
) -> None:
    root = make_repo(tmp_path / "shop", REPO_FILES, git=True)  # one commit, made today
    _, out, _ = run("rank", "get user session", str(root), "--json")
    git = [r["detail"] for r in json.loads(out)[0]["reasons"] if r["kind"] == "git"]
    assert git == ["changed today, 1 commit"]  # not "1 commits"


def test_rank_limit_caps_the_list(run: Run, repo: Path) -> None:
    _, out, _ = run("rank", "session token user", str(repo), "--json", "--limit", "1")
    assert len(json.loads(out)) == 1


def test_rank_as_text_shows_each_file_with_its_reasons(run: Run, repo: Path) -> None:
    code, out, _ = run("rank", "get user session", str(repo))
    assert code == 0
    lines = out.splitlines()
    assert re.match(r"\s*1\.\s+1\.00\s+auth/session\.py$", lines[0])
    assert "declaration: get_user_session" in lines[1]


def test_rank_of_a_question_nothing_matches_says_so(run: Run, repo: Path) -> None:
    assert run("rank", "kubernetes", str(repo)) == (0, "no file matches the question\n", "")


def test_flags_between_the_question_and_the_path_are_read(run: Run, repo: Path) -> None:
    """Session 33: `rank QUESTION --json PATH` failed with "unrecognized arguments: PATH"
    (exit 2): argparse had filled both positionals at the question."""
    code, out, err = run("rank", "user session", "--json", "--limit", "1", str(repo))
    assert (code, err) == (0, "")
    assert [f["path"] for f in json.loads(out)] == ["auth/session.py"]
    code, out, err = run("pack", "user session", "-b", "2k", "--format", "json", str(repo))
    assert (code, err) == (0, "")
    assert json.loads(out)["budget"] == 2000
    code, out, err = run("rank", "--json", "--", "-x", str(repo))  # `--` still ends the flags
    assert (code, out, err) == (0, "[]\n", "")
    code, out, err = run("rank", "user session", "--json", str(repo), "extra")
    assert (code, out) == (2, "")
    assert one_line(err) == "ctxtui rank: unrecognized arguments: extra"


def test_rank_focus_puts_the_file_first(run: Run, repo: Path) -> None:
    _, out, _ = run("rank", "user session", str(repo), "--json", "--focus", "billing/invoice.py")
    first = json.loads(out)[0]
    assert (first["path"], first["focused"]) == ("billing/invoice.py", True)


@pytest.mark.parametrize("where", ["repository", "elsewhere"])
def test_focus_with_dots_is_a_repository_path_from_any_folder(
    run: Run, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Review, session 33: `--focus auth/../billing/invoice.py` worked only when run from the
    repository folder (there it names a file from the current folder); from elsewhere it was
    "no such file in the index"."""
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(repo if where == "repository" else tmp_path / "elsewhere")
    for name in ("auth/../billing/invoice.py", "./billing//invoice.py"):
        code, out, err = run("rank", "user session", str(repo), "--json", "--focus", name)
        assert (code, err) == (0, "")
        first = json.loads(out)[0]
        assert (first["path"], first["focused"]) == ("billing/invoice.py", True)
    code, out, err = run("pack", "session", str(repo), "--format", "json", "--focus", name)
    assert code == 0 and "billing/invoice.py" in [f["path"] for f in json.loads(out)["files"]]
    code, out, err = run("rank", "user session", str(repo), "--focus", "auth/../../nowhere.py")
    assert (code, out) == (2, "")
    assert one_line(err) == f"ctxtui: --focus auth/../../nowhere.py is outside {repo}"


def test_focus_on_a_folder_says_it_is_one(
    run: Run, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # session 33: "--focus auth/: no such file in the index" of a folder the index holds
    # files of (the MCP tools say "is a folder")
    for name, shown in (("auth/", "auth"), ("auth", "auth")):
        code, out, err = run("rank", "user session", str(repo), "--focus", name)
        assert (code, out) == (2, "")
        assert one_line(err) == f"ctxtui: --focus {shown} is a folder: give one of its files"
    monkeypatch.chdir(repo)
    code, out, err = run("pack", "user session", ".", "--focus", ".")
    assert (code, out) == (2, "")
    assert one_line(err) == "ctxtui: --focus . is a folder: give one of its files"


def test_rank_focus_on_a_file_outside_the_index_is_bad_usage(run: Run, repo: Path) -> None:
    code, out, err = run("rank", "user session", str(repo), "--focus", "nope.py")
    assert (code, out) == (2, "")
    assert "nope.py" in one_line(err)


@pytest.mark.parametrize(
    ("name", "flags", "said"),
    [
        (".env", [], ".env is not indexed (secret file): --include-secret .env indexes it"),
        ("billing/invoice.py", ["--exclude", "billing/"], "is not indexed (excluded)"),
    ],
)
def test_focus_on_a_file_the_index_left_out_says_why(
    run: Run, repo: Path, name: str, flags: list[str], said: str
) -> None:
    # review: both said "no such file in the index" of a file that is there (the MCP server
    # said why: "is not indexed (secret file)")
    (repo / ".env").write_text("TOKEN=1\n")
    for command in ("rank", "pack"):
        code, out, err = run(command, "user session", str(repo), "--focus", name, *flags)
        assert (code, out) == (2, "")
        assert f"ctxtui: --focus {name} " in err and said in err


def test_focus_on_a_symlink_loop_by_its_full_path_says_why_in_one_line(
    run: Run, repo: Path
) -> None:
    # session 32: Path.resolve raised RuntimeError("Symlink loop from ...") and a traceback
    (repo / "loop_a").symlink_to("loop_b")
    (repo / "loop_b").symlink_to("loop_a")
    for command in ("rank", "pack"):
        code, out, err = run(command, "user session", str(repo), "--focus", str(repo / "loop_a"))
        assert (code, out) == (2, "")
        assert err == "ctxtui: --focus loop_a is not indexed (symlink loop)\n"


def test_rank_exclude_leaves_matching_files_out(run: Run, repo: Path) -> None:
    _, out, _ = run(
        "rank", "user session token", str(repo), "--json", "--exclude", "auth/tokens.py"
    )
    assert "auth/tokens.py" not in [i["path"] for i in json.loads(out)]


def test_question_dash_reads_stdin(run: Run, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = "Users get logged out.\n\nIt fails in get_user_session after a restart.\n" * 20
    monkeypatch.setattr(sys, "stdin", io.StringIO(report))
    code, out, _ = run("rank", "-", str(repo), "--json")
    assert code == 0
    assert json.loads(out)[0]["path"] == "auth/session.py"


def test_empty_repository_ranks_an_empty_list(run: Run, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, out, _ = run("rank", "where is the session?", str(tmp_path / "empty"), "--json")
    assert (code, json.loads(out)) == (0, [])


@pytest.mark.parametrize("question", ["?!? ...", "🙂🔥"])
def test_punctuation_or_emoji_question_ranks_an_empty_list(
    run: Run, repo: Path, question: str
) -> None:
    code, out, _ = run("rank", question, str(repo), "--json")
    assert (code, json.loads(out)) == (0, [])


# --------------------------------------------------------------------------- exit codes


def test_missing_path_is_exit_1_with_one_line(run: Run, tmp_path: Path) -> None:
    code, out, err = run("rank", "session", str(tmp_path / "nowhere"), "--json")
    assert (code, out) == (1, "")
    assert one_line(err).startswith("ctxtui: ")
    assert "nowhere" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["rank", "session", "{long}"],
        ["index", "{long}"],
        ["config", "{long}"],
        ["mcp", "{long}"],
        ["bench", "{long}"],
        ["{long}"],  # the app
    ],
)
def test_a_path_too_long_for_the_system_is_exit_1_with_one_line(run: Run, argv: list[str]) -> None:
    # session 33: a question given where the path goes (an agent swapping the two) ended in
    # a traceback: OSError "File name too long" from Path.exists, before any check
    long = "why does the session expire " * 200
    code, out, err = run(*[a.replace("{long}", long) for a in argv])
    assert (code, out) == (1, "")
    assert one_line(err).endswith("(File name too long)")


@pytest.mark.parametrize(
    "argv",
    [
        ["rank", "session", "{loop}"],
        ["pack", "session", "{loop}"],
        ["index", "{loop}"],
        ["config", "{loop}"],
        ["mcp", "{loop}"],
        ["eval", "{cases}", "{loop}"],
        ["{loop}"],  # the app
    ],
)
def test_a_path_that_is_a_symlink_loop_is_exit_1_with_one_line(
    run: Run, tmp_path: Path, argv: list[str]
) -> None:
    # session 33: rank, pack and index ended in a traceback (RuntimeError "Symlink loop"
    # from Path.resolve while the settings were looked for)
    loop = tmp_path / "loop"
    loop.symlink_to("loop")
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "a", "query": "session", "gold": ["a.py"]}\n')
    code, out, err = run(*[a.format(loop=loop, cases=cases) for a in argv])
    assert (code, out) == (1, "")
    assert (
        one_line(err) == f"ctxtui: cannot open folder: {loop} (Too many levels of symbolic links)"
    )


def test_focus_on_a_name_too_long_for_the_system_is_bad_usage(run: Run, repo: Path) -> None:
    code, out, err = run("rank", "session", str(repo), "--focus", "x" * 5000)
    assert (code, out) == (2, "")
    assert one_line(err).endswith(": no such file in the index")


def test_file_instead_of_folder_is_exit_1(run: Run, repo: Path) -> None:
    code, out, err = run("pack", "session", str(repo / "README.md"))
    assert (code, out) == (1, "")
    assert "not a folder" in one_line(err)


def test_index_of_a_missing_path_is_exit_1(run: Run, tmp_path: Path) -> None:
    code, _, err = run("index", str(tmp_path / "nowhere"))
    assert code == 1
    one_line(err)


def test_app_on_a_missing_folder_is_exit_1_without_starting(run: Run, tmp_path: Path) -> None:
    code, _, err = run(str(tmp_path / "nowhere"))
    assert code == 1
    assert "no such folder" in one_line(err)


EMPTY_NAME = "ctxtui: no such folder: '' (an empty name; . is the current folder)\n"


@pytest.mark.parametrize(
    "argv", [["rank", "session"], ["pack", "session"], ["index"], ["config"], ["config", "--json"]]
)
def test_an_empty_folder_name_is_refused_by_every_command(
    run: Run, repo: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # session 34: `config ""` (a script's unset $REPO) showed the current folder's settings,
    # and `mcp ""` and `ctxtui ""` served and opened it, while rank, pack and index said
    # "no such folder: " (no name at all): every command now refuses it, in one line
    monkeypatch.chdir(repo)
    assert run(*argv, "") == (1, "", EMPTY_NAME)


@pytest.mark.parametrize("argv", [["mcp", ""], [""]])
def test_an_empty_folder_name_neither_serves_nor_opens_the_app(repo: Path, argv: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ctxtui", *argv],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout, done.stderr) == (1, "", EMPTY_NAME)


@pytest.mark.parametrize("app", [False, True])
@pytest.mark.parametrize(
    ("where", "says"), [("nowhere", "no such folder"), ("a.txt", "not a folder")]
)
def test_bench_of_a_missing_folder_or_a_file_is_exit_1_with_one_line(
    run: Run, tmp_path: Path, app: bool, where: str, says: str
) -> None:
    (tmp_path / "a.txt").write_text("hi\n")
    code, out, err = run("bench", str(tmp_path / where), *(["--app"] if app else []))
    assert (code, out) == (1, "")
    assert says in one_line(err)


@pytest.mark.parametrize("app", [False, True])
def test_bench_of_an_empty_question_is_exit_2_before_any_probe(
    run: Run, repo: Path, app: bool
) -> None:
    # review: it ran the cold and warm index probes (minutes on a big tree), then said
    # "ctxtui rank failed with exit code 2"
    code, out, err = run("bench", str(repo), "--question", "  ", *(["--app"] if app else []))
    assert (code, out, err) == (2, "", "ctxtui: --question must not be empty\n")


def test_bench_times_a_question_that_starts_with_a_dash(repo: Path) -> None:
    # review: `rank -x PATH` was taken for an unknown flag: exit 2 after every probe (and a
    # question `--help` timed the help text)
    from ctxtui.cli.bench import RANK_RUNS, probe_rank_command

    seconds, peak = probe_rank_command(repo, "-x")
    assert len(seconds) == RANK_RUNS and peak > 0


@pytest.mark.parametrize(
    "flags", [["--repeat", "0"], ["--repeat", "-1"], ["--app", "--interval", "-5"]]
)
def test_bench_with_a_count_or_interval_below_its_range_is_exit_2(
    run: Run, repo: Path, flags: list[str]
) -> None:
    code, out, err = run("bench", str(repo), *flags)
    assert (code, out) == (2, "")
    assert one_line(err).startswith("ctxtui")


@pytest.mark.parametrize(
    "argv",
    [
        ("rank", "session", "--bogus"),
        ("pack", "session", "-b", "0"),
        ("pack", "session", "-b", "-100"),
        ("pack", "session", "-b", "lots"),
        ("pack", "session", "-b", "99999999999999999999999"),
        ("pack", "session", "-b", "9" * 400),
        ("pack", "session", "-b", "2.5m"),
        ("eval", "cases.jsonl", "-b", "2000001"),
        ("pack", "session", "--format", "yaml"),
        ("rank", "session", "--limit", "0"),
        ("rank", "session", "--exclude", ""),
        ("pack", "session", "--exclude", "  "),
        ("pack", "session", "--include-secret", ""),
        ("index", "--encoding", "p50k_base"),
        ("rank",),
        ("frobnicate-not-a-command-or-folder", "extra"),
    ],
    ids=lambda a: " ".join(a),
)
def test_bad_usage_is_exit_2_with_one_line(
    run: Run, repo: Path, argv: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    code, out, err = run(*argv)
    assert (code, out) == (2, "")
    one_line(err)


def test_an_empty_glob_flag_is_bad_usage_not_a_pattern_matching_nothing(
    run: Run, repo: Path
) -> None:
    code, out, err = run("rank", "session", str(repo), "--exclude", "")
    assert (code, out) == (2, "")
    assert one_line(err) == "ctxtui rank: argument --exclude: an empty pattern"


@pytest.mark.parametrize("command", ["rank", "pack"])
def test_a_question_taken_for_a_flag_says_how_to_write_it(
    run: Run, repo: Path, command: str
) -> None:
    code, out, err = run(command, "-login", str(repo))
    assert (code, out) == (2, "")
    assert one_line(err).endswith(
        f"unrecognized arguments: -login (a question that starts with - goes after --:"
        f" {command} -- QUESTION)"
    )
    code, _, err = run(command, "session", str(repo), "--bogus")
    assert "goes after --" not in one_line(err)  # a mistyped flag is told as argparse tells it
    code, out, _ = run(command, "--", "-login", str(repo))
    assert code == 0 and out


@pytest.mark.parametrize("question", ["", "   \n\t"])
def test_empty_question_is_exit_2(run: Run, repo: Path, question: str) -> None:
    code, out, err = run("rank", question, str(repo))
    assert (code, out) == (2, "")
    assert "empty" in one_line(err)


def test_empty_question_on_stdin_is_exit_2(
    run: Run, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n\n"))
    code, _, err = run("pack", "-", str(repo))
    assert code == 2
    one_line(err)


class EndlessStdin(io.TextIOBase):
    """stdin that never ends (`- < /dev/zero`, `yes |`): reads of a size get NULs; a read to
    the end fails at once, as the real one would run out of memory after a long while."""

    def __init__(self) -> None:
        self.given = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> str:
        if size is None or size < 0:
            raise AssertionError("read to the end of a stream that has none")
        self.given += size
        return "\0" * size


@pytest.mark.parametrize("command", ["rank", "pack"])
def test_an_endless_question_on_stdin_is_one_line_and_exit_2(
    run: Run, repo: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    # session 33: `ctxtui rank - < /dev/zero` read stdin until memory ran out
    from ctxtui.cli.common import MAX_QUESTION_CHARS

    stdin = EndlessStdin()
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out, err = run(command, "-", str(repo))
    assert (code, out) == (2, "")
    assert "over 8,388,608 characters" in one_line(err)
    assert stdin.given == MAX_QUESTION_CHARS + 1


def test_a_question_of_the_largest_size_is_read_whole(
    run: Run, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxtui.cli import common

    monkeypatch.setattr(common, "MAX_QUESTION_CHARS", 64)
    monkeypatch.setattr(sys, "stdin", io.StringIO("get_user_session " * 3 + "x" * 13))
    code, out, _ = run("rank", "-", str(repo), "--json")
    assert code == 0
    assert json.loads(out)[0]["path"] == "auth/session.py"
    monkeypatch.setattr(sys, "stdin", io.StringIO("get_user_session " * 3 + "x" * 14))
    assert run("rank", "-", str(repo), "--json")[0] == 2


def test_the_format_choices_are_the_engines_formats() -> None:
    assert tuple(f.value for f in Format) == FORMATS  # named apart: see ctxtui.cli.FORMATS


def test_a_command_resumes_the_collections_the_entry_point_paused(run: Run, repo: Path) -> None:
    collector.hold_until_started()  # as main_entry does, first thing
    try:
        code, _, _ = run("config", str(repo))
        assert code == 0 and gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize(("given", "kept"), [(None, "1"), ("4", "4")])
def test_the_entry_point_gives_numpy_one_blas_thread_unless_told(
    monkeypatch: pytest.MonkeyPatch, given: str | None, kept: str
) -> None:
    import ctxtui.cli as cli

    if given is None:
        monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", given)
    seen: list[str | None] = []
    monkeypatch.setattr(cli, "main", lambda: seen.append(os.environ.get("OPENBLAS_NUM_THREADS")))
    monkeypatch.setattr(cli.sys, "argv", ["ctxtui", "config"])
    with pytest.raises(SystemExit):
        cli.main_entry()
    assert seen == [kept]


def test_help_is_exit_0(run: Run) -> None:
    code, out, _ = run("pack", "--help")
    assert code == 0
    assert "--budget" in out


def test_help_says_first_that_a_path_opens_the_app(run: Run) -> None:
    code, out, _ = run("--help")
    assert code == 0
    first = [line for line in out.splitlines() if line.strip()][1]
    assert first.split() == ["ctxtui", "[PATH]", "open", "the", "app", *first.split()[5:]]
    assert out.index("open the app") < out.index("index")


# --------------------------------------------------------------------------- pack


def test_pack_json_prints_the_documented_schema(run: Run, repo: Path) -> None:
    code, out, err = run("pack", "get user session", str(repo), "-b", "2000", "--format", "json")
    assert (code, err) == (0, "")
    document: dict[str, Any] = json.loads(out)
    assert list(document) == ["query", "root", "budget", "encoding", "total_tokens", "files"]
    assert (document["query"], document["budget"], document["encoding"]) == (
        "get user session", 2000, "o200k_base",
    )  # fmt: skip
    assert document["total_tokens"] <= 2000
    assert document["files"][0]["path"] == "auth/session.py"
    for file in document["files"]:
        assert {"path", "level", "tokens", "score", "reasons", "content"} <= set(file)
        assert file["level"] in ("full", "focused", "outline")
        assert isinstance(file["content"], str) and isinstance(file["tokens"], int)
    assert "def get_user_session(user_id):" in document["files"][0]["content"]


@pytest.mark.parametrize(("written", "budget"), [("2k", 2000), ("2,000", 2000), ("1.5k", 1500)])
def test_a_budget_is_written_as_in_the_app(run: Run, repo: Path, written: str, budget: int) -> None:
    code, out, err = run("pack", "get user session", str(repo), "-b", written, "--format", "json")
    assert (code, err) == (0, "")
    assert json.loads(out)["budget"] == budget


def test_pack_total_is_the_count_of_what_it_prints(run: Run, repo: Path) -> None:
    _, out, _ = run("pack", "get user session", str(repo), "--format", "json")
    assert json.loads(out)["total_tokens"] == load_tokenizer_once().count(out)


def test_pack_encoding_option_is_used_and_printed(run: Run, repo: Path) -> None:
    _, out, _ = run("pack", "session", str(repo), "--format", "json", "--encoding", "cl100k_base")
    document = json.loads(out)
    assert document["encoding"] == "cl100k_base"
    assert document["total_tokens"] == load_tokenizer_once("cl100k_base").count(out)


def test_pack_markdown_is_the_default_format(run: Run, repo: Path) -> None:
    code, out, _ = run("pack", "get user session", str(repo))
    assert code == 0
    assert "## auth/session.py" in out
    assert "```python" in out


def test_pack_xml_has_one_element_per_file(run: Run, repo: Path) -> None:
    _, out, _ = run("pack", "get user session", str(repo), "--format", "xml")
    assert out.lstrip().startswith("<context")
    assert '<file path="auth/session.py"' in out


def test_pack_line_numbers_number_the_source_lines(run: Run, repo: Path) -> None:
    _, out, _ = run("pack", "get user session", str(repo), "-n", "--format", "json")
    content = json.loads(out)["files"][0]["content"]
    assert re.search(r"^\s*4\s*\S?\s*def get_user_session", content, re.MULTILINE)


def test_pack_output_file_gets_the_pack_and_stdout_stays_empty(
    run: Run, repo: Path, tmp_path: Path
) -> None:
    target = tmp_path / "pack.md"
    code, out, err = run("pack", "get user session", str(repo), "-o", str(target))
    assert (code, out) == (0, "")
    assert str(target) in one_line(err)
    assert "## auth/session.py" in target.read_text(encoding="utf-8")


def test_pack_output_of_one_file_says_one_file(run: Run, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "one", {"cart.py": "def cart_total(items):\n    return 0\n"})
    target = tmp_path / "pack.md"
    code, _out, err = run("pack", "cart", str(repo), "-o", str(target))
    assert code == 0 and ", 1 file to " in one_line(err)  # review: "1 files"


def test_pack_output_to_a_name_that_is_not_utf8_is_said_with_replacement_marks(
    run: Run, repo: Path, tmp_path: Path
) -> None:
    target = os.fsdecode(os.fsencode(tmp_path) + b"/pack-\xff.md")  # as argv gives it
    code, _out, err = run("pack", "session", str(repo), "-o", target)
    assert code == 0 and os.path.exists(os.fsencode(target))
    assert "pack-\ufffd.md" in one_line(err) and "\udcff" not in err


def test_pack_output_to_a_missing_folder_is_exit_1(run: Run, repo: Path, tmp_path: Path) -> None:
    code, _, err = run("pack", "session", str(repo), "-o", str(tmp_path / "no" / "such" / "p.md"))
    assert code == 1
    assert "cannot write" in one_line(err)


def test_pack_output_to_an_empty_name_is_bad_usage(run: Run, repo: Path) -> None:
    code, out, err = run("pack", "session", str(repo), "-o", "")
    assert code == 2 and out == ""  # cli review, session 31: it printed the pack to stdout
    assert "-o needs a file name" in one_line(err)


def test_pack_output_dash_is_stdout_not_a_file_named_dash(
    run: Run, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # session 32: `-o -` wrote a file named "-" in the current folder ("wrote ... to -")
    monkeypatch.chdir(tmp_path)
    code, out, err = run("pack", "get user session", str(repo), "-o", "-")
    assert code == 0 and out.startswith("# Context pack") and "wrote" not in err
    assert not (tmp_path / "-").exists()


def test_pack_copy_without_a_clipboard_still_prints_and_says_so(
    run: Run, repo: Path, monkeypatch: pytest.MonkeyPatch, isolated_dirs: Path
) -> None:
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "WSL_DISTRO_NAME"):
        monkeypatch.delenv(var, raising=False)
    code, out, err = run("pack", "get user session", str(repo), "--copy")
    assert code == 0
    assert "## auth/session.py" in out
    line = one_line(err)
    assert "no clipboard" in line
    saved = Path(line.rsplit("saved to ", 1)[1])
    assert saved.is_relative_to(isolated_dirs)
    assert saved.read_text(encoding="utf-8") == out


def test_pack_copy_with_an_output_file_writes_the_file_and_says_both(
    run: Run, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "WSL_DISTRO_NAME"):
        monkeypatch.delenv(var, raising=False)
    target = tmp_path / "p.xml"
    code, out, err = run(
        "pack", "session", str(repo), "--format", "xml", "--copy", "-o", str(target)
    )
    assert (code, out) == (0, "")
    assert target.read_text(encoding="utf-8").lstrip().startswith("<context")
    assert len(err.strip().splitlines()) == 2  # wrote ..., and the clipboard line


def test_pack_of_an_empty_repository_is_exit_0(run: Run, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, out, _ = run("pack", "session", str(tmp_path / "empty"), "--format", "json")
    assert code == 0
    assert json.loads(out)["files"] == []


def test_pack_focus_files_are_packed(run: Run, repo: Path) -> None:
    _, out, _ = run("pack", "session", str(repo), "--format", "json", "--focus", "web/app.js")
    files = json.loads(out)["files"]
    assert files[0]["path"] == "web/app.js"
    assert files[0]["pinned"] is True


# --------------------------------------------------------------------------- index


def test_index_prints_files_skips_declarations_edges_tokens_and_times(run: Run, repo: Path) -> None:
    code, out, err = run("index", str(repo))
    assert (code, err) == (0, "")
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert re.search(r"files\s+5\s+python 3, javascript 1, markdown 1$", lines["files"])
    assert re.search(r"skipped\s+2\s+binary 2$", lines["skipped"])
    assert re.search(r"declarations\s+6$", lines["declarations"])  # 5 in code, 1 heading
    assert re.search(r"import edges\s+1\b", out)
    assert re.search(r"tokens\s+[\d,]+\s+\(o200k_base\)", lines["tokens"])
    assert re.search(r"this run\s+parsed 5, reused 0, removed 0", out)
    assert re.search(r"time\s+scan [\d.]+s, .*parse [\d.]+s.* = [\d.]+s$", lines["time"])
    assert "cache" in lines


def test_index_twice_reuses_the_cache(run: Run, repo: Path) -> None:
    run("index", str(repo))
    _, out, _ = run("index", str(repo))
    assert "parsed 0, reused 5, removed 0" in out


def test_index_of_an_unchanged_tree_prints_what_opening_the_index_prints(
    run: Run, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "legacy.py").write_bytes("x = 'caf\xe9'\n".encode("latin-1"))
    run("index", str(repo))
    _, quick, _ = run("index", str(repo), "--verbose")  # from the cache's columns
    monkeypatch.setattr("ctxtui.cli.index.unchanged_index", lambda *a, **k: None)
    _, opened, _ = run("index", str(repo), "--verbose")
    assert "parsed 0, reused 6, removed 0" in quick
    assert "legacy.py  (decoded with replacement)" in quick
    assert re.search(r"^time\s+scan [\d.]+s, load cache [\d.]+s, git [\d.]+s", quick, re.M)
    assert without_times(quick) == without_times(opened)


def without_times(out: str) -> list[str]:
    """A report's lines but its stage times."""
    return [line for line in out.splitlines() if not line.startswith("time")]


def test_index_after_an_edit_parses_the_edited_file_again(run: Run, repo: Path) -> None:
    run("index", str(repo))
    edited = repo / "auth" / "tokens.py"
    edited.write_text("def sign_token(user_id):\n    return f'SIGNED:{user_id}'\n")
    st = edited.stat()
    os.utime(edited, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    _, out, _ = run("index", str(repo))
    assert "parsed 1, reused 4, removed 0" in out


def test_index_verbose_lists_the_skipped_files_with_reasons(run: Run, repo: Path) -> None:
    (repo / "legacy.py").write_bytes("x = 'caf\xe9'\n".encode("latin-1"))
    _, out, _ = run("index", str(repo), "--verbose")
    listed = out.split("skipped files:", 1)[1]
    assert "  blob.dat  (binary)" in listed
    assert "  logo.png  (binary)" in listed
    assert "  legacy.py  (decoded with replacement)" in listed


def test_index_without_verbose_lists_no_files(run: Run, repo: Path) -> None:
    _, out, _ = run("index", str(repo))
    assert "skipped files:" not in out and "blob.dat" not in out


def test_index_no_cache_saves_nothing_and_parses_all(
    run: Run, repo: Path, isolated_dirs: Path
) -> None:
    run("index", str(repo), "--no-cache")
    _, out, _ = run("index", str(repo), "--no-cache")
    assert "parsed 5, reused 0" in out
    assert not any(line.startswith("cache") for line in out.splitlines())
    assert not list(isolated_dirs.rglob("index-*"))


def test_index_of_an_empty_folder_counts_zero(run: Run, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, out, _ = run("index", str(tmp_path / "empty"))
    assert code == 0
    assert re.search(r"^files\s+0\s*$", out, re.MULTILINE)


def test_a_damaged_cache_is_reported_in_one_line_and_rebuilt(
    run: Run, repo: Path, isolated_dirs: Path
) -> None:
    run("index", str(repo))
    (cache,) = isolated_dirs.rglob("index-o200k_base.bin")
    cache.write_bytes(b"garbage")
    code, out, err = run("rank", "session", str(repo), "--json")
    assert code == 0
    assert "index cache discarded" in one_line(err)
    assert json.loads(out)


# --------------------------------------------------------------------------- eval


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    rows = [
        {
            "id": "session-1",
            "query": "getUserSession returns the wrong user",
            "gold": ["auth/session.py"],
        },
        {"id": "invoice-1", "query": "Invoice total is hard coded", "gold": ["billing/invoice.py"]},
        {"id": "cart-1", "query": "renderCart counts items", "gold": ["web/app.js"]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_eval_prints_a_table_for_ctxtui_greedy_and_grep(run: Run, repo: Path, cases: Path) -> None:
    code, out, _ = run("eval", str(cases), str(repo), "-b", "2000")
    assert code == 0
    for case_id in ("session-1", "invoice-1", "cart-1"):
        assert case_id in out
    header = next(line for line in out.splitlines() if line.startswith("method"))
    assert header.split() == ["method", "R@1", "R@5", "R@10", "MRR", "Hit@5", "Pack"]
    methods = ("ctxtui", "ctxtui+greedy", "grep")
    cells = [line.split() for line in out.splitlines()]
    rows = {row[0]: row[1:] for row in cells if row and row[0] in methods}
    assert set(rows) == {"ctxtui", "ctxtui+greedy", "grep"}
    assert all(len(v) == 6 for v in rows.values())
    assert float(rows["ctxtui"][1]) == 1.0  # R@5: every gold file is in the top five
    assert "3 cases, budget 2,000 tokens" in out


def test_eval_reads_its_cases_from_stdin_for_a_dash(
    run: Run, repo: Path, cases: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(cases.read_bytes())))
    code, out, _ = run("eval", "-", str(repo), "--json")
    assert code == 0
    assert [c["id"] for c in json.loads(out)["cases"]] == ["session-1", "invoice-1", "cart-1"]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{not json\n")))
    code, _, err = run("eval", "-", str(repo))
    assert code == 1 and "<stdin>:1:" in one_line(err)


def test_eval_json_summarises_each_method(run: Run, repo: Path, cases: Path) -> None:
    code, out, _ = run("eval", str(cases), str(repo), "--json")
    assert code == 0
    document = json.loads(out)
    assert set(document["summary"]) == {"ctxtui", "greedy", "grep"}
    assert set(document["summary"]["ctxtui"]) == {"R@1", "R@5", "R@10", "MRR", "Hit@5", "Pack"}
    assert [c["id"] for c in document["cases"]] == ["session-1", "invoice-1", "cart-1"]
    assert document["summary"]["ctxtui"]["MRR"] == 1.0


def test_eval_of_a_file_that_is_not_json_lines_is_exit_1(
    run: Run, repo: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    code, _, err = run("eval", str(bad), str(repo))
    assert code == 1
    assert "not JSON lines" in one_line(err)


def test_eval_of_a_missing_cases_file_is_exit_1(run: Run, repo: Path, tmp_path: Path) -> None:
    code, _, err = run("eval", str(tmp_path / "none.jsonl"), str(repo))
    assert code == 1
    one_line(err)


def test_eval_case_without_gold_is_bad_usage(run: Run, repo: Path, tmp_path: Path) -> None:
    bad = tmp_path / "nogold.jsonl"
    bad.write_text('{"query": "session"}\n', encoding="utf-8")
    code, _, err = run("eval", str(bad), str(repo))
    assert code == 2
    assert "gold" in one_line(err)


# --------------------------------------------------------------------------- the console script


def console_script() -> list[str]:
    found = shutil.which("ctxtui", path=str(Path(sys.executable).parent))
    return [found] if found else [sys.executable, "-m", "ctxtui"]


def test_console_script_ranks_as_json_with_a_clean_stdout(repo: Path) -> None:
    done = subprocess.run(
        [*console_script(), "rank", "getUserSession", str(repo), "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["path"] == "auth/session.py"
    assert done.stderr == ""


def test_console_script_reports_a_missing_path_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [*console_script(), "pack", "session", str(tmp_path / "nowhere")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert one_line(done.stderr).startswith("ctxtui: ")


def test_console_script_index_prints_its_whole_report_through_a_pipe(repo: Path) -> None:
    # index, rank and pack end without the interpreter's teardown: what they print must
    # still all be written, and their exit code kept
    done = subprocess.run(
        [*console_script(), "index", str(repo)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(str(repo)) and "\ncache " in done.stdout
    assert done.stdout.endswith("\n") and done.stderr == ""
    missing = subprocess.run(
        [*console_script(), "index", str(repo / "nowhere")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert (missing.returncode, missing.stdout) == (1, "")
    assert one_line(missing.stderr).startswith("ctxtui: ")


def test_console_script_index_into_a_reader_that_left_is_quiet(repo: Path) -> None:
    reader, writer = os.pipe()
    os.close(reader)  # the reader has gone before the report is written
    try:
        done = subprocess.run(
            [*console_script(), "index", str(repo)],
            stdout=writer, stderr=subprocess.PIPE, text=True, timeout=120, check=False,
        )  # fmt: skip
    finally:
        os.close(writer)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert done.returncode == 0


def test_workspace_serves_a_changed_file_fresh_after_a_refresh(tmp_path: Path) -> None:
    import os

    from ctxtui.workspace import Workspace
    from engine import Session

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def alpha():\n    return 1\n")
    workspace = Workspace.open(repo, use_cache=False)
    first = workspace.rank("alpha", Session())
    entry = workspace.plan(first, 8000, Session()).entries[0]
    assert "return 1" in workspace.render_file(entry)
    (repo / "a.py").write_text("def alpha():\n    return 22\n")
    os.utime(repo / "a.py", ns=(1, 1))
    assert workspace.refresh(force=True)
    again = workspace.plan(workspace.rank("alpha", Session()), 8000, Session()).entries[0]
    assert "return 22" in workspace.render_file(again)


def test_the_preview_of_a_file_gone_from_disk_says_so_as_the_pack_does(tmp_path: Path) -> None:
    # review: the app reopened on a file renamed since (ranked from the saved index before the
    # stat check) failed the preview's worker: "Could not show the preview: No such file or
    # directory", in red for 8 s, where the pack notes that the file could not be read
    from ctxtui.workspace import Workspace
    from engine import Session

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def alpha():\n    return 1\n")
    workspace = Workspace.open(repo, use_cache=False)
    entry = workspace.plan(workspace.rank("alpha", Session()), 8000, Session()).entries[0]
    (repo / "a.py").rename(repo / "b.py")
    assert workspace.render_file(entry) == "# … file could not be read: No such file or directory\n"


def test_a_file_name_that_is_not_utf8_is_indexed_ranked_and_packed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "ok.py").write_text("def ok():\n    pass\n")
    with open(bytes(repo) + b"/caf\xe9.py", "wb") as fh:
        fh.write(b"def cafe_au_lait():\n    return 1\n")
    assert main(["index", str(repo)]) == 0
    capsys.readouterr()
    assert main(["rank", "cafe au lait", str(repo), "--json"]) == 0
    ranked = json.loads(capsys.readouterr().out)
    assert ranked[0]["path"] == "caf\ufffd.py"
    assert main(["pack", "cafe au lait", str(repo), "--format", "json"]) == 0
    packed = json.loads(capsys.readouterr().out)
    assert packed["files"][0]["path"] == "caf\ufffd.py"
    assert "cafe_au_lait" in packed["files"][0]["content"]


@pytest.mark.parametrize("command", ["rank", "pack"])
def test_focus_takes_a_name_that_is_not_utf8_as_rank_showed_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # session 34: rank and pack show `caf\xe9.py` as `caf\ufffd.py` (and MCP takes that name
    # back), but `--focus caf\ufffd.py` said "no such file in the index", exit 2: a script
    # that focused on a path rank --json gave it failed
    repo = make_repo(tmp_path / "repo", {"ok.py": "def alpha():\n    pass\n"})
    with open(bytes(repo) + b"/caf\xe9.py", "wb") as fh:
        fh.write(b"x = 1\n")
    assert main(["rank", "alpha", str(repo), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["path"] == "ok.py"
    argv = [command, "alpha", str(repo), "--focus", "caf\ufffd.py"]
    assert main([*argv, "--json"] if command == "rank" else [*argv, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    first = document[0] if command == "rank" else document["files"][0]
    assert first["path"] == "caf\ufffd.py"


@pytest.mark.parametrize("fmt", ["markdown", "xml", "json"])
def test_changed_files_whose_names_are_not_utf8_give_a_utf8_pack(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    # review: the Changes section carried the name's raw byte (a surrogate): the pack on
    # stdout was not UTF-8 (JSON readers refused it) and the MCP server died serialising it
    repo = make_repo(tmp_path / "repo", {"ok.py": "def alpha():\n    pass\n"}, git=True)
    with open(bytes(repo) + b"/tracked_caf\xe9.py", "wb") as fh:
        fh.write(b"x = 1\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "two"], cwd=repo, check=True)
    with open(bytes(repo) + b"/tracked_caf\xe9.py", "wb") as fh:
        fh.write(b"x = 2\n")
    with open(bytes(repo) + b"/new_caf\xe9.py", "wb") as fh:
        fh.write(b"def alpha_new():\n    pass\n")
    assert main(["pack", "alpha", str(repo), "--changed", "--format", fmt]) == 0
    out = capsys.readouterr().out
    out.encode("utf-8")  # no surrogate left
    assert "new_caf\ufffd.py" in out and "tracked_caf\ufffd.py" in out
    if fmt == "json":
        listed = {f["path"] for f in json.loads(out)["changes"]["files"]}
        assert listed == {"new_caf\ufffd.py", "tracked_caf\ufffd.py"}
