"""A secret in a file or folder *name* never leaves ctxtui as written: every path shown (a
pack's headings and lists of changes in each format, `rank` as text and JSON, `index -v`, the
notices, the app's list and preview title, the clipboard, the MCP answers) goes through
engine.shown_path, which redacts it; `--no-redact` shows it. The ranking is not touched."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import string
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from app.support import FakeClipboard, notices, settle, wait_until
from conftest import make_repo
from textual.pilot import Pilot

from ctxtui.app import CtxtuiApp
from ctxtui.screens.finder import FinderList, FinderScreen
from ctxtui.widgets.file_list import FileList
from ctxtui.widgets.preview import Preview
from engine.redact import SecretScanner
from engine.shown_path import named, shown_path
from hostile.secret_corpus import SECRETS
from hostile.test_hostile_secrets import AWS_KEY, GH_TOKEN, run

TOKEN_FILE = f"src/token_{GH_TOKEN}.py"
KEY_FOLDER_FILE = f"{AWS_KEY}/deploy.py"
NAME_REPO = {
    TOKEN_FILE: "def rotate_token(old):\n    return old[::-1]\n",
    KEY_FOLDER_FILE: "def deploy_rotate(target):\n    return target\n",
    "app.py": f"from src.token_{GH_TOKEN} import rotate_token\n\n\n"
    "def main():\n    return rotate_token('x')\n",
    "README.md": "# names\n",
}
VALUES = (GH_TOKEN, AWS_KEY)


@pytest.fixture
def name_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", NAME_REPO, git=True)


def test_a_secret_in_a_name_is_replaced_and_the_rest_of_the_path_kept() -> None:
    shown = shown_path(TOKEN_FILE)
    assert GH_TOKEN not in shown
    assert shown.startswith("src/token_[redacted: GitHub token #") and shown.endswith("].py")
    assert shown == shown_path(TOKEN_FILE)  # stable
    folder = shown_path(KEY_FOLDER_FILE)
    assert folder.startswith("[redacted: AWS access key #") and folder.endswith("]/deploy.py")
    assert shown_path(TOKEN_FILE, redact=False) == TOKEN_FILE


def test_two_names_with_two_secrets_stay_apart_and_each_is_found_again() -> None:
    other = "src/token_ghp_" + "".join(random.Random(3).choices(string.ascii_letters, k=36))
    paths = [TOKEN_FILE, other + ".py", "src/plain.py"]
    assert shown_path(paths[0]) != shown_path(paths[1])
    for path in paths:
        assert named(shown_path(path), paths) == (None if path == "src/plain.py" else path)


def test_every_secret_of_the_corpus_is_redacted_in_a_file_name() -> None:
    scanner = SecretScanner()
    checked = 0
    for sample in SECRETS:
        value = sample.value
        if "/" in value or "\n" in value or not scanner.find(value):
            continue  # a secret only its place in a line shows, or one no name can hold
        name = f"keys/x_{value}.txt"
        assert value not in shown_path(name), sample.kind
        checked += 1
    assert checked >= 17  # of the 28 kinds: the rest need their place in a line


def test_each_token_format_without_a_corpus_sample_is_redacted_in_a_name() -> None:
    rng = random.Random(5)

    def pick(alphabet: str, count: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(count))

    hexa, alnum = "0123456789abcdef", string.ascii_letters + string.digits
    tokens = [
        "dop_v1_" + pick(hexa, 64),
        "shpat_" + pick(hexa, 32),
        "sk_test_" + pick(alnum, 24),
        "AC" + pick(hexa, 32),
        "AKC" + pick(alnum, 70),
        f"{rng.randrange(10**8, 10**9)}:" + pick(alnum + "_-", 35),
        pick(hexa, 32) + "-us12",
        "ASIA" + pick(string.ascii_uppercase + string.digits, 16),
        "glrt-" + pick(alnum + "_-", 20),
    ]
    scanner = SecretScanner()
    for token in tokens:
        assert scanner.find(token), token
        assert token not in shown_path(f"a/{token}.json"), token


def test_tokens_whose_dashes_and_underscores_cut_every_run_short_are_redacted() -> None:
    rng = random.Random(11)
    alphabet = string.ascii_letters + string.digits + "-_"
    for _ in range(200):
        token = "glpat-" + "".join(rng.choice(alphabet) for _ in range(20))
        name = f"ci/{token}.yml"
        if SecretScanner().find(token):
            assert token not in shown_path(name)


def test_the_names_of_this_repository_are_shown_as_written() -> None:
    root = Path(__file__).resolve().parents[2]
    listed = subprocess.run(
        ["git", "ls-files"], cwd=root, capture_output=True, text=True, check=False
    ).stdout.splitlines()
    assert len(listed) > 200
    assert [p for p in listed if shown_path(p) != p] == []


@pytest.mark.parametrize("fmt", ["markdown", "xml", "json"])
def test_pack_headings_name_no_secret(
    name_repo: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    argv = ["pack", "rotate token deploy", str(name_repo), "--no-cache", "--format", fmt]
    out, err = run(capsys, *argv)
    assert not any(value in out or value in err for value in VALUES)
    assert "return old[::-1]" in out and "def deploy_rotate(target):" in out  # both packed
    assert "src/token_[redacted: GitHub token #" in out
    assert "[redacted: AWS access key #" in out


MARKER = re.compile(r"\[redacted:[^\]]*\]")
"""Any redaction marker in a pack."""
ONE_STYLE = re.compile(r"\[redacted: [A-Za-z][A-Za-z0-9 .-]*?(?: #[0-9a-f]{4})?\]")
"""The one style of every marker a user sees (README, "Secrets"): the kind as the detectors
name it, and in a file or folder name a tag of four hex digits that keeps two names apart."""


def test_content_diff_and_path_markers_read_alike(
    name_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # review: a pack's content and diff said `[redacted: GitHub token]`, its headings
    # `[redacted: GitHub token #1a2b]`, so the same file's name read two ways in one pack
    (name_repo / TOKEN_FILE).write_text(f'TOKEN = "{GH_TOKEN}"\n\ndef rotate_token(old):\n')
    argv = ["pack", "rotate token", str(name_repo), "--no-cache", "--changed"]
    out, err = run(capsys, *argv)
    assert not any(value in out or value in err for value in VALUES)
    heading = next(line for line in out.splitlines() if line.startswith("## `src/token_"))
    diff_header = next(line for line in out.splitlines() if line.startswith("+++ b/src/token_"))
    content = next(line for line in out.splitlines() if line.startswith("TOKEN = "))
    for place in (heading, diff_header, content):
        markers = MARKER.findall(place)
        assert markers and all(ONE_STYLE.fullmatch(m) for m in markers), place
    assert heading == f"## `{shown_path(TOKEN_FILE)}`"
    assert "[redacted: GitHub token #" in shown_path(TOKEN_FILE)


def test_no_redact_shows_the_names_as_written(
    name_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["pack", "rotate token deploy", str(name_repo), "--no-cache", "--no-redact"]
    out, _err = run(capsys, *argv)
    assert f"## {TOKEN_FILE}" in out and f"## {KEY_FOLDER_FILE}" in out


@pytest.mark.parametrize("fmt", ["xml", "json"])
def test_the_list_of_changed_files_names_no_secret(
    name_repo: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    (name_repo / TOKEN_FILE).write_text("def rotate_token(old):\n    return old\n")
    (name_repo / f"notes_{GH_TOKEN}.txt").write_text("new\n")  # untracked
    argv = ["pack", "rotate token", str(name_repo), "--no-cache", "--format", fmt, "--changed"]
    out, err = run(capsys, *argv)
    assert not any(value in out or value in err for value in VALUES)
    assert out.count("_[redacted: GitHub token #") >= 3  # two listed, one a heading


def test_rank_names_no_secret_as_text_or_json(
    name_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, err = run(capsys, "rank", "rotate token deploy", str(name_repo), "--no-cache")
    assert not any(value in text or value in err for value in VALUES)
    assert "src/token_[redacted: GitHub token #" in text
    data, _ = run(capsys, "rank", "rotate token deploy", str(name_repo), "--json")
    assert not any(value in data for value in VALUES)
    paths = [f["path"] for f in json.loads(data)]
    assert shown_path(TOKEN_FILE) in paths and shown_path(KEY_FOLDER_FILE) in paths


def test_index_verbose_names_no_secret(name_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (name_repo / f".env.{GH_TOKEN}").write_text("A=1\n")  # a secret file: listed as skipped
    out, err = run(capsys, "index", str(name_repo), "--no-cache", "-v")
    assert ".env." in out and not any(value in out or value in err for value in VALUES)


def mcp_calls(root: Path, home: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Start `ctxtui mcp` on `root`, make the calls over stdio with the SDK's client."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    xdg = ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME")
    env = {**os.environ, **{n: str(home / n.lower()) for n in xdg}, "CTXTUI_SEMANTIC": "off"}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ctxtui", "mcp", str(root)], env=env
    )

    async def session() -> list[Any]:
        async with Client(params, read_timeout_seconds=120) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return asyncio.run(session())


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def test_mcp_answers_name_no_secret_and_take_the_name_they_gave(
    name_repo: Path, tmp_path: Path
) -> None:
    shown = shown_path(TOKEN_FILE)
    ranked, packed, outline = mcp_calls(
        name_repo,
        tmp_path / "home",
        [
            ("rank_files", {"question": "rotate token deploy"}),
            ("build_pack", {"question": "rotate token deploy", "format": "json"}),
            ("file_outline", {"path": shown}),
        ],
    )
    for result in (ranked, packed, outline):
        assert not result.is_error, text_of(result)
        answer = json.dumps(result.structured_content) + text_of(result)
        assert not any(value in answer for value in VALUES)
    assert shown in [f["path"] for f in ranked.structured_content["files"]]
    assert outline.structured_content["path"] == shown
    assert "def rotate_token(old):" in text_of(outline)


async def list_rows(app: CtxtuiApp, pilot: Pilot[None], question: str) -> str:
    """The file list's rows as text once `question` is typed and ranked."""
    await pilot.press(*question)
    await settle(pilot, question)
    file_list = app.main_screen.query_one(FileList)
    return "\n".join(
        str(file_list.get_option_at_index(n).prompt) for n in range(file_list.option_count)
    )


async def test_the_app_list_preview_title_and_copy_name_no_secret(
    name_repo: Path, app_factory: Callable[..., CtxtuiApp]
) -> None:
    app = app_factory(name_repo)
    clipboard = app.services.backend
    assert isinstance(clipboard, FakeClipboard)
    async with app.run_test(size=(160, 40)) as pilot:
        rows = await list_rows(app, pilot, "rotate token")
        assert "token_[redacted: GitHub token #" in rows
        assert not any(value in rows for value in VALUES)
        await pilot.press("tab")
        preview = app.main_screen.query_one(Preview)
        await wait_until(pilot, lambda: "[redacted:" in str(preview.border_title or ""))
        assert not any(value in str(preview.border_title) for value in VALUES)
        await pilot.press("c")
        await wait_until(pilot, lambda: clipboard.copies == 1)
        assert not any(value in clipboard.text for value in VALUES)
        assert "token_[redacted: GitHub token #" in clipboard.text
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, FinderScreen))
        finder = app.screen
        assert isinstance(finder, FinderScreen)
        await pilot.press(*"deploy.py")
        await wait_until(pilot, lambda: bool(finder.matches))
        row = str(finder.query_one(FinderList).get_option_at_index(0).prompt)
        assert "[redacted: AWS access key #" in row and AWS_KEY not in row
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(n.startswith("Pinned") for n in notices(app)))
        assert not any(value in n for n in notices(app) for value in VALUES)


async def test_with_redaction_off_the_app_list_shows_names_as_written(
    name_repo: Path, app_factory: Callable[..., CtxtuiApp]
) -> None:
    """`redact = false` shows names as written in the list too, as in the preview and the
    copy (the list redacted them whatever the setting)."""
    (name_repo / ".ctxtui.toml").write_text("redact = false\n", encoding="utf-8")
    app = app_factory(name_repo)
    async with app.run_test(size=(160, 40)) as pilot:
        rows = await list_rows(app, pilot, "rotate token")
        assert f"token_{GH_TOKEN}.py" in rows
        assert "[redacted:" not in rows


def test_only_a_reason_that_names_a_file_is_scanned_as_a_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A heading's apostrophe ("What's next?") is no path: scanning it loaded detect-secrets on
    the list's keystroke path (0.3 s) and scanned each new heading. A path among the reasons
    ("imports <path>") is still shown redacted."""
    from ctxtui.widgets.ranked_row import describe_reasons
    from engine.model import Reason, ReasonKind

    heading = Reason(ReasonKind.DECLARATION, "Textual 0.38.0 > What's next?")
    line = describe_reasons(
        (heading, Reason(ReasonKind.IMPORTS, TOKEN_FILE), Reason(ReasonKind.WORD, "it's"))
    )
    assert "What's next?" in line and "it's" in line
    assert "token_[redacted: GitHub token #" in line and GH_TOKEN not in line

    def no_scan() -> None:
        raise AssertionError("a word or heading was scanned as a path")

    monkeypatch.setattr("engine.redact.shared_scanner", no_scan)
    assert describe_reasons((Reason(ReasonKind.DECLARATION, 'Why doesn\'t it "work"?'),))
