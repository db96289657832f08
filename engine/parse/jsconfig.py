"""JS/TS import resolution: relative paths, index files, and tsconfig/jsconfig aliases.

TypeScript projects name files through `compilerOptions.baseUrl` and `paths` ("@/*" -> "src/*");
those live in the nearest tsconfig.json or jsconfig.json above the importing file, written in
JSON with comments and trailing commas. Broken configs count as absent: resolution never raises.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".d.ts", ".mts", ".cts")
"""Suffixes tried after the path as written, in the order bundlers try them."""

_JS_TO_TS = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
"""ESM-style TypeScript imports name the compiled file (`./x.js` for `x.ts`)."""

CONFIG_NAMES = ("tsconfig.json", "jsconfig.json")
_TOKENS = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


@dataclass(frozen=True, slots=True)
class AliasConfig:
    """The alias part of one tsconfig/jsconfig, with paths made relative to the repository."""

    base_url: str | None
    """Repository folder of `baseUrl` ("" for the root), or None when not set."""
    paths: tuple[tuple[str, tuple[str, ...]], ...]
    """(pattern, repository-relative targets), longest pattern prefix first."""


def loads_jsonc(text: str) -> object:
    """Parse JSON that may hold // and /* */ comments and trailing commas."""

    def keep_strings(match: re.Match[str]) -> str:
        token = match.group(0)
        return token if token.startswith('"') else ""

    return json.loads(_TOKENS.sub(keep_strings, text))


def _read_options(file: Path, depth: int = 0) -> dict[str, object]:
    """compilerOptions of a config, with `baseUrl`/`paths` made absolute-ish; follows `extends`."""
    try:
        data = loads_jsonc(file.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    options: dict[str, object] = {}
    extends = data.get("extends")
    if depth == 0 and isinstance(extends, str) and extends.startswith("."):
        parent = (file.parent / extends).resolve()
        if parent.suffix != ".json":
            parent = parent.with_name(parent.name + ".json")
        options.update(_read_options(parent, depth + 1))
    own = data.get("compilerOptions")
    if isinstance(own, dict):
        for key in ("baseUrl", "paths"):
            if key in own:
                options[key] = own[key]
                options[key + "@"] = str(file.parent)
    return options


def load_alias_config(file: Path, root: Path) -> AliasConfig | None:
    """Read the alias options of a config file, or None when it sets none (or is broken)."""
    options = _read_options(file)
    base_url: str | None = None
    raw_base = options.get("baseUrl")
    if isinstance(raw_base, str):
        base_url = _relative(Path(str(options["baseUrl@"])) / raw_base, root)
    raw_paths = options.get("paths")
    paths: list[tuple[str, tuple[str, ...]]] = []
    if isinstance(raw_paths, dict):
        anchor = base_url if base_url is not None else _relative(Path(str(options["paths@"])), root)
        for pattern, targets in raw_paths.items():
            if isinstance(pattern, str) and isinstance(targets, list):
                joined = tuple(
                    posixpath.normpath(posixpath.join(anchor or ".", target))
                    for target in targets
                    if isinstance(target, str)
                )
                paths.append((pattern, joined))
    paths.sort(key=lambda entry: -len(entry[0].split("*", 1)[0]))
    if base_url is None and not paths:
        return None
    return AliasConfig(base_url, tuple(paths))


def _relative(path: Path, root: Path) -> str | None:
    try:
        relative = path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return None
    return "" if relative == "." else relative


def file_candidates(base: str, files: frozenset[str]) -> tuple[str, ...]:
    """Return the file a module path names: as written, with an extension, or its index file."""
    if base in files:
        return (base,)
    for extension in EXTENSIONS:
        if base + extension in files:
            return (base + extension,)
    stem, extension = posixpath.splitext(base)
    for replacement in _JS_TO_TS.get(extension, ()):
        if stem + replacement in files:
            return (stem + replacement,)
    for extension in EXTENSIONS:
        index = f"{base}/index{extension}" if base else f"index{extension}"
        if index in files:
            return (index,)
    return ()


def resolve_alias(raw: str, config: AliasConfig, files: frozenset[str]) -> tuple[str, ...]:
    """Resolve a non-relative specifier through `paths`, then `baseUrl`."""
    for pattern, targets in config.paths:
        star = _match(pattern, raw)
        if star is None:
            continue
        for target in targets:
            found = file_candidates(target.replace("*", star, 1), files)
            if found:
                return found
    if config.base_url is not None:
        return file_candidates(
            posixpath.normpath(posixpath.join(config.base_url or ".", raw)), files
        )
    return ()


def _match(pattern: str, raw: str) -> str | None:
    """Return what `*` stands for when `raw` matches `pattern` ("" for an exact pattern)."""
    if "*" not in pattern:
        return "" if pattern == raw else None
    prefix, suffix = pattern.split("*", 1)
    if raw.startswith(prefix) and raw.endswith(suffix) and len(raw) >= len(prefix) + len(suffix):
        return raw[len(prefix) : len(raw) - len(suffix)]
    return None
