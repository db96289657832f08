"""Find indexed files by name: fuzzy (rapidfuzz) for a few letters, gitignore globs for sets.

The file finder of the app calls `search_paths` on every keystroke, from a thread. A query with
`*`, `?` or `[` is a glob with the gitignore rules the scan uses for `--exclude` (`*.md` at any
depth, `src/**/*.ts` under src); anything else is matched fuzzily against the file name and the
whole path, and an exact file name (with or without its extension) wins. Ties go to the file
ranked higher for the current question, then to the shorter path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

GLOB_CHARACTERS = frozenset("*?[")
"""A query holding one of these is a glob."""
SHOWN_MATCHES = 60
"""Fuzzy matches returned at most (a glob returns every match)."""
MIN_SCORE = 50.0
"""Fuzzy matches scoring less (rapidfuzz's 0-100 WRatio) are left out."""
PATH_WEIGHT = 0.9
"""A match on the whole path counts this much of one on the file name alone."""
EXACT_NAME_BONUS = 10.0
"""Added when the query is the file's name, with or without its extension."""


@dataclass(frozen=True, slots=True)
class PathMatch:
    """One file the finder offers."""

    path: str
    """Repository path, POSIX."""
    score: float
    """0-100 (plus the exact-name bonus); 100 for every file a glob matches."""
    marked: tuple[int, int] = (0, 0)
    """Start and end (in `path`) of the stretch that matched best, for highlighting."""


def is_glob(query: str) -> bool:
    """True when the query is a glob rather than a name to match fuzzily."""
    return any(character in GLOB_CHARACTERS for character in query)


def search_paths(
    query: str, paths: Sequence[str], ranked: Mapping[str, int] | None = None
) -> list[PathMatch]:
    """Return the files matching `query`, best first.

    Args:
        query: a glob, or a few letters of a name or a path.
        paths: every indexed path.
        ranked: path -> position in the current ranking, for breaking ties.
    """
    query = query.strip()
    if not query:
        return []
    if is_glob(query):
        return [PathMatch(path, 100.0) for path in glob_matches(query, paths)]
    return fuzzy_matches(query, paths, ranked or {})


def glob_matches(pattern: str, paths: Sequence[str]) -> list[str]:
    """Every path the gitignore-style glob matches, in path order."""
    from engine.ignore import compile_rule  # deliberate: only the finder needs it

    rule = compile_rule(pattern.lstrip("!"))
    if rule is None:
        return []
    return sorted(path for path in paths if rule.matches(path, False))


def fuzzy_matches(query: str, paths: Sequence[str], ranked: Mapping[str, int]) -> list[PathMatch]:
    """The paths most like `query`, scored on the file name and on the whole path."""
    from rapidfuzz import fuzz, process, utils  # deliberate: only the finder needs it

    names = [path.rpartition("/")[2] for path in paths]
    wanted = utils.default_process(query)
    by_name = process.cdist([query], names, scorer=fuzz.WRatio, processor=str.lower)
    by_path = process.cdist([query], paths, scorer=fuzz.WRatio, processor=str.lower)
    name_weight, path_weight = (PATH_WEIGHT, 1.0) if "/" in query else (1.0, PATH_WEIGHT)
    scored: list[tuple[float, int, int, str]] = []
    for number, path in enumerate(paths):
        score = max(by_name[0][number] * name_weight, by_path[0][number] * path_weight)
        if score < MIN_SCORE:
            continue
        name = names[number]
        if wanted in (utils.default_process(name), utils.default_process(name.partition(".")[0])):
            score += EXACT_NAME_BONUS
        scored.append((-score, ranked.get(path, len(paths)), len(path), path))
    scored.sort()
    return [
        PathMatch(path, -negative, _marked(query, path))
        for negative, _rank, _length, path in scored[:SHOWN_MATCHES]
    ]


def _marked(query: str, path: str) -> tuple[int, int]:
    """The stretch of `path` that lines up best with the query (rapidfuzz's alignment)."""
    from rapidfuzz import fuzz  # deliberate: only the finder needs it

    alignment = fuzz.partial_ratio_alignment(query.lower(), path.lower())
    if alignment is None:
        return (0, 0)
    return (alignment.dest_start, alignment.dest_end)
