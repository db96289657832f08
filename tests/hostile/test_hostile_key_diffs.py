"""A private key kept in a source file and edited in its middle: `pack --changed` shows hunks
of key lines without the BEGIN line, which no detector sees alone. Every diff line that lies
inside a key block of the file is redacted (added, removed and context lines, in one hunk or
split across several), in every format; `--no-redact` leaves them in and names them."""

from __future__ import annotations

import json
import random
import string
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import make_repo

from ctxtui.workspace import Workspace, working_changes
from ctxtui.workspace.core import TextCache
from engine import Format, ScanOptions, Session
from hostile.test_hostile_secrets import run

RNG = random.Random(41)
B64 = string.ascii_letters + string.digits + "+/"
BODY = ["".join(RNG.choice(B64) for _ in range(64)) for _ in range(40)]
"""The key's 40 base64 lines; line n of the body is line n + 3 of keys.py."""
NEW = ["".join(RNG.choice(B64) for _ in range(64)) for _ in range(3)]
"""Lines written into the key by the edits."""


def keys_py(body: list[str]) -> str:
    lines = ["def load_key():", '    return """-----BEGIN RSA PRIVATE KEY-----', *body]
    return "\n".join([*lines, '-----END RSA PRIVATE KEY-----"""', "", ""])


@pytest.fixture
def key_repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", {"keys.py": keys_py(BODY), "README.md": "# k\n"}, git=True)
    return repo


def edit(repo: Path, body: list[str]) -> None:
    (repo / "keys.py").write_text(keys_py(body), encoding="utf-8")


def pack_changed(capsys: pytest.CaptureFixture[str], repo: Path, *flags: str) -> tuple[str, str]:
    return run(capsys, "pack", "load key", str(repo), "--no-cache", "--changed", *flags)


@pytest.mark.parametrize("fmt", ["markdown", "xml", "json"])
def test_a_line_changed_in_the_middle_of_a_key_leaks_no_line_of_it(
    key_repo: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    edit(key_repo, [*BODY[:20], NEW[0], *BODY[21:]])
    out, err = pack_changed(capsys, key_repo, "--format", fmt)
    diff = json.loads(out)["changes"]["diff"] if fmt == "json" else out
    assert "@@ " in diff  # the hunk is there...
    assert not [line for line in [*BODY, *NEW] if line in out]  # ... without a line of key
    assert "[redacted: private key]" in diff
    assert "in <changes>: private key" in err


def test_added_and_removed_lines_and_a_key_split_across_hunks(
    key_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a line added near the top, one removed near the end: two hunks, neither with BEGIN
    edit(key_repo, [*BODY[:8], NEW[1], *BODY[8:30], *BODY[31:]])
    out, _err = pack_changed(capsys, key_repo)
    diff = out[out.index("```diff") : out.index("```", out.index("```diff") + 7)]
    assert diff.count("\n@@ ") == 2
    assert "-----BEGIN" not in diff
    assert not [line for line in [*BODY, *NEW] if line in out]


def test_no_redact_leaves_the_key_lines_and_names_them(
    key_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(key_repo, [*BODY[:20], NEW[2], *BODY[21:]])
    out, err = pack_changed(capsys, key_repo, "--no-redact")
    assert f"+{NEW[2]}" in out and f"-{BODY[20]}" in out
    assert "LEFT IN (redaction is off)" in err and "private key" in err


def test_base64_lines_outside_any_key_stay(
    key_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    digest = "".join(RNG.choice(string.hexdigits.lower()) for _ in range(64))
    text = (key_repo / "keys.py").read_text() + f'DIGEST = "{digest}"\n'
    (key_repo / "keys.py").write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=key_repo, check=True)
    out, _err = pack_changed(capsys, key_repo)
    assert f'+DIGEST = "{digest}"' in out


def test_a_changed_file_the_index_left_out_is_not_read_for_its_key_lines(
    key_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the file's whole text is read only when the index holds it (its size is bounded)
    edit(key_repo, [*BODY[:20], NEW[0], *BODY[21:]])
    workspace = Workspace.open(key_repo, use_cache=False, options=ScanOptions(exclude=("keys.py",)))
    changes, _notice = working_changes(workspace.root, None)
    assert changes is not None and [f.path for f in changes.files] == ["keys.py"]
    read: list[str] = []
    original = TextCache.read

    def spy(self: TextCache, index: Any, path: str) -> str:
        read.append(path)
        return original(self, index, path)

    monkeypatch.setattr(TextCache, "read", spy)
    session = Session(pinned=frozenset())
    ranking = workspace.rank("load key", session)
    workspace.pack(ranking, 8000, session, Format.MARKDOWN, changes=changes)
    assert "keys.py" not in read
