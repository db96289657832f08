"""The MCP tools' single files keep the levels' contract: an outline never costs more than the
focused view, the focused view never more than the whole file, in every fixture language.

An agent asks `file_outline` or `file_focused` to save tokens; on a file of many one-line
declarations the outline repeats nearly every line, and a focused view on a question the file
does not answer is every header plus a marker per body. The tools then send the richer level
that costs no more, and say which level they send and which was asked for.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_repo
from level_fixtures import QUESTION, tiny_files

from ctxtui.mcp.tools import Tools
from ctxtui.mcp.warm import WarmRepository

FILES = {**tiny_files(), "README.md": "# steps\n"}


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> Tools:
    root = make_repo(tmp_path_factory.mktemp("contract") / "repo", FILES)
    return Tools(WarmRepository(root), tmp_path_factory.mktemp("state"))


@pytest.mark.parametrize("path", sorted(tiny_files()))
def test_an_outline_costs_no_more_than_focused_nor_focused_than_full(
    tools: Tools, path: str
) -> None:
    """file_outline against file_focused on a question the file does not answer (both then
    show the file without a match), and file_focused on its own question against the file."""
    workspace, _ = tools.repository.workspace(tools.repository.settings())
    full = workspace.tokenizer.count((Path(workspace.root) / path).read_text(encoding="utf-8"))
    _, answering = tools.file_focused(path, QUESTION)
    _, focused = tools.file_focused(path, "unrelated words")
    _, outline = tools.file_outline(path)
    assert outline["tokens"] <= focused["tokens"] <= full, (outline, focused, full)
    assert answering["tokens"] <= full


def test_the_tools_say_which_level_they_send(tools: Tools) -> None:
    # a header and a marker for each one-line body cost more than the file itself
    text, focused = tools.file_focused("tiny/steps.go", "unrelated words")
    assert (focused["asked"], focused["level"]) == ("focused", "full")
    assert "func IdleStep1() int { return 1 }" in text
    _, outline = tools.file_outline("tiny/steps.go")
    assert (outline["asked"], outline["level"]) == ("outline", "outline")
