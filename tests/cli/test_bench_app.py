"""`ctxtui bench --app` drives the real app headless and reports what it measured."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from app.support import REPO_FILES
from conftest import make_repo

from ctxtui.cli import main
from ctxtui.cli.bench import SHOWN_ROWS
from ctxtui.widgets.file_list import REASONED_ROWS


def test_bench_app_types_each_key_and_reports_both_latencies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "shop", REPO_FILES)
    code = main(["bench", "--app", str(repo), "--question", "session", "--interval", "20"])
    out = capsys.readouterr().out
    assert code == 0
    assert "7 files indexed" in out
    assert "1 questions, 7 keys" in out
    assert re.search(r"key -> list +median +\d+ ms +p95 +\d+ ms +max +\d+ ms +\(n=7\)", out)
    assert re.search(r"last key -> exact +median +\d+ ms .*\(n=1\)", out)
    assert re.search(r"e -> exact meter +cl100k_base in [\d,]+ ms", out)
    assert re.search(r"e -> exact meter +o200k_base in [\d,]+ ms", out)
    assert "never shown" not in out


def test_bench_app_on_a_missing_folder_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "--app", str(tmp_path / "nowhere")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ctxtui: no such folder") and err.count("\n") == 1


def test_the_bench_reads_the_reasons_of_as_many_rows_as_the_app_ranking_job() -> None:
    assert SHOWN_ROWS == REASONED_ROWS
