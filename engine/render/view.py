"""What every format shows: the pack as plain records, built once and handed to a formatter.

The formatters are pure functions of a `PackView`, so the total printed inside the pack can be
changed and the pack re-formatted without re-reading or re-rendering any file.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.model import Level, Reason

if TYPE_CHECKING:
    from engine.diff_section import ChangesSection

FENCE_TAGS: dict[str, str] = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "ts",
    "tsx": "tsx",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
    "csharp": "csharp",
    "ruby": "ruby",
    "php": "php",
    "markdown": "markdown",
    "rst": "rst",
}
"""Fence info string per language key."""

TEXT_FENCE_TAGS: dict[str, str] = {
    ".json": "json",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".sh": "bash",
    ".bash": "bash",
    ".html": "html",
    ".css": "css",
    ".scss": "scss",
    ".sql": "sql",
    ".xml": "xml",
    ".ini": "ini",
    ".cfg": "ini",
    ".dockerfile": "dockerfile",
}
"""Fence info string for plain-text files, by extension; others are fenced as "text"."""


@dataclass(frozen=True, slots=True)
class FileView:
    """One file of the pack, ready to format."""

    path: str
    """Relative POSIX path."""
    language: str
    """Language key of the parser table, or "text"."""
    level: Level
    """Level it is packed at."""
    pinned: bool
    """The user pinned it."""
    score: float
    """Ranking score."""
    reasons: tuple[Reason, ...]
    """The ranking's evidence for it."""
    content: str
    """The file's content at its level (render_level's output)."""
    tokens: int
    """Exact tokens of `content` alone."""


@dataclass(frozen=True, slots=True)
class PackView:
    """The whole pack, ready to format."""

    query: str
    """The question, as typed (may span lines)."""
    root: str
    """Repository name: the basename of the index root (the full path stays private)."""
    budget: int
    """Token budget asked for."""
    encoding: str
    """Name of the encoding that measured every count."""
    total_tokens: int
    """Tokens of the formatted pack itself, as printed inside it."""
    files: tuple[FileView, ...]
    """Files in ranked order."""
    instructions: str = ""
    """Text for the reader placed at the top of the pack (a setting); empty for none."""
    changes: ChangesSection | None = None
    """The work tree's diff (`--changed`); None when not asked for."""


def fence_tag(path: str, language: str) -> str:
    """Return the Markdown fence info string for a file."""
    tag = FENCE_TAGS.get(language)
    if tag is not None:
        return tag
    _, ext = posixpath.splitext(path.lower())
    return TEXT_FENCE_TAGS.get(ext, "text")


def repo_name(root: str) -> str:
    """Return the repository's name from the index root ("/home/me/src/flask" -> "flask")."""
    return posixpath.basename(root.replace("\\", "/").rstrip("/")) or root


def changes_summary(section: ChangesSection) -> str:
    """One line about the diff: its base, files, tokens and what was left out."""
    count = len(section.files)
    parts = [
        f"against {section.base}",
        f"{count} file{'' if count == 1 else 's'} changed",
        f"{section.tokens:,} tokens",
    ]
    if section.hunks_left_out:
        total = section.hunks + section.hunks_left_out
        parts.append(f"{section.hunks_left_out:,} of {total:,} hunks left out to fit the budget")
    return " · ".join(parts)
