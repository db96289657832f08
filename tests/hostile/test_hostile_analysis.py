"""Hostile sources: deeply nested code is parsed in linear time, and a file whose analysis
goes past the per-file time limit is indexed as plain text, with the reason."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from conftest import make_repo

import engine.analyse
from ctxtui.cli import main
from engine import build_index
from engine.model import DeclKind
from engine.parse.extract import SourceParser


def nested_functions(depth: int, *, exported: bool = False) -> str:
    """`depth` functions, each declared inside the one before (about 15 bytes a level)."""
    head = "export " if exported else ""
    opening = [f"{head}function f0(a) {{"] + [f"function f{i}(a) {{" for i in range(1, depth)]
    return "\n".join([*opening, "return a;", *["}"] * depth]) + "\n"


def test_thousand_nested_functions_are_all_found_within_the_time_limit() -> None:
    # Before: climbing Node.parent for every declaration made this cubic (84 s for 15 KB).
    # It takes 0.05 s; the limit counts the thread's CPU time, which a full collection of the
    # test process's heap (every test before it in this worker) fills too: it failed twice in
    # session 32's suites. The collector waits until the parse is done.
    parser = SourceParser()
    parser.parse("x = 1;\n", "javascript", "warm.js")  # the grammar loads outside the limit
    gc.collect()
    gc.disable()
    try:
        structure = parser.parse(
            nested_functions(1000, exported=True),
            "javascript",
            "deep.js",
            time_limit=engine.analyse.ANALYSIS_TIME_LIMIT,
        )
    finally:
        gc.enable()
    assert not structure.timed_out
    assert [d.name for d in structure.declarations] == [f"f{i}" for i in range(1000)]
    assert [d.depth for d in structure.declarations] == list(range(1000))
    # `export` on the outermost statement exports everything under it, as before
    assert all(d.exported for d in structure.declarations)
    assert structure.declarations[-1].qualified_name.startswith("f0.f1.f2.")


def test_nested_declarations_keep_their_parents_and_docs() -> None:
    source = (
        "/** Builds carts. */\n"
        "export class Cart {\n"
        "  // Adds one item.\n"
        "  add(item) { function inner() {} }\n"
        "}\n"
        "const Button = () => <b>hi</b>;\n"
        "module.exports.helper = function helper() {};\n"
        "function local() {}\n"
    )
    structure = SourceParser().parse(source, "javascript", "cart.jsx")
    found = {d.qualified_name: d for d in structure.declarations}
    assert found["Cart"].doc == "Builds carts." and found["Cart"].exported
    assert found["Cart.add"].kind is DeclKind.METHOD and found["Cart.add"].doc == "Adds one item."
    assert found["Cart.add.inner"].depth == 2
    assert found["Button"].kind is DeclKind.COMPONENT
    assert not found["local"].exported


def test_a_file_over_the_time_limit_has_no_declarations_and_says_so() -> None:
    structure = SourceParser().parse(nested_functions(50), "javascript", "x.js", time_limit=0.0)
    assert structure.timed_out and structure.declarations == () and structure.imports == ()


def test_index_keeps_a_too_slow_file_as_plain_text_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo", {"deep.js": nested_functions(30), "notes.txt": "fine\n"})
    monkeypatch.setattr(engine.analyse, "ANALYSIS_TIME_LIMIT", 0.0)
    index, report = build_index(repo, workers=1, cache_dir=tmp_path / "cache")
    deep = index.files[index.path_ids["deep.js"]]
    assert deep.too_slow and deep.declarations == () and deep.tokens > 0
    assert report.too_slow == ("deep.js",)
    # the reason survives the cache, and `index` tells it
    _, again = build_index(repo, workers=1, cache_dir=tmp_path / "cache")
    assert again.too_slow == ("deep.js",) and again.parsed == ()
    assert main(["index", str(repo), "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "plain text          1" in out
    assert "deep.js  (analysis took over" in out
