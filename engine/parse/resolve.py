"""Resolve imports as written to files of the repository, giving the import graph its edges.

Each language's resolver is a small function keyed by the `resolver` column of the language
table. Lookup tables (paths, Python module names, Go and Java packages) are built once per call
and lazily, so resolving thousands of files is a few dict lookups each. Broken config files
(tsconfig, go.mod) count as absent; nothing here raises on repository content.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path

from engine.model import Import, ParsedFile
from engine.parse import jsconfig
from engine.parse.languages import spec_for
from engine.parse.rust_paths import expand_use, rust_crate_dir, rust_module_dir

_GO_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"]+)\"?", re.MULTILINE)


class _Repository:
    """The lookup tables of one resolution run, each built on first use."""

    def __init__(self, paths: Sequence[str], root: Path) -> None:
        self.root = root
        self.files = frozenset(paths)
        self._configs: dict[str, jsconfig.AliasConfig | None] = {}
        self._crates: dict[str, str | None] = {}

    @cached_property
    def by_dir(self) -> dict[str, list[str]]:
        """Folder -> files directly in it, sorted."""
        table: dict[str, list[str]] = defaultdict(list)
        for path in sorted(self.files):
            table[posixpath.dirname(path)].append(path)
        return table

    @cached_property
    def python_modules(self) -> dict[str, str]:
        """Dotted module name -> file, for every source root (repo root, src/, ...)."""
        packages = {posixpath.dirname(p) for p in self.files if p.endswith("/__init__.py")}
        roots = {""} | {
            posixpath.dirname(d) for d in packages if posixpath.dirname(d) not in packages
        }
        table: dict[str, str] = {}
        for path in sorted(self.files, key=lambda p: (p.endswith(".pyi"), p)):
            stem, extension = posixpath.splitext(path)
            if extension not in (".py", ".pyi"):
                continue
            for source_root in roots:
                if source_root and not stem.startswith(source_root + "/"):
                    continue
                relative = stem[len(source_root) + 1 :] if source_root else stem
                name = relative.replace("/", ".").removesuffix(".__init__")
                if name != "__init__":
                    table.setdefault(name, path)
        return table

    @cached_property
    def go_modules(self) -> list[tuple[str, str]]:
        """(module path, folder of go.mod), longest module path first."""
        found: list[tuple[str, str]] = []
        for path in sorted(p for p in self.files if posixpath.basename(p) == "go.mod"):
            try:
                text = (self.root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            match = _GO_MODULE.search(text)
            if match:
                found.append((match.group(1), posixpath.dirname(path)))
        found.sort(key=lambda entry: -len(entry[0]))
        return found

    @cached_property
    def suffixes(self) -> dict[str, list[str]]:
        """Path suffixes of Java/PHP/C files ("com/foo/Bar.java") -> files, for package lookups."""
        table: dict[str, list[str]] = defaultdict(list)
        for path in sorted(self.files):
            if posixpath.splitext(path)[1] not in (".java", ".php", ".h", ".hpp", ".hh"):
                continue
            parts = path.split("/")
            for start in range(len(parts)):
                table["/".join(parts[start:])].append(path)
        return table

    def alias_config(self, folder: str) -> jsconfig.AliasConfig | None:
        """The alias options of the nearest tsconfig/jsconfig at or above `folder`."""
        if folder in self._configs:
            return self._configs[folder]
        config: jsconfig.AliasConfig | None = None
        for name in jsconfig.CONFIG_NAMES:
            candidate = posixpath.join(folder, name) if folder else name
            if candidate in self.files or (self.root / candidate).is_file():
                config = jsconfig.load_alias_config(self.root / candidate, self.root)
                break
        else:
            if folder:
                config = self.alias_config(posixpath.dirname(folder))
        self._configs[folder] = config
        return config

    def crate_dir(self, path: str) -> str | None:
        """Folder of the crate root (lib.rs/main.rs) above a Rust file."""
        return rust_crate_dir(posixpath.dirname(path), self.files, self._crates)


def _python(repo: _Repository, path: str, raw: str) -> tuple[str, ...]:
    """`a.b.c` through the module table; `..x.y` against the importing file's package."""
    dots = len(raw) - len(raw.lstrip("."))
    parts = [part for part in raw[dots:].split(".") if part]
    if dots == 0:
        for count in range(len(parts), 0, -1):
            target = repo.python_modules.get(".".join(parts[:count]))
            if target:
                return (target,)
        return ()
    base = posixpath.dirname(path)
    for _ in range(dots - 1):
        if not base:
            return ()
        base = posixpath.dirname(base)
    for count in range(len(parts), -1, -1):
        stem = posixpath.join(base, *parts[:count]) if base or count else ""
        for candidate in (
            (f"{stem}.py", f"{stem}/__init__.py") if count else (f"{stem}/__init__.py",)
        ):
            candidate = candidate.lstrip("/")
            if candidate in repo.files:
                return (candidate,)
    return ()


def _js(repo: _Repository, path: str, raw: str) -> tuple[str, ...]:
    folder = posixpath.dirname(path)
    if raw.startswith(("./", "../")) or raw in (".", ".."):
        joined = posixpath.normpath(posixpath.join(folder, raw))
        if joined.startswith(".."):
            return ()
        return jsconfig.file_candidates("" if joined == "." else joined, repo.files)
    config = repo.alias_config(folder)
    return jsconfig.resolve_alias(raw, config, repo.files) if config else ()


def _go(repo: _Repository, path: str, raw: str) -> tuple[str, ...]:
    for module, folder in repo.go_modules:
        if raw == module or raw.startswith(module + "/"):
            package = posixpath.join(folder, raw[len(module) + 1 :]).strip("/")
            return tuple(
                file
                for file in repo.by_dir.get(package, ())
                if file.endswith(".go") and not file.endswith("_test.go")
            )
    return ()


def _rust(repo: _Repository, path: str, raw: str) -> tuple[str, ...]:
    if raw.startswith("mod:"):
        folder = rust_module_dir(path)
        name = raw[4:]
        return tuple(
            c
            for c in (f"{folder}/{name}.rs".lstrip("/"), f"{folder}/{name}/mod.rs".lstrip("/"))
            if c in repo.files
        )[:1]
    found: list[str] = []
    for segments in expand_use(raw):
        if not segments:
            continue
        head, rest = segments[0], segments[1:]
        base: str | None
        if head == "crate":
            base = repo.crate_dir(path)
        elif head == "self":
            base = rust_module_dir(path)
        elif head == "super":
            base = posixpath.dirname(rust_module_dir(path))
            while rest and rest[0] == "super":
                base, rest = posixpath.dirname(base), rest[1:]
        else:
            continue  # another crate: not a file of this repository
        if base is None:
            continue
        for count in range(len(rest), 0, -1):
            stem = posixpath.join(base, *rest[:count]).lstrip("/")
            target = next((c for c in (f"{stem}.rs", f"{stem}/mod.rs") if c in repo.files), None)
            if target:
                found.append(target)
                break
    return tuple(dict.fromkeys(found))


def _java(repo: _Repository, path: str, raw: str) -> tuple[str, ...]:
    parts = raw.split(".")
    if parts[-1] == "*":
        folder = "/".join(parts[:-1])
        return tuple(
            file
            for directory, files in sorted(repo.by_dir.items())
            if directory == folder or directory.endswith("/" + folder)
            for file in files
            if file.endswith(".java")
        )
    for count in range(len(parts), 1, -1):
        targets = repo.suffixes.get("/".join(parts[:count]) + ".java")
        if targets:
            return tuple(targets)
    return ()


def _relative_file(
    repo: _Repository, path: str, raw: str, extensions: tuple[str, ...]
) -> tuple[str, ...]:
    """C includes, Ruby requires, PHP includes: next to the file, then root, include/, lib/."""
    folder = posixpath.dirname(path)
    for base in (folder, "", "include", "lib", "src"):
        joined = posixpath.normpath(posixpath.join(base, raw)) if base else posixpath.normpath(raw)
        if joined.startswith(".."):
            continue
        for extension in extensions:
            if joined + extension in repo.files:
                return (joined + extension,)
    targets = repo.suffixes.get(raw.lstrip("./"), [])
    return (targets[0],) if len(targets) == 1 else ()


def _c(repo: _Repository, path: str, raw: str) -> tuple[str, ...]:
    return _relative_file(repo, path, raw, ("",))


def _ruby(repo: _Repository, path: str, raw: str) -> tuple[str, ...]:
    return _relative_file(repo, path, raw, ("", ".rb"))


def _php(repo: _Repository, path: str, raw: str) -> tuple[str, ...]:
    if "\\" in raw:  # a namespace: PSR-4 puts Foo\Bar in .../Foo/Bar.php
        targets = repo.suffixes.get(raw.strip("\\").replace("\\", "/") + ".php", [])
        return (targets[0],) if len(targets) == 1 else ()
    return _relative_file(repo, path, raw, ("",))


RESOLVERS: dict[str, Callable[[_Repository, str, str], tuple[str, ...]]] = {
    "python": _python,
    "js": _js,
    "go": _go,
    "rust": _rust,
    "java": _java,
    "c": _c,
    "ruby": _ruby,
    "php": _php,
}
"""Resolver functions by the language table's `resolver` key (read-only)."""


def resolve_imports(
    files: Sequence[ParsedFile], root: Path, paths: Sequence[str] | None = None
) -> tuple[ParsedFile, ...]:
    """Return `files` in the same order with every Import's `targets` filled in.

    Targets are repository paths (never the importing file itself); third-party and
    unresolvable imports keep empty targets. `paths` are the repository's files when
    `files` are only some of them (a refresh resolves only the files it parsed again).
    """
    repo = _Repository([file.path for file in files] if paths is None else paths, root)
    # Files of one folder mostly import the same things; only Rust's `mod x;` depends on the
    # file name itself, so answers are shared per (resolver, folder, raw).
    memo: dict[tuple[str, str, str], tuple[str, ...]] = {}
    resolved: list[ParsedFile] = []
    for file in files:
        spec = spec_for(file.language)
        resolver = RESOLVERS.get(spec.resolver) if spec is not None else None
        if spec is None or resolver is None or not file.imports:
            resolved.append(file)
            continue
        where = file.path if spec.resolver == "rust" else posixpath.dirname(file.path)
        imports: list[Import] = []
        for record in file.imports:
            key = (spec.resolver, where, record.raw)
            targets = memo.get(key)
            if targets is None:
                targets = memo[key] = resolver(repo, file.path, record.raw)
            if file.path in targets:
                targets = tuple(t for t in targets if t != file.path)
            imports.append(Import(record.raw, record.start_line, record.end_line, targets))
        resolved.append(replace(file, imports=tuple(imports)))
    return tuple(resolved)
