"""Which language a path is written in, keyed by file name and extension.

The parser table (grammar name, query file, comment style, import resolver) extends this;
the scan only needs the key.
"""

from __future__ import annotations

import posixpath

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
}


def language_for_path(path: str) -> str:
    """Return the language key for a relative path, or "text" when none applies."""
    _, ext = posixpath.splitext(path.lower())
    return EXTENSIONS.get(ext, "text")
