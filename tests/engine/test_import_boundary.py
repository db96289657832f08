"""`import engine` stays light: no UI packages ever, no heavy libraries until a function needs them.

Each check runs in a fresh interpreter, because this test process has long since imported
everything.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UI_PACKAGES = ("textual", "rich", "pyperclip")
HEAVY_PACKAGES = ("numpy", "tiktoken", "tree_sitter", "tree_sitter_language_pack", "git")


def modules_after(statement: str) -> set[str]:
    """Top-level package names in sys.modules after running `statement` in a new interpreter."""
    code = (
        "import json, sys\n"
        f"{statement}\n"
        "print(json.dumps(sorted({name.split('.')[0] for name in sys.modules})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return set(json.loads(done.stdout))


@pytest.fixture(scope="module")
def after_import_engine() -> set[str]:
    return modules_after("import engine")


@pytest.mark.parametrize("package", UI_PACKAGES)
def test_importing_engine_loads_no_ui_package(after_import_engine: set[str], package: str) -> None:
    assert package not in after_import_engine


@pytest.mark.parametrize("package", HEAVY_PACKAGES)
def test_importing_engine_loads_no_heavy_library(
    after_import_engine: set[str], package: str
) -> None:
    assert package not in after_import_engine


def test_importing_every_engine_stage_module_stays_light() -> None:
    loaded = modules_after(
        "import engine, engine.indexer, engine.store, engine.analyse, engine.index, "
        "engine.words, engine.query, engine.rank, engine.explain, engine.graph, engine.plan, "
        "engine.pack, engine.levels, engine.render, engine.scan, engine.tokens"
    )
    assert not loaded & {*UI_PACKAGES, *HEAVY_PACKAGES}


def test_indexing_and_packing_never_load_a_ui_package(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def get_user_session():\n    return 1\n", encoding="utf-8")
    loaded = modules_after(
        "from engine import Format, build_index, load_tokenizer, pack, rank\n"
        f"index, _ = build_index({str(tmp_path)!r}, workers=1)\n"
        "pack(rank(index, 'user session'), index, 2000, Format.MARKDOWN, counter=load_tokenizer())"
    )
    assert "numpy" in loaded  # the work really happened
    assert not loaded & set(UI_PACKAGES)


def test_a_warm_reopen_loads_no_parser_tokenizer_or_worker_pool(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "a.py").write_text("def get_user_session():\n    return 1\n")
    opened = (
        "from pathlib import Path\nfrom engine import build_index\n"
        f"build_index({str(tmp_path / 'repo')!r}, cache_dir=Path({str(tmp_path / 'cache')!r}))"
    )
    first = modules_after(opened)
    assert {"tree_sitter", "tiktoken", "multiprocessing"} <= first  # the cold index parsed
    reopened = modules_after(opened + "[0].files[0]")
    assert "numpy" in reopened  # the cache was mapped
    assert not reopened & {"tree_sitter", "tree_sitter_language_pack", "tiktoken"}
    assert not reopened & {"multiprocessing", "concurrent"}


def test_the_command_line_module_loads_no_textual() -> None:
    assert "textual" not in modules_after("import ctxtui.cli")


def test_the_import_contracts_in_pyproject_are_kept() -> None:
    """The engine imports no front-end; shared modules import no front-end (import-linter)."""
    done = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
         "lint_imports_command()"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
