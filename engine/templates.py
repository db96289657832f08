"""Leave out of a pasted question the lines of the repository's own issue and pull-request
templates.

A report or a commit message pasted whole often still carries the template it was written in
("Open your pull request against `master`", "It should pass all tests"): those lines are the
project's words, not the user's, and they pull the template file and the contributing guide to
the top (issue 11, gin-3d44ff82a1: `.github/PULL_REQUEST_TEMPLATE.md` ranked first, the fixed
`debug.go` ninth). A line is left out only when the same words make a line of such a template;
the templates are the files GitHub and GitLab read as such (`PULL_REQUEST_TEMPLATE.md`,
`.github/ISSUE_TEMPLATE/*`, `.gitlab/merge_request_templates/*`), read once per index.
"""

from __future__ import annotations

import os
import re

from engine.file_open import open_regular
from engine.memo import ArrayMemo
from engine.model import Index

TEMPLATE_PATH = re.compile(r"(?:^|/)(?:pull_request|issue|merge_request)_templates?(?:/|\.|$)")
"""A template file by the name the hosting services look for (matched on the lower-case path)."""
CHECKBOX = re.compile(r"\[[ xX]?\]")
"""A task-list box, ticked or not: the same template line either way."""
WORD = re.compile(r"\w+")
MIN_LINE = 12
"""Shortest line (in characters of its words) recognised: a heading such as `## Summary` or a
word the user may well say alone is not taken for boilerplate."""
MAX_TEMPLATE_BYTES = 64_000


def without_template_lines(index: Index, text: str) -> str:
    """`text` with every line that is a line of one of the repository's templates blanked;
    unchanged when it has one line, or when nothing else would be left."""
    if "\n" not in text.strip():
        return text
    known = template_lines(index)
    if not known:
        return text
    lines = text.split("\n")
    kept = ["" if _normal(line) in known else line for line in lines]
    if kept == lines or not any(line.strip() for line in kept):
        return text
    return "\n".join(kept)


def template_lines(index: Index) -> frozenset[str]:
    """The normalised lines (MIN_LINE or longer) of the index's template files."""
    return _LINES.get(index.body_length, index.root, lambda: _read_templates(index))


_LINES: ArrayMemo[frozenset[str]] = ArrayMemo()


def _read_templates(index: Index) -> frozenset[str]:
    found: set[str] = set()
    for path in index.path_ids:
        if TEMPLATE_PATH.search(path.lower()) is None:
            continue
        try:
            with open_regular(os.path.join(index.root, path)) as handle:
                raw = handle.read(MAX_TEMPLATE_BYTES)
        except OSError:
            continue  # gone since indexing: nothing to recognise
        for line in raw.decode("utf-8", errors="replace").splitlines():
            normal = _normal(line)
            if len(normal) >= MIN_LINE:
                found.add(normal)
    return frozenset(found)


def _normal(line: str) -> str:
    """A line's words, lower case, one space apart (markup and task boxes left out)."""
    return " ".join(WORD.findall(CHECKBOX.sub(" ", line.lower())))
