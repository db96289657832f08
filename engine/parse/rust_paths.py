"""Rust module paths: where a file's submodules live and what a `use` tree names.

Rust maps modules to files by convention (`mod x;` in foo.rs is foo/x.rs or foo/x/mod.rs, in
mod.rs/lib.rs/main.rs it sits next to the file), and `use` trees can fan out with braces
(`crate::a::{b, c::D}`); both are plain string work, kept apart from the resolver table.
"""

from __future__ import annotations

import posixpath

CRATE_ROOTS = ("lib.rs", "main.rs")
_FOLDER_FILES = frozenset({"mod.rs", *CRATE_ROOTS})


def rust_module_dir(path: str) -> str:
    """Folder holding the submodules of the module defined by `path`."""
    folder, name = posixpath.split(path)
    if name in _FOLDER_FILES:
        return folder
    return posixpath.join(folder, posixpath.splitext(name)[0])


def rust_crate_dir(folder: str, files: frozenset[str], cache: dict[str, str | None]) -> str | None:
    """Nearest folder at or above `folder` holding lib.rs or main.rs (memoised in `cache`)."""
    if folder in cache:
        return cache[folder]
    found: str | None
    if any(posixpath.join(folder, root).lstrip("/") in files for root in CRATE_ROOTS):
        found = folder
    elif folder:
        found = rust_crate_dir(posixpath.dirname(folder), files, cache)
    else:
        found = None
    cache[folder] = found
    return found


def _split_top(text: str) -> list[str]:
    """Split on commas that are not inside braces."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


def expand_use(raw: str, limit: int = 256) -> list[list[str]]:
    """Expand a `use` tree into its paths: `a::{b, c::D}` -> [[a, b], [a, c, D]].

    Aliases (`as X`), `self` items and globs are dropped to the module they name; at most
    `limit` paths are returned, so a pathological tree stays cheap.
    """
    text = raw.strip().rstrip(";")
    if " as " in text and "{" not in text:
        text = text.split(" as ", 1)[0]
    brace = text.find("{")
    if brace < 0:
        segments = [
            s.strip() for s in text.split("::") if s.strip() and s.strip() not in ("*", "self")
        ]
        return [segments]
    prefix = [s.strip() for s in text[:brace].split("::") if s.strip()]
    inner = text[brace + 1 : text.rfind("}")] if "}" in text else text[brace + 1 :]
    result: list[list[str]] = []
    for item in _split_top(inner):
        for tail in expand_use(item, limit):
            result.append(prefix + tail)
            if len(result) >= limit:
                return result
    return result
