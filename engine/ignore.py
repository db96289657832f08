"""Gitignore patterns, compiled once to regexes and matched the way git matches them.

Written here rather than taken from `pathspec` so the rules git documents (anchoring by any
slash, `**` forms, directory-only patterns, negation, nested files relative to their folder,
last match wins) are visible in one place and tested against git itself. The scan uses it for
`.gitignore` files outside git, for `.ctxtuiignore` files and for `--exclude` globs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_POSIX_CLASSES: dict[str, str] = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}
"""Bracket classes git's wildmatch knows, as regex class bodies (ASCII, as in git)."""


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """One pattern line of an ignore file, compiled."""

    pattern: str
    """The line as written (after trailing spaces were trimmed)."""
    base: str
    """Folder of the ignore file, relative POSIX path from the root; "" at the root."""
    negated: bool
    """A `!` pattern: re-includes what an earlier rule excluded."""
    dir_only: bool
    """A pattern ending in `/`: matches folders only."""
    regex: re.Pattern[str]
    """Matches a path relative to `base` in full."""
    parts: tuple[str | re.Pattern[str], ...] | None = None
    """For a pattern with many stars: its stars and one-character pieces, matched by
    `_match_parts` in time linear in the path (a regex backtracks exponentially on such
    patterns: `*a*a*a*a*b` against a 200-character name took 44 s); else None."""

    def matches(self, path: str, is_dir: bool) -> bool:
        """Tell whether this rule's pattern matches `path` (relative to the scan root)."""
        if self.dir_only and not is_dir:
            return False
        if self.base:
            if not path.startswith(self.base) or path[len(self.base) : len(self.base) + 1] != "/":
                return False
            path = path[len(self.base) + 1 :]
        if self.parts is not None:
            return _match_parts(self.parts, path)
        return self.regex.fullmatch(path) is not None


def _strip_trailing_spaces(line: str) -> str:
    """Drop trailing spaces unless escaped with a backslash, as git does."""
    end = len(line)
    while end > 0 and line[end - 1] == " ":
        backslashes = 0
        i = end - 2
        while i >= 0 and line[i] == "\\":
            backslashes += 1
            i -= 1
        if backslashes % 2 == 1:
            break  # "\ " keeps that space (and the ones before it)
        end -= 1
    return line[:end]


def _bracket(glob: str, start: int) -> tuple[str, int] | None:
    """Translate the `[...]` starting at glob[start]; None when it is never closed."""
    i = start + 1
    negate = False
    if i < len(glob) and glob[i] in "!^":
        negate = True
        i += 1
    parts: list[str] = []
    first = True
    while i < len(glob):
        ch = glob[i]
        if ch == "]" and not first:
            body = "".join(parts)
            # A class never matches "/" (git's wildmatch with FNM_PATHNAME).
            return (f"[^/{body}]" if negate else f"(?!/)[{body}]"), i + 1
        first = False
        if ch == "[" and glob.startswith("[:", i):
            close = glob.find(":]", i + 2)
            name = glob[i + 2 : close] if close != -1 else ""
            if name in _POSIX_CLASSES:
                parts.append(_POSIX_CLASSES[name])
                i = close + 2
                continue
        if ch == "\\" and i + 1 < len(glob):
            i += 1
            ch = glob[i]
        if ch == "-" and parts and i + 1 < len(glob) and glob[i + 1] != "]":
            parts.append("-")
        else:
            parts.append(re.escape(ch))
        i += 1
    return None


def glob_to_regex(glob: str) -> str:
    """Translate a gitignore glob (no leading `/`, no trailing `/`) to a regex body.

    `*` and `?` stop at `/`; `**` between slashes (or at either end) spans folders.
    """
    return "".join(glob_atoms(glob))


def glob_atoms(glob: str) -> list[str]:
    """The regex of each part of a glob: a star (STARS) or a piece matching one character."""
    out: list[str] = []
    i = 0
    n = len(glob)
    while i < n:
        ch = glob[i]
        if ch == "*":
            j = i
            while j < n and glob[j] == "*":
                j += 1
            stars = j - i
            at_start = i == 0 or glob[i - 1] == "/"
            at_end = j == n or glob[j] == "/"
            if stars >= 2 and at_start and at_end:
                if j == n:
                    # "**" alone matches everything; "x/**" everything inside x.
                    out.append(".*")
                    i = j
                else:
                    if not out or out[-1] != "(?:.*/)?":  # "**/**/" is "**/", and cheaper
                        out.append("(?:.*/)?")  # "**/": zero or more folders
                    i = j + 1
            else:
                out.append("[^/]*")
                i = j
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            translated = _bracket(glob, i)
            if translated is None:
                out.append(re.escape("["))
                i += 1
            else:
                out.append(translated[0])
                i = translated[1]
        elif ch == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(ch))
            i += 1
    return out


STARS = frozenset({"[^/]*", "(?:.*/)?", ".*"})
"""The regex of `*` (within a folder), `**/` (any folders) and a final `**` (anything)."""
MANY_STARS = 3
"""Stars in a pattern from which it is matched by `_match_parts`, not by its regex."""


def _match_parts(parts: tuple[str | re.Pattern[str], ...], text: str) -> bool:
    """Match a glob's parts against the whole of `text` in O(parts x len(text)) steps.

    `ok[j]` says whether the parts after the current one match text[j:]; the table is built
    from the last part back to the first.
    """
    n = len(text)
    ok = [False] * n + [True]
    for part in reversed(parts):
        new = [False] * (n + 1)
        if part == "[^/]*":  # zero or more characters other than "/"
            new[n] = ok[n]
            for j in range(n - 1, -1, -1):
                new[j] = ok[j] or (text[j] != "/" and new[j + 1])
        elif part == ".*":
            new[n] = ok[n]
            for j in range(n - 1, -1, -1):
                new[j] = ok[j] or new[j + 1]
        elif part == "(?:.*/)?":  # nothing, or anything up to and including a "/"
            slash_then_ok = False
            for j in range(n - 1, -1, -1):
                if text[j] == "/" and ok[j + 1]:
                    slash_then_ok = True
                new[j] = ok[j] or slash_then_ok
            new[n] = ok[n]
        else:
            assert isinstance(part, re.Pattern)
            for j in range(n - 1, -1, -1):
                new[j] = ok[j + 1] and part.fullmatch(text[j]) is not None
        ok = new
    return ok[0]


class BadPattern(ValueError):
    """An ignore pattern that cannot be compiled (e.g. the reversed range `[z-a]`)."""


def compile_rule(line: str, base: str = "") -> IgnoreRule | None:
    """Compile one line of an ignore file found in folder `base`; None for blanks and comments.

    Raises:
        BadPattern: the pattern has no meaning (git accepts it and it matches nothing).
    """
    line = line.rstrip("\r\n")
    if not line or line.startswith("#"):
        return None
    line = _strip_trailing_spaces(line)
    pattern = line
    negated = False
    if line.startswith("!"):
        negated = True
        line = line[1:]
    elif line.startswith(("\\!", "\\#")):
        line = line[1:]
    dir_only = line.endswith("/") and not line.endswith("\\/")
    if dir_only:
        line = line.rstrip("/")
    if not line:
        return None
    # Any slash left (leading or in the middle) anchors the pattern to the ignore file's folder.
    anchored = "/" in line
    line = line.lstrip("/") if anchored else line
    if not line:
        return None
    atoms = glob_atoms(line)
    if not anchored:
        atoms.insert(0, "(?:.*/)?")
    try:
        regex = re.compile("".join(atoms), re.DOTALL)
        parts = tuple(a if a in STARS else re.compile(a, re.DOTALL) for a in atoms)
    except re.error as error:
        raise BadPattern(error.msg) from None
    many_stars = sum(a in STARS for a in atoms) >= MANY_STARS
    return IgnoreRule(pattern, base, negated, dir_only, regex, parts if many_stars else None)


def parse_rules(
    text: str, base: str = "", *, source: str = "", problems: list[str] | None = None
) -> tuple[IgnoreRule, ...]:
    """Compile every pattern of an ignore file's text found in folder `base`.

    A pattern that cannot be compiled is left out, as git leaves it (it matches nothing
    there); when `problems` is given, one line saying so is added to it.

    Args:
        source: how to name the file in a problem line (".gitignore", "--exclude").
    """
    rules: list[IgnoreRule] = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            rule = compile_rule(line, base)
        except BadPattern as error:
            if problems is not None:
                where = f"{source}:{number}" if source else f"line {number}"
                problems.append(f"{where}: ignored the bad pattern {line.strip()!r} ({error})")
            continue
        if rule is not None:
            rules.append(rule)
    return tuple(rules)


class IgnoreMatcher:
    """An ordered list of rules where the last matching rule decides, as in git.

    Rules from shallower files come first, so deeper and later rules win. A matcher is
    immutable: `extended` returns a new one, so a walk can keep one per folder cheaply.
    """

    __slots__ = ("rules",)

    def __init__(self, rules: Iterable[IgnoreRule] = ()) -> None:
        self.rules: tuple[IgnoreRule, ...] = tuple(rules)
        """Rules in order of increasing precedence."""

    @classmethod
    def from_patterns(
        cls,
        patterns: Sequence[str],
        base: str = "",
        *,
        problems: list[str] | None = None,
        source: str = "--exclude",
    ) -> IgnoreMatcher:
        """Build a matcher from pattern lines (e.g. the CLI's --exclude globs); bad patterns
        are left out and, when `problems` is given, named in it as coming from `source`."""
        rules: list[IgnoreRule] = []
        for pattern in patterns:
            try:
                rule = compile_rule(pattern, base)
            except BadPattern as error:
                if problems is not None:
                    problems.append(f"{source}: ignored the bad pattern {pattern!r} ({error})")
                continue
            if rule is not None:
                rules.append(rule)
        return cls(rules)

    def extended(self, rules: Sequence[IgnoreRule]) -> IgnoreMatcher:
        """Return a matcher with `rules` added after (and over) the current ones."""
        return IgnoreMatcher(self.rules + tuple(rules)) if rules else self

    def __bool__(self) -> bool:
        return bool(self.rules)

    def verdict(self, path: str, is_dir: bool) -> bool | None:
        """Judge the entry alone, not its folders: True ignored, False re-included, None no rule."""
        for rule in reversed(self.rules):
            if rule.matches(path, is_dir):
                return not rule.negated
        return None

    def ignored_at(self, path: str, is_dir: bool = False) -> str | None:
        """Return the path of the first folder of `path` (or `path` itself) that is ignored.

        A file under an ignored folder stays ignored whatever later rules say, because git
        never looks inside an ignored folder; None when the path is kept.
        """
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if self.verdict(folder, True):
                return folder
        return path if self.verdict(path, is_dir) else None

    def is_ignored(self, path: str, is_dir: bool = False) -> bool:
        """Tell whether `path` (relative POSIX, from the root) is ignored, folders included."""
        return self.ignored_at(path, is_dir) is not None
