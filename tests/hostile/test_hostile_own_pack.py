"""A pack written inside the repository (`pack -o`) is never packed again: the next index
leaves it out as ctxtui's own output, and says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_repo

from ctxtui.cli import main
from engine.skip_rules import is_own_pack

FILES = {
    "cart.py": "def cart_total(items):\n    return sum(items)\n",
    "README.md": "# Shop\n\nThe cart sums items.\n",
}


@pytest.mark.parametrize(
    ("fmt", "name"), [("markdown", "ctx.md"), ("xml", "ctx.xml"), ("json", "ctx.json")]
)
def test_a_pack_written_into_the_repository_is_left_out_of_the_next(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, name: str
) -> None:
    repo = make_repo(tmp_path / "repo", FILES, git=True)
    argv = ["pack", "cart total", str(repo), "--format", fmt]
    assert main([*argv, "-o", str(repo / name)]) == 0
    capsys.readouterr()
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert name not in out and "cart_total" in out
    assert f"left out 1 pack ctxtui wrote ({name})" in err


def test_instructions_before_the_title_still_mark_a_markdown_pack(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, ".ctxtui.toml": 'instructions = "Be brief."\n'})
    assert main(["pack", "cart total", str(repo), "-o", str(tmp_path / "p.md")]) == 0
    text = (tmp_path / "p.md").read_bytes()
    assert text.startswith(b"Be brief.") and is_own_pack(text)


def test_a_readme_about_packs_is_not_taken_for_one() -> None:
    assert not is_own_pack(b"# Context pack: how ctxtui builds one\n\nIt ranks files.\n")
    assert not is_own_pack(b'{\n  "query": "x"\n}\n')
